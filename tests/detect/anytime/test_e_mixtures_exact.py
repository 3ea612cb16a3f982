"""The red-green mixture e-process against its definition, and its integer thresholds against a search
over every count (survivors of make mutate's sampled run on sims/detect/anytime/e_mixtures.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sims.detect.anytime import e_mixtures as em

GRID = [0.25, 0.5, 0.75]


def test_bernoulli_mixture_is_the_mean_likelihood_ratio():
    gamma = 0.25
    mix = em.bernoulli_mixture(gamma, GRID)
    for k, n in [(0, 0), (0, 5), (3, 5), (5, 5), (7, 20)]:
        q = [gamma + f * (1 - gamma) for f in GRID]
        want = math.log(np.mean([(qj / gamma) ** k * ((1 - qj) / (1 - gamma)) ** (n - k) for qj in q]))
        assert float(mix.log_e(k, n)) == pytest.approx(want, rel=1e-12, abs=1e-12), (k, n)


@pytest.mark.parametrize("gamma, alpha", [(0.1, 0.5), (0.25, 0.05), (0.5, 1e-3)])
def test_integer_thresholds_are_the_least_count_that_crosses(gamma, alpha):
    mix, n_max = em.bernoulli_mixture(gamma, GRID), 30
    thr = em.linear_thresholds(mix, n_max, alpha)
    assert thr.shape == (n_max + 1,)
    bound = math.log(1 / alpha)
    for n in range(n_max + 1):
        k = next((k for k in range(n + 1) if float(mix.log_e(k, n)) >= bound), math.inf)
        assert thr[n] == k, (n, thr[n], k)


def test_a_count_whose_e_value_is_exactly_one_over_alpha_crosses():
    """One bet, f = 0.5 at gamma 0.25 (q = 0.625): three greens of three give E = 2.5^3; at alpha = 1 / E (its
    ln(1/alpha) equal to ln E in floating point, checked) the e-process rejects at E >= 1/alpha: thr[3] = 3."""
    mix = em.bernoulli_mixture(0.25, [0.5])
    le = float(mix.log_e(3, 3))
    alpha = math.exp(-le)
    assert math.log(1.0 / alpha) == le and le == pytest.approx(3 * math.log(2.5), rel=1e-14)
    assert em.linear_thresholds(mix, 3, alpha)[3] == 3.0
