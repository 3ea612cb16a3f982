r"""EWD, the entropy-weighted green count of red-green text (Lu et al. 2024), with its exact null tail.

**The statistic.**  EWD ("An Entropy-based Text Watermarking Detection Method", ACL 2024) weights each
token by an increasing function of the spike entropy of its position,
:math:`S_t = S(p_t, z) = \sum_k p_t(k) / (1 + z\,p_t(k))` with the modulus
:math:`z = (1-\gamma)(e^\delta - 1)/(1 + (e^\delta - 1)\gamma)` of the boost :math:`\delta` (Kirchenbauer et
al. 2023, Definition 4.1 and Theorem 4.2; :mod:`sims.detect.stats.entropies`): a token the LM was sure of
could hardly be moved by the boost and weighs little.  Its weight function is linear, offset by the
text's least spike entropy, :math:`w_t = S_t - \min_u S_u` over the scored tokens (the form of the authors'
release in MarkLLM).  EWD's test is unchanged when every weight of a text is multiplied by one positive number,
so the weights are divided by the text's range :math:`\max_u S_u - \min_u S_u` before they are rounded to the
lattice of multiples of :math:`1/K`, :math:`K` = :data:`EWD_LEVELS` = 32: the lattice resolves 1/K of the text's
own spread of entropies, however narrow (on a near-uniform LM the spike entropies of a text differ by less than
1e-2, and fixed multiples of 1/K would round every weight to 0):

.. math:: k_t = \mathrm{round}\Bigl(K \frac{S_t - \min_u S_u}{\max_u S_u - \min_u S_u}\Bigr) \in \{0, \dots, K\},\qquad
          S = \sum_t k_t X_t ,

(:math:`k_t = K` for every token of a text whose spike entropies are all equal: the green count),
:math:`X_t` the colour of token :math:`t`; the score reported is :math:`S / K`, and the z-score EWD's
:math:`(S - \gamma \sum_t k_t) / \sqrt{\gamma(1-\gamma) \sum_t k_t^2}`.

**Exact null.**  The weights are functions of the text and the LM, not of the key.  Given the text the
colours of distinct (context, token) pairs are i.i.d. Bernoulli(:math:`\gamma`) (Bernoulli green lists;
``dedup`` keeps each pair once, as for the green count of :mod:`sims.detect.stats.scores`), so :math:`S`
is a weighted Bernoulli sum with fixed integer weights and

.. math:: P(S \ge s) = \sum_{x \ge s} P\Bigl(\sum_t k_t X_t = x\Bigr)

is computed exactly by convolving the tokens one at a time over the lattice :math:`\{0, \dots, s\}`, the
states :math:`x \ge s` merged into one absorbing state (:func:`lattice_logsf`): O(:math:`n s`) operations
in log space, so a tail of 1e-300 and far below keeps its relative precision (tested against the
enumeration of all :math:`2^n` outcomes, the binomial tail when the weights are equal, and the tilted
lattice recursion of :func:`sims.detect.stats.lr_scores.weighted_bernoulli_logsf`).  The test is exact
for the statistic as defined: the lattice is part of the statistic, not an approximation of its tail.
Partition green lists (DiPmark's) make the colours of one context's tokens dependent and are refused.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from sims.core import defaults
from sims.core import seeding as seeding_mod
from sims.detect.stats.entropies import spike_entropies, spike_modulus
from sims.detect.stats.marks import null_green_probability
from sims.detect.stats.nulls import LN10
from sims.detect.stats.scores import DetectResult, token_marks
from sims.watermarks import registry

EWD_LEVELS = 32  #: K: the weights are rounded to multiples of 1/K spike-entropy units
EWD_ALGOS = tuple(a for a in (*registry.names(family="redgreen"), *registry.names(family="entropy_gated")) if registry.get(a).green_kind is None)
"""The algorithms whose texts EWD scores: the red-green watermarks with Bernoulli green lists (and plain text)."""


@njit(cache=True, inline="always")
def _logaddexp(x, y):
    if x == -math.inf:
        return y
    if y == -math.inf:
        return x
    m = max(x, y)
    return m + math.log1p(math.exp(-abs(x - y)))


@njit(cache=True)
def _lattice_log_tail(k, s, log_g, log_r):
    """ln P(sum_t k_t X_t >= s), 1 <= s <= sum k: the lattice law over {0..s}, state s absorbing, in log space.

    After token t only the states x >= s - (weight still to come) can reach s; they are the ones updated."""
    a = np.full(s + 1, -math.inf)
    a[0] = 0.0
    rem = 0
    for t in range(k.shape[0]):
        rem += k[t]
    cum = 0
    for t in range(k.shape[0]):
        kt = k[t]
        if kt == 0:
            continue
        rem -= kt
        lo_before = max(0, s - kt - rem)
        jump = -math.inf  # green from x in [s - kt, s - 1]: into the absorbing state
        for x in range(max(lo_before, s - kt), min(s - 1, cum) + 1):
            jump = _logaddexp(jump, a[x])
        a[s] = _logaddexp(a[s], log_g + jump)
        cum += kt
        lo = max(0, s - rem)
        for x in range(min(s - 1, cum), lo - 1, -1):  # descending: a[x - kt] is still the previous token's
            red = log_r + a[x]
            a[x] = _logaddexp(red, log_g + a[x - kt]) if x >= kt else red
    return a[s]


def lattice_logsf(k, s: int, g: float) -> float:
    r"""ln :math:`P(\sum_t k_t X_t \ge s)` for :math:`X_t` i.i.d. Bernoulli(``g``) and nonnegative integer weights ``k``,
    exact (module docstring): 0 for :math:`s \le 0`, :math:`-\infty` above :math:`\sum_t k_t`.

    Parameters
    ----------
    k : 1-d array of nonnegative integers
    s : int
    g : float in (0, 1)

    Returns
    -------
    float (natural log)

    Examples
    --------
    >>> import math
    >>> from sims.detect.stats.ewd_scores import lattice_logsf
    >>> round(math.exp(lattice_logsf([1, 2, 3], 4, 0.5)), 6)  # {1,3}, {2,3}, {1,2,3} of the 8 outcomes
    0.375
    """
    if not 0.0 < float(g) < 1.0:
        raise ValueError(f"g must be in (0, 1); got {g!r}")
    k = np.ascontiguousarray(k, dtype=np.int64).ravel()
    if k.size and k.min() < 0:
        raise ValueError(f"k must hold nonnegative integers; got min {k.min()}")
    s = int(s)
    if s <= 0:
        return 0.0
    if s > int(k.sum()):
        return -math.inf
    return min(0.0, float(_lattice_log_tail(k, s, math.log(g), math.log1p(-g))))


def ewd_delta(meta: dict, algo: str) -> float:
    r"""The boost :math:`\delta` of the spike entropy's modulus for texts of ``algo``: its record's boost
    (:meth:`sims.watermarks.registry.Boost.lr`: SRL's and SWEET's delta, DualGA's lambda_1, the hard list's inf) read from
    the generation where it is of ``algo``, else from the registry's defaults; ``defaults.DELTA`` for plain text.

    Parameters
    ----------
    meta : dict
        The generation's parameters (``gen.meta``); read only where its ``algo`` is ``algo``.
    algo : str
        The registry name of the watermark whose boost sets the modulus.

    Returns
    -------
    float
        The boost :math:`\delta` in (0, inf] (:func:`sims.detect.stats.entropies.spike_modulus`'s ``delta``).
    """
    rec = registry.get(algo)
    if rec.boost is None:
        return float(defaults.DELTA)
    own = meta if meta.get("algo") == algo else registry.resolve_params(algo)
    return float(rec.boost.lr(own))


def ewd_weights(spike, scored, levels: int = EWD_LEVELS) -> np.ndarray:
    r"""(n, T) integer weights :math:`k_t = \mathrm{round}(K (S_t - \min_u S_u) / (\max_u S_u - \min_u S_u))` in [0, K]
    (module docstring), the extremes over each text's scored tokens (K for all where they are equal); 0 where a token is
    not scored.

    Parameters
    ----------
    spike : array_like of float, shape (n, T)
        The spike entropies :math:`S_t` (:func:`sims.detect.stats.entropies.spike_entropies`).
    scored : array_like of bool, shape (n, T)
        The scored tokens; the extremes are taken over them.
    levels : int >= 1
        K, the lattice of the weights.

    Returns
    -------
    ndarray of int64, shape (n, T)
        The weights :math:`k_t \in \{0, \dots, K\}`, 0 where a token is not scored.
    """
    if int(levels) != levels or levels < 1:
        raise ValueError(f"levels must be an integer in [1, inf); got {levels!r}")
    spike, scored = np.asarray(spike, dtype=np.float64), np.asarray(scored, dtype=bool)
    low = np.min(np.where(scored, spike, np.inf), axis=1, keepdims=True)
    span = np.max(np.where(scored, spike, -np.inf), axis=1, keepdims=True) - low
    with np.errstate(invalid="ignore", divide="ignore"):
        k = np.where(span > 0, np.clip(np.rint(levels * (spike - low) / span), 0, levels), levels)
    return np.where(scored, k, 0).astype(np.int64)


def _ewd_inputs(gen, lm, key, gamma, dedup, algo, delta):
    """(green, scored, spike, g): the scored green tokens, the scored tokens, the spike entropies (n, T) and the null
    green probability of :func:`score_ewd`'s texts, its arguments checked and defaulted as it documents."""
    m = gen.meta
    algo = m["algo"] if algo is None else algo
    if algo not in EWD_ALGOS:
        raise ValueError(f"algo must be one of {EWD_ALGOS} for the EWD score; got {algo!r}")
    green_kind = m.get("green_kind", defaults.GREEN_KIND)
    if green_kind != "bernoulli":
        raise ValueError(f"the EWD score needs Bernoulli green lists (a partition list's colours are dependent); got green_kind={green_kind!r}")
    if lm is None:
        raise ValueError(f"the EWD score reads the model's probabilities (its spike entropies): pass lm for algo {algo!r}")
    key = m["key"] if key is None else int(key)
    gamma = float(m["gamma"] if gamma is None else gamma)
    delta = ewd_delta(m, algo) if delta is None else float(delta)
    values, scored, _ = token_marks(gen.tokens, gen.prompts[:, gen.prompts.shape[1] - m["h"]:], key, stat="green", gamma=gamma, h=m["h"],
                                    dedup=dedup, vocab_size=m["vocab_size"], lengths=gen.lengths, prf=m.get("prf", defaults.PRF),
                                    seeding=seeding_mod.seeding_of(m))
    spike = spike_entropies(gen, lm, spike_modulus(gamma, delta))
    return (values > 0.5) & scored, scored, spike, null_green_probability(gamma, "bernoulli", m["vocab_size"])


def score_ewd(gen, lm, *, key: int | None = None, gamma: float | None = None, dedup: bool = False, algo: str | None = None,
              delta: float | None = None, levels: int = EWD_LEVELS) -> DetectResult:
    """The EWD score of every text of a generation (module docstring), exact log10 p.

    Parameters
    ----------
    gen : Generation
        Texts with Bernoulli green lists (any PRF and seeding scheme of the green count).
    lm : LM or SyntheticLM
        The LM whose next-token distributions give the spike entropies (:func:`sims.get_lm`'s object: a real LM too).
    key, gamma : optional
        Default the generation's.
    dedup : bool
        Score each (context, token) pair once (the exact i.i.d. null on repetitive text needs it).
    algo : str, optional
        The watermark whose boost sets the modulus (default the generation's; one of :data:`EWD_ALGOS`).
    delta : float in (0, inf], optional
        The boost of the modulus (default :func:`ewd_delta`).
    levels : int >= 1
        K, the lattice of the weights.

    Returns
    -------
    DetectResult
        ``score`` the weighted green count S / K, ``z`` EWD's weighted z-score, ``n_scored`` the scored tokens.

    Examples
    --------
    >>> import sims
    >>> from sims.detect.stats.ewd_scores import score_ewd
    >>> lm = sims.get_lm("news", vocab_size=2000)
    >>> gen = sims.generate(lm, "srl", n=2, T=150, seed=0, key=7, delta=2.0)
    >>> bool((score_ewd(gen, lm, dedup=True).log10_p < -4).all()), bool((score_ewd(gen, lm, key=8, dedup=True).log10_p > -4).all())
    (True, True)
    """
    green, scored, spike, g = _ewd_inputs(gen, lm, key, gamma, dedup, algo, delta)
    k = ewd_weights(spike, scored, levels)
    S = (k * green).sum(axis=1)
    n = scored.sum(axis=1)
    logp = np.array([lattice_logsf(k[i][scored[i]], int(S[i]), g) if n[i] > 1 else 0.0 for i in range(n.size)])
    k1, k2 = k.sum(axis=1), (k.astype(np.float64) ** 2).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        z = np.where(k2 > 0, (S - g * k1) / np.sqrt(g * (1.0 - g) * k2), np.nan)
    short = n <= 1
    return DetectResult(n, S / float(levels), z, np.where(short, 0.0, logp / LN10), short)


def ewd_prefix_log10p(gen, lm, lengths, *, key: int | None = None, gamma: float | None = None, dedup: bool = False,
                      algo: str | None = None, delta: float | None = None, levels: int = EWD_LEVELS) -> np.ndarray:
    """Exact log10 p of the EWD score of every prefix of ``lengths`` tokens of every text: each prefix scored as a text
    of its own (its weights rescaled over its own scored tokens), what :func:`score_ewd` gives the text cut there.

    The colours, the (first-occurrence) dedup and the spike entropies of a prefix are those of the whole text up to
    there, so they are computed once.

    Parameters
    ----------
    gen : Generation
        Texts with Bernoulli green lists.
    lm : LM or SyntheticLM
        The LM of the spike entropies.
    lengths : sequence of int
        Prefix lengths, each capped at a text's length; the last column is always the whole text.
    key, gamma, dedup, algo, delta, levels
        As :func:`score_ewd`.

    Returns
    -------
    ndarray of float64, shape (n, len(lengths))
        log10 p of each text's prefixes (0 where a prefix has at most one scored token).
    """
    green, scored, spike, g = _ewd_inputs(gen, lm, key, gamma, dedup, algo, delta)
    full = gen.scored_lengths()
    pos = np.arange(scored.shape[1])
    out = np.zeros((scored.shape[0], len(lengths)))
    for j, L in enumerate(lengths):
        cut = full if j == len(lengths) - 1 else np.minimum(int(L), full)
        sc = scored & (pos[None, :] < cut[:, None])
        k = ewd_weights(spike, sc, levels)
        S = (k * (green & sc)).sum(axis=1)
        for i in range(sc.shape[0]):
            if sc[i].sum() > 1:
                out[i, j] = lattice_logsf(k[i][sc[i]], int(S[i]), g) / LN10
    return out
