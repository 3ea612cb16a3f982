r"""The planner's power of the likelihood-ratio score ``lr`` from its per-position laws, in NumPy only.

The method (a representative weight profile, its exact critical sum, the tilted linearisation and the
central limit theorem) is described in :mod:`sims.plan.scores`, which builds the laws
(:func:`~sims.plan.scores.lr_position_laws`) and computes the exact critical sums
(:func:`lr_critical_sum`, Numba, imported when called).  This module holds the part a query
runs every time, so that a query whose laws and critical sums come from the planner's disk cache
(:mod:`sims.plan.cache`) loads neither Numba nor scipy: :func:`lr_power_function` takes
the critical sums known so far and imports the Numba code only for a length it has not met.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import numpy as np

from sims.core import defaults

LR_TEXTS = 16  #: texts of the LM sample for the LR score (full next-token distributions per position)
LR_T0 = 128  #: tokens per text
LR_SEED = 20240601  #: seed of the LR score's LM sample (distinct from the planner's PLAN_SEED)
LR_NORMAL = -640.0  #: ln of the smallest R_s trusted (the tilted law's lost terms are < 1e-308 each)


def _ndtr(z: np.ndarray) -> np.ndarray:
    """The standard normal cdf, :math:`\\mathrm{erfc}(-z/\\sqrt2)/2` (full relative precision in the lower tail)."""
    return np.array([0.5 * math.erfc(-float(x) / math.sqrt(2.0)) for x in np.ravel(z)])


def lr_power_function(laws: np.ndarray, gamma: float, fpr: float, rate: float = 0.0, h: int = defaults.H,
                      sums: dict[int, int] | None = None, on_new: Callable[[dict[int, int]], None] | None = None,
                      uniform: np.ndarray | None = None):
    r"""``power_at(T)`` of the LR test (:mod:`sims.plan.scores`' docstring) from the laws of
    :func:`~sims.plan.scores.lr_position_laws`.  A random substitution at ``rate`` keeps a
    token and its context window with probability :math:`(1-\rho)^{h+1}` (its law unchanged), puts a uniform
    token in its place with probability :math:`\rho` (the joint law ``uniform`` of a uniformly drawn token at
    that position), and otherwise keeps the token under a changed window (green with probability gamma,
    its weight law unchanged).

    ``sums``: the exact critical sums s*(T) already known at this level (T -> s*; filled in place);
    ``on_new(sums)`` is called after a new one is computed (the planner writes them to its disk cache).

    Parameters
    ----------
    laws : ndarray, shape (n, T0, 2, L + 1)
        Joint law of (colour, weight level) at each position of each sampled text.
    gamma : float
        Null green probability.
    fpr : float
        Level of the test.
    rate : float, default 0.0
        Substitution rate :math:`\rho`.
    h : int, default defaults.H
        Context width.
    sums : dict of int to int, optional
        Known critical sums, filled in place.
    on_new : callable, optional
        Called with ``sums`` after a new critical sum.
    uniform : ndarray, shape (n, T0, 2, L + 1), optional
        Laws of a uniformly drawn token (needed when ``rate > 0``).

    Returns
    -------
    callable
        ``power_at(T) -> float``.

    Raises
    ------
    ValueError
        If ``rate > 0`` and ``uniform`` is missing or misshapen.
    """
    n, T0, _, L1 = laws.shape
    sums = {} if sums is None else sums
    m = laws.sum(axis=2)  # (n, T0, L+1) weight laws
    keep = (1.0 - rate) ** (h + 1)
    a1 = keep * laws[:, :, 1] + (1.0 - rate - keep) * gamma * m  # green mass per weight
    if rate > 0.0:
        if uniform is None or uniform.shape != laws.shape:
            raise ValueError(f"uniform must be the (n, T0, 2, L+1) laws of a uniform token when rate > 0; got {None if uniform is None else uniform.shape}")
        a1 = a1 + rate * uniform[:, :, 1]
        m = (1.0 - rate) * m + rate * uniform.sum(axis=2)
    ks = np.arange(L1, dtype=np.float64)
    cm, ca1 = np.cumsum(m, axis=1), np.cumsum(a1, axis=1)
    a1k = a1 @ ks  # (n, T0) mean green weight per position
    lfpr, lg = math.log(fpr), math.log(gamma) - math.log1p(-gamma)

    @functools.lru_cache(maxsize=512)
    def critical(T: int) -> tuple[float, float]:
        """(theta*, threshold) of the representative profile at length T: the exact critical sum s* of the
        pooled expected weight counts (:func:`sims.detect.stats.lr_scores.weighted_bernoulli_logsf`), the tilt
        that puts the mean at s*, and the tilted log tail there, theta* s* - K(theta*)."""
        r, rem = divmod(int(T), T0)
        counts = np.rint((r * cm[:, -1] + (cm[:, rem - 1] if rem else 0.0)).mean(axis=0)).astype(np.int64)
        if T not in sums:
            sums[T] = lr_critical_sum(counts, gamma, lfpr)
            if on_new is not None:
                on_new(sums)
        hi = sums[T]
        a, b = -12.0, math.log(50.0)
        for _ in range(50):
            th = math.exp(0.5 * (a + b))
            a, b = (0.5 * (a + b), b) if float((counts * ks / (1.0 + np.exp(-(lg + th * ks)))).sum()) < hi else (a, 0.5 * (a + b))
        th = math.exp(0.5 * (a + b))
        return th, th * hi - float((counts * np.logaddexp(math.log1p(-gamma), math.log(gamma) + th * ks)).sum())

    def power_at(T: int) -> float:
        r, rem = divmod(int(T), T0)
        hist = r * cm[:, -1] + (cm[:, rem - 1] if rem else 0.0)  # (n, L+1): expected count of each weight
        g1 = r * ca1[:, -1] + (ca1[:, rem - 1] if rem else 0.0)
        th, thr = critical(int(T))
        kap = np.logaddexp(math.log1p(-gamma), math.log(gamma) + th * ks)  # (L+1,)
        mean = th * (g1 @ ks) - hist @ kap
        # variance: sum over positions of Var(D_t), D_t = th k X - kap(k): E D^2 from histograms, (E D_t)^2 per position
        ed2 = g1 @ (th * ks - kap) ** 2 + (hist - g1) @ kap**2
        per = th * a1k - m @ kap  # (n, T0) E D_t
        sq = np.cumsum(per**2, axis=1)
        var = np.maximum(ed2 - (r * sq[:, -1] + (sq[:, rem - 1] if rem else 0.0)), 1e-300)
        return float(np.mean(_ndtr((mean - thr) / np.sqrt(var))))

    return power_at


def lr_critical_sum(counts: np.ndarray, gamma: float, lfpr: float) -> int:
    r"""The smallest s with :math:`\ln P(\sum_t k_t X_t \ge s) \le` ``lfpr`` (X_t i.i.d. Bernoulli(gamma)) for
    the weights :math:`k_t` holding ``counts[k]`` copies of each level k: the exact critical sum of
    :func:`sims.detect.stats.lr_scores.weighted_bernoulli_logsf`, from one tilted lattice law.

    The tilt :math:`\theta_0` is the Chernoff point of the level (:math:`K(\theta) - \theta K'(\theta)` =
    ``lfpr``), whose mean :math:`K'(\theta_0)` sits next to the critical sum; the tilted law
    :math:`P_{\theta_0}(S = x)` of every x (:func:`sims.detect.stats._score_kernels.tilted_tail`, positive terms
    only) gives every tail at once, :math:`\ln P(S \ge s) = K(\theta_0) - \theta_0 s + \ln R_s` with
    :math:`R_s = \sum_{x \ge s} e^{-\theta_0 (x - s)} P_{\theta_0}(S = x)`, exact to rounding wherever
    :math:`\ln R_s >` ``LR_NORMAL``.  Where it is not (the critical sum far from the Chernoff point) the bisection
    on the exact tail answers.

    Parameters
    ----------
    counts : ndarray of int, shape (L + 1,)
        Number of tokens of each weight level 0..L.
    gamma : float
        Null green probability.
    lfpr : float
        Natural log of the level.

    Returns
    -------
    int
        The critical sum (the total weight plus one when no sum reaches the level).
    """
    from sims.detect.stats import _score_kernels as SK
    from sims.detect.stats import lr_scores as lr

    ks = np.arange(counts.size, dtype=np.float64)
    k = np.repeat(np.arange(counts.size, dtype=np.int64), counts)
    total = int(k.sum())
    lg0, lg1 = math.log1p(-gamma), math.log(gamma)

    def cgf(th):  # K(theta) over the grouped weights, and the Chernoff exponent K(theta) - theta K'(theta)
        lt = np.logaddexp(lg0, lg1 + th * ks)
        K = float(counts @ lt)
        return K, K - th * float(counts @ (ks * np.exp(lg1 + th * ks - lt)))

    a, b = 0.0, 1.0
    while b < 1e4 and cgf(b)[1] > lfpr:
        a, b = b, 2.0 * b
    for _ in range(24):  # any tilt near the Chernoff point serves (the check below says where it does not)
        a, b = (0.5 * (a + b), b) if cgf(0.5 * (a + b))[1] > lfpr else (a, 0.5 * (a + b))
    th = 0.5 * (a + b)
    K = cgf(th)[0]
    pi = np.exp(lg1 + th * k - np.logaddexp(lg0, lg1 + th * k))
    pmf = SK.tilted_tail(k, pi, 0)
    x = np.arange(total + 1)
    with np.errstate(divide="ignore"):
        lw = np.log(pmf) - th * x  # ln(e^-theta x P_theta(S = x))
    logsf = K + np.logaddexp.accumulate(lw[::-1])[::-1]  # ln P(S >= s) = K + ln sum_{x >= s} e^-theta x P_theta(S = x)
    lnR = logsf + th * x - K
    s = int(np.argmax(logsf <= lfpr)) if logsf[-1] <= lfpr else total + 1
    if 0 < s and lnR[s - 1] > LR_NORMAL and (s > total or lnR[s] > LR_NORMAL):  # tail(s - 1) > fpr >= tail(s), both trusted
        return s
    lo, hi = 0, total + 1  # tail(lo) > fpr >= tail(hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if lr.weighted_bernoulli_logsf(k, mid, gamma) > lfpr else (lo, mid)
    return hi
