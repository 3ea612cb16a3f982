"""Certainty-equivalent boost and green-list ratio (appendix Choosing Green List Ratio)."""

import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import theory


@st.composite
def gamma_delta(draw):
    gamma = draw(st.floats(0.01, 0.99))
    Delta = draw(st.floats(0.001, 0.999)) * (1 - gamma)
    return gamma, Delta


@given(gamma_delta())
def test_delta_star_meets_constraint_with_equality(gd):
    gamma, Delta = gd
    d = theory.delta_star(Delta, gamma)
    assert theory.dg_step(d, gamma) == pytest.approx(Delta, rel=1e-12)
    assert theory.kl_step(d, gamma) == pytest.approx(theory.kl_certainty_equivalent(Delta, gamma), rel=1e-12)


@pytest.mark.parametrize("Delta", [0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.7])
def test_gamma_star_minimises_ce_kl_on_a_fine_grid(Delta):
    g = theory.gamma_star(Delta)
    grid = np.linspace(1e-4, 1 - Delta - 1e-4, 20001)
    kls = np.array([theory.kl_certainty_equivalent(Delta, x) for x in grid])
    assert theory.kl_certainty_equivalent(Delta, g) <= kls.min() + 1e-15
    assert abs(g - grid[np.argmin(kls)]) <= 2 * (grid[1] - grid[0])


def test_gamma_star_reproduces_the_papers_table():
    # ANCHORS.md: the paper's code tabulates argmin_gamma KL(Ber(gamma+Delta)||Ber(gamma)) to 3 digits
    table = {0.1: 0.467, 0.2: 0.433, 0.3: 0.398, 0.4: 0.362, 0.5: 0.325}
    for Delta, g in table.items():
        assert round(theory.gamma_star(Delta), 3) == g


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: theory.delta_star(0.1, 1.0), "gamma must be in (0, 1); got 1.0"),
        (lambda: theory.delta_star(0.6, 0.5), "Delta must be in (0, 1 - gamma) = (0, 0.5) for gamma=0.5; got 0.6"),
        (lambda: theory.kl_certainty_equivalent(-0.1, 0.5), "Delta must be in (0, 1 - gamma)"),
        (lambda: theory.gamma_star(1.0), "Delta must be in (0, 1); got 1.0"),
    ],
)
def test_bad_input(call, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        call()
