r"""The likelihood-ratio (boost-weighted) score of red-green watermarks, for a detector that holds
the LM, with its exact null tail.

A soft red list with boost :math:`\delta` draws :math:`y_t` with probability
:math:`p_t(y) e^{\delta X_t(y)} / (1 + (e^\delta - 1) G_t)`, :math:`X_t(y)` = 1 if y is green and
:math:`G_t` the green mass of :math:`p_t`.  Write :math:`G_t = p_t(y_t) X_t + R_t`, with :math:`R_t`
the green mass of the *other* tokens.  The per-token log likelihood ratio against the unwatermarked
LM is affine in the green indicator :math:`X_t = X_t(y_t)`:

.. math:: \ln \mathrm{LR}_t = w_t X_t + c_t,\qquad
          w_t = \delta + \ln\bigl(1 + (e^\delta - 1) R_t\bigr) - \ln\bigl(1 + (e^\delta - 1)(R_t + p_t(y_t))\bigr) \in [0, \delta],

so the Neyman-Pearson statistic for a known boost is :math:`\sum_t w_t X_t`: a token the LM was
sure of (:math:`p_t(y_t) \to 1`) weighs 0, an unlikely one weighs :math:`\delta`.  The green count is
the special case :math:`w_t \equiv 1` (and the hard watermark's limit :math:`\delta \to \infty`).

**Exact null.**  Under the null (text independent of the key) with Bernoulli green lists, the
colour of :math:`y_t` is a coin of its own, independent of the coins of the other tokens that
make :math:`R_t`, so given the weights the :math:`X_t` are i.i.d. Bernoulli(gamma) -- provided no
context window repeats (a repeated context shares its coins between two positions): the score
keeps the first occurrence of each context window only.  Under another seeding scheme
(:mod:`sims.core.seeding`) windows share coins -- one seed for several windows under ``minhash`` and
``skipgram``; under ``selfhash`` the coin of a candidate whose own term is the minimum after both
windows -- so the score keeps each (seed, token) pair once (the fixed-length detector's dedup) and
computes a kept position's weight with every coin that is another kept position's own colour replaced
by its null mean gamma (:func:`sims.detect.stats._seeding_kernels.shared_coin_mass`): the weights then read
no scored colour, and the kept colours, distinct pairs, are i.i.d. Bernoulli(gamma) given them.  The weights are rounded to
``LR_LEVELS`` levels, :math:`k_t = \mathrm{round}(L w_t / \delta)`; the statistic is the integer
:math:`S = \sum_t k_t X_t`, whose null law is the exact lattice law of a weighted Bernoulli
sum, computed after exponential tilting at the observed S (:func:`weighted_bernoulli_logsf`;
tested against 50-digit mpmath enumeration).

The boost :math:`\delta`: the generation's ``delta`` (SRL), DualGA's certainty-equivalent
:math:`\lambda_1 = \delta^*(\Delta, \gamma)` (replaying DualGA's own :math:`\lambda_t` on the text
would make the weights depend on earlier colours and break the exact null), and equal weights
for the hard watermark.
"""

from __future__ import annotations

import math

import numpy as np

from sims.core import prf as prf_mod
from sims.core import seeding as seeding_mod
from sims.detect.stats import _score_kernels as SK
from sims.detect.stats._seeding_kernels import seeded_green_masses, shared_coin_mass
from sims.detect.stats.nulls import LN10
from sims.detect.stats.scores import DetectResult, token_scores
from sims.watermarks import registry

LR_SCORES = ("lr",)  #: the score names this module adds (``--score lr``)
LR_ALGOS = registry.names(lr_score=True)  #: boosting watermarks with a known boost (their records' lr_score)
LR_LEVELS = 64  #: weight levels of the quantised score


def lr_weights(R, p_y, delta: float) -> np.ndarray:
    r""":math:`w_t` of the module docstring (nats), from the other tokens' green mass ``R`` and ``p_y``.

    Parameters
    ----------
    R : array_like
        Green mass of the tokens other than the one drawn.
    p_y : array_like
        Probability of the token drawn, broadcast with ``R``.
    delta : float
        The boost, in (0, inf].

    Returns
    -------
    ndarray
        :math:`\delta + \ln(1 + (e^\delta - 1) R) - \ln(1 + (e^\delta - 1)\min(R + p_y, 1))` (all ones for inf).

    Raises
    ------
    ValueError
        If ``delta`` is not positive.
    """
    R, p_y = np.asarray(R, dtype=np.float64), np.asarray(p_y, dtype=np.float64)
    if not delta > 0.0:
        raise ValueError(f"delta must be in (0, inf]; got {delta!r}")
    if math.isinf(delta):
        return np.ones(np.broadcast(R, p_y).shape)
    e = math.expm1(delta)
    return delta + np.log1p(e * R) - np.log1p(e * np.minimum(R + p_y, 1.0))


def quantise(w, delta: float, levels: int = LR_LEVELS) -> np.ndarray:
    """Integer weights ``round(levels * w / delta)`` (``levels`` where delta is infinite).

    Parameters
    ----------
    w : array_like
        Weights in nats, in [0, delta].
    delta : float
        The boost.
    levels : int, default LR_LEVELS
        Number of weight levels.

    Returns
    -------
    ndarray of int64
        Quantised weights in 0..levels.
    """
    if math.isinf(delta):
        return np.full(np.shape(w), levels, dtype=np.int64)
    return np.clip(np.rint(levels * np.asarray(w) / delta), 0, levels).astype(np.int64)


def _tilted(k, gamma, theta):
    lt = np.logaddexp(math.log1p(-gamma), math.log(gamma) + theta * k)
    pi = np.exp(math.log(gamma) + theta * k - lt)
    return pi, float(lt.sum())


def weighted_bernoulli_logsf(k, s: int, gamma: float, *, kernel=SK.tilted_tail) -> float:
    r"""ln :math:`P(\sum_t k_t X_t \ge s)`, :math:`X_t` i.i.d. Bernoulli(gamma), nonnegative integer ``k``; exact.

    With the tilt :math:`\theta \ge 0` that puts the mean at s (:math:`\pi_t = \gamma e^{\theta k_t}/(1 - \gamma + \gamma e^{\theta k_t})`),

    .. math:: \ln P(S \ge s) = \sum_t \ln(1 - \gamma + \gamma e^{\theta k_t}) - \theta s + \ln \sum_{x \ge s} e^{-\theta (x - s)} P_\theta(S = x),

    the last law by the lattice recursion :func:`sims.detect.stats._score_kernels.tilted_tail`.

    Parameters
    ----------
    k : array_like of int
        Nonnegative integer weights.
    s : int
        Threshold.
    gamma : float
        Success probability, in (0, 1).
    kernel : callable, optional
        The tail recursion (the Numba kernel; its NumPy twin in tests).

    Returns
    -------
    float
        The log upper tail (0 for s <= 0, -inf above the sum of the weights).

    Raises
    ------
    ValueError
        If ``gamma`` is outside (0, 1) or a weight is negative.
    """
    if not 0.0 < float(gamma) < 1.0:
        raise ValueError(f"gamma must be in (0, 1); got {gamma!r}")
    k = np.ascontiguousarray(k, dtype=np.int64)
    if k.size and k.min() < 0:
        raise ValueError(f"k must hold nonnegative integers; got min {k.min()}")
    s, total = int(s), int(k.sum())
    if s <= 0:
        return 0.0
    if s > total:
        return -math.inf
    theta = 0.0
    if s > gamma * total:
        lo, hi = 0.0, 1.0
        while float(_tilted(k, gamma, hi)[0] @ k) < s and hi < 1e4:
            lo, hi = hi, 2.0 * hi
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if float(_tilted(k, gamma, mid)[0] @ k) < s else (lo, mid)
        theta = 0.5 * (lo + hi)
    pi, K = _tilted(k, gamma, theta)
    tail = kernel(k, pi, s)
    mass = float(np.sum(tail * np.exp(-theta * np.arange(tail.size))))
    return min(0.0, K - theta * s + math.log(mass)) if mass > 0 else -math.inf


def first_contexts(seq: np.ndarray, P: int, L: int, h: int) -> np.ndarray:
    """(L,) bool: position t's context window (the h tokens before it) occurs for the first time.

    Parameters
    ----------
    seq : ndarray of int
        Prompt then text.
    P : int
        Prompt length (the text starts at ``seq[P]``).
    L : int
        Text length.
    h : int
        Context width.

    Returns
    -------
    ndarray of bool, shape (L,)
        True at each window's first occurrence.
    """
    seen, out = set(), np.zeros(L, dtype=bool)
    for t in range(L):
        w = tuple(seq[P + t - h : P + t].tolist())
        out[t] = w not in seen
        seen.add(w)
    return out


def lr_delta(meta: dict) -> float:
    r"""The boost the LR weights use for a generation's algorithm (module docstring): its record's
    :meth:`sims.watermarks.registry.Boost.lr` (SRL's delta, DualGA's lambda_1, the hard watermark's inf).

    Parameters
    ----------
    meta : dict
        A generation's metadata.

    Returns
    -------
    float
        The boost :math:`\delta` (inf for the hard watermark).

    Raises
    ------
    ValueError
        If the algorithm has no LR score.
    """
    algo = meta["algo"]
    rec = registry.get(algo) if algo in registry.names() else None
    if rec is None or not rec.lr_score:
        raise ValueError(f"algo must be one of {LR_ALGOS} for the LR score; got {algo!r}")
    return rec.boost.lr(meta)


def lr_token_inputs(gen, lm, key: int, gamma: float, i: int):
    """Per token of text i: green indicator X, green mass G (under a seeding scheme other than ``lefthash``
    with the coins of other kept colours at their null mean, module docstring) and p_t(y_t), and the kept mask.

    Parameters
    ----------
    gen : Generation
        The texts.
    lm : LM
        The LM (its next-token laws along the text).
    key : int
        The key.
    gamma : float
        Green-list fraction.
    i : int
        The text's index.

    Returns
    -------
    X : ndarray of bool, shape (L,)
        Green indicators.
    G : ndarray, shape (L,)
        Green masses of the unwatermarked laws.
    p_y : ndarray, shape (L,)
        Probability of the token drawn.
    keep : ndarray of bool, shape (L,)
        Tokens scored (first context windows, or first (seed, token) pairs).
    """
    m = gen.meta
    h, V = m["h"], m["vocab_size"]
    L = int(gen.lengths[i])  # a Generation always has lengths (record.Generation fills them)
    row = gen.tokens[i, :L]
    if (row < 0).any():
        L = int(np.argmax(row < 0))
        row = row[:L]
    P = gen.prompts.shape[1]
    seq = np.concatenate([gen.prompts[i], row])
    probs = lm.probs_along(seq, P, L)
    G = np.empty(L)
    thr = prf_mod.green_threshold(gamma)
    seeding = seeding_mod.seeding_of(m)
    scheme = seeding_mod.code(seeding)
    if scheme == seeding_mod.LEFTHASH:
        SK.green_masses(probs, seq, P, h, np.uint64(key), thr, G)
        keep = first_contexts(seq, P, L, h)
        X = token_scores(row[None, :], gen.prompts[i : i + 1, -h:], key, stat="green", gamma=gamma, h=h, vocab_size=V)[0][0] > 0.5
    else:  # each (seed, token) pair once; the coins shared with kept colours at their null mean in G
        anchors = seeding_mod.token_hashes(key, np.arange(V)) if scheme == seeding_mod.SELFHASH else np.zeros(0, dtype=np.uint64)
        seeded_green_masses(probs, seq, P, h, np.uint64(key), scheme, seeding_mod.cluster_table(seeding), thr, anchors, prf_mod.token_mix(V), G)
        values, scored = token_scores(row[None, :], gen.prompts[i : i + 1, -h:], key, gamma=gamma, h=h, vocab_size=V, dedup=True, seeding=seeding)
        X, keep = values[0] > 0.5, scored[0]
        shared = np.empty(L)
        shared_coin_mass(probs, seq, P, h, np.uint64(key), scheme, seeding_mod.cluster_table(seeding), keep, values[0], thr / float(prf_mod.TOP53), shared)
        G -= shared
    p_y = probs[np.arange(L), row]
    return X, G, p_y, keep


def score_lr(gen, lm, *, key: int | None = None, gamma: float | None = None, delta: float | None = None,
             levels: int = LR_LEVELS) -> DetectResult:
    """The LR score of every text of a generation (Bernoulli green lists, SplitMix64 PRF, any seeding
    scheme of :mod:`sims.core.seeding`, read from ``gen.meta``), exact log10 p.

    Parameters
    ----------
    gen : Generation
    lm : SyntheticLM the texts came from (the detector's model access)
    key, gamma : default the generation's
    delta : float in (0, inf], default :func:`lr_delta` of the generation (pass the watermark's to
        score unwatermarked texts with its detector)
    levels : int >= 1, weight levels

    Returns
    -------
    DetectResult: ``score`` the integer statistic S, ``n_scored`` the kept tokens, ``z`` nan.
    """
    m = gen.meta
    if m.get("green_kind", "bernoulli") != "bernoulli" or m.get("prf", "splitmix64") != "splitmix64":
        raise ValueError("the LR score needs Bernoulli green lists keyed by splitmix64")
    if int(levels) != levels or levels < 1:
        raise ValueError(f"levels must be an integer in [1, inf); got {levels!r}")
    key = m["key"] if key is None else int(key)
    gamma = float(m["gamma"] if gamma is None else gamma)
    delta = lr_delta(m) if delta is None else float(delta)
    if not delta > 0.0:
        raise ValueError(f"delta must be in (0, inf]; got {delta!r}")
    g_eff = prf_mod.green_threshold(gamma) / float(prf_mod.TOP53)
    n_txt = gen.tokens.shape[0]
    S, n, logp = np.zeros(n_txt), np.zeros(n_txt, dtype=np.int64), np.zeros(n_txt)
    for i in range(n_txt):
        X, G, p_y, keep = lr_token_inputs(gen, lm, key, gamma, i)
        k = quantise(lr_weights(G - p_y * X, p_y, delta), delta, levels)[keep]
        s = int(k[X[keep]].sum())
        S[i], n[i] = s, keep.sum()
        logp[i] = weighted_bernoulli_logsf(k, s, g_eff) if n[i] > 1 else 0.0
    short = n <= 1
    return DetectResult(n, S, np.full(n_txt, np.nan), np.where(short, 0.0, logp / LN10), short)
