"""Tie cases for every rank statistic: the conformal p-value of the spoof test, the mid-rank
correlation behind it, the pair-count lookup, the AutoCov null's "<=" on tied cells, Holm's
step-down on tied p-values and the report's Spearman correlation.

References are computed here independently: counts and averages in plain Python, the AutoCov
law by enumerating every colour sequence.  Flipping the side of a rank search (``side="left"``
vs ``"right"``), ranking ties by order instead of their mean, or counting ties on the wrong
side of a "<=" fails one of these tests.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from sims.detect import multiple
from sims.detect.stats import nulls
from sims.steal import spoof_test as spoof


def _conformal_p(z: float, calibration: list[float]) -> float:
    """(1 + #{j : Z_j >= z}) / (M + 1), counted in plain Python."""
    return (1 + sum(c >= z for c in calibration)) / (len(calibration) + 1)


def test_conformal_p_counts_calibration_ties_as_at_least():
    cal = [1.0, 2.0, 2.0, 2.0, 3.0]
    z = [0.0, 1.0, 2.0, 2.5, 3.0, 4.0]
    got = 10.0 ** spoof.conformal_log10_p(np.array(z), np.array(cal))
    want = [_conformal_p(x, cal) for x in z]
    np.testing.assert_allclose(got, want, rtol=1e-14)
    assert got[2] == pytest.approx(5 / 6) and got[4] == pytest.approx(2 / 6)  # ties count on the "at least" side


def test_conformal_p_of_a_calibration_value_is_valid_under_exchangeability():
    """Each calibration statistic, tested against the other M - 1 plus itself, gets a p-value
    whose distribution over the M + 1 exchangeable draws is super-uniform, ties included:
    P(p <= k / (M + 1)) <= k / (M + 1)."""
    vals = [0.0, 1.0, 1.0, 1.0, 2.0, 2.0, 5.0]
    ps = [_conformal_p(v, vals[:i] + vals[i + 1:]) for i, v in enumerate(vals)]
    got = [float(10.0 ** spoof.conformal_log10_p(np.array([v]), np.sort(np.array(vals[:i] + vals[i + 1:])))[0]) for i, v in enumerate(vals)]
    np.testing.assert_allclose(got, ps, rtol=1e-14)
    M1 = len(vals)
    for k in range(1, M1 + 1):
        assert sum(p <= k / M1 + 1e-15 for p in got) <= k


def _midranks(x: list[float]) -> list[float]:
    """Average ranks (1-based), ties sharing the mean of their positions."""
    order = sorted(range(len(x)), key=lambda i: x[i])
    r = [0.0] * len(x)
    i = 0
    while i < len(x):
        j = i
        while j + 1 < len(x) and x[order[j + 1]] == x[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return r


def _corr_z(x: list[float], g: list[int]) -> float:
    r = _midranks(x)
    n = len(x)
    mr, mg = sum(r) / n, sum(g) / n
    cov = sum((a - mr) * (b - mg) for a, b in zip(r, g))
    den = math.sqrt(sum((a - mr) ** 2 for a in r) * sum((b - mg) ** 2 for b in g))
    return 0.0 if den == 0 else math.sqrt(n - 1) * cov / den


@pytest.mark.parametrize("x, g", [
    ([0.0, 0.0, 1.0, 1.0, 1.0, 3.0], [0, 1, 1, 0, 1, 1]),
    ([2.0, 2.0, 2.0, 0.0, 5.0, 5.0, 1.0], [1, 1, 0, 0, 1, 0, 0]),
    ([1.0, 0.0, 1.0, 0.0, 1.0, 0.0], [1, 0, 1, 0, 0, 1]),
])
def test_rank_correlation_uses_mid_ranks_on_ties(x, g):
    got = spoof.rank_correlation(np.array([x]), np.array([g]))[0]
    assert got == pytest.approx(_corr_z(x, g), rel=1e-12, abs=1e-15)
    # the same multiset of values in another order: a tie-breaking rank would change Z, mid-ranks do not
    perm = np.argsort(np.array(x), kind="stable")[::-1]
    assert spoof.rank_correlation(np.array([x])[:, perm], np.array([g])[:, perm])[0] == pytest.approx(got, rel=1e-12, abs=1e-15)


def test_rank_correlation_of_constant_rows_is_zero():
    assert spoof.rank_correlation(np.array([[1.0, 1.0, 1.0], [0.0, 1.0, 2.0]]), np.array([[1, 0, 1], [1, 1, 1]])).tolist() == [0.0, 0.0]
    assert spoof.rank_correlation(np.array([[3.0]]), np.array([[1]])).tolist() == [0.0]


def test_pair_counts_lookup_at_both_ends_and_between():
    pc = spoof.PairCounts(1, np.array([10, 20, 30], dtype=np.uint64), np.array([5, 6, 7]))
    q = np.array([9, 10, 15, 20, 30, 31], dtype=np.uint64)
    assert pc.count(q).tolist() == [0, 5, 0, 6, 7, 0]
    assert spoof.PairCounts(1, np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.int64)).count(q).tolist() == [0] * 6


def _autocov_cdf_by_enumeration(T: int, gamma: float) -> dict:
    """{(A, K, c1, cT): P(T S_T <= its value)} over every colour sequence of length T."""
    law = []
    for c in itertools.product((0, 1), repeat=T):
        K = sum(c)
        A = sum(c[t] * c[t + 1] for t in range(T - 1))
        val = A - gamma * (2 * K - c[0] - c[-1])
        law.append((val, gamma**K * (1 - gamma) ** (T - K), (A, K, c[0], c[-1])))
    return {key: sum(p for v2, p, _ in law if v2 <= v + 1e-12) for v, _, key in law}


@pytest.mark.parametrize("T, gamma", [(4, 0.5), (5, 0.25)])
def test_autocov_null_counts_tied_cells_as_at_most(T, gamma):
    """gamma = 1/2 makes many cells share a value exactly: each observed cell's p-value includes
    every cell tied with it (P(S <= s)), as the enumeration over all 2^T colourings says."""
    cdf = _autocov_cdf_by_enumeration(T, gamma)
    keys = sorted(cdf)
    A, K, c1, cT = (np.array(v) for v in zip(*keys))
    got = np.exp(nulls.autocov_logcdf(A, K, c1, cT, np.full(len(keys), T), gamma))
    np.testing.assert_allclose(got, [cdf[k] for k in keys], rtol=1e-12)
    vals = [a - gamma * (2 * k - x - y) for a, k, x, y in keys]
    assert len(set(vals)) < len(vals)  # ties present


def test_holm_on_tied_p_values():
    """Two keys with the same p: both are rejected when p <= alpha / 2, neither when alpha / 2 < p
    <= alpha (step-down stops at the first), whatever order the tie is broken in."""
    a = 1e-3
    both = math.log10(a / 2)
    assert multiple.holm(np.array([[both], [both]]), a)[:, 0].tolist() == [True, True]
    mid = math.log10(0.75 * a)
    assert multiple.holm(np.array([[mid], [mid]]), a)[:, 0].tolist() == [False, False]
    adj = multiple.holm_adjusted_log10p(np.array([[mid], [mid]]))
    assert adj[:, 0] == pytest.approx([math.log10(1.5 * a)] * 2)


def test_benjamini_hochberg_on_tied_p_values():
    """Three tied p-values at 2 alpha / 3: all pass step 3 (p <= 3 alpha / 3), so all are rejected."""
    a = 0.05
    lp = np.full(3, math.log10(2 * a / 3))
    assert multiple.benjamini_hochberg(lp, a).tolist() == [True, True, True]
    assert not multiple.benjamini_hochberg(np.full(3, math.log10(1.01 * a)), a).any()


def test_report_spearman_uses_average_ranks():
    from paper_figs.criteria import spearman

    x, y = [1.0, 1.0, 2.0, 3.0, 3.0], [5.0, 4.0, 3.0, 3.0, 1.0]
    rx, ry = _midranks(x), _midranks(y)
    mx, my = sum(rx) / 5, sum(ry) / 5
    want = sum((a - mx) * (b - my) for a, b in zip(rx, ry)) / math.sqrt(sum((a - mx) ** 2 for a in rx) * sum((b - my) ** 2 for b in ry))
    assert spearman(x, y) == pytest.approx(want, rel=1e-12)
    assert math.isnan(spearman([1.0, 2.0], [2.0, 1.0]))
