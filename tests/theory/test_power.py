"""theory.power: binomial critical values, Poisson-binomial laws, Gamma critical values (50-digit mpmath)."""

import math

import mpmath
import numpy as np
import pytest
from scipy import stats

from theory import power as tp


def test_binomial_critical_is_the_smallest_valid_count():
    for T, g, a in [(50, 0.25, 1e-4), (200, 0.433, 1e-6), (10, 0.25, 1e-6), (5, 0.5, 1e-6)]:
        k = tp.binomial_critical(T, g, a)
        if k <= T:
            assert stats.binom.sf(k - 1, T, g) <= a * (1 + 1e-9)
        assert k == 0 or stats.binom.sf(k - 2, T, g) > a
    assert tp.binomial_critical(5, 0.5, 1e-6) == 6  # too short: 0.5^5 > 1e-6
    with pytest.raises(ValueError, match="fpr must be in"):
        tp.binomial_critical(10, 0.25, 0.0)


def test_count_laws_and_tiling_match_direct_poisson_binomial():
    q = np.random.default_rng(0).uniform(0.2, 0.9, size=(3, 7))
    laws = tp.count_laws(q)
    assert np.allclose(laws.sum(axis=2), 1.0)
    for T in (4, 7, 17):
        tiled = np.tile(q, 3)[:, :T]
        k = tp.binomial_critical(T, 0.25, 1e-3)
        direct = tp.poisson_binomial_sf(tiled, k).mean()
        assert tp.redgreen_power(laws, T, 0.25, 1e-3) == pytest.approx(direct, abs=1e-12)
    # equal probabilities: the binomial tail
    assert tp.poisson_binomial_sf(np.full((1, 30), 0.4), 17)[0] == pytest.approx(stats.binom.sf(16, 30, 0.4), rel=1e-10)


def test_redgreen_power_scored_mask_tests_each_row_at_its_own_count():
    """dedup: q = 0 at unscored tokens and row i tested at the critical count of its scored tokens N_i(T)."""
    rng = np.random.default_rng(1)
    first = rng.uniform(size=(3, 7)) < 0.6
    q = np.where(first, rng.uniform(0.2, 0.9, size=(3, 7)), 0.0)
    laws = tp.count_laws(q)
    for T in (4, 7, 17):
        tq, n = np.tile(q, 3)[:, :T], np.tile(first, 3)[:, :T].sum(axis=1)
        direct = np.mean([tp.poisson_binomial_sf(tq[i], tp.binomial_critical(int(n[i]), 0.25, 1e-2))[0] for i in range(3)])
        assert tp.redgreen_power(laws, T, 0.25, 1e-2, first) == pytest.approx(direct, abs=1e-12)
        assert tp.redgreen_power(tp.PrefixCountLaws(q, every=2), T, 0.25, 1e-2, first) == pytest.approx(direct, abs=1e-12)


def test_gamma_criticals_50_digits():
    mpmath.mp.dps = 50
    for T, a in [(10, 1e-6), (200, 1e-6), (50, 1e-4)]:
        c = tp.gamma_upper_critical(T, a)
        assert float(mpmath.log(mpmath.gammainc(T, c, mpmath.inf, regularized=True))) == pytest.approx(math.log(a), rel=1e-9)
        c = tp.gamma_lower_critical(T, a)
        assert float(mpmath.log(mpmath.gammainc(T, 0, c, regularized=True))) == pytest.approx(math.log(a), rel=1e-9)


def test_dualga_boost_reaches_the_target_and_attack_shrinks_the_signal():
    G = np.random.default_rng(1).uniform(0.05, 0.95, size=(4, 50))
    d = tp.dualga_text_boost(G, 0.2, 15.0)
    q = tp.green_probs(G, d)
    assert np.allclose((q - G).mean(axis=1), 0.2, atol=1e-9)
    assert np.allclose(tp.attacked_green_prob(q, 0.4, 0.3, 1) - 0.4, 0.49 * (q - 0.4))
    assert np.array_equal(tp.green_probs(G, math.inf), np.ones_like(G))


def test_lattice_power_and_tokens_needed():
    pmf = np.array([0.5, 0.5])
    assert tp.lattice_power(pmf, 10, 8) == pytest.approx(stats.binom.sf(7, 10, 0.5), rel=1e-10)
    assert tp.tokens_needed(lambda T: min(1.0, T / 100), 0.9) == 90
    assert tp.tokens_needed(lambda T: 0.0, 0.9, T_max=64) is None
