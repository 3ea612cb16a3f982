"""Closed forms of the soft watermark against 60-digit mpmath and their
analytic properties (Lemma Lagrangian_dual, eq. define_DG)."""

import math
import re
import subprocess
import sys

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import theory

mp.mp.dps = 60

REL_TOL = 1e-13  # double precision, f(x) direct form loses <= ~20 ulp (theory/_scalar.py)
FD_STEP = 1e-5  # central differences: truncation O(h^2) ~ 1e-10
FD_TOL = 1e-7

greens = st.floats(min_value=1e-12, max_value=1 - 1e-12, allow_nan=False)
boosts = st.floats(min_value=0.0, max_value=50.0, allow_nan=False)


def mp_ref(delta, G):
    """KL and DG in arbitrary precision: enough digits that KL ~ delta^2 survives."""
    digits = 60 + (int(-2 * math.log10(delta)) if 0 < delta < 1 else 0)
    with mp.workdps(digits):
        d, g = mp.mpf(delta), mp.mpf(G)
        z = 1 + g * mp.expm1(d)  # normaliser G e^delta - G + 1
        q = g * mp.e**d / z
        kl = q * d - mp.log1p(g * mp.expm1(d))
        return float(kl), float(g * (1 - g) * mp.expm1(d) / z)


@given(boosts, greens)
def test_kl_and_dg_match_60_digit_reference(delta, G):
    kl_ref, dg_ref = mp_ref(delta, G)
    assert theory.kl_step(delta, G) == pytest.approx(kl_ref, rel=REL_TOL, abs=1e-300)
    assert theory.dg_step(delta, G) == pytest.approx(dg_ref, rel=REL_TOL, abs=1e-300)


@pytest.mark.parametrize("delta", [1e-12, 1e-8, 1e-4, 0.05, 0.1, 0.3, 1.0, 5.0, 15.0, 30.0, 50.0, 700.0, 1e4])
@pytest.mark.parametrize("G", [1e-300, 1e-12, 1e-3, 0.25, 0.5, 0.9, 1 - 1e-9])
def test_grid_relative_error(delta, G):
    kl_ref, dg_ref = mp_ref(delta, G)
    kl = theory.kl_step(delta, G)
    assert math.isfinite(kl)
    assert kl == pytest.approx(kl_ref, rel=REL_TOL, abs=1e-300)
    assert theory.dg_step(delta, G) == pytest.approx(dg_ref, rel=REL_TOL, abs=1e-300)


def test_edge_values_are_exact():
    assert theory.kl_step(3.0, 0.0) == 0.0 and theory.kl_step(3.0, 1.0) == 0.0
    assert theory.dg_step(np.inf, 0.0) == 0.0 and theory.dg_step(np.inf, 1.0) == 0.0
    assert theory.kl_step(0.0, 0.3) == 0.0 and theory.dg_step(0.0, 0.3) == 0.0
    # hard red list: all mass moves to the green list
    assert theory.dg_step(np.inf, 0.3) == pytest.approx(0.7, rel=1e-15)
    assert theory.kl_step(np.inf, 0.3) == pytest.approx(-math.log(0.3), rel=1e-15)
    assert theory.green_mass_step(np.inf, 1e-200) == 1.0
    # the hard limit is approached continuously
    assert theory.kl_step(60.0, 0.3) == pytest.approx(-math.log(0.3), rel=1e-12)


def test_broadcasting_and_scalars():
    out = theory.kl_step(np.array([[0.5], [1.0]]), np.array([0.2, 0.4, 0.6]))
    assert out.shape == (2, 3)
    assert isinstance(theory.kl_step(1.0, 0.5), float)


@given(greens, st.floats(0.0, 20.0), st.floats(1e-3, 5.0))
def test_dg_increasing_in_delta(G, delta, step):
    assert theory.dg_step(delta + step, G) >= theory.dg_step(delta, G)


@given(greens)
def test_kl_convex_in_green_mass(G):
    # KL as a function of the tilted green mass x = q_G is KL(Ber(x) || Ber(G)): convex in x
    deltas = np.linspace(0.0, 20.0, 400)
    x = theory.green_mass_step(deltas, G)
    k = theory.kl_step(deltas, G)
    keep = np.concatenate([[True], np.diff(x) > 1e-9])
    x, k = x[keep], k[keep]
    slopes = np.diff(k) / np.diff(x)
    assert np.all(np.diff(slopes) >= -1e-6 * (1 + np.abs(slopes[1:])))


@given(greens, st.floats(0.01, 12.0), st.floats(0.01, 0.9))
def test_dual_derivative_and_concavity(G, lam, Delta):
    h = FD_STEP
    g0, gp, gm = (theory.dual_step(x, G, Delta) for x in (lam, lam + h, lam - h))
    fd = (gp - gm) / (2 * h)
    assert fd == pytest.approx(theory.dual_step_grad(lam, G, Delta), abs=FD_TOL)
    assert gp + gm - 2 * g0 <= 1e-12  # concave
    assert theory.dual_step_grad(lam, G, Delta) == pytest.approx(Delta - theory.dg_step(lam, G), abs=1e-15)


@given(greens, st.floats(0.0, 12.0), st.floats(0.01, 0.9))
def test_delta_equal_lambda_minimises_lagrangian(G, lam, Delta):
    grid = np.linspace(0.0, 15.0, 3001)
    at_lam = theory.lagrangian_step(lam, lam, G, Delta)
    assert at_lam <= np.min(theory.lagrangian_step(grid, lam, G, Delta)) + 1e-12
    # Lemma Lagrangian_dual (a): g_t(lambda) = L_t(lambda, lambda)
    assert at_lam == pytest.approx(theory.dual_step(lam, G, Delta), rel=1e-12, abs=1e-14)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: theory.kl_step(-1.0, 0.5), "delta must be in [0, inf]; got -1.0"),
        (lambda: theory.kl_step(1.0, 1.5), "G must be in [0, 1]; got 1.5"),
        (lambda: theory.dg_step(np.nan, 0.5), "delta must not contain NaN"),
        (lambda: theory.dg_step(1.0, [0.2, np.nan]), "G must not contain NaN"),
        (lambda: theory.dual_step(1.0, 0.5, np.nan), "Delta must not contain NaN"),
    ],
)
def test_bad_input_names_parameter_value_and_range(call, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        call()


def test_import_theory_is_light():
    code = "import sys, theory; print(sorted(m for m in ('cvxpy', 'torch', 'matplotlib') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
