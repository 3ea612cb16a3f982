"""theory.sequential: the best constant bet grows at the KL rate, the bounds bracket, bad input is named."""

import math

import numpy as np
import pytest
from scipy.stats import entropy

from theory.sequential import bet_growth, kl_bernoulli, stopping_time_bounds


@pytest.mark.parametrize("gamma,Delta", [(0.25, 0.1), (0.25, 0.5), (0.433, 0.2), (0.1, 0.05)])
def test_kelly_bet_grows_at_the_kl_rate(gamma, Delta):
    p = gamma + Delta
    kl = kl_bernoulli(p, gamma)
    assert kl == pytest.approx(entropy([p, 1 - p], [gamma, 1 - gamma]), rel=1e-12)
    lam_star = Delta / (gamma * (1 - gamma))
    assert bet_growth(lam_star, gamma, p) == pytest.approx(kl, rel=1e-12)
    grid = np.linspace(0, 1 / gamma, 2001)[:-1]
    assert bet_growth(grid, gamma, p).max() <= kl + 1e-15  # no constant bet beats Kelly


def test_bounds_order_and_scaling():
    b4, b8 = stopping_time_bounds(0.2, 0.25, 1e-4), stopping_time_bounds(0.2, 0.25, 1e-8)
    assert b4["lower"] < b4["upper"] and b8["lower"] == pytest.approx(2 * b4["lower"])
    assert b8["upper"] / b8["lower"] < b4["upper"] / b4["lower"]  # the ln J + u overhead fades as alpha -> 0
    assert b4["lower"] == pytest.approx(math.log(1e4) / kl_bernoulli(0.45, 0.25))


@pytest.mark.parametrize("kw,message", [(dict(Delta=0.8), "Delta must be in"), (dict(alpha=0.0), "alpha must be in"), (dict(gamma=1.0), "gamma must be in"),
                                        (dict(grid=[0.5, 1.2]), "grid must be fractions")])
def test_bad_input_is_named(kw, message):
    args = dict(Delta=0.2, gamma=0.25, alpha=1e-4) | kw
    with pytest.raises(ValueError, match=message):
        stopping_time_bounds(**args)
