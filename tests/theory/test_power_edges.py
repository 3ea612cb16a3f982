"""theory/power.py on exact small cases and at the ends of its ranges (mutants of make mutate): the
critical count when the tail equals the level, the Poisson-binomial edges, the search's ends."""

import math

import numpy as np
import pytest
from scipy import stats

from theory import power as tp


def test_binomial_log_tail_exact_everywhere():
    T, g = 40, 0.3
    tail = tp.binomial_log_tail(T, g)
    assert tail.shape == (T + 2,) and tail[0] == pytest.approx(0.0, abs=1e-14) and tail[0] <= 0.0 and tail[-1] == -np.inf
    assert tail[1:-1] == pytest.approx(stats.binom.logsf(np.arange(T), T, g), rel=1e-12)
    far = tp.binomial_log_tail(2000, 0.25)[2000]  # 0.25^2000 = e^-2772.6: far below the smallest double
    assert far == pytest.approx(2000 * math.log(0.25), rel=1e-14)


def test_critical_count_is_taken_when_the_tail_equals_the_level():
    # Bin(1, 1/2): P(X >= 1) = 1/2 exactly; at fpr = 1/2 the count 1 is valid (<=), not 2
    assert tp.binomial_critical(1, 0.5, 0.5) == 1
    assert tp.binomial_critical(1, 0.5, 0.49) == 2  # too short: T + 1
    assert tp.binomial_critical(0, 0.5, 0.1) == 1  # T = 0 accepted
    for bad in (-1, 2.5):
        with pytest.raises(ValueError, match="T must be an integer in \\[0, inf\\)"):
            tp.binomial_critical(bad, 0.5, 0.1)
    for name, kw in (("gamma", dict(gamma=1.0)), ("gamma", dict(gamma=0.0)), ("fpr", dict(fpr=1.0)), ("fpr", dict(fpr="0.1"))):
        args = dict(T=10, gamma=0.5, fpr=0.1) | kw
        with pytest.raises(ValueError, match=f"{name} must be in \\(0, 1\\)"):
            tp.binomial_critical(**args)


def test_poisson_binomial_edges():
    q = np.array([[0.5, 0.25, 0.8]])
    assert tp.poisson_binomial_sf(q, 0).tolist() == [1.0] and tp.poisson_binomial_sf(q, -3).tolist() == [1.0]
    assert tp.poisson_binomial_sf(q, 3)[0] == pytest.approx(0.5 * 0.25 * 0.8, rel=1e-15)
    assert tp.poisson_binomial_sf(q, 4).tolist() == [0.0]
    assert tp.poisson_binomial_sf(q, 1)[0] == pytest.approx(1 - 0.5 * 0.75 * 0.2, rel=1e-15)


def test_count_laws_small_case():
    laws = tp.count_laws(np.array([[0.5, 0.25]]))
    assert laws.shape == (1, 3, 3)
    assert laws[0, 0].tolist() == [1.0, 0.0, 0.0]
    assert laws[0, 1].tolist() == [0.5, 0.5, 0.0]
    assert laws[0, 2].tolist() == [0.375, 0.5, 0.125]
    assert tp.redgreen_power(laws, 2, 0.5, 0.01) == 0.0  # the critical count 3 exceeds T = 2


def test_green_probs_and_attack_ends():
    G = np.array([[0.0, 0.3, 1.0], [0.2, 0.5, 0.9]])
    assert tp.green_probs(G, math.inf).tolist() == [[0.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
    per_row = tp.green_probs(G, np.array([0.0, 1.0]))
    assert per_row[0].tolist() == G[0].tolist()
    assert per_row[1, 1] == pytest.approx(1 / (1 + math.exp(-1.0)), rel=1e-15)
    q = np.array([0.7, 0.9])
    assert tp.attacked_green_prob(q, 0.25, 0.0, 3).tolist() == q.tolist()
    assert tp.attacked_green_prob(q, 0.25, 1.0, 3).tolist() == [0.25, 0.25]
    assert tp.attacked_green_prob(q, 0.25, 0.5, 0) == pytest.approx(0.25 + 0.5 * (q - 0.25), rel=1e-15)
    for bad in (-1e-300, 1.0 + 1e-15):
        with pytest.raises(ValueError, match="rate must be in \\[0, 1\\]"):
            tp.attacked_green_prob(q, 0.25, bad, 1)


def test_dualga_text_boost_hits_the_target_to_bisection_precision():
    G = np.array([[0.2, 0.5, 0.7]])
    d = tp.dualga_text_boost(G, 0.2, 15.0)
    assert np.mean(tp.green_probs(G, d) - G) == pytest.approx(0.2, abs=1e-12)
    assert tp.dualga_text_boost(G, 0.9, 3.0)[0] == pytest.approx(3.0, abs=1e-12)  # unreachable: clipped at M


def test_lattice_power_crit_rounding():
    pmf = np.array([0.5, 0.5])
    assert tp.lattice_power(pmf, 10, 7.5) == pytest.approx(stats.binom.sf(7, 10, 0.5), rel=1e-10)  # ceil(7.5) = 8
    assert tp.lattice_power(pmf, 10, 8 + 1e-12) == pytest.approx(stats.binom.sf(7, 10, 0.5), rel=1e-10)
    assert tp.lattice_power(pmf, 10, -2.0) == pytest.approx(1.0, abs=1e-12)


def test_tokens_needed_search_ends():
    assert tp.tokens_needed(lambda T: T / 10, 0.5) == 5  # reached below the first probe (8)
    assert tp.tokens_needed(lambda T: 1.0 if T >= 8 else 0.0, 0.9) == 8
    assert tp.tokens_needed(lambda T: 1.0 if T >= 64 else 0.0, 0.9, T_max=64) == 64  # reached exactly at T_max
    assert tp.tokens_needed(lambda T: 1.0 if T >= 65 else 0.0, 0.9, T_max=64) is None
    with pytest.raises(ValueError, match="target power must be in \\(0, 1\\)"):
        tp.tokens_needed(lambda T: 1.0, 1.0)
