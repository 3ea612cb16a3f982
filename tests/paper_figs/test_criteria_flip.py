"""Every criterion of the reproduction report flips EXACTLY at its stated threshold: at the
threshold it gives one verdict, at the next float beyond it (math.nextafter) the other.  A
threshold moved by one ulp, a < written for <=, or a wrong constant fails here (the rejection
cases of test_criteria.py sit 1e-9 away and would not see an off-by-one-ulp comparison flip).
Each refuted boundary is a threshold of its own and is checked the same way."""

import inspect
import math

import numpy as np
import pytest

from paper_figs import _matched as mt
from paper_figs import criteria as cr

R, N, X, NA = cr.REPRODUCED, cr.NOT_REPRODUCED, cr.REFUTED, cr.NA
UP, DOWN = math.inf, -math.inf

# (criterion, threshold, verdict at the threshold, side of the flip, verdict one ulp beyond it on that side)
FLIPS = [
    (cr.on_frontier, cr.FRONTIER_TOL, R, UP, N),
    (cr.off_frontier, cr.FRONTIER_TOL, N, UP, R),
    (cr.at_least_one, 1.0, R, DOWN, N),
    (cr.concentrated, cr.SPREAD_RATIO, R, UP, N),
    (cr.concentrated, 1.0, X, DOWN, N),
    (cr.less_dispersed, 1.0, N, DOWN, R),
    (cr.tpr_high, cr.TPR_HIGH, R, DOWN, N),
    (cr.distorts_more, cr.DISTORTION_RATIO, R, DOWN, N),
    (cr.distorts_more, 1.0, N, DOWN, X),
    (cr.median_p_below, cr.MEDIAN_P_LEVEL, R, UP, N),
    (cr.most, cr.MOST, N, UP, R),
    (cr.all_of, 1.0, R, DOWN, N),
    (cr.all_of, 0.0, X, UP, N),
    (cr.negative_rank, -0.5, R, UP, N),
    (cr.negative_rank, 0.0, N, UP, X),
    (cr.positive, 0.0, N, UP, R),
    (cr.positive, 0.0, N, DOWN, X),
    (cr.z_detectable, cr.Z_LEVEL, R, DOWN, N),
    (cr.z_lost, cr.Z_LOST, N, DOWN, R),
    (cr.lambda_rises, cr.LAMBDA_RISE, R, DOWN, N),
    (cr.lambda_rises, 1.0, X, UP, N),
    (cr.kl_stable, cr.KL_STABLE, R, UP, N),
    (cr.srl_like, cr.SRL_LIKE, R, UP, N),
    (cr.suboptimal, cr.SUBOPTIMAL, R, DOWN, N),
    (cr.rank_agrees, cr.RANK_AGREE, R, DOWN, N),
    (cr.tprs_match, cr.TPR_CLOSE_SHARE, R, DOWN, N),
    (cr.consistent, cr.TPR_CONSISTENT, R, UP, N),
    (cr.overhead_small, cr.OVERHEAD, R, UP, N),
    (cr.regret_rate, cr.REGRET_SLOPE, R, UP, N),
    (cr.regret_rate, 0.0, N, UP, X),
    (cr.greener, cr.GREEN_RATIO, R, DOWN, N),
    (cr.no_more_than, 0.0, R, UP, N),
    (cr.clear_sign, cr.CLEAR, N, UP, R),
    (cr.clear_sign, -cr.CLEAR, N, DOWN, X),
    (cr.meets_target, -cr.DG_SLACK, R, DOWN, N),
    (lambda x: cr.within(x, *cr.LAM1_ADVICE), cr.LAM1_ADVICE[0], R, DOWN, N),
    (lambda x: cr.within(x, *cr.LAM1_ADVICE), cr.LAM1_ADVICE[1], R, UP, N),
    (lambda x: cr.within(x, *cr.ETA_RANGE), cr.ETA_RANGE[0], R, DOWN, N),
    (lambda x: cr.within(x, *cr.ETA_RANGE), cr.ETA_RANGE[1], R, UP, N),
    (lambda x: cr.correlated({"min": x, "line": 0.1}), 0.1, N, UP, R),
    (lambda x: cr.correlated({"min": x, "line": 0.1}), -0.1, N, DOWN, X),
    (lambda x: cr.similar({"verdict": "tied", "bound": x}), cr.SIMILAR, R, UP, NA),
    (cr.inflated, cr.ZTEST_INFLATION, R, DOWN, N),
    (cr.inflated, 1.0, X, UP, N),
]
# criteria whose input is a verdict or a test result, checked by the dedicated tests below and in test_criteria.py
CATEGORICAL = {"matched", "claim_verdict", "no_worse", "worse_than", "better_than", "fpr_kept"}  # tests/paper_figs/test_verdict_rules.py
HELPERS = {"binom_sf", "fpr_test", "spearman"}  # not criteria: they compute what a criterion reads


IDS = [f"{judge.__name__}@{t:g}{'+' if side > 0 else '-'}" for judge, t, _, side, _ in FLIPS]


@pytest.mark.parametrize("judge, t, at, side, beyond", FLIPS, ids=IDS)
def test_flips_exactly_at_threshold(judge, t, at, side, beyond):
    assert at != beyond
    assert judge(t) == at
    assert judge(math.nextafter(t, side)) == beyond
    assert judge(math.nextafter(t, -side)) != beyond  # the inner side never gives the verdict beyond


def test_every_criterion_has_a_flip_case():
    """A criterion added to criteria.py without a threshold case here fails this test."""
    public = {n for n, f in inspect.getmembers(cr, inspect.isfunction) if not n.startswith("_") and f.__module__ == cr.__name__}
    named = {f.__name__ for f, *_ in FLIPS if f.__name__ != "<lambda>"} | {"within", "correlated", "similar"}
    assert public - HELPERS - CATEGORICAL == named


def test_fpr_kept_flips_at_alpha_and_at_the_resolution():
    """Refuted exactly when the Bonferroni p is <= alpha; n/a exactly when the smallest test cannot
    reveal FPR_RESOLUTION x the level (detectable above it)."""
    res = dict(alpha=cr.FPR_ALPHA, level=cr.FPR_LEVEL, detectable=cr.FPR_RESOLUTION * cr.FPR_LEVEL)
    assert cr.fpr_kept(dict(res, p_adjusted=cr.FPR_ALPHA)) == X
    assert cr.fpr_kept(dict(res, p_adjusted=math.nextafter(cr.FPR_ALPHA, UP))) == R
    edge = dict(res, p_adjusted=1.0)
    assert cr.fpr_kept(edge) == R
    assert cr.fpr_kept(dict(edge, detectable=math.nextafter(edge["detectable"], UP))) == NA


def test_fpr_test_flips_at_its_critical_count():
    """With n = 20000 nulls of one detector at 1e-4 the test rejects from k_star rejections on and not
    one below (exact binomial: m P(X >= k_star) <= alpha < m P(X >= k_star - 1))."""
    base = cr.fpr_test([(0, 20_000)] * 3)
    k = base["k_star"]
    assert cr.fpr_kept(cr.fpr_test([(k, 20_000), (0, 20_000), (0, 20_000)])) == X
    assert cr.fpr_kept(cr.fpr_test([(k - 1, 20_000), (0, 20_000), (0, 20_000)])) != X
    assert 3 * cr.binom_sf(k, 20_000, 1e-4) <= cr.FPR_ALPHA < 3 * cr.binom_sf(k - 1, 20_000, 1e-4)


def test_matched_verdict_flips_at_zero():
    """A level counts as better only when its interval's lower end is strictly above 0 (worse: upper end strictly below)."""
    assert mt.verdict(np.array([0.0]), np.array([1.0])) == mt.TIED
    assert mt.verdict(np.array([math.nextafter(0.0, UP)]), np.array([1.0])) == mt.BETTER
    assert mt.verdict(np.array([-1.0]), np.array([0.0])) == mt.TIED
    assert mt.verdict(np.array([-1.0]), np.array([math.nextafter(0.0, DOWN)])) == mt.WORSE
