"""Detectors of tournament sampling (SynthID-Text): mean and weighted-mean g-value scores with exact
null tails in log space, and a Bayesian (likelihood-ratio) detector trained on the package's texts.

**Scored positions.**  Text i's generated tokens, context = the ``h`` tokens before each (prompt
included), g-values = the low ``m`` bits of the PRF word of :mod:`sims.watermarks.tournament`.  With
``mask_repeated`` (default) a position whose context hash was already met at an earlier generated
position of the text is skipped, as the generator leaves it unwatermarked.  On text that does not
depend on the key, the scored positions then have distinct contexts and their ``m n`` g-values
are i.i.d. Bernoulli(1/2) (an ideal PRF), so

* the **mean score** :math:`\\sum_{t,l} g_{t,l}` is exactly Binomial(m n, 1/2):
  :func:`sims.detect.stats.nulls.binom_logsf`, exact far below 1e-300;
* the **weighted-mean score** :math:`S = \\sum_{t,l} w_l g_{t,l}` with integer weights :math:`w_l`
  (``synthid_weights``: SynthID's linspace(10, 1, m) rounded) is
  :math:`\\sum_l w_l B_l`, :math:`B_l \\sim` Bin(n, 1/2) independent; :func:`weighted_logsf` computes
  its tail by exact lattice convolution under an exponential tilt (below);
* the **Bayesian score** (:class:`BayesianDetector`) is the log-likelihood ratio of a fitted
  watermarked model against the exact null.

**Exact tail of a weighted Bernoulli sum** (:func:`weighted_logsf`).  Tilting every bit by
:math:`e^{\\theta w_l g}` turns :math:`B_l` into Bin(n, :math:`\\sigma(\\theta w_l)`) and

.. math::
    P(S \\ge s) = e^{K(\\theta) - \\theta s} \\sum_{k \\ge s} P_\\theta(S = k)\\, e^{-\\theta (k - s)},
    \\qquad K(\\theta) = n \\sum_l \\log\\frac{1 + e^{\\theta w_l}}{2}.

With :math:`\\theta` solving :math:`E_\\theta S = s` the tilted pmf is largest near ``s``, so one
FFT convolution of the ``m`` tilted binomials on the lattice 0..n sum(w) gives the sum to ~1e-12
relative error (an FFT's absolute error ~1e-16 divided by a tilted tail mass kept >= 1e-3 by
re-tilting), whatever the size of the answer: no normal approximation anywhere.  Tested against
50-digit mpmath convolution and Monte Carlo.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from numba import njit, prange
from scipy.special import expit

from sims.core import prf
from sims.core.record import Generation
from sims.core.wordset import seen_before, set_size
from sims.detect.stats.nulls import LN10, binom_logsf
from sims.detect.stats.scores import DetectResult, _check_inputs
from sims.watermarks import registry
from sims.watermarks import tournament as tn

STATS = ("mean", "weighted")  #: the scores of :func:`score_tournament` (``stat``)
_MIN_TILTED_TAIL = 1e-3  # re-tilt when a tail's tilted mass falls below this (relative error ~1e-16 / it)
LOG_CF_FLOOR = -60.0  #: ln ``|characteristic function|`` below which a frequency is set to 0 (:func:`_log_cf_into`)
FOLD_EPS = 1e-30  #: tilted mass allowed outside the folded FFT's window (Hoeffding bound, :func:`_fold_size`)


def synthid_weights(m: int) -> np.ndarray:
    """SynthID's layer weights ``linspace(10, 1, m)`` rounded to integers (the lattice
    :func:`weighted_logsf` convolves on; ``[10]`` for m = 1).  Rounding changes the statistic's
    weights by at most 0.5 in 10 -- its power negligibly, its validity not at all (the null tail is
    exact for any integer weights).  Exactly proportional integers, ``10 (m - 1) - 9 l``, give a
    lattice ~30 times longer at m = 30 (and so a slower tail).

    Parameters
    ----------
    m : int
        Number of layers, in [1, MAX_LAYERS].

    Returns
    -------
    ndarray of int64, shape (m,)
        The weights.

    Raises
    ------
    ValueError
        If ``m`` is out of range.
    """
    if int(m) != m or not (1 <= int(m) <= tn.MAX_LAYERS):
        raise ValueError(f"m must be an integer in [1, {tn.MAX_LAYERS}]; got {m!r}")
    return np.rint(np.linspace(10.0, 1.0, int(m))).astype(np.int64)


def layer_weights(m: int, weights=None) -> np.ndarray:
    """The m layer weights of a score: all ones (the mean score) when ``weights`` is None, else
    ``weights`` checked (integers in [0, 1e6], not all 0, exactly m of them).

    Parameters
    ----------
    m : int
        Number of layers.
    weights : array_like of int, optional
        Layer weights.

    Returns
    -------
    ndarray of int64, shape (m,)
        The weights.

    Raises
    ------
    ValueError
        If ``m`` or the weights are invalid.
    """
    synthid_weights(m)  # validates m
    w = np.ones(int(m), dtype=np.int64) if weights is None else _check_weights(weights)
    if w.size != int(m):
        raise ValueError(f"weights must hold m = {m} layer weights; got {w.size}")
    return w


def _check_weights(weights) -> np.ndarray:
    w = np.asarray(weights)
    if w.ndim != 1 or not (1 <= w.size <= tn.MAX_LAYERS) or w.dtype.kind not in "iu" or w.min() < 0 or w.max() == 0 or w.max() > 10**6:
        raise ValueError(f"weights must be 1 to {tn.MAX_LAYERS} integers in [0, 1e6], not all 0; got {weights!r}")
    return w.astype(np.int64)


# ------------------------------------------------------------------ g-values of texts
@njit(cache=True)
def _weight_planes(weights):
    """``planes[b]`` = the word whose bit l is bit b of :math:`w_l`: a word's weighted g-value sum is
    :math:`\\sum_l w_l g_l = \\sum_b 2^b\\, \\mathrm{popcount}(\\mathrm{word} \\,\\&\\, \\mathrm{planes}[b])` (exact integers;
    ``bit_length(max w)`` popcounts, 4 for SynthID's weights, 1 for the mean's unit weights)."""
    top = 0
    for layer in range(weights.shape[0]):
        top = max(top, weights[layer])
    nb = 0
    while (top >> nb) > 0:
        nb += 1
    planes = np.zeros(nb, dtype=np.uint64)
    for b in range(nb):
        for layer in range(weights.shape[0]):
            if (weights[layer] >> b) & 1:
                planes[b] |= np.uint64(1) << np.uint64(layer)
    return planes


@njit(cache=True)
def _text_words(seq, toks, seed_c, h, ctx, wd):
    """Context hashes ``ctx[t]`` of the ``h`` tokens ``seq[t : t + h]`` and PRF words ``wd[t]`` of tokens
    ``toks[t]`` after them: the same chained rounds as :func:`sims.core.prf.context_hash_nb` and
    :func:`sims.core.prf.token_bits_nb`, but each round a loop over positions, which LLVM vectorises
    (the rounds of one position depend on each other; those of different positions do not)."""
    L = toks.shape[0]
    for t in range(L):
        ctx[t] = seed_c
    for j in range(h):
        for t in range(L):
            ctx[t] = prf.mix64_nb(ctx[t] ^ (np.uint64(seq[t + j]) * np.uint64(prf.C_CONTEXT) + np.uint64(1)))
    for t in range(L):
        wd[t] = prf.token_bits_nb(ctx[t], toks[t])


@njit(cache=True)
def _word_sums(wd, planes):
    """:math:`\\sum_t` of the weighted g-value sums of the words ``wd`` (a zero word adds 0): one
    popcount loop per weight bit plane (:func:`_weight_planes`), branch-free and vectorised."""
    acc = 0
    for b in range(planes.shape[0]):
        c = 0
        for t in range(wd.shape[0]):
            c += np.int64(tn.popcount64(wd[t] & planes[b]))
        acc += c << b
    return acc


@njit(cache=True, parallel=True)
def _scan(tokens, prompts, lengths, key, h, mask_repeated, weights, store, words, scored, out_sum, out_n):
    """Per text: the PRF word of every generated position, whether it is scored (module docstring),
    the weighted g-value sum over scored positions and their number; ``words``, ``scored`` (n, T)
    are written only when ``store``.  Hashes first for the whole text (:func:`_text_words`,
    vectorised), then the repeated-context set and the sums in one scalar pass."""
    n, T = tokens.shape
    P = prompts.shape[1]
    size = set_size(T)
    seed_c = prf.mix64_nb(key + np.uint64(prf.GOLDEN) * np.uint64(tn.TOURNAMENT_STREAM + 1))
    planes = _weight_planes(weights)
    for i in prange(n):
        L = lengths[i]
        seq = np.empty(L + h, dtype=np.int64)
        seq[:h] = prompts[i, P - h :]
        seq[h:] = tokens[i, :L]
        ctx = np.empty(L, dtype=np.uint64)
        wd = np.empty(L, dtype=np.uint64)
        _text_words(seq, tokens[i, :L], seed_c, h, ctx, wd)
        table = np.zeros(size, dtype=np.uint64)
        has_zero = np.zeros(1, dtype=np.bool_)
        cnt = 0
        for t in range(L):  # the repeated-context set: scalar; a masked position's word is zeroed
            keep = not (mask_repeated and seen_before(table, ctx[t], has_zero))
            if store:
                words[i, t] = wd[t]
                scored[i, t] = keep
            cnt += keep
            if not keep:
                wd[t] = np.uint64(0)
        out_sum[i] = _word_sums(wd, planes)
        out_n[i] = cnt


def g_words(tokens, prompts, key: int, *, h: int = tn.DEFAULT_H, mask_repeated: bool = True, lengths=None):
    """PRF words (n, T) uint64 of every generated position (bit l = g-value of layer l) and the
    scored mask (n, T) (False past a text's length and at repeated contexts when ``mask_repeated``).

    Token layout as :mod:`sims.detect.stats.scores` (``tokens`` cut at the first -1).

    Parameters
    ----------
    tokens, prompts : ndarray of int
        Texts and prompts (at least ``h`` tokens each).
    key : int
        The key, in [0, 2**64).
    h : int, default tn.DEFAULT_H
        Context width.
    mask_repeated : bool, default True
        Leave repeated contexts unscored.
    lengths : array_like of int, shape (n,), optional
        Tokens of each text.

    Returns
    -------
    words : ndarray of uint64, shape (n, T)
        PRF word of each position.
    scored : ndarray of bool, shape (n, T)
        Scored mask.

    Raises
    ------
    ValueError
        If the key is out of range or the token layout is invalid.
    """
    tokens, prompts, lengths = _check_inputs(tokens, prompts, None, h, lengths)
    if isinstance(key, (bytes, bytearray)) or not (0 <= int(key) < 2**64):
        raise ValueError(f"key must be an int in [0, 2**64); got {key!r}")
    words = np.zeros(tokens.shape, dtype=np.uint64)
    scored = np.zeros(tokens.shape, dtype=np.bool_)
    z = np.zeros(tokens.shape[0], dtype=np.int64)
    _scan(tokens, prompts, lengths, np.uint64(int(key)), int(h), bool(mask_repeated), np.ones(1, dtype=np.int64), True, words, scored, z, z.copy())
    return words, scored


def g_values_of(words, scored, m: int) -> list[np.ndarray]:
    """The scored g-values of each text as a list of (n_i, m) uint8 arrays.

    Parameters
    ----------
    words : ndarray of uint64, shape (n, T)
        PRF words of every position (:func:`g_words`).
    scored : ndarray of bool, shape (n, T)
        Scored mask.
    m : int
        Number of layers.

    Returns
    -------
    list of ndarray of uint8
        One (n_i, m) array per text, n_i its scored tokens.
    """
    g = tn.g_values(words, m)
    return [g[i][scored[i]] for i in range(words.shape[0])]


# ----------------------------------------------------------------------- null tails
def mean_logsf(count, n_scored, m: int):
    r"""Natural log of :math:`P(\mathrm{Bin}(m n, 1/2) \ge \mathrm{count})`: the mean score's exact p-value.

    Parameters
    ----------
    count : array_like of int
        Summed g-values of each text.
    n_scored : array_like of int
        Scored tokens of each text.
    m : int
        Number of layers, in [1, MAX_LAYERS].

    Returns
    -------
    ndarray
        The log tail of each text.
    """
    if int(m) != m or not (1 <= int(m) <= tn.MAX_LAYERS):
        raise ValueError(f"m must be an integer in [1, {tn.MAX_LAYERS}]; got {m!r}")
    return binom_logsf(count, int(m) * np.asarray(n_scored, dtype=np.int64), 0.5)


@njit(cache=True)
def _log_cf_into(N, wl, mult, pl, omc, sinr, mod, arg):
    """The log characteristic function of the tilted weighted sum at frequencies ``k = 0 .. N/2``, as
    real modulus and argument: :math:`\\sum_g \\mathrm{mult}_g \\log(1 - p_g + p_g z^{w_g})` with
    :math:`z^{w} = e^{-2\\pi i (k w \\bmod N) / N}` read at the exactly reduced angle from the tables
    ``omc`` (:math:`1 - \\cos`, as :math:`2 \\sin^2` of the half angle: no cancellation near modulus 1)
    and ``sinr``.  NumPy reference: the complex logarithm (:func:`_tilted_pmf_reference`).

    The moduli come first, group by group; every term is <= 0, so once their running sum is below
    ``LOG_CF_FLOOR`` the frequency's value is negligible (modulus -inf, argument 0) and the remaining
    groups and every ``atan2`` are skipped -- most frequencies of a smooth pmf.  Each pmf entry then moves
    by at most :math:`e^{\\mathrm{LOG\\_CF\\_FLOOR}}` (the inverse FFT averages the N values), ~1e-10 of
    the FFT's own rounding."""
    for k in range(N // 2 + 1):
        lm = 0.0
        for g in range(wl.shape[0]):
            x = 2.0 * pl[g] * (1.0 - pl[g]) * omc[(k * wl[g]) % N]  # 1 - |1 - p + p z|^2, with 1 - cos read exactly from 2 sin^2
            lm += mult[g] * 0.5 * math.log1p(-x) if x < 1.0 else -math.inf
            if lm < LOG_CF_FLOOR:
                break
        if lm < LOG_CF_FLOOR:
            mod[k] = -math.inf
            arg[k] = 0.0
            continue
        ag = 0.0
        for g in range(wl.shape[0]):
            j = (k * wl[g]) % N
            ag += mult[g] * math.atan2(pl[g] * sinr[j], 1.0 - pl[g] * omc[j])
        mod[k] = lm
        arg[k] = ag


@lru_cache(maxsize=16)
def _angle_tables(N: int) -> tuple[np.ndarray, np.ndarray]:
    """``(1 - cos, sin)`` of the angles :math:`-2 \\pi j / N`, j = 0..N-1 (1 - cos as :math:`2 \\sin^2` of the
    half angle), once per FFT size; read-only."""
    ang = -2.0 * np.pi * np.arange(N) / N
    omc, sinr = 2.0 * np.sin(ang / 2) ** 2, np.sin(ang)
    omc.flags.writeable = sinr.flags.writeable = False
    return omc, sinr


def _groups(n: int, w: np.ndarray, theta: float, lr: float):
    wl_values, counts = np.unique(w[w > 0], return_counts=True)  # layers of equal weight share a factor
    wl_values, counts = wl_values[::-1].copy(), counts[::-1].copy()  # heaviest first: z^w turns fastest, the modulus falls soonest
    return wl_values.astype(np.int64), (n * counts).astype(np.float64), expit(theta * wl_values.astype(np.float64) + lr)


def _lattice(n: int, w: np.ndarray, N: int | None) -> tuple[int, int]:
    """(FFT size, values returned): the whole lattice 0..n sum(w), or its pmf folded modulo ``N``."""
    size = int(n * w.sum()) + 1
    return (1 << max(1, (size - 1).bit_length()), size) if N is None else (N, N)


def _tilted_pmf(n: int, w: np.ndarray, theta: float, lr: float, N: int | None = None) -> np.ndarray:
    """pmf of :math:`\\sum_l w_l \\mathrm{Bin}(n, \\sigma(\\theta w_l + \\mathrm{logit}\\, r))` on 0..n sum(w), by FFT
    (``lr`` = logit of the null rate r); the characteristic function from :func:`_log_cf_into`.  With
    ``N``, the pmf folded modulo ``N``: entry ``j`` is :math:`\\sum_{k \\equiv j \\bmod N} P(k)` (:func:`_tilt`)."""
    N, size = _lattice(n, w, N)
    wl, mult, pl = _groups(n, w, theta, lr)
    mod = np.empty(N // 2 + 1)
    arg = np.empty(N // 2 + 1)
    _log_cf_into(N, wl, mult, pl, *_angle_tables(N), mod, arg)
    phi = np.exp(mod) * (np.cos(arg) + 1j * np.sin(arg))
    phi[~np.isfinite(phi)] = 0.0
    return np.maximum(np.fft.irfft(phi, N)[:size], 0.0)


def _tilted_pmf_reference(n: int, w: np.ndarray, theta: float, lr: float, N: int | None = None) -> np.ndarray:
    """:func:`_tilted_pmf` by NumPy's complex logarithm (the reference its kernel is tested equal to)."""
    N, size = _lattice(n, w, N)
    k = np.arange(N // 2 + 1, dtype=np.int64)
    roots = np.exp(-2j * np.pi * np.arange(N) / N)  # z^w read at the exactly reduced angle (k w) mod N
    logphi = np.zeros(N // 2 + 1, dtype=np.complex128)
    wl, mult, pl = _groups(n, w, theta, lr)
    with np.errstate(divide="ignore", invalid="ignore"):
        for wg, mg, pg in zip(wl, mult, pl):
            logphi += mg * np.log((1.0 - pg) + pg * roots[(k * int(wg)) % N])
        phi = np.exp(logphi)
    phi[~np.isfinite(phi)] = 0.0
    return np.maximum(np.fft.irfft(phi, N)[:size], 0.0)


def _theta_for(n: int, w: np.ndarray, target: float, lr: float) -> float:
    """:math:`\\theta \\ge 0` with :math:`n \\sum_l w_l \\sigma(\\theta w_l + \\mathrm{logit}\\, r)` = ``target`` (bisection)."""
    wf = w.astype(np.float64)
    lo, hi = 0.0, 1.0
    while n * float(wf @ expit(hi * wf + lr)) < target:
        hi *= 2.0
    while hi - lo > 1e-14 * hi:
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if n * float(wf @ expit(mid * wf + lr)) < target else (lo, mid)
    return 0.5 * (lo + hi)


def _fold_size(n: int, w: np.ndarray) -> int:
    """Smallest power of two ``N >= 2 d + 4`` with Hoeffding's :math:`2 e^{-2 d^2 / (n \\sum_l w_l^2)} \\le` ``FOLD_EPS``:
    under any tilt, :math:`P(|S - E S| \\ge d) \\le` ``FOLD_EPS`` (the bits are independent and layer l's lie in
    :math:`[0, w_l]`), so a window of ``N`` lattice points around the tilted mean holds all but that mass."""
    d = math.sqrt(0.5 * n * float(w @ w) * math.log(2.0 / FOLD_EPS))
    return 1 << max(1, int(2.0 * d + 4.0).bit_length())


@lru_cache(maxsize=64)
def _tilt_cached(n: int, w_key: tuple, s: int, rate: float, fold: bool):
    return _tilt(n, np.array(w_key, dtype=np.int64), s, rate, fold)


def _tilt(n: int, w: np.ndarray, s: int, rate: float, fold: bool = True):
    """A tilt centred on ``s`` (theta = 0 at or below the null mean): ``(k0, ln K(theta) - theta k0,
    suffix sums of P_theta(k) e^{-theta (k - k0)} and of P_theta(k), k >= k0)``, so that every
    tail at or above ``s`` is O(1): :math:`\\ln P(S \\ge s') = \\ln K - \\theta k_0 + \\ln \\sum_{k \\ge s'} P_\\theta(k) e^{-\\theta(k - k_0)}`.

    With ``fold`` (the fast path) the FFT runs on :func:`_fold_size` points instead of the whole lattice
    of :math:`n \\sum_l w_l + 1`: the pmf folded modulo ``N`` equals the pmf on a window of ``N`` points
    around the tilted mean up to the mass outside it, at most ``FOLD_EPS`` (Hoeffding), and the pmf is
    taken as 0 beyond the window.  Each tail from the tilt then moves by at most ``2 FOLD_EPS`` in absolute
    terms; the tilted tails used are >= 1e-3, so ln p moves by at most ``2e3 FOLD_EPS`` = 2e-27, far below
    the FFT's rounding (~1e-16 / 1e-3).  ``k0 = max(s, window start)``: below the window (only at
    theta = 0) the tail is 1 - (at most ``FOLD_EPS``)."""
    lr = math.log(rate) - math.log1p(-rate)
    W = float(w.sum())
    target = min(float(s), n * W - 0.5)
    theta = 0.0 if target <= rate * n * W else _theta_for(n, w, target, lr)
    logK = float(n * np.sum(np.logaddexp(math.log1p(-rate), math.log(rate) + theta * w)))  # K(theta) = n sum_l log(1 - r + r e^(theta w_l))
    full, size = _lattice(n, w, None)
    N = _fold_size(n, w) if fold else full
    if N >= full:
        lo, pmf = 0, _tilted_pmf(n, w, theta, lr)
    else:
        mean = n * float(w @ expit(theta * w + lr))
        lo = max(0, min(int(round(mean)) - N // 2, size - N))
        pmf = _tilted_pmf(n, w, theta, lr, N)[np.arange(lo, min(lo + N, size)) % N]  # unfolded onto [lo, lo + N)
    k0 = max(s, lo)
    pmf = pmf[k0 - lo :]
    weighted = np.cumsum((pmf * np.exp(-theta * np.arange(pmf.size)))[::-1])[::-1]  # summed from the far tail inwards
    return k0, logK - theta * k0, weighted, np.cumsum(pmf[::-1])[::-1]


def _tilted_tails(s: np.ndarray, tilt) -> tuple[np.ndarray, np.ndarray]:
    """(tilted tail masses, ln P(S >= s)) from a tilt of :func:`_tilt` for increasing ``s`` >= its centre
    (0 and -inf past the tilt's window)."""
    k0, base, weighted, mass = tilt
    idx = np.maximum(s - k0, 0)
    inside = idx < mass.size
    idx = np.minimum(idx, mass.size - 1)
    wt = np.where(inside, weighted[idx], 0.0)
    with np.errstate(divide="ignore"):
        return np.where(inside, mass[idx], 0.0), np.minimum(0.0, base + np.log(wt))


def _centre(s: int, n: int, w: np.ndarray, rate: float) -> int:
    """The tilt centre tried first for ``s``: the null mean's floor at or below it (theta = 0, one tilt
    for all), else ``s`` rounded down to a grid of a quarter null standard deviation above the mean,
    so that texts and calls with nearby sums share a cached tilt."""
    mean = rate * n * float(w.sum())
    if s <= mean:
        return 0
    step = max(1, int(0.25 * math.sqrt(rate * (1.0 - rate) * n * float(w @ w))))
    return int(mean) + ((s - int(mean)) // step) * step


def _logsf_sorted(s: np.ndarray, n: int, w: np.ndarray, rate: float, fast: bool) -> np.ndarray:
    """ln P(S >= s) for increasing ``s`` in [1, n sum(w)]: a tilt serves until its tilted tail mass
    falls below ``_MIN_TILTED_TAIL``, then the next one is centred on the first ``s`` it does not serve.
    ``fast``: folded FFTs (:func:`_tilt`) and tilts cached across calls, tried first at the grid
    centre :func:`_centre`; else the whole-lattice reference with a fresh tilt at each ``s``."""
    out = np.empty(s.size)
    w_key = tuple(int(x) for x in w)
    i = 0
    while i < s.size:
        sv = int(s[i])
        tilt = None
        if fast:
            c = _centre(sv, n, w, rate)
            if c < sv:
                tilt = _tilt_cached(n, w_key, c, rate, True)
                if _tilted_tails(s[i : i + 1], tilt)[0][0] < _MIN_TILTED_TAIL:
                    tilt = None
        if tilt is None:
            tilt = _tilt_cached(n, w_key, sv, rate, True) if fast else _tilt(n, w, sv, rate, False)
        mass, val = _tilted_tails(s[i:], tilt)
        bad = np.flatnonzero(mass[1:] < _MIN_TILTED_TAIL)
        j = s.size - i if bad.size == 0 else 1 + int(bad[0])
        out[i : i + j] = val[:j]
        i += j
    return out


def weighted_logsf(s, n, weights, rate: float = 0.5, *, reference: bool = False):
    """Natural log of :math:`P(\\sum_{t,l} w_l g_{t,l} \\ge s)` for ``n`` tokens of i.i.d. Bernoulli(``rate``)
    g-values: the weighted-mean score's exact p-value (module docstring: lattice convolution under
    an exponential tilt; relative error ~1e-12 at any depth).

    Parameters
    ----------
    s, n : array_like of int (broadcast)
        Weighted sum and number of scored tokens (n >= 0).  ``s <= 0`` gives 0, ``s > n sum(w)`` -inf.
    weights : array_like of int
        The m layer weights (integers in [0, 1e6], e.g. :func:`synthid_weights`).
    rate : float in (0, 1)
        Null probability of g = 1 (1/2 for this package's g-values; the sampling table's share of
        ones for transformers' SynthID, :mod:`sims.torch_backend.synthid_transformers`).
    reference : bool
        The slow reference: whole-lattice FFTs and a fresh tilt at each ``s`` (default: FFTs folded onto
        a Hoeffding window and tilts cached across calls; :func:`_tilt` bounds the difference).

    Returns
    -------
    ndarray of float64 (float for scalar input), in [-inf, 0].
    """
    w = _check_weights(weights)
    if not (0.0 < float(rate) < 1.0):
        raise ValueError(f"rate must be in (0, 1); got {rate!r}")
    s, n = np.broadcast_arrays(np.asarray(s), np.asarray(n))
    for name, a in (("s", s), ("n", n)):
        if a.dtype.kind not in "iu":
            raise ValueError(f"{name} must hold integers; got dtype {a.dtype}")
    if n.size and n.min() < 0:
        raise ValueError(f"n must be in [0, inf); got {n.min()}")
    s_flat, n_flat = s.ravel().astype(np.int64), n.ravel().astype(np.int64)
    g = int(np.gcd.reduce(w))
    w, s_flat = w // g, -((-s_flat) // g)  # P(S >= s) = P(S / g >= ceil(s / g)) on the lattice g Z
    out = np.zeros(s_flat.shape)
    W = int(w.sum())
    out[s_flat > n_flat * W] = -np.inf
    for nn in np.unique(n_flat):
        todo = np.flatnonzero((n_flat == nn) & (s_flat > 0) & (s_flat <= nn * W))
        order = todo[np.argsort(s_flat[todo], kind="stable")]
        out[order] = _logsf_sorted(s_flat[order], int(nn), w, float(rate), not reference)
    out = out.reshape(s.shape)
    return out if out.ndim else float(out)


# --------------------------------------------------------------------------- scores
def score_tournament(gen: Generation | None = None, *, tokens=None, prompts=None, key: int | None = None, m: int | None = None,
                     h: int | None = None, stat: str = "mean", weights=None, mask_repeated: bool | None = None, lengths=None) -> DetectResult:
    """Mean or weighted-mean score of tournament-sampled text with its exact log10 p-value.

    Parameters
    ----------
    gen : Generation, optional
        A generation of :func:`sims.watermarks.tournament.generate_tournament`; its ``meta`` gives
        the defaults of ``key``, ``m``, ``h`` and ``mask_repeated``.  Otherwise pass ``tokens``,
        ``prompts`` (layout of :mod:`sims.detect.stats.scores`), ``key`` and ``m``.
    stat : {"mean", "weighted"}
        :math:`\\sum g` with the Binomial(m n, 1/2) tail, or :math:`\\sum w_l g` with :func:`weighted_logsf`.
    tokens, prompts : ndarray of int, optional
        The texts and their prompts, when ``gen`` is not given.
    key : int, optional
        The key (default the generation's).
    m : int, optional
        Number of tournament layers (default the generation's).
    h : int, optional
        Context width (default the generation's, else the tournament's default).
    mask_repeated : bool, optional
        Leave repeated contexts unscored (default the generation's, else True).
    lengths : array_like of int, shape (n,), optional
        Tokens of each text (default the generation's, else up to the first -1).
    weights : array_like of int, optional
        Layer weights of ``"weighted"`` (default :func:`synthid_weights`).

    Returns
    -------
    DetectResult
        ``score`` the (weighted) g-value sum, ``z`` its standardised value, ``log10_p`` exact,
        ``n_scored`` the scored tokens; texts with at most one scored token are too short to test (p = 1).
    """
    if stat not in STATS:
        raise ValueError(f"stat must be one of {STATS}; got {stat!r}")
    meta = {} if gen is None else gen.meta
    if gen is not None:
        tokens, prompts = gen.tokens, gen.prompts[:, -meta["h"]:]
        lengths = gen.lengths if lengths is None else lengths
    key = meta.get("key") if key is None else key
    m = meta.get("m") if m is None else m
    h = meta.get("h", tn.DEFAULT_H) if h is None else h
    mask_repeated = meta.get("mask_repeated", True) if mask_repeated is None else mask_repeated
    if tokens is None or prompts is None or key is None or m is None:
        raise ValueError("pass gen, or tokens, prompts, key and m")
    w = layer_weights(m, None if stat == "mean" else synthid_weights(m) if weights is None else weights)
    tokens, prompts, lengths = _check_inputs(tokens, prompts, None, h, lengths)
    if isinstance(key, (bytes, bytearray)) or not (0 <= int(key) < 2**64):
        raise ValueError(f"key must be an int in [0, 2**64); got {key!r}")
    sums = np.zeros(tokens.shape[0], dtype=np.int64)
    cnt = np.zeros(tokens.shape[0], dtype=np.int64)
    none = np.zeros((0, 0), dtype=np.uint64)
    _scan(tokens, prompts, lengths, np.uint64(int(key)), int(h), bool(mask_repeated), w, False, none, none.astype(np.bool_), sums, cnt)
    short = cnt <= 1
    mean = 0.5 * cnt * w.sum()
    sd = np.sqrt(0.25 * cnt * float(w @ w))
    with np.errstate(invalid="ignore", divide="ignore"):
        z = np.where(cnt > 0, (sums - mean) / sd, np.nan)
    lnp = mean_logsf(sums, cnt, w.size) if stat == "mean" else weighted_logsf(sums, cnt, w)
    return DetectResult(cnt, sums.astype(np.float64), z, np.where(short, 0.0, lnp / LN10), short)


def score_family(gen, *, algo, key, dedup, gamma, stat, params) -> DetectResult:
    """:func:`sims.detect.families.detectors.score` for the registry's "tournament" family: the mean (default) or
    weighted score with the parameters of ``algo`` (``params``, default the generation's where it is
    of ``algo``, else the registry's defaults).

    Parameters
    ----------
    gen : Generation
        The texts.
    algo : str
        The tournament algorithm.
    key : int or None
        The key (None: the generation's).
    dedup : bool
        Must be False (tournament scoring skips repeated contexts by ``mask_repeated``).
    gamma : float or None
        Must be None (g-values have no gamma).
    stat : str or None
        One of :data:`STATS` (None: ``"mean"``).
    params : dict or None
        The algorithm's parameters (``m``, ``mask_repeated``).

    Returns
    -------
    DetectResult
        :func:`score_tournament` of the texts.

    Raises
    ------
    ValueError
        If ``dedup`` or ``gamma`` is given.
    """
    if dedup or gamma is not None:
        raise ValueError(f"algo {algo!r} is scored on g-values: dedup and gamma do not apply (its mask_repeated skips repeated contexts); "
                         f"got dedup={dedup!r}, gamma={gamma!r}")
    if params is None:
        params = gen.meta if gen.meta["algo"] == algo else {}
    prm = registry.resolve_params(algo, **{k: params.get(k) for k in registry.get(algo).params})
    return score_tournament(gen, key=key, m=prm["m"], h=gen.meta["h"], stat="mean" if stat is None else stat, mask_repeated=bool(prm["mask_repeated"]))


# -------------------------------------------------------------------- Bayesian score
class BayesianDetector:
    r"""A likelihood-ratio detector of tournament sampling (Dathathri et al.'s Bayesian detector, its
    likelihood model): under the watermark, layer l's g-value follows a logistic model of the
    earlier layers' g-values of the same token,

    .. math:: P(g_l = 1 \mid g_{<l}, \mathrm{wm}) = \sigma\bigl(\beta_l + \textstyle\sum_{j<l} \delta_{lj} g_j\bigr),

    and under the null every g-value is Bernoulli(1/2) (exact, module docstring).  A text's score
    is the log-likelihood ratio :math:`\Lambda = \sum_t \sum_l \log P(g_{t,l} \mid g_{t,<l}, \mathrm{wm}) + m n \log 2`;
    the posterior probability of a watermark at prior ``pi`` is :math:`\sigma(\Lambda + \log\frac{\pi}{1-\pi})`.
    :meth:`fit` learns :math:`\beta, \delta` by ridge-penalised Newton steps on the g-values of
    watermarked texts; :meth:`calibrate` sets the threshold at a false-positive rate from null texts.

    Parameters
    ----------
    m : int
        Number of tournament layers.
    ridge : float, default 1e-3
        Ridge penalty of the logistic fits, >= 0.

    Attributes
    ----------
    coef : list of ndarray
        ``coef[l]`` = :math:`[\beta_l, \delta_{l0}, \dots, \delta_{l,l-1}]` (zeros until :meth:`fit`).
    threshold : float
        Decision threshold on :math:`\Lambda` (inf until :meth:`calibrate`).
    """

    def __init__(self, m: int, ridge: float = 1e-3):
        synthid_weights(m)
        if not (ridge >= 0.0 and math.isfinite(ridge)):
            raise ValueError(f"ridge must be in [0, inf); got {ridge!r}")
        self.m = int(m)
        self.ridge = float(ridge)
        self.coef = [np.zeros(l + 1) for l in range(self.m)]  # [beta_l, delta_l0 .. delta_l(l-1)]
        self.threshold = math.inf

    def fit(self, g_texts) -> BayesianDetector:
        """Fit the watermarked likelihood on the scored g-values of watermarked texts (list of (n_i, m)).

        Parameters
        ----------
        g_texts : list of array_like, each shape (n_i, m)
            g-values of the scored tokens of watermarked texts (:func:`g_values_of`).

        Returns
        -------
        BayesianDetector
            ``self``, fitted.

        Raises
        ------
        ValueError
            If fewer than 2 scored tokens are given.
        """
        g = np.concatenate([np.asarray(a, dtype=np.float64).reshape(-1, self.m) for a in g_texts])
        if g.shape[0] < 2:
            raise ValueError(f"g_texts must hold at least 2 scored tokens; got {g.shape[0]}")
        for l in range(self.m):
            X = np.concatenate([np.ones((g.shape[0], 1)), g[:, :l]], axis=1)
            y = g[:, l]
            c = np.zeros(l + 1)
            for _ in range(50):
                pr = expit(X @ c)
                grad = X.T @ (y - pr) - self.ridge * c
                H = (X * (pr * (1 - pr))[:, None]).T @ X + self.ridge * np.eye(l + 1)
                step = np.linalg.solve(H, grad)
                c += step
                if np.max(np.abs(step)) < 1e-10:
                    break
            self.coef[l] = c
        return self

    def llr(self, g_texts) -> np.ndarray:
        r"""Log-likelihood ratio :math:`\Lambda` of each text (list of (n_i, m) g-value arrays).

        Parameters
        ----------
        g_texts : list of array_like, each shape (n_i, m)
            g-values of each text's scored tokens.

        Returns
        -------
        ndarray, shape (len(g_texts),)
            :math:`\Lambda` of each text.
        """
        out = np.empty(len(g_texts))
        for i, a in enumerate(g_texts):
            g = np.asarray(a, dtype=np.float64).reshape(-1, self.m)
            tot = 0.0
            for l in range(self.m):
                eta = self.coef[l][0] + g[:, :l] @ self.coef[l][1:]
                tot += float(np.sum(g[:, l] * -np.logaddexp(0.0, -eta) + (1 - g[:, l]) * -np.logaddexp(0.0, eta)))
            out[i] = tot + g.size * math.log(2.0)
        return out

    def posterior(self, g_texts, prior: float = 0.5) -> np.ndarray:
        r""":math:`P(\mathrm{wm} \mid g)` at prior probability ``prior`` of a watermark.

        Parameters
        ----------
        g_texts : list of array_like, each shape (n_i, m)
            g-values of each text's scored tokens.
        prior : float, default 0.5
            Prior probability of a watermark, in (0, 1).

        Returns
        -------
        ndarray, shape (len(g_texts),)
            Posterior probability of each text being watermarked.
        """
        if not (0.0 < prior < 1.0):
            raise ValueError(f"prior must be in (0, 1); got {prior!r}")
        return expit(self.llr(g_texts) + math.log(prior / (1.0 - prior)))

    def calibrate(self, g_null_texts, fpr: float) -> float:
        r"""Set the decision threshold to the empirical ``1 - fpr`` quantile of :math:`\Lambda` on null
        texts (flag :math:`\Lambda >` threshold); returns it.  Needs at least ``1 / fpr`` texts.

        Parameters
        ----------
        g_null_texts : list of array_like, each shape (n_i, m)
            g-values of unwatermarked texts.
        fpr : float
            Target false-positive rate, in (0, 1).

        Returns
        -------
        float
            The threshold (also stored in ``threshold``).

        Raises
        ------
        ValueError
            If ``fpr`` is outside (0, 1) or fewer than ``1 / fpr`` texts are given.
        """
        if not (0.0 < fpr < 1.0):
            raise ValueError(f"fpr must be in (0, 1); got {fpr!r}")
        s = np.sort(self.llr(g_null_texts))
        if s.size < math.ceil(1.0 / fpr):
            raise ValueError(f"g_null_texts must hold at least 1/fpr = {math.ceil(1.0 / fpr)} texts; got {s.size}")
        self.threshold = float(s[int(math.floor(s.size * (1.0 - fpr)))])  # at most fpr of the texts lie above it
        return self.threshold

    def flag(self, g_texts) -> np.ndarray:
        r"""True where :math:`\Lambda` exceeds the calibrated threshold.

        Parameters
        ----------
        g_texts : list of array_like, each shape (n_i, m)
            g-values of each text's scored tokens.

        Returns
        -------
        ndarray of bool, shape (len(g_texts),)
            The decisions.
        """
        return self.llr(g_texts) > self.threshold
