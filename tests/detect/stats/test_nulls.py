"""Exact null tails: 50-digit mpmath references far into the tail (1e-120 .. 1e-21000)."""

import math
import re

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binom

from sims.detect.stats import nulls

REL = 1e-12  # relative error allowed on ln p (observed ~1e-15; gammaln of large n costs a few ulps)
DPS = 50


def _binom_ref(k: int, n: int, g: float) -> float:
    """ln P(Bin(n, g) >= k) at 50 digits: the pmf at k, then the ratio recursion until negligible."""
    with mp.workdps(DPS):
        g = mp.mpf(g)
        term = mp.binomial(n, k) * g**k * (1 - g) ** (n - k)
        total, j = term, k
        while j < n and term > total * mp.mpf(10) ** (-DPS):
            term *= mp.mpf(n - j) / (j + 1) * g / (1 - g)
            total += term
            j += 1
        return float(mp.log(total))


def _gamma_ref(s: float, n: int) -> float:
    with mp.workdps(DPS):
        return float(mp.log(mp.gammainc(n, mp.mpf(s), mp.inf, regularized=True)))


# (k, n, gamma): typical, ~1e-120, ~1e-414 (scipy gives -inf), ~1e-1136, ~1e-3000, ~1e-5000, tiny gamma
BINOM_GRID = [(60, 200, 0.25), (3, 10, 0.25), (200, 200, 0.25), (900, 1000, 0.25), (15000, 20000, 0.5),
              (3000, 3000, 0.1), (8305, 8305, 0.25), (2, 1000, 1e-9), (1, 1, 0.5), (5100, 10000, 0.5)]


@pytest.mark.parametrize("k, n, g", BINOM_GRID)
def test_binomial_tail_matches_50_digit_reference(k, n, g):
    assert nulls.binom_logsf(k, n, g) == pytest.approx(_binom_ref(k, n, g), rel=REL)


def test_binomial_tail_is_exact_where_scipy_underflows():
    ref = _binom_ref(900, 1000, 0.25)
    assert ref / math.log(10) < -400 and binom.logsf(899, 1000, 0.25) == -np.inf
    assert np.isfinite(nulls.binom_logsf(900, 1000, 0.25))


def test_binomial_tail_vectorised_and_edge_values():
    k = np.array([[0, -3, 1, 5, 6]])
    n = np.array([[5], [7]])
    out = nulls.binom_logsf(k, n, 0.3)
    assert out.shape == (2, 5)
    assert np.all(out[:, :2] == 0.0)  # k <= 0: p = 1
    assert out[0, 4] == -np.inf and out[1, 4] == pytest.approx(_binom_ref(6, 7, 0.3), rel=REL)
    assert nulls.binom_logsf(0, 0, 0.5) == 0.0


@st.composite
def binom_cases(draw):
    n = draw(st.integers(1, 400))
    k = draw(st.integers(0, n))
    g = draw(st.floats(0.01, 0.99))
    return k, n, g


@settings(max_examples=60)
@given(binom_cases())
def test_binomial_tail_steps_are_the_pmf(case):
    """ln P(S >= k) - ln P(S >= k+1) telescopes to the pmf: P(S >= k) - P(S >= k+1) = P(S = k)."""
    k, n, g = case
    a, b = nulls.binom_logsf(k, n, g), nulls.binom_logsf(k + 1, n, g)
    assert a >= b
    if b > -np.inf and a - b > 1e-6:
        assert a + math.log(-math.expm1(b - a)) == pytest.approx(binom.logpmf(k, n, g), rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("s, n", [(10.0, 5), (300.0, 100), (2000.0, 200), (50000.0, 10), (1e5, 1000), (0.5, 1), (3.0, 40)])
def test_gamma_tail_matches_50_digit_reference(s, n):
    assert nulls.gamma_logsf(s, n) == pytest.approx(_gamma_ref(s, n), rel=REL)


def test_gamma_tail_vectorised_and_edge_values():
    s = np.array([0.0, -1.0, 7.5, np.inf, 7.5])
    n = np.array([3, 3, 3, 3, 0])
    out = nulls.gamma_logsf(s, n)
    assert out[0] == 0.0 and out[1] == 0.0 and out[3] == -np.inf and out[4] == 0.0
    assert out[2] == pytest.approx(_gamma_ref(7.5, 3), rel=REL)


def test_bad_input():
    with pytest.raises(ValueError, match=re.escape("gamma must be in (0, 1); got 1.5")):
        nulls.binom_logsf(1, 2, 1.5)
    with pytest.raises(ValueError, match="n must be in"):
        nulls.binom_logsf(1, -2, 0.5)
    with pytest.raises(ValueError, match="k must hold integers"):
        nulls.binom_logsf(1.5, 2, 0.5)
    with pytest.raises(ValueError, match="s must not be nan"):
        nulls.gamma_logsf(np.nan, 2)


@pytest.mark.parametrize("T, g", [(2, 0.3), (5, 0.25), (9, 0.5), (12, 0.41)])
def test_autocov_null_table_equals_enumeration_of_all_colourings(T, g):
    """Every one of the 2^T colour sequences, its probability and its sum of N_t N_{t+1}."""
    import itertools

    law: dict[float, float] = {}
    for seq in itertools.product([0, 1], repeat=T):
        N = np.array(seq) - g
        x = round(float(np.sum(N[:-1] * N[1:]) - (T - 1) * g * g), 9)
        law[x] = law.get(x, 0.0) + g ** sum(seq) * (1 - g) ** (T - sum(seq))
    xs = np.array(sorted(law))
    cdf = np.cumsum([law[x] for x in xs])
    v, lc = nulls.autocov_null_table(T, g)
    j = np.searchsorted(v, xs + nulls.AUTOCOV_TIE, side="right") - 1
    assert np.allclose(np.exp(lc[j]), cdf, rtol=1e-12, atol=1e-15) and lc[-1] == pytest.approx(0.0, abs=1e-14)


def test_autocov_bad_input():
    with pytest.raises(ValueError, match="T must be in"):
        nulls.autocov_null_table(1, 0.5)
