r"""Numba kernels of the planner's HC / Tr-GoF power (:mod:`sims.plan.scores`).

* :func:`crossing_logp_linear` -- the boundary-crossing probability of
  :func:`sims.detect.stats._score_kernels.crossing_logp` (the same recursion on the counts of points
  below each boundary), carried in linear space with a running log scale: every term is a product
  or a sum of positive numbers, so each keeps its relative precision and only terms below the
  double range (< 1e-300 of the carried mass) are lost.  A result below ``LINEAR_FLOOR`` is
  recomputed by the log-space kernel, so the answer is the log kernel's to rounding everywhere.
  The NumPy reference is :func:`sims.detect.stats._score_kernels.crossing_logp_reference` (tested equal).
* :func:`trgof_bounds_nb` -- Tr-GoF's boundaries :func:`sims.detect.stats.gumbel_scores.trgof_bounds`
  (the same 56-step bisection on :math:`\ln b`), whose NumPy function is the reference.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from sims.detect.stats import _score_kernels as SK

LINEAR_FLOOR = -600.0  #: below e^-600 of crossing probability the log-space kernel answers (lost terms < e^-690)
NEGLIGIBLE = 1e-300  #: a term below this share of the carried mass is dropped (its sum over the recursion < 1e-290)
_TAIL_CUT = math.exp(-SK.TAIL_CUT)  # the log kernel's binomial tail cut, as a ratio


@njit(cache=True)
def crossing_logp_linear(b, lfact):
    r"""ln P(exists i: U_(i) <= b_i) for n = len(b) i.i.d. U(0, 1), ``b`` nondecreasing in [0, 1]
    (:func:`sims.detect.stats._score_kernels.crossing_logp`, in linear space; module docstring).

    ``state[m] * exp(scale)`` is :math:`P(M_i = m, \text{no crossing yet})`; the binomial row of
    :math:`\mathrm{Bin}(N, q)` is walked by the ratio :math:`p_{j+1}/p_j = (N - j) q / ((j + 1)(1 - q))`
    from :math:`(1 - q)^N` (from its log where that underflows); the state is renormalised to a
    largest entry of 1 at every step and terms below ``NEGLIGIBLE`` of it are dropped."""
    n = b.shape[0]
    state = np.zeros(n + 1)
    new = np.zeros(n + 1)
    state[0] = 1.0
    if b[0] <= 0.0:
        scale = 0.0
        cross = -np.inf
    else:
        scale = n * math.log1p(-b[0])
        cross = math.log(-math.expm1(scale))
    for i in range(1, n):
        if b[i - 1] >= 1.0:
            return 0.0
        q = (b[i] - b[i - 1]) / (1.0 - b[i - 1])
        if q <= 0.0:
            continue
        if q > 1.0:
            q = 1.0
        for m in range(i + 1):
            new[m] = 0.0
        acc = 0.0
        lq = math.log(q)
        l1q = math.log1p(-q) if q < 1.0 else -np.inf
        r = q / (1.0 - q) if q < 1.0 else np.inf
        for m in range(i):
            sm = state[m]
            if sm < NEGLIGIBLE:  # below the double range of the carried mass (module docstring)
                continue
            N = n - m
            if q == 1.0:  # every remaining point falls at or below b_{i+1}: all of them cross
                acc += sm
                continue
            l0 = N * l1q
            slow = l0 < -700.0  # (1 - q)^N underflows: each term from its log
            mode = (N + 1) * q
            term = math.exp(l0)
            tail = 0.0
            for j in range(N + 1):
                if slow:
                    term = math.exp(lfact[N] - lfact[j] - lfact[N - j] + j * lq + (N - j) * l1q)
                if j > mode and sm * term < NEGLIGIBLE:
                    break
                if j <= i - m:  # stays at or below i: no crossing
                    new[m + j] += sm * term
                else:
                    tail += term
                    if j > mode and term < tail * _TAIL_CUT:
                        break
                if not slow:
                    term *= (N - j) / (j + 1.0) * r
            acc += sm * tail
        if acc > 0.0:
            cross = SK._lae(cross, math.log(acc) + scale)
        top = 0.0
        for m in range(i + 1):
            state[m] = new[m]
            if new[m] > top:
                top = new[m]
        if top == 0.0:
            break
        for m in range(i + 1):
            state[m] /= top
        scale += math.log(top)
    return min(cross, 0.0)


def crossing_logsf(bounds: np.ndarray, lfact: np.ndarray) -> float:
    """ln P(exists i: U_(i) <= bounds[i]): :func:`crossing_logp_linear`, or the log-space kernel
    below ``LINEAR_FLOOR`` (the answer of :func:`sims.detect.stats.gumbel_scores.crossing_logsf` to rounding)."""
    b = np.ascontiguousarray(np.maximum.accumulate(np.clip(np.asarray(bounds, dtype=np.float64), 0.0, 1.0)))
    v = float(crossing_logp_linear(b, lfact))
    if not v >= LINEAR_FLOOR:
        v = float(SK.crossing_logp(b, lfact))
    return v


@njit(cache=True, inline="always")
def _k_div(u, v, s):
    """K_s(u, v) of :func:`sims.detect.stats.gumbel_scores.k_div` for scalars."""
    if s == 1.0:
        a = u * (math.log(u) - math.log(v)) if u > 0.0 else 0.0
        c = (1.0 - u) * (math.log1p(-u) - math.log1p(-v)) if u < 1.0 else 0.0
        return a + c
    return (1.0 - u**s * v ** (1.0 - s) - (1.0 - u) ** s * (1.0 - v) ** (1.0 - s)) / (s * (1.0 - s))


@njit(cache=True)
def trgof_bounds_nb(c, n, s):
    """b_i(c) of :func:`sims.detect.stats.gumbel_scores.trgof_bounds`: the same bisection, position by position."""
    out = np.zeros(n)
    for i in range(n):
        u = (i + 1) / n
        a, b = -745.0, math.log(u)
        if not n * _k_div(u, math.exp(a), s) >= c:
            continue
        for _ in range(56):
            mid = 0.5 * (a + b)
            if n * _k_div(u, math.exp(mid), s) >= c:
                a = mid
            else:
                b = mid
        out[i] = math.exp(a)
    return out
