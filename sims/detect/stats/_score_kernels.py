"""Numba kernels of the score families (:mod:`sims.detect.stats.gumbel_scores`, :mod:`sims.detect.stats.lr_scores`),
each with the plain NumPy reference beside it that the tests hold equal.

* :func:`crossing_logp` -- ln P(some uniform order statistic falls on or below its boundary),
  the exact null tail of higher criticism and Tr-GoF (a Noe-type recursion on the counts of
  points below each boundary, in log space);
* :func:`tilted_tail` -- the lattice law, from ``s`` up, of a sum of independent two-point
  variables ``k_t X_t``, ``X_t ~ Bernoulli(pi_t)`` (the likelihood-ratio score's null, tilted);
* :func:`green_masses` -- the green mass :math:`G_t` of every step of a text (the LR weights).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit
from scipy.special import gammaln, logsumexp

from sims.core import prf

NEG = -np.inf
TAIL_CUT = 45.0  # a binomial tail sum stops past the mode once a term is e^-45 below the running sum


@njit(cache=True, inline="always")
def _lae(a, b):
    """ln(e^a + e^b)."""
    if a == -np.inf:
        return b
    if b == -np.inf:
        return a
    if a > b:
        return a + math.log1p(math.exp(b - a))
    return b + math.log1p(math.exp(a - b))


@njit(cache=True)
def crossing_logp(b, lfact):
    r"""ln P(exists i: U_(i) <= b_i) for n = len(b) i.i.d. U(0, 1), ``b`` nondecreasing in [0, 1).

    With :math:`M_i = \#\{t: U_t \le b_i\}`, the event is :math:`\{\exists i: M_i \ge i\}`; given
    :math:`M_i = m` the next count is :math:`m + \mathrm{Bin}(n - m, (b_{i+1} - b_i)/(1 - b_i))`.
    The recursion carries :math:`\ln P(M_i = m, \text{no crossing yet})` for m < i and adds the
    mass that jumps to :math:`M_{i+1} \ge i + 1` (positive terms only: exact in log space).
    ``lfact[j] = ln j!`` for j <= n.
    """
    n = b.shape[0]
    state = np.full(n + 1, NEG)
    new = np.full(n + 1, NEG)
    if b[0] <= 0.0:
        state[0] = 0.0
        cross = NEG
    else:
        l0 = n * math.log1p(-b[0])
        state[0] = l0
        cross = math.log(-math.expm1(l0))
    for i in range(1, n):  # from boundary b_i (1-based i = this i) to b_{i+1}
        if b[i - 1] >= 1.0:
            return 0.0
        q = (b[i] - b[i - 1]) / (1.0 - b[i - 1])
        if q <= 0.0:
            continue
        if q >= 1.0:  # every remaining point falls below b_{i+1} = 1
            q = 1.0
        lq = math.log(q)
        l1q = math.log1p(-q) if q < 1.0 else NEG
        for m in range(i + 1):
            new[m] = NEG
        for m in range(i):
            sm = state[m]
            if sm == NEG:
                continue
            N = n - m
            base = sm + lfact[N]
            for j in range(i - m + 1):  # stays at or below i: no crossing
                if q == 1.0 and j < N:
                    continue
                term = base - lfact[j] - lfact[N - j] + j * lq + ((N - j) * l1q if N > j else 0.0)
                new[m + j] = _lae(new[m + j], term)
            j0 = i + 1 - m
            if j0 > N:
                continue
            mode = (N + 1) * q
            acc = NEG
            for j in range(j0, N + 1):
                term = base - lfact[j] - lfact[N - j] + j * lq + ((N - j) * l1q if N > j else 0.0)
                acc = _lae(acc, term)
                if j > mode and term < acc - TAIL_CUT:
                    break
            cross = _lae(cross, acc)
        for m in range(i + 1):
            state[m] = new[m]
    return min(cross, 0.0)


def crossing_logp_reference(b) -> float:
    """NumPy twin of :func:`crossing_logp`: the same recursion with whole binomial rows in log space."""
    b = np.asarray(b, dtype=np.float64)
    n = b.size
    lf = gammaln(np.arange(n + 2) + 1.0)

    def lpmf(N, q):
        j = np.arange(N + 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            t = lf[N] - lf[j] - lf[N - j] + j * np.log(q) + (N - j) * np.log1p(-q)
        t[(j == 0) & (q == 0)] = 0.0
        t[(j == N) & (q == 1)] = 0.0
        return np.nan_to_num(t, nan=NEG)

    state = np.full(n + 1, NEG)
    parts = []
    if b[0] <= 0:
        state[0] = 0.0
    else:
        state[0] = n * np.log1p(-b[0])
        parts.append(np.log(-np.expm1(state[0])))
    for i in range(1, n):
        q = min(1.0, (b[i] - b[i - 1]) / (1.0 - b[i - 1]))
        if q <= 0:
            continue
        new = np.full(n + 1, NEG)
        for m in range(i):
            if state[m] == NEG:
                continue
            t = state[m] + lpmf(n - m, q)
            keep = min(i - m, n - m)
            new[m : m + keep + 1] = np.logaddexp(new[m : m + keep + 1], t[: keep + 1])
            if i + 1 - m <= n - m:
                parts.append(logsumexp(t[i + 1 - m :]))
        state = new
    return min(0.0, float(logsumexp(parts))) if parts else NEG


@njit(cache=True)
def tilted_tail(k, pi, s):
    r"""``P(S = x)`` for x = s, s+1, ..., sum(k) where :math:`S = \sum_t k_t X_t`, :math:`X_t \sim
    \mathrm{Bernoulli}(\pi_t)` independent and ``k`` nonnegative integers.  The caller passes the
    exponentially tilted :math:`\pi_t(\theta)`, so the returned masses sit near ``s`` and stay in
    range however deep the untilted tail is (:func:`sims.detect.stats.lr_scores.weighted_bernoulli_logsf`)."""
    total = 0
    for t in range(k.shape[0]):
        total += k[t]
    pmf = np.zeros(total + 1)
    pmf[0] = 1.0
    top = 0
    for t in range(k.shape[0]):
        kt = k[t]
        p1 = pi[t]
        p0 = 1.0 - p1
        if kt == 0:
            continue
        for x in range(top, -1, -1):
            v = pmf[x]
            pmf[x + kt] += v * p1
            pmf[x] = v * p0
        top += kt
    out = pmf[max(0, min(s, total + 1)) :] if s <= total else np.zeros(0)
    return out


def tilted_tail_reference(k, pi, s) -> np.ndarray:
    """NumPy twin of :func:`tilted_tail` (one shifted add per token)."""
    k = np.asarray(k, dtype=np.int64)
    total = int(k.sum())
    pmf = np.zeros(total + 1)
    pmf[0] = 1.0
    for kt, p1 in zip(k, pi):
        if kt == 0:
            continue
        shifted = np.zeros_like(pmf)
        shifted[kt:] = pmf[: total + 1 - kt] * p1
        pmf = pmf * (1.0 - p1) + shifted
    return pmf[max(0, s) :] if s <= total else np.zeros(0)


@njit(cache=True)
def green_masses(probs, seq, P, h, key, thr, G):
    """``G[t]`` = green mass of ``probs[t]`` under the Bernoulli green list keyed by the ``h`` tokens
    before position ``P + t`` of ``seq`` (the same bits as :func:`sims.core.prf.is_green_nb`)."""
    for t in range(probs.shape[0]):
        ctx = prf.context_hash_nb(key, seq[P + t - h : P + t], prf.GREEN)
        g = 0.0
        for v in range(probs.shape[1]):
            if prf.is_green_nb(ctx, v, thr):
                g += probs[t, v]
        G[t] = g


def green_masses_reference(probs, seq, P, h, key, gamma) -> np.ndarray:
    """NumPy twin of :func:`green_masses`."""
    T, V = probs.shape
    windows = np.stack([seq[P + t - h : P + t] for t in range(T)])
    ctx = prf.context_hash(key, windows, prf.GREEN)
    return np.sum(np.where(prf.green_mask(ctx, V, gamma), probs, 0.0), axis=1)
