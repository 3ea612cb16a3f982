"""Tournament sampling (SynthID-Text; Dathathri et al., Nature 2024) on the synthetic LMs, exact records.

**g-values.**  After a context ``w`` (the last ``h`` tokens), token ``x`` has ``m`` g-values
:math:`g_l(x, w) \\in \\{0, 1\\}`, ``l = 0 .. m-1``: bit ``l`` of the package's one keyed PRF word
:math:`u(\\mathrm{key}, w, x)` on stream ``TOURNAMENT_STREAM`` (:mod:`sims.core.prf`).  For an ideal
PRF the 64 bits of one word are 64 independent fair bits, so one mixing round per (context, token)
serves up to ``MAX_LAYERS = 64`` layers, and on text that does not depend on the key the g-values
of distinct contexts are i.i.d. Bernoulli(1/2) over tokens and layers.

**The tournament.**  Draw :math:`K^m` candidates i.i.d. from :math:`p_t`; in layer ``l`` the
candidates play in groups of ``K`` and each group's winner is a uniformly chosen candidate among
those with the largest :math:`g_l`; the last winner is the token.  Because the candidates of a
layer are i.i.d. from the previous layer's winner distribution :math:`q_{l-1}` (``q_{-1} = p``),
with :math:`G_l = \\sum_{y: g_l(y)=1} q_{l-1}(y)` the winner of a group has the law

.. math::
    q_l(x) = q_{l-1}(x)\\, f_l(g_l(x)), \\qquad
    f_l(1) = \\frac{1 - (1 - G_l)^K}{G_l}, \\qquad f_l(0) = (1 - G_l)^{K-1}

(at least one of the ``K`` has :math:`g_l = 1` with probability :math:`1-(1-G_l)^K`, and then
the winner is a draw from :math:`q_{l-1}` restricted to :math:`g_l = 1`; otherwise all ``K``
have :math:`g_l = 0`).  For ``K = 2`` this is :math:`q_l = q_{l-1}(1 + g_l - G_l)`, the form
transformers' ``SynthIDTextWatermarkLogitsProcessor.update_scores`` applies.  The generator builds
:math:`q_t = q_{m-1}` exactly and samples from it (one inverse-CDF draw): the same law as playing
the tournament, which :func:`play_tournament` does literally (the Monte Carlo test).

**Modes.**  ``"non-distortionary"``: ``K = 2``.  Then :math:`E_{g}[q_t] = p_t` over
Bernoulli(1/2) keys (:math:`E[g_l(x) - G_l] = 0` layer by layer), so a single token is unbiased
in expectation over keys -- but not for one key: the per-key :math:`D_{kl}(q_t \\| p_t)` is
positive and is what the record holds, as for EMS and UW.  ``"distortionary"``: ``K >= 3``
candidates per match (default 4), a stronger tilt towards :math:`g = 1` that is biased even
on average over keys.

**Repeated-context mask** (``mask_repeated=True``, the default): a step whose context ``w`` was
already seen at an earlier generated step of the same text samples from :math:`p_t` unchanged
(its KL and DG are 0), so no (context, g-value) pair is reused; the detector
(:mod:`sims.detect.stats.tournament_scores`) skips the same positions, and its null is then exact.

**Records** (:class:`sims.core.record.Generation`): ``kl`` the exact per-key
:math:`D_{kl}(q_t \\| p_t) = \\sum_x q_t(x) \\sum_l \\log f_l(g_l(x))`; ``G`` the expected mean
g-value of :math:`p_t`, :math:`\\bar G_t = \\frac1m \\sum_l p_t(g_l = 1)`; ``dg`` **DG for
tournament sampling**: the increase of the expected mean g-value,
:math:`\\mathrm{DG}_t = \\frac1m \\sum_l \\bigl(q_t(g_l = 1) - p_t(g_l = 1)\\bigr)` -- exactly the
per-token drift of the mean score over its null mean 1/2 when :math:`\\bar G_t` averages 1/2 over
keys, the analogue of the red-green :math:`q_{G,t} - G_t`; ``entropy`` of :math:`p_t`;
``lam`` nan.

**Cost** (issue 32).  One PRF word per (context, token) serves all ``m <= 64``
layers, so hashing costs what a red-green step's does.  What costs more is the exact law:
:math:`G_l` is a sum over the vocabulary of :math:`q_{l-1}`, which carries the factors of every
earlier layer, so it depends on the joint law of a token's bits ``0 .. l-1``, not on ``l``
marginals.  The kernel resolves blocks of up to ``BLOCK_MAX = 10`` layers on the :math:`2^{10}`
classes of that joint law (:func:`_solve_block`, :math:`O(2^{10})` per block); each block costs one
pass over the vocabulary that scatters into the classes (scalar code: no SIMD scatter).  A step is
one vectorised pass (:math:`p_t`, the words, :math:`\bar G_t`: the whole of a DualGA step on a
synthetic LM) and then, at ``m <= 10``, one scatter pass into classes kept per run of
``SAMPLE_IDS`` ids, from which the KL, DG and the draw's run masses follow without another pass;
at ``m > 10``, ``ceil(m / 10)`` scatter passes and one pass of look-ups for the KL, DG and run masses
(4 passes after the first at ``m = 30``, where DualGA makes none).  The time of each pass against
DualGA's step (``python -m bench --only bench_generate``, ``python -m bench.tournament_passes``), the
floor it sets at ``m = 30`` and the designs measured and dropped are logged in ``bench/NOTES.md``.

:func:`tournament_step` is the NumPy reference of one step and :func:`generate_tournament_reference`
of the whole generator; the kernel :func:`_generate` is tested equal to them on fixed seeds.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from sims.core import prf, rng
from sims.core.progress import in_chunks
from sims.core.record import Generation
from sims.core.wordset import seen_before, set_size
from sims.lm import synthetic as lm_mod
from sims.lm.synthetic import SyntheticLM
from sims.watermarks import registry

TOURNAMENT_STREAM = 17  #: PRF stream of the g-values (watermarks use 0..2, LMs 7 and 8, windows 13, ITS 99)
MAX_LAYERS = 64  #: bits of one PRF word
#: The tournament's modes: two candidates per match (unbiased over keys), or ``K >= 3`` (module docstring).
MODES = ("non-distortionary", "distortionary")
DEFAULT_LAYERS = 30  #: the paper's m
DEFAULT_H = 4  #: context width: transformers' default ngram_len = 5 is a context of 4 tokens and the token
DISTORTIONARY_K = 4  #: candidates per match of the distortionary mode unless given


def check_params(m, h, mode, candidates) -> int:
    """Validate the tournament's parameters; return the number of candidates per match ``K``.

    Parameters
    ----------
    m : int
        Tournament layers, 1 to :data:`MAX_LAYERS`.
    h : int
        Context width of the g-values, at least 1.
    mode : {"non-distortionary", "distortionary"}
        One of :data:`MODES`.
    candidates : int or None
        Candidates per match: None or 2 in the non-distortionary mode; None (:data:`DISTORTIONARY_K`) or an
        integer in [3, 1024] in the distortionary mode.

    Returns
    -------
    int
        ``K``: 2 in the non-distortionary mode, else ``candidates`` (default :data:`DISTORTIONARY_K`).
    """
    if int(m) != m or not (1 <= int(m) <= MAX_LAYERS):
        raise ValueError(f"m must be an integer in [1, {MAX_LAYERS}]; got {m!r}")
    if int(h) != h or int(h) < 1:
        raise ValueError(f"h must be an integer in [1, inf); got {h!r}")
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}; got {mode!r}")
    if mode == "non-distortionary":
        if candidates not in (None, 2):
            raise ValueError(f"candidates must be 2 in the non-distortionary mode; got {candidates!r}")
        return 2
    K = DISTORTIONARY_K if candidates is None else candidates
    if int(K) != K or not (3 <= int(K) <= 1024):
        raise ValueError(f"candidates must be an integer in [3, 1024] in the distortionary mode; got {candidates!r}")
    return int(K)


# ------------------------------------------------------------------ numpy reference
def g_words(key: int, context, tokens) -> np.ndarray:
    """PRF words whose bit ``l`` is the g-value :math:`g_l(x, w)` (module docstring), NumPy reference.

    Parameters
    ----------
    key : int
        The watermark key.
    context : (..., h) int array
        Context windows, oldest token first.
    tokens : int array
        Token ids, broadcast against ``context.shape[:-1]``.

    Returns
    -------
    uint64 array
        One PRF word per (context, token) on stream :data:`TOURNAMENT_STREAM`; bit ``l`` is :math:`g_l(x, w)`.
    """
    return prf.token_bits(prf.context_hash(key, context, TOURNAMENT_STREAM), tokens)


def g_values(words, m: int) -> np.ndarray:
    """The ``m`` g-values (..., m) as 0/1 uint8 from PRF words (...).

    Parameters
    ----------
    words : uint64 array (...)
        PRF words (:func:`g_words`).
    m : int
        Number of layers, at most :data:`MAX_LAYERS`.

    Returns
    -------
    (..., m) uint8 array
        ``[..., l]`` = bit ``l`` of the word: :math:`g_l`.
    """
    w = np.asarray(words, dtype=np.uint64)[..., None]
    return ((w >> np.arange(m, dtype=np.uint64)) & np.uint64(1)).astype(np.uint8)


def layer_factors(G: float, K: int) -> tuple[float, float]:
    """:math:`(f_l(0), f_l(1))` of a match of ``K`` candidates when layer ``l``'s g = 1 mass is ``G``.

    Parameters
    ----------
    G : float in [0, 1]
        :math:`G_l = \\sum_{y: g_l(y)=1} q_{l-1}(y)`, the previous layer's winner mass on :math:`g_l = 1`.
    K : int
        Candidates per match.

    Returns
    -------
    f0, f1 : float
        :math:`f_l(0) = (1 - G_l)^{K-1}` and :math:`f_l(1) = (1 - (1 - G_l)^K) / G_l` (module docstring; ``K`` at
        :math:`G_l = 0`, 1 at :math:`G_l = 1`); for ``K = 2``, :math:`1 - G_l` and :math:`2 - G_l`.
    """
    if K == 2:
        return 1.0 - G, 2.0 - G
    f0 = (1.0 - G) ** (K - 1)
    f1 = -math.expm1(K * math.log1p(-G)) / G if 0.0 < G < 1.0 else (float(K) if G <= 0.0 else 1.0)
    return f0, f1


def tournament_step(p, words, m: int, K: int = 2) -> tuple[np.ndarray, float, float, float]:
    """One step's exact tournament distribution and records, NumPy reference.

    Parameters
    ----------
    p : ndarray (V,)
        Next-token distribution :math:`p_t`.
    words : ndarray (V,) uint64
        Every token's PRF word after the step's context (:func:`g_words`).
    m, K : int
        Layers and candidates per match.

    Returns
    -------
    q, kl, G, dg
        :math:`q_t`, :math:`D_{kl}(q_t\\|p_t)`, :math:`\\bar G_t` and :math:`\\mathrm{DG}_t` (module docstring).
    """
    p = np.asarray(p, dtype=np.float64)
    g = g_values(words, m).astype(np.float64)  # (V, m)
    q = p.copy()
    logf = np.zeros_like(p)
    for layer in range(m):
        f0, f1 = layer_factors(float(q @ g[:, layer]), K)
        q = q * np.where(g[:, layer] > 0, f1, f0)
        logf += np.where(g[:, layer] > 0, math.log(f1) if f1 > 0 else 0.0, math.log(f0) if f0 > 0 else 0.0)
    mean_g = g.mean(axis=1)
    return q, float(q @ logf), float(p @ mean_g), float((q - p) @ mean_g)


def play_tournament(p, g, K: int, rng_: np.random.Generator, size: int) -> np.ndarray:
    """``size`` tokens drawn by literally playing the tournament: :math:`K^m` candidates from ``p``,
    groups of ``K`` per match, the winner uniform among the group's largest :math:`g_l` (``g`` (V, m)).
    The Monte Carlo check of the closed form in :func:`tournament_step`.

    Parameters
    ----------
    p : (V,) float array
        The next-token distribution the candidates are drawn from.
    g : (V, m) int array
        Every token's g-values (:func:`g_values`).
    K : int
        Candidates per match.
    rng_ : numpy.random.Generator
        The draws' generator (candidates and tie-breaks).
    size : int
        Number of tournaments played.

    Returns
    -------
    (size,) int array
        The winners, i.i.d. from the tournament's law :math:`q_t`.
    """
    m = g.shape[1]
    cand = rng_.choice(p.shape[0], size=(size, K**m), p=p)
    for layer in range(m):
        groups = cand.reshape(size, -1, K)
        score = g[groups, layer] + rng_.random(groups.shape) * 0.5  # ties broken uniformly
        cand = np.take_along_axis(groups, score.argmax(axis=2)[..., None], axis=2)[..., 0]
    return cand[:, 0]


def generate_tournament_reference(lm: SyntheticLM, prompts, T: int, seed: int, key: int, m: int, h: int, K: int,
                                  mask_repeated: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """NumPy reference of the generator: tokens (n, T) and records (4, n, T) = (kl, G, dg, entropy).

    Parameters
    ----------
    lm : SyntheticLM
        The synthetic LM.
    prompts : (n, P) int array
        Prompt ids, P >= max(lm.order, h).
    T : int
        Tokens per text.
    seed : int
        Sampling seed: lane 2t of counter stream (seed, i) at step t of text i.
    key : int
        Watermark key.
    m : int
        Tournament layers.
    h : int
        Context width of the g-values.
    K : int
        Candidates per match.
    mask_repeated : bool
        Sample from :math:`p_t` unchanged (KL and DG 0) where the context was seen before in the text.

    Returns
    -------
    tokens : (n, T) int64 array
        The generated tokens (equal to :func:`generate_tournament`'s on the same seeds).
    records : (4, n, T) float array
        Per step the exact :math:`D_{kl}(q_t\\|p_t)`, :math:`\\bar G_t`, :math:`\\mathrm{DG}_t` and the entropy of
        :math:`p_t`.
    """
    prompts = np.asarray(prompts, dtype=np.int64)
    n, P = prompts.shape
    tokens = np.empty((n, T), dtype=np.int64)
    rec = np.empty((4, n, T))
    for i in range(n):
        ctx = list(prompts[i])
        seen = set()
        skey = rng.stream_key(seed, i)
        for t in range(T):
            p = lm.probs(np.array(ctx))
            window = np.array(ctx[len(ctx) - h:])
            ch = int(prf.context_hash(key, window, TOURNAMENT_STREAM))
            words = prf.token_bits(np.uint64(ch), np.arange(p.shape[0]))
            q, kl, G, dg = tournament_step(p, words, m, K)
            if mask_repeated and ch in seen:
                q, kl, dg = p, 0.0, 0.0
            seen.add(ch)
            u = float(rng.uniforms(skey, np.array([2 * t]))[0])
            cdf = np.cumsum(q)
            y = min(int(np.searchsorted(cdf, u * cdf[-1], side="right")), p.shape[0] - 1)
            nz = p > 0
            tokens[i, t] = y
            rec[:, i, t] = kl, G, dg, float(-(p[nz] * np.log(p[nz])).sum())
            ctx.append(y)
    return tokens, rec


# ------------------------------------------------------------------------- kernel
@njit(cache=True, inline="always")
def popcount64(x):
    """Set bits of a uint64 (SWAR)."""
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return (x * np.uint64(0x0101010101010101)) >> np.uint64(56)


@njit(cache=True, inline="always")
def _factors(G, K):
    if K == 2:
        return 1.0 - G, 2.0 - G
    f0 = (1.0 - G) ** (K - 1)
    if G <= 0.0:
        return f0, float(K)
    if G >= 1.0:
        return f0, 1.0
    return f0, -math.expm1(K * math.log1p(-G)) / G


BLOCK_MAX = 10  #: layers resolved per pass over the vocabulary: blocks of at most 10 bits (1024 classes, 8 KiB: L1)
#: log2 of :data:`SAMPLE_IDS`: the draw's first level sums :math:`q_t` over runs of 2**12 consecutive ids.
SAMPLE_SHIFT = 12
SAMPLE_IDS = 1 << SAMPLE_SHIFT  #: the draw's first level: the mass of q_t per 4096 ids, then a scan of one such run
PAD_BITS = 6  #: a lone block of fewer layers still bins on 6 bits: fewer chained adds into one bin
_REDUCE = {"reassoc", "contract", "nsz"}  # vectorised sums (their order may differ from left to right in the last bits)


@njit(cache=True, fastmath=_REDUCE)
def _solve_block(W, nb, K, fac, lfac, marg):
    """Layers ``0 .. nb-1`` of a block from the masses ``W[c]`` (summing to 1) of the tokens whose block bits
    are ``c``; leaves each class's product of factors in ``fac`` and of their logs in ``lfac``.

    :math:`G_l` depends on the classes only through their low ``l + 1`` bits, so the marginals of ``W`` on
    its low ``l + 1`` bits (level ``l`` of ``marg``, at offset :math:`2^{l+1} - 2`; level ``nb - 1`` is ``W``)
    are summed once from the top, and layer ``l`` runs over the :math:`2^l` products of the layers below:
    :math:`G_l = \\sum_{s < 2^l} F_{<l}(s)\\, M_l(s + 2^l)`, then :math:`F_{<l+1}(s + b 2^l) = F_{<l}(s) f_l(b)`.
    :math:`O(2^{nb})` in all, where the layer-by-layer map over the classes is :math:`O(nb\\, 2^{nb})`."""
    if nb >= 2:
        half = 1 << (nb - 1)
        o = half - 2
        for s in range(half):
            marg[o + s] = W[s] + W[s + half]
        for lev in range(nb - 3, -1, -1):
            n2 = 2 << lev
            o2 = n2 - 2
            for s in range(n2):
                marg[o2 + s] = marg[o + s] + marg[o + s + n2]
            o = o2
    fac[0] = 1.0
    lfac[0] = 0.0
    for b in range(nb):
        half = 1 << b
        G = 0.0
        if b == nb - 1:
            for s in range(half):
                G += fac[s] * W[s + half]
        else:
            o = (2 << b) - 2
            for s in range(half):
                G += fac[s] * marg[o + s + half]
        f0, f1 = _factors(min(G, 1.0), K)
        lf0 = math.log(f0) if f0 > 0.0 else 0.0
        lf1 = math.log(f1) if f1 > 0.0 else 0.0
        for s in range(half):
            v = fac[s]
            lv = lfac[s]
            fac[s + half] = v * f1
            lfac[s + half] = lv + lf1
            fac[s] = v * f0
            lfac[s] = lv + lf0


@njit(cache=True, inline="always")
def _block_span(m, blk):
    """(first bit, number of bits) of block ``blk`` of the ``m`` layers: ``ceil(m / BLOCK_MAX)``
    blocks of as equal sizes as can be."""
    nblk = (m + BLOCK_MAX - 1) // BLOCK_MAX
    size = m // nblk
    extra = m % nblk
    return blk * size + min(blk, extra), size + (1 if blk < extra else 0)


@njit(cache=True, fastmath=_REDUCE)
def _words_run(wctx, tokmix, row, a, w, words, lowmask):
    """``w[k] = a row[k]`` (:math:`p_t` off the LM's table), every token's PRF word after the context hash
    ``wctx`` into ``words``, and :math:`\\sum_k w_k |g_k|` (the number of the low ``m`` g-bits set): one
    branch-free map and reduction that LLVM vectorises, like the red-green green-mass pass."""
    acc = 0.0
    for k in range(w.shape[0]):
        wd = prf.mix64_nb(wctx ^ tokmix[k])
        words[k] = wd
        pk = a * row[k]
        w[k] = pk
        acc += pk * np.float64(np.int64(popcount64(wd & lowmask)))
    return acc


@njit(cache=True)
def _bin(w, words, sh, msk, bins):
    """``bins[c]`` = the mass of ``w`` over the tokens whose bits ``sh ..`` under ``msk`` are ``c`` (a scatter)."""
    for c in range(msk + np.uint64(1)):
        bins[c] = 0.0
    for k in range(w.shape[0]):
        bins[(words[k] >> sh) & msk] += w[k]


@njit(cache=True)
def _bin_by_ids(w, words, sh, msk, tab):
    """The last block's bins per run of ``SAMPLE_IDS`` ids: ``tab[r, c]`` = the mass of ``w`` over the
    ids of run ``r`` whose bits ``sh ..`` under ``msk`` are ``c``.  Its column sums are the block's bins,
    and its rows weighted by the block's factors are the runs' masses of :math:`q_t` (the draw)."""
    V = w.shape[0]
    nc = np.int64(msk) + 1
    for r in range((V + SAMPLE_IDS - 1) // SAMPLE_IDS):
        row = tab[r * nc : (r + 1) * nc]
        row[:] = 0.0
        for k in range(r * SAMPLE_IDS, min(V, (r + 1) * SAMPLE_IDS)):
            row[(words[k] >> sh) & msk] += w[k]


@njit(cache=True)
def _apply_and_bin(w, words, logf, first, sh, msk, fac, lfac, sh2, msk2, bins):
    """A middle block's factors applied to ``w`` (log factors summed into ``logf``, set on the ``first``
    block) and the next block's bins of the result, in one pass (scalar: the bins are a scatter)."""
    for c in range(msk2 + np.uint64(1)):
        bins[c] = 0.0
    for k in range(w.shape[0]):
        wd = words[k]
        c = (wd >> sh) & msk
        wk = w[k] * fac[c]
        w[k] = wk
        logf[k] = (0.0 if first else logf[k]) + lfac[c]
        bins[(wd >> sh2) & msk2] += wk


@njit(cache=True, fastmath=_REDUCE)
def _q_sums(w, words, logf, sh, msk, fac, lfac, lowmask, run_mass):
    """After the last block's solve: :math:`q_t(x)` = ``w[x] fac[c(x)]`` (``c(x)`` = bits ``sh ..`` under ``msk``);
    returns :math:`D_{kl}(q_t\\|p_t) = \\sum_x q_t(x) (\\mathrm{logf}[x] + \\mathrm{lfac}[c(x)])` and
    :math:`\\sum_x q_t(x) |g(x)|`, and leaves :math:`q_t`'s mass per run of ``SAMPLE_IDS`` ids in ``run_mass``:
    one pass of gathers and sums, writing nothing of size V."""
    V = w.shape[0]
    kl = 0.0
    qbar = 0.0
    for r in range(run_mass.shape[0]):
        acc = 0.0
        for k in range(r * SAMPLE_IDS, min(V, (r + 1) * SAMPLE_IDS)):
            wd = words[k]
            c = (wd >> sh) & msk
            q = w[k] * fac[c]
            kl += q * (logf[k] + lfac[c])
            qbar += q * np.float64(np.int64(popcount64(wd & lowmask)))
            acc += q
        run_mass[r] = acc
    return kl, qbar


@njit(cache=True, fastmath=_REDUCE)
def _fold(tab, nruns, nc, nb, bins):
    """``bins[c]`` (``c < 2^nb``) = the sum of ``tab[r nc + c + j 2^nb]`` over the runs ``r`` and ``j < nc / 2^nb``."""
    for c in range(1 << nb):
        bins[c] = 0.0
    for r in range(nruns):
        row = tab[r * nc : (r + 1) * nc]
        for j in range(0, nc, 1 << nb):
            for c in range(1 << nb):
                bins[c] += row[j + c]


@njit(cache=True, fastmath=_REDUCE)
def _run_masses(tab, nc, nb, fac, run_mass):
    """``run_mass[r]`` = :math:`\\sum_c \\mathrm{tab}[r nc + c]\\, \\mathrm{fac}[c \\bmod 2^{nb}]`: :math:`q_t`'s mass per run of ids."""
    for r in range(run_mass.shape[0]):
        row = tab[r * nc : (r + 1) * nc]
        acc = 0.0
        for j in range(0, nc, 1 << nb):
            for c in range(1 << nb):
                acc += row[j + c] * fac[c]
        run_mass[r] = acc


@njit(cache=True, fastmath=_REDUCE)
def _class_sums(bins, nb, fac, lfac):
    """:math:`D_{kl}(q_t\\|p_t)` and :math:`\\sum_x q_t(x) |g(x)|` of a lone block from its classes: class ``c``
    holds :math:`q_t` mass ``bins[c] fac[c]``, log factor ``lfac[c]`` and ``popcount(c)`` g-bits set."""
    kl = 0.0
    qbar = 0.0
    for c in range(1 << nb):
        fw = bins[c] * fac[c]
        kl += fw * lfac[c]
        qbar += fw * np.float64(np.int64(popcount64(np.uint64(c))))
    return kl, qbar


@njit(cache=True)
def _tournament_into(w, words, m, K, lowmask, logf, bins, fac, lfac, marg, tab, run_mass):
    """``w`` (:math:`p_t`, summing to 1) becomes :math:`q_t` up to the last block's factors (:math:`q_t(x)` =
    ``w[x] fac[c(x)]``, ``c(x)`` = bits ``sh ..`` under ``msk``); returns ``(kl, qbar, sh, msk)``:
    :math:`D_{kl}(q_t\\|p_t)` and the sum over tokens of :math:`q_t(x)` times the number of its ``m`` g-bits set
    (``lowmask``), and leaves the masses of :math:`q_t` per run of ``SAMPLE_IDS`` ids in ``run_mass``.

    The law depends on a token only through its g-bits, so the layers go a block of up to ``BLOCK_MAX``
    bits at a time: :func:`_solve_block` solves a block's layers on its bins -- the same :math:`G_l` and
    :math:`f_l` as one pass per layer -- and one pass applies them and bins the next block.  A lone block
    (``m <= BLOCK_MAX``) is binned per run of ids (:func:`_bin_by_ids`): its classes give the KL,
    :math:`q_t`'s g-bits and the draw's run masses, one binning pass in all.  Over several blocks, one
    pass of gathers after the last solve sums them (:func:`_q_sums`)."""
    nblk = (m + BLOCK_MAX - 1) // BLOCK_MAX
    lo, nb = _block_span(m, 0)
    if nblk == 1:
        nc = 1 << max(nb, PAD_BITS)  # bits m .. are not g-values: folded away before the solve
        _bin_by_ids(w, words, np.uint64(0), np.uint64(nc - 1), tab)
        _fold(tab, run_mass.shape[0], nc, nb, bins)
        _solve_block(bins, nb, K, fac, lfac, marg)
        _run_masses(tab, nc, nb, fac, run_mass)
        kl, qbar = _class_sums(bins, nb, fac, lfac)
        return kl, qbar, np.uint64(0), np.uint64((1 << nb) - 1)
    _bin(w, words, np.uint64(lo), np.uint64((1 << nb) - 1), bins)
    for blk in range(1, nblk):
        _solve_block(bins, nb, K, fac, lfac, marg)
        lo2, nb2 = _block_span(m, blk)
        _apply_and_bin(w, words, logf, blk == 1, np.uint64(lo), np.uint64((1 << nb) - 1), fac, lfac, np.uint64(lo2),
                       np.uint64((1 << nb2) - 1), bins)
        lo, nb = lo2, nb2
    _solve_block(bins, nb, K, fac, lfac, marg)
    sh, msk = np.uint64(lo), np.uint64((1 << nb) - 1)
    kl, qbar = _q_sums(w, words, logf, sh, msk, fac, lfac, lowmask, run_mass)
    return kl, qbar, sh, msk


@njit(cache=True, fastmath=_REDUCE)
def _run_sums(w, run_mass):
    """Masses of ``w`` per run of ``SAMPLE_IDS`` ids (the draw's first level where :math:`q_t = p_t`)."""
    V = w.shape[0]
    for r in range(run_mass.shape[0]):
        acc = 0.0
        for k in range(r * SAMPLE_IDS, min(V, (r + 1) * SAMPLE_IDS)):
            acc += w[k]
        run_mass[r] = acc


@njit(cache=True)
def _draw(w, words, tilted, sh, msk, fac, run_mass, u):
    """Inverse-CDF draw in id order with the uniform ``u``: the run of ids whose masses cross
    ``u * total``, then the id in it; :math:`q(x)` = ``w[x] fac[c(x)]`` where ``tilted``, else ``w[x]``."""
    V = w.shape[0]
    total = 0.0
    for r in range(run_mass.shape[0]):
        total += run_mass[r]
    target = u * total
    run = 0.0
    for r in range(run_mass.shape[0]):
        if run + run_mass[r] > target:
            for k in range(r * SAMPLE_IDS, min(V, (r + 1) * SAMPLE_IDS)):
                run += w[k] * fac[(words[k] >> sh) & msk] if tilted else w[k]
                if run > target:
                    return k
            break
        run += run_mass[r]
    return V - 1


@njit(cache=True)
def _lm_state(V, order, lm_seed, lm_params, levels, base, table, level_sums, context, mod_tok, mod_logit):
    """The LM's step after ``context`` (:mod:`sims.lm.synthetic`: a rotated table row plus the bumped
    tokens): ``(level, off, n_mod, a, c, inv, entropy)``, where :math:`p_t(k) = a\\, \\mathrm{row}[(k + \\mathrm{off}) \\bmod V]`
    except the ``n_mod`` bumped tokens, :math:`p_t = e^{\\mathrm{logit} - c} \\cdot \\mathrm{inv}`; the entropy from the level sums."""
    level, off, n_mod, c = lm_mod.context_into(V, order, lm_seed, lm_params, levels, base, context, mod_tok, mod_logit)
    scale = math.exp(-c)
    row = table[level]
    beta = levels[level]
    s = scale * level_sums[level, 0]
    acc = scale * (beta * level_sums[level, 1] - c * level_sums[level, 0])
    for q in range(n_mod):
        j = lm_mod.base_index(mod_tok[q], off, V)
        w0 = scale * row[j]
        w1 = math.exp(mod_logit[q] - c)
        s += w1 - w0
        acc += w1 * (mod_logit[q] - c) - w0 * (beta * base[j] - c)
    inv = 1.0 / s
    return level, off, n_mod, scale * inv, c, inv, math.log(s) - acc * inv


@njit(cache=True)
def _lm_words(lm, context, wctx, tokmix, mod_tok, mod_logit, w, words, lowmask):
    """:math:`p_t` into ``w`` and the PRF words into ``words`` in one vectorised pass (two runs: the table
    row is rotated), then the bumped tokens; returns (entropy of :math:`p_t`, :math:`\\sum_x p_t(x) |g(x)|`)."""
    V, order, lm_seed, lm_params, levels, base, table, level_sums = lm
    level, off, n_mod, a, c, inv, ent = _lm_state(V, order, lm_seed, lm_params, levels, base, table, level_sums, context, mod_tok, mod_logit)
    row = table[level]
    gsum = _words_run(wctx, tokmix[: V - off], row[off:], a, w[: V - off], words[: V - off], lowmask)
    gsum += _words_run(wctx, tokmix[V - off :], row[:off], a, w[V - off :], words[V - off :], lowmask)
    for q in range(n_mod):
        k = mod_tok[q]
        pk = math.exp(mod_logit[q] - c) * inv
        gsum += (pk - w[k]) * np.float64(np.int64(popcount64(words[k] & lowmask)))
        w[k] = pk
    return ent, gsum


@njit(cache=True, parallel=True)
def _generate(lm, key, m, h, K, mask_repeated, tokmix, prompts, T, seed, row0, out):
    """Every text in parallel (row i is text ``row0 + i`` of the run), T tournament steps each; ``lm`` = (V, order, seed, params, levels,
    base, table, level_sums); ``out`` = (tokens, kl, G, dg, entropy, lam) (n, T), written in place."""
    V = lm[0]
    tokens, kl_out, G_out, dg_out, ent_out, lam_out = out
    n, P = prompts.shape
    lowmask = np.uint64(0xFFFFFFFFFFFFFFFF) if m == 64 else (np.uint64(1) << np.uint64(m)) - np.uint64(1)
    size = set_size(T)
    nruns = (V + SAMPLE_IDS - 1) // SAMPLE_IDS
    for i in prange(n):
        ctx = np.empty(P + T, dtype=np.int64)
        ctx[:P] = prompts[i]
        w = np.empty(V)
        logf = np.empty(V)
        words = np.empty(V, dtype=np.uint64)
        bins = np.empty(1 << BLOCK_MAX)
        fac = np.empty(1 << BLOCK_MAX)
        lfac = np.empty(1 << BLOCK_MAX)
        marg = np.empty(1 << BLOCK_MAX)
        tab = np.empty(nruns << BLOCK_MAX)
        run_mass = np.empty(nruns)
        mod_tok = np.empty(lm_mod.N_BUMPS, dtype=np.int64)
        mod_logit = np.empty(lm_mod.N_BUMPS)
        table_set = np.zeros(size, dtype=np.uint64)
        has_zero = np.zeros(1, dtype=np.bool_)
        skey = rng.stream_key_nb(seed, row0 + i)
        for t in range(T):
            L = P + t
            wctx = prf.context_hash_nb(key, ctx[L - h : L], TOURNAMENT_STREAM)
            ent, Gbar = _lm_words(lm, ctx[:L], wctx, tokmix, mod_tok, mod_logit, w, words, lowmask)
            kl = 0.0
            dg = 0.0
            if not (mask_repeated and seen_before(table_set, wctx, has_zero)):
                kl, qbar, sh, msk = _tournament_into(w, words, m, K, lowmask, logf, bins, fac, lfac, marg, tab, run_mass)
                dg = (qbar - Gbar) / m
                y = _draw(w, words, True, sh, msk, fac, run_mass, rng.uniform_nb(skey, 2 * t))
            else:
                _run_sums(w, run_mass)
                y = _draw(w, words, False, np.uint64(0), np.uint64(0), fac, run_mass, rng.uniform_nb(skey, 2 * t))
            tokens[i, t] = y
            kl_out[i, t] = kl
            G_out[i, t] = Gbar / m
            dg_out[i, t] = dg
            ent_out[i, t] = ent
            lam_out[i, t] = np.nan
            ctx[L] = y


def generate_tournament(lm: SyntheticLM, *, n: int, T: int, seed: int, key: int, m: int = DEFAULT_LAYERS, h: int = DEFAULT_H,
                        mode: str = "non-distortionary", candidates: int | None = None, mask_repeated: bool = True,
                        prompts: np.ndarray | None = None, prompt_len: int = 16) -> Generation:
    """Generate ``n`` texts of ``T`` tokens by tournament sampling (SynthID-Text) with exact records.

    Parameters
    ----------
    lm : SyntheticLM
        The synthetic LM sampled from.
    n, T : int
        Number of texts and tokens per text.
    seed : int
        Sampling seed: text i draws lane 2t of counter stream (seed, i) at step t (as
        :func:`sims.watermarks.generate.generate_synthetic`); prompts use it too.
    key : int
        Watermark key in [0, 2**64).
    m : int
        Tournament layers, 1 to 64 (the paper uses 30).
    h : int
        Context width of the g-values (the n-gram length is h + 1).
    mode : {"non-distortionary", "distortionary"}
        Two candidates per match, or ``candidates >= 3`` (module docstring).
    candidates : int, optional
        Candidates per match K of the distortionary mode (default 4).
    mask_repeated : bool
        Sample from p unchanged where the context was seen before in the text (module docstring).
    prompts : ndarray (n, P), optional
        Prompt ids, P >= max(lm.order, h); default :func:`sims.watermarks.generate.sample_prompts`.
    prompt_len : int
        Tokens per sampled prompt where ``prompts`` is None (default 16).

    Returns
    -------
    Generation
        ``meta["algo"] = "synthid"`` with ``m``, ``h``, ``mode``, ``candidates``, ``mask_repeated``
        and ``key``: what :func:`sims.detect.stats.tournament_scores.score_tournament` reads.
    """
    from sims.watermarks.generate import sample_prompts

    if int(n) < 1 or int(T) < 1:
        raise ValueError(f"n and T must be in [1, inf); got n={n}, T={T}")
    K = check_params(m, h, mode, candidates)
    if isinstance(key, (bytes, bytearray)) or not (0 <= int(key) < 2**64):
        raise ValueError(f"key must be an int in [0, 2**64); got {key!r}")
    if prompts is None:
        prompts = sample_prompts(lm, n, seed, prompt_len)
    prompts = np.ascontiguousarray(prompts, dtype=np.int64)
    V = lm.vocab_size
    if prompts.ndim != 2 or prompts.shape[0] != n or prompts.shape[1] < max(lm.order, h):
        raise ValueError(f"prompts must have shape (n={n}, P >= {max(lm.order, h)}); got {prompts.shape}")
    if prompts.min() < 0 or prompts.max() >= V:
        raise ValueError(f"prompt token ids must be in [0, {V - 1}]")
    out = (np.empty((n, T), dtype=np.int64),) + tuple(np.empty((n, T)) for _ in range(5))
    tables = (V, lm.order, lm.seed, lm.params, lm.levels, lm.base, lm.table, lm.level_sums)
    in_chunks(lambda i0, i1: _generate(tables, np.uint64(int(key)), int(m), int(h), K, bool(mask_repeated), prf.token_mix(V), prompts[i0:i1],
                                       int(T), int(seed), i0, tuple(o[i0:i1] for o in out)), n, T, f"{lm.name}/synthid")
    meta = dict(lm=lm.name, vocab_size=V, lm_seed=lm.seed, algo="synthid", key=int(key), seed=int(seed), h=int(h), m=int(m), mode=mode,
                candidates=K, mask_repeated=bool(mask_repeated))
    return Generation(out[0], prompts, out[1], out[2], out[3], out[4], out[5], meta)


# ------------------------------------------------------------------ the registry's record
def ref_step(p, window, t, key, state, prm):
    r"""The registry's reference step (:mod:`sims.watermarks.registry`): :math:`m` layers
    :math:`q_l = q_{l-1} f_l(g_l)` with ``candidates`` per match (:func:`tournament_step`); a context
    met before in the text is the generator's to mask (:func:`generate_tournament_reference`).

    Parameters
    ----------
    p : (V,) float array
        The next-token distribution :math:`p_t`.
    window : (h,) int array
        The last ``h`` tokens (the g-values' context).
    t : int
        The 0-based position (not read).
    key : int
        The watermark key.
    state : tuple
        The carried state, passed through unchanged.
    prm : dict
        The resolved parameters (``m``, ``candidates``).

    Returns
    -------
    q : (V,) float array
        The tournament's exact distribution :math:`q_t = q_{m-1}`.
    states : list
        ``state`` for every next token (the step carries no state).
    """
    words = g_words(key, np.asarray(window), np.arange(p.shape[0]))
    return tournament_step(p, words, prm["m"], prm["candidates"])[0], [state] * p.shape[0]


def _mode(prm: dict) -> str:
    return MODES[prm["candidates"] > 2]


def _registry_generator(lm, *, n, T, seed, key, h, prompts, prompt_len, prm):
    """:func:`generate_tournament` with the registry's parameters (``candidates`` 2: non-distortionary)."""
    return generate_tournament(lm, n=n, T=T, seed=seed, key=key, m=prm["m"], h=h, mode=_mode(prm), candidates=prm["candidates"],
                               mask_repeated=bool(prm["mask_repeated"]), prompts=prompts, prompt_len=prompt_len)


def _registry_reference(lm, prompts, T, seed, key, h, prm):
    return generate_tournament_reference(lm, prompts, T, seed, key, prm["m"], h, prm["candidates"], bool(prm["mask_repeated"]))


if registry.PARAMS["m"].default != DEFAULT_LAYERS or registry.PARAMS["m"].high != MAX_LAYERS:
    raise ImportError("registry.PARAMS['m'] must hold DEFAULT_LAYERS and MAX_LAYERS")
registry.register(registry.Algorithm(
    "synthid", 10, ("m", "candidates", "mask_repeated"), "tournament", ref_step, backends=("numba", "torch"), generator=_registry_generator,
    generator_reference=_registry_reference,
    doc="SynthID-Text tournament sampling: m layers of keyed g-values, K candidates per match (Dathathri et al. 2024)",
    color="#332288", marker="h"))
