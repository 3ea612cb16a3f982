r"""Watermark stealing: learn the green lists from watermarked texts, then spoof or scrub.

The attacker of Jovanovic et al. ("Watermark Stealing in Large Language Models", ICML 2024)
sees N texts of the watermarked model and, optionally, N texts of the base LM; it knows the
scheme and its context width h (Kerckhoffs), not the key.

Estimator (:func:`estimate_green`)
----------------------------------
Count, over the first ``n_stolen`` texts, :math:`w(c, k)` = occurrences of token k after
window c in the watermarked texts, :math:`w(c) = \sum_k w(c, k)`, and the same :math:`b(c, k)`,
:math:`b(c)`, :math:`b(k)` in the base texts (:math:`n_b` tokens in all).  The score of a pair is
the log frequency ratio

.. math::
    s(c, k) = \log\frac{w(c, k)}{w(c)} - \log\hat p_b(k \mid c),\qquad
    \hat p_b(k \mid c) = \frac{b(c, k) + \beta\, u(k)}{b(c) + \beta},\qquad
    u(k) = \frac{b(k) + 1}{n_b + V}

(a Dirichlet prior of strength :math:`\beta` = ``prior`` that backs off to the base unigram
:math:`u` for windows the base texts rarely show; without base texts :math:`b \equiv 0` and
:math:`u` is the watermarked texts' unigram).  A watermark that multiplies green
probabilities by :math:`e^\delta / (1 + (e^\delta - 1) G)` and red ones by
:math:`1 / (1 + (e^\delta - 1) G)` makes :math:`s > 0` for green and :math:`s < 0` for red pairs
as the counts grow, so the estimated green list of window c is

.. math:: \hat G(c) = \{k : w(c, k) \ge m,\ s(c, k) > \tau\}

(:math:`m` = ``min_count``, :math:`\tau` = ``threshold``); a window never seen in the
watermarked texts, or a token never seen after it, is estimated red (the attacker has no
evidence).  Its accuracy against the key's true lists (:mod:`sims.core.prf`) is measured on
held-out base-LM text (:func:`estimate_accuracy`).

Spoofing and scrubbing
----------------------
:func:`spoof` samples the base LM with logits :math:`\ell_k + \delta_s 1\{k \in \hat G(c)\}`
(for AutoCov, whose detector looks for green-red alternation, :math:`-\delta_s` after a token
the attacker believes green).  :func:`scrub` walks a watermarked text left to right and
re-samples each token it believes green, from the base LM given the new left context,
restricted to tokens outside :math:`\hat G(c)`, up to an edit budget; the ``blind`` baseline
re-samples random positions at the same rate from the unrestricted base LM (a paraphrase
with no stolen knowledge).  Both are scored by the owner's exact detector
(:func:`sims.detect.families.detectors.score` with the owner's key).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit, prange

from sims.core import defaults, prf, prf_crypto, rng, windows
from sims.core import seeding as seeding_mod
from sims.core.progress import progress
from sims.core.record import RECORDS, Generation
from sims.detect.families import detectors
from sims.generation.any_lm import generate as generate_any
from sims.lm import synthetic as lm_mod
from sims.lm.door import DEFAULT_PROMPTS, get_lm
from sims.lm.synthetic import SyntheticLM
from sims.steal import spoof_test
from sims.watermarks import registry
from sims.watermarks.generate import generate_synthetic, sample_prompts

#: The algorithms a stealing attacker can learn (:func:`sims.watermarks.registry.names` with ``stealable=True``):
#: those whose colours are a per-window green list the frequency-ratio estimate can recover.
STEALABLE_ALGOS = registry.names(stealable=True)
BASE_SEED_OFFSET = 2_000_003  #: the attacker's base-LM texts
EVAL_SEED_OFFSET = 3_000_017  #: held-out base text for the accuracy of the estimate
SPOOF_SEED_OFFSET = 4_000_037  #: the attacker's prompts and sampling
TARGET_SEED_OFFSET = 5_000_011  #: fresh watermarked texts the attacker scrubs
CALIB_SEED_OFFSET = 6_000_023  #: the owner's fresh genuine texts that calibrate the spoof test
LEVEL = 1e-4  #: detection level of spoof / scrub success


@dataclass
class GreenEstimate:
    """The attacker's estimated green lists (see module docstring).

    Attributes
    ----------
    h : int
        The scheme's context width: a window is the last ``h`` tokens.
    vocab_size : int
        The vocabulary size V.
    n_stolen : int
        How many watermarked texts (the first ones given) the counts :math:`w(c, k)` were taken over.
    names : (C,) uint64, sorted
        Public names (:func:`sims.core.windows.window_names`) of the windows seen.
    starts : (C + 1,) int64
        Pairs of window ``names[i]`` are ``tokens[starts[i]:starts[i+1]]`` (sorted).
    tokens : (P,) int64
        The token k of each (window, token) pair seen in the watermarked texts, grouped by window.
    scores : (P,) float64
        :math:`s(c, k)`, the log frequency ratio of each pair (module docstring).
    green : (P,) bool
        :math:`k \\in \\hat G(c)`: :math:`w(c, k) \\ge m` and :math:`s(c, k) > \\tau`.
    pair_keys : (P,) uint64, sorted
        The same pairs keyed by :func:`sims.core.windows.pair_names`, for vectorised look-ups.
    pair_green : (P,) bool
        ``green`` in the order of ``pair_keys``.
    """

    h: int
    vocab_size: int
    n_stolen: int
    names: np.ndarray
    starts: np.ndarray
    tokens: np.ndarray
    scores: np.ndarray
    green: np.ndarray
    pair_keys: np.ndarray
    pair_green: np.ndarray

    def predict(self, names: np.ndarray, tokens: np.ndarray) -> np.ndarray:
        """Is each (window name, token) pair in the estimated green list?

        Parameters
        ----------
        names : numpy.ndarray
            uint64 public window names (:func:`sims.core.windows.window_names`).
        tokens : numpy.ndarray
            Token ids, broadcast with ``names``.

        Returns
        -------
        numpy.ndarray
            bool; False for a pair never seen.
        """
        q = windows.pair_names(np.asarray(names, dtype=np.uint64), tokens)
        i = np.minimum(np.searchsorted(self.pair_keys, q), max(self.pair_keys.size - 1, 0))
        if self.pair_keys.size == 0:
            return np.zeros(q.shape, dtype=bool)
        return (self.pair_keys[i] == q) & self.pair_green[i]

    def mean_list_size(self) -> float:
        """Average estimated green-list size over the windows seen.

        Returns
        -------
        float
        """
        return float(self.green.sum() / max(1, self.names.size))


def _check_texts(name: str, gen: Generation, V: int, h: int) -> None:
    if not isinstance(gen, Generation):
        raise ValueError(f"{name} must be a Generation; got {type(gen).__name__}")
    if int(gen.meta.get("vocab_size", V)) != V:
        raise ValueError(f"{name} come from vocabulary size {gen.meta['vocab_size']}, not the attacked one {V} (texts from another vocabulary)")
    if gen.tokens.size and (gen.tokens.min() < 0 or gen.tokens.max() >= V):
        raise ValueError(f"{name} token ids must be in [0, {V - 1}] (texts from another vocabulary, or padded); "
                         f"got min {gen.tokens.min()}, max {gen.tokens.max()}")
    if gen.prompts.shape[1] < h or (h > 0 and gen.prompts.size and gen.prompts[:, gen.prompts.shape[1] - h :].min() < 0):
        raise ValueError(f"{name} prompts must hold at least h={h} tokens per text")


def _pair_counts(tokens: np.ndarray, prompts: np.ndarray, h: int):
    """Sorted distinct (window name, token) pairs with counts, and window counts."""
    wn = windows.window_names(tokens, prompts, h).ravel()
    wt = np.asarray(tokens, dtype=np.int64).ravel()
    order = np.lexsort((wt, wn))
    wn, wt = wn[order], wt[order]
    new = np.ones(wn.size, dtype=bool)
    new[1:] = (wn[1:] != wn[:-1]) | (wt[1:] != wt[:-1])
    first = np.flatnonzero(new)
    counts = np.diff(np.append(first, wn.size))
    return wn[first], wt[first], counts


def estimate_green(wm: Generation, base: Generation | None = None, *, n_stolen: int | None = None, h: int | None = None,
                   prior: float = 1.0, threshold: float = 0.0, min_count: int = 1) -> GreenEstimate:
    r"""The frequency-ratio estimate of the green lists (module docstring) from the first ``n_stolen`` texts.

    Parameters
    ----------
    wm : Generation
        Watermarked texts (the attacker's haul).
    base : Generation, optional
        Unwatermarked texts of the base LM, same vocabulary (at least ``n_stolen`` of them).
    n_stolen : int, optional
        Texts used, in [1, wm.n] (default all).
    h : int, optional
        Context width assumed (default the scheme's, ``wm.meta["h"]``; 0: one window, the green list of a fixed-list
        scheme such as Unigram, estimated from every token).
    prior, threshold, min_count : float, float, int
        :math:`\beta > 0`, :math:`\tau`, :math:`m \ge 1` of the module docstring.

    Returns
    -------
    GreenEstimate
        The estimated lists: per window seen, its pairs' scores :math:`s(c, k)` and whether
        :math:`k \in \hat G(c)`.

    Raises
    ------
    ValueError
        If ``h`` < 0, ``n_stolen`` exceeds the texts given, ``prior`` <= 0, ``min_count`` < 1, or the texts
        come from another vocabulary or lack ``h`` prompt tokens.
    """
    V = int(wm.meta["vocab_size"])
    h = int(wm.meta.get("h", 1) if h is None else h)
    if h < 0:
        raise ValueError(f"h must be in [0, inf); got {h!r}")
    n_stolen = wm.n if n_stolen is None else int(n_stolen)
    if not (1 <= n_stolen <= wm.n):
        raise ValueError(f"n_stolen must be in [1, {wm.n}] (the watermarked texts given); got {n_stolen}")
    if base is not None and n_stolen > base.n:
        raise ValueError(f"n_stolen must be in [1, {base.n}] (the base texts given); got {n_stolen}")
    if not (prior > 0.0 and math.isfinite(prior)):
        raise ValueError(f"prior must be in (0, inf); got {prior!r}")
    if int(min_count) < 1:
        raise ValueError(f"min_count must be in [1, inf); got {min_count!r}")
    _check_texts("wm texts", wm, V, h)
    ctx, tok, w = _pair_counts(wm.tokens[:n_stolen], wm.prompts[:n_stolen], h)
    names, cstart = np.unique(ctx, return_index=True)
    starts = np.append(cstart, ctx.size).astype(np.int64)
    w_c = np.repeat(np.add.reduceat(w, cstart), np.diff(starts))  # w(c) of each pair's window
    keys = windows.pair_names(ctx, tok)
    if base is None:
        uni = np.bincount(wm.tokens[:n_stolen].ravel(), minlength=V)
        b_ck = b_c = 0.0
    else:
        _check_texts("base texts", base, V, h)
        bctx, btok, bcount = _pair_counts(base.tokens[:n_stolen], base.prompts[:n_stolen], h)
        uni = np.bincount(base.tokens[:n_stolen].ravel(), minlength=V)
        bkeys = windows.pair_names(bctx, btok)
        o = np.argsort(bkeys)
        bkeys, bcount_k = bkeys[o], bcount[o]
        i = np.minimum(np.searchsorted(bkeys, keys), bkeys.size - 1)
        b_ck = np.where(bkeys[i] == keys, bcount_k[i], 0).astype(np.float64)
        bnames, bstart = np.unique(bctx, return_index=True)
        bsum = np.add.reduceat(bcount, bstart)
        j = np.minimum(np.searchsorted(bnames, ctx), bnames.size - 1)
        b_c = np.where(bnames[j] == ctx, bsum[j], 0).astype(np.float64)
    u = (uni + 1.0) / (uni.sum() + V)
    scores = np.log(w / w_c) - np.log((b_ck + prior * u[tok]) / (b_c + prior))
    green = (w >= int(min_count)) & (scores > threshold)
    o = np.argsort(keys)
    return GreenEstimate(h, V, n_stolen, names, starts, tok, scores, green, keys[o], green[o])


def estimate_accuracy(est: GreenEstimate, key, gamma: float, texts: Generation, *, prf_name: str = defaults.PRF,
                      seeding: str = seeding_mod.DEFAULT) -> dict:
    """The estimate against the key's true green lists on the (window, token) pairs of ``texts``.

    Parameters
    ----------
    est : GreenEstimate
        The attacker's estimate (:func:`estimate_green`).
    key : int
        The owner's key: in [0, 2**64) for ``"splitmix64"``, 128 bits for ``"siphash"``.
    gamma : float
        The owner's green-list ratio.
    texts : Generation
        Held-out texts whose (window, token) pairs are scored.
    prf_name : {"splitmix64", "siphash"}, optional
        The owner's keyed PRF (:mod:`sims.core.prf`, :mod:`sims.core.prf_crypto`).
    seeding : str, optional
        The owner's seeding scheme (:mod:`sims.core.seeding`; the colour of a pair is a function of its window
        and token under every scheme, so the attacker's per-window estimate is scored the same way).

    Returns
    -------
    dict
        ``accuracy`` (balanced: the mean of the true-green and true-red rates, 0.5 = no knowledge, 1 =
        perfect), ``precision`` (true-green share of the pairs estimated green), ``recall`` (estimated-green
        share of the true-green pairs) and ``coverage`` (share of positions whose window the attacker has seen).

    Raises
    ------
    ValueError
        If ``prf_name`` is unknown or ``key`` is not valid for it.
    """
    names = windows.window_names(texts.tokens, texts.prompts, est.h)
    pred = est.predict(names, texts.tokens)
    win = windows.windows(texts.tokens, texts.prompts, est.h)
    if prf_name == "siphash":
        truth = prf_crypto.is_green(prf_crypto.context_state(key, win), texts.tokens, gamma)
    elif prf_name == "splitmix64" and seeding != seeding_mod.DEFAULT:
        _check_key(key)
        truth = (seeding_mod.words(int(key), win, texts.tokens, seeding) >> np.uint64(11)) < np.uint64(prf.green_threshold(gamma))
    elif prf_name == "splitmix64":
        _check_key(key)
        truth = prf.is_green(prf.context_hash(int(key), win, prf.GREEN), texts.tokens, gamma)
    else:
        raise ValueError(f"prf_name must be 'splitmix64' or 'siphash'; got {prf_name!r}")
    i = np.minimum(np.searchsorted(est.names, names), max(est.names.size - 1, 0))
    seen = est.names[i] == names if est.names.size else np.zeros(names.shape, dtype=bool)
    tg = truth.sum()
    tpr = float((pred & truth).sum() / max(1, tg))
    tnr = float((~pred & ~truth).sum() / max(1, truth.size - tg))
    return dict(accuracy=0.5 * (tpr + tnr), precision=float((pred & truth).sum() / max(1, pred.sum())), recall=tpr,
                coverage=float(seen.mean()))


def estimate_curve(wm: Generation, held_out: Generation, n_values, *, base: Generation | None = None, **estimate_kw) -> list[dict]:
    """The estimate's accuracy against the owner's true green lists as a function of the texts stolen.

    For each N in ``n_values``, :func:`estimate_green` from the first N texts of ``wm`` (and of
    ``base`` when given), scored by :func:`estimate_accuracy` on the held-out base-LM texts
    ``held_out`` with the owner's key, gamma and PRF (``wm.meta``).  Works for any source of
    :class:`Generation` records (synthetic LMs, or a real LM through the torch backend).

    Parameters
    ----------
    wm : Generation
        The owner's watermarked texts (the haul).
    held_out : Generation
        Unwatermarked texts of the base LM on which the accuracy is measured.
    n_values : sequence of int
        The numbers N of texts stolen (at least one).
    base : Generation, optional
        The attacker's base-LM texts.
    **estimate_kw
        Further arguments of :func:`estimate_green` (``h``, ``prior``, ``threshold``, ``min_count``).

    Returns
    -------
    list of dict
        Per N (ascending): n_stolen, green_estimate_accuracy / _precision / _recall,
        window_coverage, mean_estimated_list_size.

    Raises
    ------
    ValueError
        If ``n_values`` is empty or an N exceeds the texts given.
    """
    n_values = sorted(int(v) for v in n_values)
    if not n_values:
        raise ValueError("n_values must hold at least one N")
    m = wm.meta
    out = []
    for N in n_values:
        est = estimate_green(wm, base, n_stolen=N, **estimate_kw)
        acc = estimate_accuracy(est, m["key"], m["gamma"], held_out, prf_name=m.get("prf", defaults.PRF))
        out.append(dict(n_stolen=N, green_estimate_accuracy=acc["accuracy"], green_estimate_precision=acc["precision"],
                        green_estimate_recall=acc["recall"], window_coverage=acc["coverage"],
                        mean_estimated_list_size=est.mean_list_size()))
    return out


def _check_key(key) -> None:
    if isinstance(key, bool) or not isinstance(key, (int, np.integer)):
        raise ValueError(f"key must be an int in [0, 2**64); got {type(key).__name__} {key!r}")
    if not (0 <= int(key) < 2**64):
        raise ValueError(f"key must be in [0, 2**64); got {key!r}")


# ------------------------------------------------------------------ kernels
@njit(cache=True, inline="always")
def _slice(names, starts, name):
    i = np.searchsorted(names, name)
    if i < names.shape[0] and names[i] == name:
        return starts[i], starts[i + 1]
    return 0, 0


@njit(cache=True, inline="always")
def _believed_green(toks, green, a, b, y):
    for j in range(a, b):
        if toks[j] == y:
            return green[j]
    return False


@njit(cache=True)
def _sample(logits, u):
    """Inverse-CDF draw from softmax(logits) (-inf logits have no mass); -1 if none has."""
    top = -np.inf
    for k in range(logits.shape[0]):
        top = max(top, logits[k])
    if top == -np.inf:
        return -1
    s = 0.0
    for k in range(logits.shape[0]):
        s += math.exp(logits[k] - top)
    target = u * s
    acc = 0.0
    last = -1
    for k in range(logits.shape[0]):
        if logits[k] > -np.inf:
            acc += math.exp(logits[k] - top)
            last = k
            if acc >= target:
                return k
    return last


@njit(cache=True, parallel=True)
def _spoof_kernel(V, order, lm_seed, lm_params, levels, base, prompts, T, seed, h, names, starts, toks, green, boost, alternate, out):
    n, P = prompts.shape
    for i in prange(n):
        ctx = np.empty(P + T, dtype=np.int64)
        ctx[:P] = prompts[i]
        logits = np.empty(V)
        skey = rng.stream_key_nb(seed, i)
        prev_green = False
        for t in range(T):
            L = P + t
            lm_mod.logits_into(V, order, lm_seed, lm_params, levels, base, ctx[:L], logits)
            a, b = _slice(names, starts, prf.context_hash_nb(windows.PUBLIC_KEY, ctx[L - h : L], windows.WINDOW_STREAM))
            d = -boost if (alternate and prev_green) else boost
            for j in range(a, b):
                if green[j]:
                    logits[toks[j]] += d
            y = _sample(logits, rng.uniform_nb(skey, t))
            prev_green = _believed_green(toks, green, a, b, y)
            out[i, t] = y
            ctx[L] = y


@njit(cache=True, parallel=True)
def _scrub_kernel(V, order, lm_seed, lm_params, levels, base, prompts, tokens, seed, h, names, starts, toks, green, budget, blind_rate,
                  out, edited):
    n, P = prompts.shape
    T = tokens.shape[1]
    for i in prange(n):
        ctx = np.empty(P + T, dtype=np.int64)
        ctx[:P] = prompts[i]
        ctx[P:] = tokens[i]
        logits = np.empty(V)
        skey = rng.stream_key_nb(seed, i)
        edits = 0
        for t in range(T):
            L = P + t
            a, b = _slice(names, starts, prf.context_hash_nb(windows.PUBLIC_KEY, ctx[L - h : L], windows.WINDOW_STREAM))
            if blind_rate >= 0.0:
                hit = rng.uniform_nb(skey, 2 * t + 1) < blind_rate
            else:
                hit = _believed_green(toks, green, a, b, ctx[L])
            if hit and edits < budget:
                lm_mod.logits_into(V, order, lm_seed, lm_params, levels, base, ctx[:L], logits)
                if blind_rate < 0.0:
                    for j in range(a, b):
                        if green[j]:
                            logits[toks[j]] = -np.inf
                y = _sample(logits, rng.uniform_nb(skey, 2 * t))
                if y >= 0:
                    ctx[L] = y
                    edits += 1
            out[i, t] = ctx[L]
        edited[i] = edits


def _lm_args(lm: SyntheticLM):
    return (lm.vocab_size, lm.order, lm.seed, lm.params, lm.levels, lm.base)


def _est_args(est: GreenEstimate):
    return (est.names, est.starts, est.tokens, est.green)


def _as_owner(tokens: np.ndarray, prompts: np.ndarray, meta: dict, extra: dict) -> Generation:
    nan = np.full(tokens.shape, np.nan)
    return Generation(tokens, prompts, *(nan.copy() for _ in RECORDS), meta={**meta, **extra})


def spoof(lm: SyntheticLM, est: GreenEstimate, owner_meta: dict, *, n: int, T: int, seed: int, boost: float = 4.0,
          prompts: np.ndarray | None = None, prompt_len: int | None = None) -> Generation:
    r"""``n`` texts of the base LM boosted by ``boost`` towards the estimated green lists.

    The returned :class:`Generation` carries ``owner_meta`` (the owner's algorithm, key, gamma,
    h), so :func:`sims.detect.families.detectors.score` scores it with the owner's detector; records are nan.
    AutoCov (its record's ``alternating``) is spoofed by alternating: ``-boost`` after a
    token the attacker believes green.

    Parameters
    ----------
    lm : SyntheticLM
        The base LM (exact probabilities at every step).
    est : GreenEstimate
        The attacker's estimate, of ``lm``'s vocabulary.
    owner_meta : dict
        The owner's generation meta.
    n, T : int
        Texts and tokens per text, >= 1.
    seed : int
        Seed of the prompts and of the draws.
    boost : float, optional
        The logit boost :math:`\delta_s` >= 0.
    prompts : numpy.ndarray, optional
        (n, P) prompts; default sampled from the LM.
    prompt_len : int, optional
        Prompt length when sampled (default the LM's order + 1, at least ``est.h``).

    Returns
    -------
    Generation
        The spoofed texts with ``meta["spoofed"]`` (``n_stolen``, ``boost``).

    Raises
    ------
    ValueError
        If the vocabularies differ, ``boost`` < 0, ``n`` or ``T`` < 1, or ``prompts`` has the wrong shape or ids.
    """
    if lm.vocab_size != est.vocab_size:
        raise ValueError(f"lm vocab_size must equal the estimate's {est.vocab_size} (texts from another vocabulary); got {lm.vocab_size}")
    if not (boost >= 0.0 and math.isfinite(boost)):
        raise ValueError(f"boost must be in [0, inf); got {boost!r}")
    if int(n) < 1 or int(T) < 1:
        raise ValueError(f"n and T must be in [1, inf); got n={n}, T={T}")
    if prompts is None:
        prompts = sample_prompts(lm, int(n), int(seed), max(lm.order + 1, est.h) if prompt_len is None else prompt_len)
    prompts = np.ascontiguousarray(prompts, dtype=np.int64)
    if prompts.shape[0] != n or prompts.shape[1] < max(lm.order, est.h) or prompts.min() < 0 or prompts.max() >= lm.vocab_size:
        raise ValueError(f"prompts must have shape (n={n}, P >= {max(lm.order, est.h)}) with ids in [0, {lm.vocab_size - 1}]; got {prompts.shape}")
    out = np.empty((int(n), int(T)), dtype=np.int64)
    alternate = registry.get(owner_meta["algo"]).alternating
    _spoof_kernel(*_lm_args(lm), prompts, int(T), int(seed), est.h, *_est_args(est), float(boost), alternate, out)
    return _as_owner(out, prompts, owner_meta, dict(spoofed=dict(n_stolen=est.n_stolen, boost=float(boost))))


def scrub(lm: SyntheticLM, est: GreenEstimate, gen: Generation, *, seed: int, budget: float = 0.5,
          blind_rate: float | None = None) -> tuple[Generation, np.ndarray]:
    """Rewrite ``gen``'s texts avoiding the estimated green tokens (module docstring).

    Parameters
    ----------
    lm : SyntheticLM
        The base LM that re-samples the tokens.
    est : GreenEstimate
        The attacker's estimate, of ``lm``'s vocabulary.
    gen : Generation
        The watermarked texts to scrub.
    seed : int
        Seed of the draws.
    budget : float in [0, 1]
        Most tokens edited per text, as a share of its length.
    blind_rate : float in [0, 1], optional
        The uninformed baseline instead: each position re-sampled from the base LM with this
        probability (still capped by ``budget``).

    Returns
    -------
    scrubbed : Generation
        The rewritten texts: ``gen``'s meta with ``meta["scrubbed"]`` (``n_stolen``, ``budget``, ``blind_rate``); records nan.
    edit_rate : numpy.ndarray
        (n,) share of each text's tokens edited.

    Raises
    ------
    ValueError
        If the vocabularies differ, ``budget`` or ``blind_rate`` is outside [0, 1], or the prompts are shorter
        than the LM's order.
    """
    _check_texts("scrubbed texts", gen, est.vocab_size, est.h)
    if lm.vocab_size != est.vocab_size:
        raise ValueError(f"lm vocab_size must equal the estimate's {est.vocab_size}; got {lm.vocab_size}")
    if not (0.0 <= budget <= 1.0):
        raise ValueError(f"budget must be in [0, 1]; got {budget!r}")
    if blind_rate is not None and not (0.0 <= blind_rate <= 1.0):
        raise ValueError(f"blind_rate must be in [0, 1]; got {blind_rate!r}")
    if gen.prompts.shape[1] < lm.order:
        raise ValueError(f"prompts must hold at least the LM's order={lm.order} tokens")
    T = gen.tokens.shape[1]
    out = np.empty_like(gen.tokens)
    edited = np.empty(gen.n, dtype=np.int64)
    _scrub_kernel(*_lm_args(lm), np.ascontiguousarray(gen.prompts), np.ascontiguousarray(gen.tokens), int(seed), est.h, *_est_args(est),
                  int(math.floor(budget * T)), -1.0 if blind_rate is None else float(blind_rate), out, edited)
    extra = dict(scrubbed=dict(n_stolen=est.n_stolen, budget=budget, blind_rate=blind_rate))
    return _as_owner(out, gen.prompts.copy(), gen.meta, extra), edited / T


# ------------------------------------------------------------------ experiment
@dataclass
class StealingTexts:
    """Everything an experiment needs for one scheme (:func:`generate_stealing_texts`).

    Parameters
    ----------
    lm : SyntheticLM
        The LM.
    wm : Generation
        The owner's watermarked texts; the first ``n_stolen`` are stolen.
    base : Generation
        Unwatermarked texts of the base LM, as many.
    held_out : Generation
        Held-out base text on which the estimate's accuracy is measured.
    targets : Generation
        Fresh watermarked texts to scrub (and the genuine texts of the spoof test).
    """

    lm: SyntheticLM
    wm: Generation
    base: Generation
    held_out: Generation
    targets: Generation


def generate_stealing_texts(lm: SyntheticLM, algo: str, *, n_max: int, T: int = 32, n_eval: int = 200, seed: int = 0, key: int = defaults.KEY,
              h: int = 1, prompt_len: int = 4, base: Generation | None = None, held_out: Generation | None = None,
              **params) -> StealingTexts:
    """The texts of one stealing experiment on a synthetic LM.

    ``n_max`` watermarked and ``n_max`` base texts of ``T`` tokens, plus ``n_eval`` held-out base texts and
    ``n_eval`` fresh watermarked targets (seeds offset as the constants say).

    Parameters
    ----------
    lm : SyntheticLM
        The LM.
    algo : str
        One of :data:`STEALABLE_ALGOS`.
    n_max : int
        Watermarked (and base) texts, the largest N stolen.
    T : int, optional
        Tokens per text.
    n_eval : int, optional
        Held-out base texts and fresh targets.
    seed : int, optional
        Seed of the watermarked texts (the others at ``seed`` plus their offsets).
    key : int, optional
        The owner's key, in [0, 2**64).
    h : int, optional
        Context width of the green-list hash.
    prompt_len : int, optional
        Prompt tokens per text.
    base, held_out : Generation, optional
        Texts from an earlier haul of the same LM, sizes and seed (unwatermarked text does not depend on
        the scheme), reused instead of generated.
    **params
        The algorithm's parameters.

    Returns
    -------
    StealingTexts

    Raises
    ------
    ValueError
        If ``algo`` is not stealable, a parameter is not one it takes, the key is invalid, or a reused
        ``base`` / ``held_out`` has the wrong shape or vocabulary.
    """
    if not registry.get(algo).stealable:
        raise ValueError(f"algo must be one of {STEALABLE_ALGOS}; got {algo!r}")
    registry.check_params(algo, **params)
    _check_key(key)
    kw = dict(T=T, key=key, h=h, prompt_len=max(prompt_len, h, lm.order))
    wm = generate_synthetic(lm, algo, n=n_max, seed=seed, **kw, **params)
    if base is None:
        base = generate_synthetic(lm, "none", n=n_max, seed=seed + BASE_SEED_OFFSET, **kw)
    if held_out is None:
        held_out = generate_synthetic(lm, "none", n=n_eval, seed=seed + EVAL_SEED_OFFSET, **kw)
    for name, g, n in (("base", base, n_max), ("held_out", held_out, n_eval)):
        if g.tokens.shape != (n, T) or g.prompts.shape[1] != kw["prompt_len"] or g.meta["vocab_size"] != lm.vocab_size:
            raise ValueError(f"{name} must hold ({n}, {T}) tokens of vocabulary {lm.vocab_size} after prompts of {kw['prompt_len']}")
    targets = generate_synthetic(lm, algo, n=n_eval, seed=seed + TARGET_SEED_OFFSET, **kw, **params)
    return StealingTexts(lm, wm, base, held_out, targets)


def attack_point(haul: StealingTexts, n_stolen: int, *, use_base: bool = True, boost: float = 4.0, budget: float = 0.5, seed: int = 0,
                 level: float = LEVEL) -> dict:
    """Steal from the first ``n_stolen`` texts of ``haul``; spoof and scrub; score with the owner's detector.

    Parameters
    ----------
    haul : StealingTexts
        The texts (:func:`generate_stealing_texts`).
    n_stolen : int
        Texts stolen.
    use_base : bool, optional
        Whether the attacker has the base-LM texts.
    boost : float, optional
        The spoofer's logit boost.
    budget : float, optional
        The scrubber's largest edit share.
    seed : int, optional
        Seed of the spoofing and scrubbing draws.
    level : float, optional
        Detection level of success (default :data:`LEVEL`).

    Returns
    -------
    dict
        The scheme and sizes; ``spoof_success`` (share of spoofed texts with p <= level) and
        ``spoof_median_log10_p``; ``scrub_success`` (share of the targets detected at ``level`` that are no
        longer detected after scrubbing), ``scrub_edit_rate``, the blind baseline at that rate
        (``scrub_blind_success``, ``scrub_blind_edit_rate``), ``detected_before``; the estimate's accuracy,
        precision, recall, window coverage and mean list size.
    """
    m = haul.wm.meta
    est = estimate_green(haul.wm, haul.base if use_base else None, n_stolen=n_stolen)
    acc = estimate_accuracy(est, m["key"], m["gamma"], haul.held_out, seeding=m.get("seeding", seeding_mod.DEFAULT))
    n_eval, T = haul.targets.tokens.shape
    sp = spoof(haul.lm, est, m, n=n_eval, T=T, seed=seed + SPOOF_SEED_OFFSET, boost=boost, prompt_len=haul.targets.prompts.shape[1])
    lp_spoof = detectors.score(sp, haul.lm).log10_p
    det0 = detectors.score(haul.targets, haul.lm).log10_p <= math.log10(level)
    scrubbed, rate = scrub(haul.lm, est, haul.targets, seed=seed + SPOOF_SEED_OFFSET, budget=budget)
    det1 = detectors.score(scrubbed, haul.lm).log10_p <= math.log10(level)
    blind, brate = scrub(haul.lm, est, haul.targets, seed=seed + SPOOF_SEED_OFFSET, budget=1.0, blind_rate=float(rate.mean()))
    det_blind = detectors.score(blind, haul.lm).log10_p <= math.log10(level)
    removed = lambda d: float(np.sum(det0 & ~d) / max(1, det0.sum()))  # noqa: E731
    return dict(
        algo=m["algo"], h=int(m["h"]), gamma=float(m["gamma"]), delta=m.get("delta"), Delta=m.get("Delta"), n_stolen=int(n_stolen),
        T=int(T), vocab_size=int(m["vocab_size"]), lm=m["lm"], use_base=use_base, boost=boost, budget=budget, n_eval=int(n_eval),
        spoof_success=float(np.mean(lp_spoof <= math.log10(level))), spoof_median_log10_p=float(np.median(lp_spoof)),
        scrub_success=removed(det1), scrub_edit_rate=float(rate.mean()), scrub_blind_success=removed(det_blind),
        scrub_blind_edit_rate=float(brate.mean()), detected_before=float(det0.mean()),
        green_estimate_accuracy=acc["accuracy"], green_estimate_precision=acc["precision"], green_estimate_recall=acc["recall"],
        window_coverage=acc["coverage"], mean_estimated_list_size=est.mean_list_size(), seeding=m.get("seeding", seeding_mod.DEFAULT),
    )


def steal_curve(lm: SyntheticLM, algo: str, n_values, *, T: int = 32, n_eval: int = 200, seed: int = 0, key: int = defaults.KEY,
                h: int = 1, boost: float = 4.0, budget: float = 0.5, use_base: bool = True, **params) -> list[dict]:
    """:func:`attack_point` for each N in ``n_values`` (one haul of max(N) texts, prefixes stolen).

    Parameters
    ----------
    lm : SyntheticLM
        The LM.
    algo : str
        One of :data:`STEALABLE_ALGOS`.
    n_values : sequence of int
        The N stolen, ascending, positive.
    T, n_eval, seed, key, h : int, optional
        As in :func:`generate_stealing_texts`.
    boost, budget : float, optional
        The spoofer's boost and the scrubber's budget (:func:`attack_point`).
    use_base : bool, optional
        Whether the attacker has the base-LM texts.
    **params
        The algorithm's parameters.

    Returns
    -------
    list of dict
        One :func:`attack_point` per N.

    Raises
    ------
    ValueError
        If ``n_values`` is empty or not positive.
    """
    n_values = sorted(int(v) for v in n_values)
    if not n_values or n_values[0] < 1:
        raise ValueError(f"n_values must be positive integers; got {n_values}")
    haul = generate_stealing_texts(lm, algo, n_max=n_values[-1], T=T, n_eval=n_eval, seed=seed, key=key, h=h, **params)
    with progress(n_values, desc=f"steal {algo} h={h}", unit="N") as bar:
        return [attack_point(haul, N, use_base=use_base, boost=boost, budget=budget, seed=seed) for N in bar]


def owner_texts(haul: StealingTexts, n: int, seed: int) -> Generation:
    """``n`` fresh texts of the owner's scheme: the owner's calibration texts for the spoof test.

    Parameters
    ----------
    haul : StealingTexts
        Its LM, algorithm, parameters, key, text and prompt lengths are used.
    n : int
        Texts.
    seed : int
        Sampling seed.

    Returns
    -------
    Generation
    """
    m = haul.wm.meta
    params = registry.own(m["algo"], {k: m[k] for k in registry.PARAMS if m.get(k) is not None})
    return generate_synthetic(haul.lm, m["algo"], n=int(n), T=haul.wm.tokens.shape[1], seed=int(seed), key=m["key"], h=m["h"],
                    green_kind=m["green_kind"], prompt_len=haul.wm.prompts.shape[1], **params)


def spoof_test_power(haul: StealingTexts, n_stolen: int, *, n_reference: int | None = None, n_calibration: int = 500, boost: float = 4.0,
                     seed: int = 0, level: float = 0.01) -> dict:
    """The owner's spoof test (:mod:`sims.steal.spoof_test`): its FPR and power.

    Tested on genuine vs spoofed texts that the watermark detector flags at :data:`LEVEL`.

    The attacker steals the first ``n_stolen`` texts of the haul and spoofs ``n_eval`` texts; the
    owner's reference is its first ``n_reference`` watermarked texts (default all of the haul's: the
    owner keeps what it served, which includes what the attacker saw); its calibration is
    ``n_calibration`` fresh genuine texts it flags (seed offset ``CALIB_SEED_OFFSET``); the genuine
    texts tested are the haul's targets (another seed), so they and the calibration are exchangeable
    and the FPR is at most ``level`` in expectation.

    Parameters
    ----------
    haul : StealingTexts
        The texts.
    n_stolen : int
        Texts stolen.
    n_reference : int, optional
        The owner's reference texts, in [1, haul.wm.n].
    n_calibration : int, optional
        Fresh genuine texts drawn for calibration (those flagged are kept).
    boost : float, optional
        The spoofer's logit boost.
    seed : int, optional
        Seed of the draws.
    level : float, optional
        Level of the spoof test, in (0, 1).

    Returns
    -------
    dict
        The scheme and sizes (``n_reference``, ``n_calibration`` kept); ``genuine_flagged`` /
        ``spoofed_flagged`` and ``genuine_mean_z`` / ``spoofed_mean_z``; ``fpr`` (genuine texts rejected as
        spoofed) and ``power`` (spoofed texts rejected), each with its 95% Clopper-Pearson interval
        (``fpr_ci95``, ``power_ci95``).

    Raises
    ------
    ValueError
        If ``n_reference``, ``n_calibration`` or ``level`` is out of range.
    """
    from sims.experiments.evaluate import clopper_pearson

    m = haul.wm.meta
    nref = haul.wm.n if n_reference is None else int(n_reference)
    if not (1 <= nref <= haul.wm.n):
        raise ValueError(f"n_reference must be in [1, {haul.wm.n}] (the watermarked texts given); got {n_reference}")
    if int(n_calibration) < 1:
        raise ValueError(f"n_calibration must be in [1, inf); got {n_calibration!r}")
    if not (0.0 < level < 1.0):
        raise ValueError(f"level must be in (0, 1); got {level!r}")
    est = estimate_green(haul.wm, haul.base, n_stolen=n_stolen)
    n_eval, T = haul.targets.tokens.shape
    sp = spoof(haul.lm, est, m, n=n_eval, T=T, seed=seed + SPOOF_SEED_OFFSET, boost=boost, prompt_len=haul.targets.prompts.shape[1])
    flagged = lambda g: detectors.score(g, haul.lm).log10_p <= math.log10(LEVEL)  # noqa: E731
    cal = owner_texts(haul, n_calibration, seed + CALIB_SEED_OFFSET)
    keep = flagged(cal)
    test = spoof_test.SpoofTest.fit(haul.wm.tokens[:nref], haul.wm.prompts[:nref], cal.tokens[keep], cal.prompts[keep], key=m["key"],
                                    gamma=m["gamma"], h=m["h"], kind=m["green_kind"], vocab_size=m["vocab_size"])
    out = dict(algo=m["algo"], h=int(m["h"]), gamma=float(m["gamma"]), delta=m.get("delta"), T=int(T), n_stolen=int(n_stolen),
               n_reference=nref, n_calibration=int(keep.sum()), level=level, boost=boost, seed=seed)
    for name, g in (("genuine", haul.targets), ("spoofed", sp)):
        f = flagged(g)
        z = test.statistic(g.tokens[f], g.prompts[f])
        k, nn = int(np.sum(test.log10_p(g.tokens[f], g.prompts[f]) <= math.log10(level))), int(f.sum())
        out[f"{name}_flagged"] = nn
        out[f"{name}_mean_z"] = float(z.mean()) if nn else float("nan")
        out[f"{name}_rejected"] = k / max(1, nn)
        out[f"{name}_rejected_ci95"] = clopper_pearson(k, nn) if nn else (0.0, 1.0)
    out["fpr"], out["power"] = out.pop("genuine_rejected"), out.pop("spoofed_rejected")
    out["fpr_ci95"], out["power_ci95"] = out.pop("genuine_rejected_ci95"), out.pop("spoofed_rejected_ci95")
    return out


def steal_texts(lm, algo: str, *, n: int, n_eval: int, T: int, seed: int = 0, key=defaults.KEY, h: int = defaults.H, prompts=None,
                use_base: bool = False, batch: int | None = None, **params) -> tuple[Generation, Generation | None, Generation]:
    """A stealing attacker's texts on any LM (:func:`sims.get_lm`).

    ``n`` watermarked texts of ``algo``, optionally ``n`` base texts, and ``n_eval`` held-out base texts.

    A synthetic LM: the texts of :func:`generate_stealing_texts` (prompts sampled from the LM).  A real LM: the
    held-out texts follow the last ``n_eval`` prompts of the set ``prompts`` (default lfqa; sampling
    seed ``seed + EVAL_SEED_OFFSET``); the watermarked texts cycle over the other prompts (row i after
    prompt ``i mod (set size - n_eval)``, seed ``seed``; rows that share a prompt still differ, each
    drawing from its own stream), the base texts likewise with seed ``seed + BASE_SEED_OFFSET``.
    Random test models (no tokenizer) draw ``n + n_eval`` random prompts.

    Parameters
    ----------
    lm : sims.lm.door.LM
        Any LM.
    algo : str
        The watermark.
    n, n_eval : int
        Watermarked (and base) texts, and held-out texts, >= 1.
    T : int
        Tokens per text.
    seed : int, optional
        Sampling seed.
    key : int, optional
        The owner's key.
    h : int, optional
        Context width of the green-list hash.
    prompts : str, optional
        A real LM's prompt set (lfqa, news or a JSONL file).
    use_base : bool, optional
        Also return the base texts.
    batch : int, optional
        A real LM's rows per forward pass.
    **params
        The algorithm's parameters.

    Returns
    -------
    wm : Generation
        The watermarked texts.
    base : Generation or None
        The base texts, or None without ``use_base``.
    held_out : Generation
        The held-out base texts.

    Raises
    ------
    ValueError
        If ``n`` or ``n_eval`` < 1, ``prompts`` / ``batch`` are given with a synthetic LM, or ``n_eval`` is not
        below the prompt set's size.
    """
    if int(n) < 1 or int(n_eval) < 1:
        raise ValueError(f"n and n_eval must be in [1, inf); got n={n}, n_eval={n_eval}")
    lm = get_lm(lm)
    if not lm.real:
        if prompts is not None or batch is not None:
            raise ValueError(f"prompts and batch apply to real LMs; synthetic LM {lm.name!r} samples its prompts")
        haul = generate_stealing_texts(lm, algo, n_max=int(n), T=T, n_eval=int(n_eval), seed=seed, key=key, h=h, **params)
        return haul.wm, haul.base if use_base else None, haul.held_out
    source = DEFAULT_PROMPTS if prompts is None else prompts
    ids = lm.prompt_ids(source, None if lm.tokenizer is not None else int(n) + int(n_eval), seed=seed)
    if len(ids) <= int(n_eval):
        raise ValueError(f"n_eval must be below the {len(ids)} prompts of {source!r} (the rest prompt the stolen texts); got {n_eval}")
    pool, held = ids[: len(ids) - int(n_eval)], ids[len(ids) - int(n_eval) :]
    rows = [pool[i % len(pool)] for i in range(int(n))]
    kw = dict(key=key, h=h, batch=batch)
    wm = generate_any(lm, algo, n=int(n), T=T, seed=seed, prompts=rows, **kw, **params)
    null = {k: params[k] for k in ("prf",) if k in params} | {"gamma": wm.meta["gamma"]}
    base = generate_any(lm, "none", n=int(n), T=T, seed=seed + BASE_SEED_OFFSET, prompts=rows, **kw, **null) if use_base else None
    held_out = generate_any(lm, "none", n=int(n_eval), T=T, seed=seed + EVAL_SEED_OFFSET, prompts=held, **kw, **null)
    return wm, base, held_out
