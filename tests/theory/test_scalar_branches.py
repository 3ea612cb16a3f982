"""Branches of theory/_scalar.py that the mpmath grids of test_soft.py do not reach (mutants of make mutate).

Each row is a closed form checked against 60-digit mpmath or an exact limit: the dual at
lambda = inf (every sign of its slope), the two sides of the dual's lambda = 1 switch, the series /
direct switch of f(x) = (1+x) log(1+x) - x, the subnormal-G branch of the KL and the slope of DG at
its edges.
"""

import math

import mpmath as mp
import numpy as np
import pytest

import theory
from theory import _scalar

DIGITS = 60
REL = 1e-14


def mp_f(x):
    with mp.workdps(DIGITS):
        x = mp.mpf(x)
        return float((1 + x) * mp.log1p(x) - x) if x > -1 else 1.0


def mp_dual(lam, G, Delta):
    with mp.workdps(DIGITS):
        lam, G, Delta = mp.mpf(lam), mp.mpf(G), mp.mpf(Delta)
        return float((G + Delta) * lam - mp.log(G * mp.e**lam - G + 1))


def mp_slope(delta, G):
    with mp.workdps(DIGITS):
        d, G = mp.mpf(delta), mp.mpf(G)
        q = G * mp.e**d / (G * mp.e**d - G + 1)
        return float(q * (1 - q))


def mp_kl(delta, G):
    with mp.workdps(DIGITS + 20):
        d, G = mp.mpf(delta), mp.mpf(G)
        z = G * mp.e**d - G + 1
        return float(G * mp.e**d / z * d - mp.log(z))


F_POINTS = [-1.0 + 1e-12, -0.999, -0.5, -0.100001, -0.1, -0.099999, -1e-3, -1e-9, 1e-9, 1e-3, 0.05, 0.099999, 0.1, 0.100001, 0.5, 1.0, 10.0, 1e10]


@pytest.mark.parametrize("x", F_POINTS)
def test_f_both_sides_of_the_series_cutoff(x):
    # |x| < 0.1: 20-term series, truncation ~ x^22/462 < 1e-24 relative to x^2/2; beyond: the direct form
    assert _scalar.xlog1px_minus_x(x) == pytest.approx(mp_f(x), rel=REL, abs=0.0)


def test_f_at_minus_one_and_zero_are_exact():
    assert _scalar.xlog1px_minus_x(-1.0) == 1.0  # (1 + x) log(1 + x) -> 0
    assert _scalar.xlog1px_minus_x(0.0) == 0.0


@pytest.mark.parametrize(
    "G, Delta, expected",
    [
        (0.25, 0.75, -math.log(0.25)),  # slope G + Delta - 1 = 0: the limit is -log G
        (0.25, 0.80, math.inf),  # slope > 0
        (0.25, 0.70, -math.inf),  # slope < 0
        (1.0, 0.0, 0.0),  # G = 1, slope 0: -log 1
        (0.0, 0.5, -math.inf),  # G = 0: g = Delta * lam
        (0.0, -0.5, math.inf),
        (0.0, 0.0, 0.0),
    ],
)
def test_dual_at_infinite_lambda(G, Delta, expected):
    got = theory.dual_step(math.inf, G, Delta)
    assert got == expected


@pytest.mark.parametrize("lam", [0.0, 1e-8, 0.5, 0.999999, 1.0, 1.000001, 1.5, 2.0, 2.5, 10.0, 40.0, 700.0])
@pytest.mark.parametrize("G", [1e-12, 0.1, 0.25, 0.5, 0.9, 1.0 - 1e-9])
def test_dual_matches_mpmath_on_both_sides_of_lambda_one(lam, G):
    Delta = 0.2
    ref = mp_dual(lam, G, Delta)
    assert theory.dual_step(lam, G, Delta) == pytest.approx(ref, rel=1e-13, abs=1e-15)


@pytest.mark.parametrize("delta", [0.0, 1e-6, 0.5, 2.0, 10.0, 30.0])
@pytest.mark.parametrize("G", [1e-9, 0.2, 0.5, 0.8, 1 - 1e-9])
def test_dg_slope_is_q_times_one_minus_q(delta, G):
    assert theory.dg_slope_step(delta, G) == pytest.approx(mp_slope(delta, G), rel=1e-12, abs=1e-300)


def test_dg_slope_vanishes_at_the_edges():
    assert theory.dg_slope_step(np.inf, 0.3) == 0.0
    assert theory.dg_slope_step(2.0, 0.0) == 0.0 and theory.dg_slope_step(2.0, 1.0) == 0.0
    # the unboosted slope is G (1 - G)
    assert theory.dg_slope_step(0.0, 0.3) == pytest.approx(0.21, rel=1e-15)


@pytest.mark.parametrize("G", [5e-324, 1e-310, 1e-305])
@pytest.mark.parametrize("delta", [600.0, 700.0, 705.0])
def test_kl_for_subnormal_green_mass(G, delta):
    # a = DG / G ~ e^delta overflows the direct form: the q log(q / G) - DG branch
    ref = mp_kl(delta, G)
    got = theory.kl_step(delta, G)
    assert math.isfinite(got)
    assert got == pytest.approx(ref, rel=1e-12)


def test_hard_watermark_limits():
    assert theory.kl_step(np.inf, 0.0) == 0.0  # no green token: nothing moves
    assert theory.kl_step(np.inf, 1.0) == 0.0
    assert theory.green_mass_step(np.inf, 0.0) == 0.0
    assert theory.dg_step(5.0, 0.5) == pytest.approx(math.tanh(2.5) / 2, rel=1e-15)  # G = 1/2: DG = tanh(delta/2)/2
