"""Every criterion of the reproduction report can fail: each is fed a case it must reject and the
case exactly at its threshold (paper_figs.criteria), and the report's readers take the numbers
the paper means (AutoCov at the same KL, one LM per ratio, each shared null counted once,
every robustness configuration, box_4's lambda_1 block and eta < 0.05 strictly)."""

import math

import pytest

from paper_figs import criteria as cr
from paper_figs import report

R, N, X, NA = cr.REPRODUCED, cr.NOT_REPRODUCED, cr.REFUTED, cr.NA

# (criterion, threshold value and its verdict, a value it must reject and that verdict)
CASES = [
    (cr.on_frontier, cr.FRONTIER_TOL, R, cr.FRONTIER_TOL + 1e-9, N),
    (cr.off_frontier, cr.FRONTIER_TOL, N, cr.FRONTIER_TOL + 1e-9, R),
    (cr.at_least_one, 1, R, 0, N),
    (cr.concentrated, cr.SPREAD_RATIO, R, 1.0, X),
    (cr.less_dispersed, 1.0, N, 0.999, R),
    (cr.tpr_high, cr.TPR_HIGH, R, cr.TPR_HIGH - 1e-9, N),
    (cr.distorts_more, cr.DISTORTION_RATIO, R, 0.99, X),
    (cr.median_p_below, cr.MEDIAN_P_LEVEL, R, cr.MEDIAN_P_LEVEL + 1e-9, N),
    (cr.most, cr.MOST, N, cr.MOST + 1e-9, R),
    (cr.all_of, 1.0, R, 0.0, X),
    (cr.negative_rank, -0.5, R, 0.1, X),
    (cr.positive, 0.0, N, -1e-9, X),
    (cr.z_detectable, cr.Z_LEVEL, R, cr.Z_LEVEL - 1e-9, N),
    (cr.z_lost, cr.Z_LOST, N, cr.Z_LOST - 1e-9, R),
    (cr.lambda_rises, cr.LAMBDA_RISE, R, 1.0, X),
    (cr.kl_stable, cr.KL_STABLE, R, cr.KL_STABLE + 1e-9, N),
    (cr.srl_like, cr.SRL_LIKE, R, cr.SRL_LIKE + 1e-9, N),
    (cr.suboptimal, cr.SUBOPTIMAL, R, cr.SUBOPTIMAL - 1e-9, N),
    (cr.rank_agrees, cr.RANK_AGREE, R, cr.RANK_AGREE - 1e-9, N),
    (cr.tprs_match, cr.TPR_CLOSE_SHARE, R, cr.TPR_CLOSE_SHARE - 1e-9, N),
    (cr.consistent, cr.TPR_CONSISTENT, R, cr.TPR_CONSISTENT + 1e-9, N),
    (cr.overhead_small, cr.OVERHEAD, R, cr.OVERHEAD + 1e-9, N),
    (cr.regret_rate, cr.REGRET_SLOPE, R, 1e-9, X),
    (cr.greener, cr.GREEN_RATIO, R, cr.GREEN_RATIO - 1e-9, N),
    (cr.no_more_than, 0.0, R, 1e-9, N),
    (cr.clear_sign, cr.CLEAR, N, -cr.CLEAR - 1e-9, X),
    (cr.meets_target, -cr.DG_SLACK, R, -cr.DG_SLACK - 1e-9, N),
]


@pytest.mark.parametrize("judge, at, at_verdict, bad, bad_verdict", CASES, ids=[c[0].__name__ for c in CASES])
def test_threshold_and_rejection(judge, at, at_verdict, bad, bad_verdict):
    assert judge(at) == at_verdict
    assert judge(bad) == bad_verdict
    assert judge(float("nan")) == NA and judge(None) == NA


def test_correlated_needs_significance():
    line = 2 / 300**0.5
    assert cr.correlated({"min": line + 1e-9, "line": line}) == R and cr.correlated({"min": line, "line": line}) == N
    assert cr.correlated({"min": -0.1, "line": line}) == N and cr.correlated({"min": -line - 1e-9, "line": line}) == X
    assert cr.correlated({}) == NA


def test_within_is_closed():
    assert cr.within(0.5, 0.5, 2.0) == R and cr.within(2.0, 0.5, 2.0) == R and cr.within(0.4999, 0.5, 2.0) == N


def test_matched_criteria():
    assert cr.claim_verdict({"SRL": "better", "EMS": NA}, own=True) == R
    assert cr.claim_verdict({"SRL": "better", "ATW": "tied"}, own=True) == N
    assert cr.claim_verdict({"SRL": "better", "ATW": "worse"}, own=True) == X and cr.claim_verdict({"SRL": "mixed"}, own=True) == cr.MIXED
    assert cr.claim_verdict({"EMS": NA}, own=True) == NA
    assert cr.better_than("better") == R and cr.better_than("worse") == X and cr.better_than("tied") == N and cr.better_than("mixed") == cr.MIXED
    assert cr.worse_than("worse") == R and cr.worse_than("better") == X and cr.worse_than(NA) == NA
    assert cr.similar(dict(verdict="tied", bound=0.3)) == R and cr.similar(dict(verdict="better", bound=0.3)) == N
    assert cr.similar(dict(verdict="tied", bound=3.0)) == NA and cr.similar(dict(verdict=NA, bound=0.3)) == NA  # a wide tie tells nothing


def test_binom_sf_exact():
    assert cr.binom_sf(0, 10, 0.3) == 1.0
    assert cr.binom_sf(1, 500, 1e-4) == pytest.approx(1 - (1 - 1e-4) ** 500, rel=1e-12)
    assert cr.binom_sf(2, 3, 0.5) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="k >= 0"):
        cr.binom_sf(-1, 3, 0.5)


def test_fpr_test_counts_rates_exactly():
    """One rejection in 500 nulls is p = 0.0488 alone: at the 5 % threshold a single detector
    rejects; Bonferroni over 12 detectors does not; 500 nulls are too few to say anything
    about 1e-4 (n/a); 20 rejections in 20000 nulls is exactly the promise (p = 0.53: reproduced);
    40 in 20000 refutes it."""
    one = cr.fpr_test([(1, 500)])
    assert one["p_adjusted"] == pytest.approx(1 - (1 - 1e-4) ** 500) and cr.fpr_kept(one) == X
    twelve = cr.fpr_test([(1, 500)] + [(0, 500)] * 11)
    assert twelve["p_adjusted"] == pytest.approx(12 * (1 - (1 - 1e-4) ** 500)) and cr.fpr_kept(twelve) == NA
    assert twelve["detectable"] > 10 * 1e-4 and twelve["n_needed"] > 500
    big = cr.fpr_test([(20, 200_000)])
    assert cr.fpr_kept(big) == R and big["detectable"] <= 10 * 1e-4
    assert cr.fpr_kept(cr.fpr_test([(40, 200_000)])) == X
    # the resolution is checked at n_needed: that many nulls do reveal 10 x the level
    assert cr.fpr_test([(0, twelve["n_needed"])] * 12)["detectable"] <= 10 * 1e-4
    with pytest.raises(ValueError, match="tests must be"):
        cr.fpr_test([(3, 2)])


def test_fpr_counts_a_shared_null_sample_once():
    """tab_performance's three SRL gamma=0.1 cells on news score one null sample with one detector:
    one test, not three rejections."""
    cells = [dict(lm="news", algo="srl", params=dict(gamma=0.1, delta=d), n_null=500, **{"empirical_fpr_at_1e-4": 0.002}) for d in (1.0, 5.0, 10.0)]
    cells += [dict(lm="news", algo="dualga", params=dict(Delta=0.3), n_null=500, **{"empirical_fpr_at_1e-4": 0.0}),
              dict(lm="lfqa", algo="srl", params=dict(gamma=0.1, delta=1.0), n_null=500, **{"empirical_fpr_at_1e-4": 0.0})]
    res = report._fpr(dict(cells=cells), "news")
    assert res["tests"] == 2 and res["rejections"] == 1


def test_ratio_uses_one_lm():
    mk = lambda lm, algo, kl, **p: dict(lm=lm, algo=algo, params=p, kl_per_token=kl)  # noqa: E731
    d = dict(cells=[mk("news", "ems", 2.8, tau=1.0), mk("news", "uw-delta", 2.9), mk("news", "dualga", 0.2, Delta=0.3),
                    mk("lfqa", "ems", 0.3, tau=1.0), mk("lfqa", "uw-delta", 0.35), mk("lfqa", "dualga", 0.25, Delta=0.3)])
    assert report._ratio_one_lm(d, "news") == pytest.approx(14.0) and report._ratio_one_lm(d, "lfqa") == pytest.approx(1.2)
    assert cr.distorts_more(report._ratio_one_lm(d, "lfqa")) == N


def test_autocov_is_read_at_the_same_kl():
    """AutoCov at 3x DualGA's KL with a smaller p is no evidence: at the same KL (DualGA's curve
    interpolated) AutoCov's p is larger here, so the paper's claim holds."""
    cfg = lambda algo, D, kl, med: dict(algo=algo, params=dict(Delta=D), kl=kl, median_log10_p=med)  # noqa: E731
    d = dict(configs=[cfg("dualga", 0.2, 0.1, -8.0), cfg("dualga", 0.3, 0.2, -16.0), cfg("dualga", 0.4, 0.6, -30.0),
                      cfg("autocov", 0.2, 0.2, -10.0), cfg("autocov", 0.3, 0.6, -20.0), cfg("autocov", 0.4, 1.2, -40.0),
                      dict(algo="ems", params={}, kl=2.0, median_log10_p=-50.0)])
    # equal Delta would say AutoCov -20 < DualGA -16 (stronger); at the same KL: -10 vs -16 and -20 vs -30
    assert report._autocov_vs(d, "dualga") == pytest.approx(8.0) and cr.clear_sign(report._autocov_vs(d, "dualga")) == R
    assert math.isnan(report._autocov_vs(d, "ems"))  # EMS's KL lies beyond AutoCov's range


def test_robustness_over_every_configuration():
    """The best configuration passing is not enough: the share over all (configuration, attack) pairs decides."""
    rates = [0.0, 0.3]
    rows = {"dualga Delta=0.4 (KL 0.42)": dict(median_log10_p=[-30.0, -7.0]), "dualga Delta=0.2 (KL 0.10)": dict(median_log10_p=[-9.0, -2.0]),
            "srl delta=2,gamma=0.25 (KL 0.35)": dict(median_log10_p=[-20.0, -3.0])}
    d = dict(rates=rates, attacks={"substitution": rows, "deletion": rows})
    assert report._share_below_at(d) == pytest.approx(1 / 3) and cr.most(report._share_below_at(d)) == N
    assert report._delta_monotone(d) == 1.0
    assert report._kl_rank_vs_p(d) == pytest.approx(-1.0)  # KL 0.42 > 0.35 > 0.10 and median log10 p -7 < -3 < -2


def test_box4_blocks_follow_the_paper():
    """Rows 39-40 read each setting's frontier ratio (KL over OPT at its own realised DG), not KL against the block's other settings."""
    grid = [dict(lam1=lam, eta=eta, kl_mean=0.4, frontier_ratio=1.05) for lam in (1.0, 2.0, 5.0, 10.0) for eta in (0.1, 1.0, 5.0, 10.0)]
    d = dict(grid=grid, eta_sweep=[dict(eta=0.01, rel_kl_vs_srl=0.05), dict(eta=0.02, rel_kl_vs_srl=-0.08), dict(eta=0.05, rel_kl_vs_srl=0.5)])
    assert report._box_block(d) == pytest.approx(1.05) and report._box_extreme(d) == pytest.approx(1.05)
    assert cr.kl_stable(report._box_block(d)) == R and cr.suboptimal(report._box_extreme(d)) == N
    next(g for g in grid if (g["lam1"], g["eta"]) == (5.0, 0.1))["frontier_ratio"] = 1.6  # the lambda_1 = 5, eta = 0.1
    assert cr.kl_stable(report._box_block(d)) == N
    next(g for g in grid if (g["lam1"], g["eta"]) == (10.0, 0.1))["frontier_ratio"] = 0.9  # outside the block: not read by row 39
    assert report._box_block(d) == pytest.approx(1.6) and report._box_extreme(d) == pytest.approx(0.9)
    for g in grid:
        if g["lam1"] == 10.0 or g["eta"] == 10.0:
            g["frontier_ratio"] = 1.2
    assert cr.suboptimal(report._box_extreme(d)) == R
    small = next(c for c in report.CLAIMS if c.claim.startswith("Hyperparameters: eta < 0.05"))
    assert small.value(d, None) == pytest.approx(0.08)  # eta = 0.05 is not below 0.05: left out
