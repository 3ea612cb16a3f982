"""theory/certainty.py against 50-digit mpmath, and its input ranges at their exact ends (make mutate)."""

import re

import mpmath as mp
import pytest

import theory

DELTAS = [1e-6, 0.01, 0.1, 0.3, 0.5, 0.9, 0.95]


def mp_foc(gamma, Delta):
    with mp.workdps(50):
        g, D = mp.mpf(gamma), mp.mpf(Delta)
        return -D / g - D / (1 - g) + mp.log1p(D / g) - mp.log1p(-D / (1 - g))


@pytest.mark.parametrize("Delta", DELTAS)
def test_gamma_star_is_bracketed_by_the_sign_change_of_the_foc(Delta):
    # the FOC is increasing on (0, 1 - Delta): a sign change 1e-12 either side pins the root to 1e-12
    g = theory.gamma_star(Delta)
    h = 1e-12 * max(1.0, g)
    assert mp_foc(g - h, Delta) < 0 < mp_foc(g + h, Delta)


@pytest.mark.parametrize("Delta", [0.98, 0.999, 1.0 - 1e-9])
def test_gamma_star_near_delta_one_is_the_end_of_the_range(Delta):
    # the root is 1 - Delta - exp(-Delta / (1 - Delta) + O(1)): closer to 1 - Delta than a double can show
    hi = 1.0 - Delta
    g = theory.gamma_star(Delta)
    assert g == hi * (1.0 - 1e-15)
    assert mp_foc(g, Delta) < 0


@pytest.mark.parametrize("Delta, gamma", [(1e-8, 0.5), (0.1, 0.45), (0.2, 0.3), (0.6, 0.2), (0.05, 0.9), (0.5, 0.4999)])
def test_delta_star_and_ce_kl_match_mpmath(Delta, gamma):
    with mp.workdps(50):
        D, g = mp.mpf(Delta), mp.mpf(gamma)
        d_ref = mp.log(1 + D / g) + mp.log(1 + D / (1 - g - D))
        x = g + D  # KL(Ber(gamma + Delta) || Ber(gamma))
        kl_ref = x * mp.log(x / g) + (1 - x) * mp.log((1 - x) / (1 - g))
    assert theory.delta_star(Delta, gamma) == pytest.approx(float(d_ref), rel=1e-14)
    assert theory.kl_certainty_equivalent(Delta, gamma) == pytest.approx(float(kl_ref), rel=1e-13)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: theory.gamma_star(0.0), "Delta must be in (0, 1); got 0.0"),
        (lambda: theory.gamma_star(-1e-300), "Delta must be in (0, 1); got -1e-300"),
        (lambda: theory.delta_star(0.5, 0.5), "Delta must be in (0, 1 - gamma) = (0, 0.5) for gamma=0.5; got 0.5"),
        (lambda: theory.delta_star(0.0, 0.5), "Delta must be in (0, 1 - gamma)"),
        (lambda: theory.delta_star(0.1, 0.0), "gamma must be in (0, 1); got 0.0"),
        (lambda: theory.kl_certainty_equivalent(0.5, 0.5), "Delta must be in (0, 1 - gamma)"),
    ],
)
def test_the_ends_of_each_range_are_refused(call, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        call()


def test_just_inside_the_ranges_is_accepted():
    assert 0.0 < theory.gamma_star(1e-9) < 1.0
    assert theory.gamma_star(0.5) == pytest.approx(0.3246, abs=1e-4)
    assert theory.delta_star(0.5 - 1e-12, 0.5) > 20.0  # -> inf as Delta -> 1 - gamma
