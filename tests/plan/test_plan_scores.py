"""The planner's HC / Tr-GoF power (sims.plan.scores): exact at the null, and equal to a
Monte Carlo of i.i.d. watermarked pivots within its interval."""

import math

import numpy as np
import pytest

from sims.detect.stats import gumbel_scores as gs
from sims.experiments.evaluate import clopper_pearson
from sims.plan import lr as PL
from sims.plan import scores as PS

LR_CLT_TOL = 0.04  # the CLT has no continuity correction on the lattice of the sum: 0.033 measured at T = 100, q = 0.5


@pytest.mark.parametrize("kind", ["hc", "trgof"])
def test_order_power_at_the_null_is_the_level(kind):
    """pi = 1 makes Y uniform: the power is the exact null tail at the critical value, <= fpr and above fpr / 1.01."""
    for T, fpr in [(20, 1e-2), (60, 1e-4), (40, 1e-6)]:
        p = PS.order_power_function(kind, np.ones(4), fpr)(T)
        assert fpr / 1.01 < p <= fpr * (1 + 1e-9), (T, fpr, p)


@pytest.mark.parametrize("kind,T,fpr,share", [("trgof", 12, 1e-4, 1.0), ("hc", 30, 1e-2, 1.0), ("trgof", 20, 1e-4, 0.7)])
def test_order_power_matches_monte_carlo(kind, T, fpr, share):
    """Seed 0, 4000 texts of T pivots Y = U^pi (pi drawn from a fixed 8-point sample; a share 1 - share
    of the tokens uniform): the exact test's rejection rate has the planner's power in its 99.9 %
    Clopper-Pearson interval."""
    pi = np.array([0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9, 1.0])
    rng = np.random.default_rng(0)
    n = 4000
    y = rng.random((n, T)) ** rng.choice(pi, size=(n, T))
    y = np.where(rng.random((n, T)) < share, y, rng.random((n, T)))
    p = np.sort(1.0 - y, axis=1)
    c = PS.order_critical(kind, T, fpr)
    stat = np.array([(gs.hc_terms(r) if kind == "hc" else gs.trgof_terms(r, gs.TRGOF_S)).max() for r in p])
    k = int(np.sum(stat >= c))
    lo, hi = clopper_pearson(k, n, 0.999)
    want = PS.order_power_function(kind, pi, fpr, lambda T: share)(T)
    assert lo <= want <= hi, (k, n, want)


def test_order_power_refuses_long_texts():
    with pytest.raises(ValueError, match="T must be in"):
        PS.order_power_function("hc", np.ones(2), 1e-4)(PS.ORDER_T_MAX + 1)
    assert math.isclose(PS.order_critical("hc", 10, 1e-2), PS.order_critical("hc", 10, 1e-2))


def test_lr_power_with_equal_weights_is_the_count_test():
    """All weights equal (the hard watermark's limit): the LR test is the binomial count test, so the
    planner's power (exact critical sum, CLT for the alternative) is within LR_CLT_TOL of the exact
    Poisson-binomial power of theory.power at 1e-6, for green probabilities 0.45 / 0.5 and T = 100 / 200."""
    from sims.detect.stats.lr_scores import LR_LEVELS
    from theory import power as tp

    gamma = 0.25
    for q, T in [(0.45, 200), (0.5, 100)]:
        laws = np.zeros((2, 10, 2, LR_LEVELS + 1))
        laws[:, :, 1, LR_LEVELS], laws[:, :, 0, LR_LEVELS] = q, 1 - q
        got = PL.lr_power_function(laws, gamma, 1e-6)(T)
        want = tp.redgreen_power(tp.count_laws(np.full((2, 10), q)), T, gamma, 1e-6)
        assert abs(got - want) < LR_CLT_TOL, (q, T, got, want)


def test_lr_power_under_substitution_with_equal_weights_is_the_attacked_count_test():
    """Equal weights for the watermarked and the uniform token alike: under a substitution at rate 0.1 the LR
    test is the count test of the attacked green probability keep q + (1 - keep) gamma (theory.power's
    attacked_green_prob, keep = (1 - rate)^(h+1)), within LR_CLT_TOL at 1e-6."""
    from sims.detect.stats.lr_scores import LR_LEVELS
    from theory import power as tp

    gamma, rate, h = 0.25, 0.1, 1
    laws = np.zeros((2, 10, 2, LR_LEVELS + 1))
    laws[:, :, 1, LR_LEVELS], laws[:, :, 0, LR_LEVELS] = 0.6, 0.4
    uniform = np.zeros_like(laws)
    uniform[:, :, 1, LR_LEVELS], uniform[:, :, 0, LR_LEVELS] = gamma, 1 - gamma
    for T in (100, 200):
        got = PL.lr_power_function(laws, gamma, 1e-6, rate, h, uniform=uniform)(T)
        want = tp.redgreen_power(tp.count_laws(tp.attacked_green_prob(np.full((2, 10), 0.6), gamma, rate, h)), T, gamma, 1e-6)
        assert abs(got - want) < LR_CLT_TOL, (T, got, want)
    with pytest.raises(ValueError, match="uniform must be"):
        PL.lr_power_function(laws, gamma, 1e-6, rate, h)


def test_lr_power_under_substitution_counts_the_uniform_tokens_weights():
    """A random substitution mostly puts in a rare token, whose LR weight is near the largest: noise of
    heavy weight (green with probability gamma only) lowers the power below what the same substitution
    costs when the new token weighs what a watermarked one does."""
    from sims.detect.stats.lr_scores import LR_LEVELS

    gamma, rate, h, T = 0.25, 0.1, 1, 150
    laws = np.zeros((2, 10, 2, LR_LEVELS + 1))
    low = LR_LEVELS // 4
    laws[:, :, 1, low], laws[:, :, 0, low] = 0.6, 0.4
    light, heavy = np.zeros_like(laws), np.zeros_like(laws)
    light[:, :, 1, low], light[:, :, 0, low] = gamma, 1 - gamma
    heavy[:, :, 1, LR_LEVELS], heavy[:, :, 0, LR_LEVELS] = gamma, 1 - gamma
    p_light = PL.lr_power_function(laws, gamma, 1e-6, rate, h, uniform=light)(T)
    p_heavy = PL.lr_power_function(laws, gamma, 1e-6, rate, h, uniform=heavy)(T)
    assert p_heavy < p_light - 0.05, (p_heavy, p_light)
