"""theory/sequential.py: the upper bound written out for a one-bet grid, KL(Ber) at its ends, and each
range at its ends (mutants of make mutate)."""

import math

import numpy as np
import pytest

from theory.sequential import DEFAULT_GRID, bet_growth, kl_bernoulli, stopping_time_bounds


def _written_upper(Delta, gamma, alpha, f, J):
    # bet fraction f: lam = f / gamma, r = E ln(1 + lam (X - gamma)), u = ln(1 + lam (1 - gamma))
    lam, p = f / gamma, gamma + Delta
    r = p * math.log(1 + lam * (1 - gamma)) + (1 - p) * math.log(1 - lam * gamma)
    u = math.log(1 + lam * (1 - gamma))
    return (math.log(1 / alpha) + math.log(J) + u) / r


def test_upper_bound_is_the_written_formula():
    Delta, gamma, alpha = 0.2, 0.25, 1e-4
    b = stopping_time_bounds(Delta, gamma, alpha, grid=[0.5])
    assert b["upper"] == pytest.approx(_written_upper(Delta, gamma, alpha, 0.5, 1), rel=1e-14)
    p = gamma + Delta
    assert b["kl"] == pytest.approx(p * math.log(p / gamma) + (1 - p) * math.log((1 - p) / (1 - gamma)), rel=1e-14)
    # two bets: ln J = ln 2 is paid, and the better bet is taken
    two = stopping_time_bounds(Delta, gamma, alpha, grid=[0.1, 0.5])
    want = min(_written_upper(Delta, gamma, alpha, f, 2) for f in (0.1, 0.5))
    assert two["upper"] == pytest.approx(want, rel=1e-14)
    assert want < _written_upper(Delta, gamma, alpha, 0.5, 2)  # the min is not the last bet


def test_a_grid_of_losing_bets_gives_an_infinite_upper_bound():
    # f = 0.99: lam ~ 4 bets nearly all on green; with Delta small the growth rate is negative
    b = stopping_time_bounds(0.01, 0.25, 1e-4, grid=[0.99])
    assert b["upper"] == math.inf and math.isfinite(b["lower"])
    assert stopping_time_bounds(0.2, 0.25, 1e-4)["upper"] == stopping_time_bounds(0.2, 0.25, 1e-4, grid=DEFAULT_GRID)["upper"]


def test_kl_bernoulli_ends():
    assert kl_bernoulli(0.0, 0.25) == pytest.approx(-math.log(0.75), rel=1e-15)
    assert kl_bernoulli(1.0, 0.25) == pytest.approx(-math.log(0.25), rel=1e-15)
    assert kl_bernoulli(0.25, 0.25) == 0.0
    for p, q in [(-1e-300, 0.5), (1.0 + 1e-15, 0.5), (0.5, 0.0), (0.5, 1.0)]:
        with pytest.raises(ValueError, match="p must be in \\[0, 1\\] and q in \\(0, 1\\)"):
            kl_bernoulli(p, q)


def test_bet_growth_range():
    assert bet_growth(0.0, 0.25, 0.4) == 0.0
    assert np.isfinite(bet_growth(np.nextafter(4.0, 0.0), 0.25, 0.4))
    for lam in (-1e-300, 4.0):
        with pytest.raises(ValueError, match="lam must be in \\[0, 1/gamma\\) = \\[0, 4\\)"):
            bet_growth(lam, 0.25, 0.4)


@pytest.mark.parametrize(
    "kw, message",
    [
        (dict(gamma=0.0), "gamma must be in (0, 1); got 0.0"),
        (dict(Delta=0.0), "Delta must be in (0, 1 - gamma) = (0, 0.75); got 0.0"),
        (dict(Delta=0.75), "Delta must be in (0, 1 - gamma) = (0, 0.75); got 0.75"),
        (dict(alpha=1.0), "alpha must be in (0, 1); got 1.0"),
        (dict(grid=[]), "grid must be fractions in (0, 1); got []"),
        (dict(grid=[0.0, 0.5]), "grid must be fractions in (0, 1)"),
        (dict(grid=[0.5, 1.0]), "grid must be fractions in (0, 1)"),
    ],
)
def test_each_range_end_is_refused(kw, message):
    args = dict(Delta=0.2, gamma=0.25, alpha=1e-4) | kw
    with pytest.raises(ValueError, match=message.replace("(", "\\(").replace(")", "\\)").replace("[", "\\[").replace("]", "\\]")):
        stopping_time_bounds(**args)
