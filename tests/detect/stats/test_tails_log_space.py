"""Tail probabilities compared in log space against mpmath, deep enough that a comparison of the
probabilities themselves (``allclose(exp(log_p), p, atol=1e-15)``) could not fail.

* The AutoCov null (:func:`sims.detect.stats.nulls.autocov_logcdf`) at T = 24, gamma = 0.01: every
  reachable cell's ln P(S_T <= s) against a 40-digit mpmath dynamic programme over the colour
  sequences (first colour, last colour, greens, adjacent green pairs), down to ~1e-24.  The
  existing enumeration test (2^T sequences, T <= 12) never goes below 1e-6.
* The same at T = 240, gamma = 0.001 against an independent log-space Markov DP: cells down to
  ~1e-360, where a linear-space cumulative sum returns log(0).
* theory.power.binomial_log_tail and binomial_critical at T = 2000 against 50-digit mpmath sums, down
  to ln p ~ -2770 (p ~ 1e-1200, far below float64's smallest number).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

mpmath = pytest.importorskip("mpmath")


def _autocov_cells(T: int, gamma: float) -> dict:
    """{(A, K, c1, cT): probability} of i.i.d. Bernoulli(gamma) colours, 40-digit mpmath DP."""
    with mpmath.workdps(40):
        g = mpmath.mpf(gamma)
        q = 1 - g
        state = {(1, 1, 1, 0): g, (0, 0, 0, 0): q}  # (c1, last, K, A)
        for _ in range(T - 1):
            nxt: dict = {}
            for (c1, last, K, A), p in state.items():
                for c, pc in ((1, g), (0, q)):
                    key = (c1, c, K + c, A + (last & c))
                    nxt[key] = nxt.get(key, 0) + p * pc
            state = nxt
        return {(A, K, c1, cT): p for (c1, cT, K, A), p in state.items()}


def test_autocov_lower_tail_in_log_space_against_mpmath():
    from sims.detect.stats import nulls

    T, gamma = 24, 0.01
    cells = _autocov_cells(T, gamma)
    exact = Fraction(1, 100)  # gamma = 0.01 up to float rounding (1e-18): only used to group exact ties
    val = {c: c[0] - exact * (2 * c[1] - c[2] - c[3]) for c in cells}
    order = sorted(cells, key=lambda c: val[c])
    with mpmath.workdps(40):
        cdf, acc, i = {}, mpmath.mpf(0), 0
        while i < len(order):
            j = i
            while j < len(order) and val[order[j]] == val[order[i]]:
                acc += cells[order[j]]
                j += 1
            for c in order[i:j]:
                cdf[c] = float(mpmath.log(acc))
            i = j
    keys = list(cdf)
    A, K, c1, cT = (np.array(x) for x in zip(*keys))
    got = nulls.autocov_logcdf(A, K, c1, cT, np.full(len(keys), T), gamma)
    want = np.array([cdf[k] for k in keys])
    assert want.min() < math.log(1e-23)  # the test reaches deep into the tail
    # ln p to 1e-12 absolute (p to 1e-12 relative) near p = 1, and 1e-10 relative in the tail
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def _autocov_log_law(T: int, gamma: float) -> np.ndarray:
    """ln P(c1, cT, K, A) of i.i.d. Bernoulli(gamma) colours by a log-space Markov DP over the colours
    (an algorithm independent of the composition counts of autocov_null_table)."""
    lg, lq = math.log(gamma), math.log1p(-gamma)
    w = np.full((2, 2, T + 1, T), -np.inf)  # [c1, last, K, A]
    w[1, 1, 1, 0], w[0, 0, 0, 0] = lg, lq
    for _ in range(T - 1):
        new = np.full_like(w, -np.inf)
        new[:, 0] = np.logaddexp(w[:, 0], w[:, 1]) + lq  # a red token: K, A unchanged
        new[:, 1, 1:, :] = w[:, 0, :-1, :] + lg  # green after red: K + 1
        new[:, 1, 1:, 1:] = np.logaddexp(new[:, 1, 1:, 1:], w[:, 1, :-1, :-1] + lg)  # green after green: K + 1, A + 1
        w = new
    return w


def test_autocov_tail_below_float64_in_log_space():
    """T = 240, gamma = 0.001: the most negative cells have probability ~1e-360, below float64's
    smallest number; ln P(S_T <= s) of every reachable cell against the DP's log-sum-exp."""
    from sims.detect.stats import nulls

    T, gamma = 240, 0.001
    w = _autocov_log_law(T, gamma)
    c1, cT, K, A = np.nonzero(np.isfinite(w))
    lw = w[c1, cT, K, A]
    m = 2 * K - c1 - cT  # value A - gamma m: with 1000 gamma = 1 and |m| < 1000, ties only at equal (A, m)
    order = np.lexsort((-m, A))  # ascending A - gamma m: A first, then larger m first
    keys = np.stack([A[order], m[order]], axis=1)
    cum = np.logaddexp.accumulate(lw[order])
    last_of_group = np.append(np.any(keys[1:] != keys[:-1], axis=1), True)
    group_end = np.flatnonzero(last_of_group)
    want = cum[group_end[np.searchsorted(group_end, np.arange(order.size))]]
    got = nulls.autocov_logcdf(A[order], K[order], c1[order], cT[order], np.full(order.size, T), gamma)
    assert want.min() < -330 * math.log(10.0)  # exp() of it is 0.0 in float64
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("T, gamma", [(2000, 0.25), (300, 0.01)])
def test_binomial_log_tail_against_mpmath(T, gamma):
    from theory import power

    got = power.binomial_log_tail(T, gamma)
    assert got.shape == (T + 2,) and abs(got[0]) < 1e-12 and got[T + 1] == -math.inf
    with mpmath.workdps(50):
        g = mpmath.mpf(gamma)
        pmf = [mpmath.binomial(T, j) * g**j * (1 - g) ** (T - j) for j in range(T + 1)]
        for k in sorted({1, T // 10, T // 4, T // 2, (3 * T) // 4, T - 1, T}):
            want = float(mpmath.log(mpmath.fsum(pmf[k:])))
            assert got[k] == pytest.approx(want, rel=1e-12, abs=1e-11), k  # abs on ln p: relative on p
    assert got[T] < -700  # exp() of it underflows: only a log-space comparison can see it


def test_binomial_critical_is_exact_in_the_tail():
    """The smallest k with P(Bin(T, gamma) >= k) <= fpr at fpr = 1e-300 (mpmath decides)."""
    from theory import power

    T, gamma, fpr = 2000, 0.25, 1e-300
    k = power.binomial_critical(T, gamma, fpr)
    with mpmath.workdps(50):
        g = mpmath.mpf(gamma)

        def tail(k0):
            return mpmath.fsum(mpmath.binomial(T, j) * g**j * (1 - g) ** (T - j) for j in range(k0, T + 1))

        assert tail(k) <= fpr < tail(k - 1)
