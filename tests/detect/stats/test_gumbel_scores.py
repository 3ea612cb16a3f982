"""sims.detect.stats.gumbel_scores' lattice critical value against exact enumeration, including the case
where no sum is rare enough (the answer is then n J + 1: the survivors of make mutate's sampled run)."""

import math

import numpy as np
import pytest

from sims.detect.stats import gumbel_scores as gs


def _critical_by_convolution(n, pmf, fpr):
    """Smallest x with P(sum of n draws >= x) <= fpr, the n-fold law by repeated np.convolve."""
    law = np.array([1.0])
    for _ in range(n):
        law = np.convolve(law, pmf)
    tail = np.cumsum(law[::-1])[::-1]  # tail[x] = P(S >= x)
    hits = np.flatnonzero(tail <= fpr * (1 + 1e-12))
    return int(hits[0]) if hits.size else n * (pmf.size - 1) + 1


@pytest.mark.parametrize(
    "n, pmf, fpr",
    [
        (1, [0.5, 0.5], 0.1),  # even the largest sum has P = 0.5 > fpr: none, n J + 1 = 2
        (3, [0.5, 0.5], 0.01),  # P(S = 3) = 1/8 > 0.01: none, 4
        (3, [0.5, 0.5], 0.125),  # exactly P(S = 3): 3
        (5, [0.2, 0.3, 0.5], 0.05),
        (8, [0.7, 0.2, 0.1], 1e-3),
    ],
)
def test_iid_lattice_critical_equals_enumeration(n, pmf, fpr):
    pmf = np.array(pmf)
    assert gs.iid_lattice_critical(n, pmf, fpr) == _critical_by_convolution(n, pmf, fpr)


def test_iid_lattice_logsf_equals_enumeration():
    pmf, n = np.array([0.2, 0.3, 0.5]), 6
    law = np.array([1.0])
    for _ in range(n):
        law = np.convolve(law, pmf)
    tail = np.cumsum(law[::-1])[::-1]
    for x in range(0, 2 * n + 2):
        want = math.log(tail[x]) if x <= 2 * n else -math.inf
        assert gs.iid_lattice_logsf(x, n, pmf) == pytest.approx(want, rel=1e-9, abs=1e-12), x


@pytest.mark.parametrize("Delta, m", [(0.1, 1), (0.3, 1), (0.5, 2), (2 / 3, 3), (0.75, 4), (0.8, 5), (0.9, 10), (0.95, 20)])
def test_opt_class_is_m_full_atoms_and_a_remainder_smaller_than_one(Delta, m):
    """m = floor(1 / (1 - Delta)) atoms of 1 - Delta and a remainder rho in [0, 1 - Delta), also where
    1 / (1 - Delta) is an integer that floating point rounds below (Delta = 2/3, 0.8, 0.9, 0.95)."""
    got_m, rho = gs.opt_class(Delta)
    assert got_m == m and 0.0 <= rho < (1.0 - Delta) * (1 - 1e-9)
    assert got_m * (1.0 - Delta) + rho == pytest.approx(1.0, abs=1e-12)
