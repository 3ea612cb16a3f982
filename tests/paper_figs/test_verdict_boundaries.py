"""Each verdict of the reproduction report flips exactly at its stated threshold.

* The thresholds themselves are pinned to the values the criteria's docstrings and the report's
  rows state (the paper's numbers, or the margin each comment gives), so loosening a constant
  fails here even though the criteria read it by name.
* Each criterion is fed its threshold and the neighbouring float on the other side
  (``np.nextafter``), for its "reproduced" and its "refuted" thresholds, so turning ``<=`` into
  ``<`` (or ``>=`` into ``>``) fails.
* The report's own readers (:mod:`paper_figs.report`) and its inline judges count a value exactly at
  their cut the way their row says (``<= -4``, ``0.2 <= Delta <= 0.5``, ``0 < rate < 0.3``,
  ``|z| in [0, 1.96]``, ...).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from paper_figs import criteria as cr
from paper_figs import report

R, N, X, NA = cr.REPRODUCED, cr.NOT_REPRODUCED, cr.REFUTED, cr.NA


def up(x: float) -> float:
    return float(np.nextafter(x, math.inf))


def down(x: float) -> float:
    return float(np.nextafter(x, -math.inf))


# the stated thresholds: constant -> value (source: the comment or docstring beside it in criteria.py)
STATED = {
    "FRONTIER_TOL": 0.05, "SPREAD_RATIO": 0.5, "TPR_HIGH": 0.95, "DISTORTION_RATIO": 2.0, "FPR_LEVEL": 1e-4, "FPR_ALPHA": 0.05,
    "FPR_POWER": 0.8, "FPR_RESOLUTION": 10.0, "MEDIAN_P_LEVEL": -4.0, "Z_LEVEL": 1.645, "Z_LOST": 1.645, "LAMBDA_RISE": 1.5,
    "KL_STABLE": 1.25, "SRL_LIKE": 0.1, "SUBOPTIMAL": 1.1, "MOST": 0.5, "RANK_AGREE": 0.7, "TPR_CLOSE": 0.1,
    "TPR_CLOSE_SHARE": 0.75, "TPR_CONSISTENT": 0.1, "OVERHEAD": 20.0, "REGRET_SLOPE": -0.4, "GREEN_RATIO": 1.5,
    "LAM1_ADVICE": (0.5, 2.0), "ETA_RANGE": (0.1, 2.0), "DG_SLACK": 0.01, "CLEAR": 0.5,
}


def test_thresholds_are_the_stated_values():
    assert {k: getattr(cr, k) for k in STATED} == STATED
    from scipy.stats import norm

    assert STATED["Z_LEVEL"] == pytest.approx(norm.ppf(0.95), abs=5e-4)  # one-sided 5 %


# (criterion, threshold, verdict at it, verdict one float beyond it, direction of "beyond")
FLIPS = [
    (cr.on_frontier, 0.05, R, N, up), (cr.off_frontier, 0.05, N, R, up), (cr.at_least_one, 1.0, R, N, down),
    (cr.concentrated, 0.5, R, N, up), (cr.concentrated, 1.0, X, N, down), (cr.less_dispersed, 1.0, N, R, down),
    (cr.tpr_high, 0.95, R, N, down), (cr.distorts_more, 2.0, R, N, down), (cr.distorts_more, 1.0, N, X, down),
    (cr.median_p_below, -4.0, R, N, up), (cr.most, 0.5, N, R, up), (cr.all_of, 1.0, R, N, down), (cr.all_of, 0.0, X, N, up),
    (cr.negative_rank, -0.5, R, N, up), (cr.negative_rank, 0.0, N, X, up), (cr.positive, 0.0, N, R, up), (cr.positive, 0.0, N, X, down),
    (cr.z_detectable, 1.645, R, N, down), (cr.z_lost, 1.645, N, R, down), (cr.lambda_rises, 1.5, R, N, down),
    (cr.lambda_rises, 1.0, X, N, up), (cr.kl_stable, 1.25, R, N, up), (cr.srl_like, 0.1, R, N, up), (cr.suboptimal, 1.1, R, N, down),
    (cr.rank_agrees, 0.7, R, N, down), (cr.tprs_match, 0.75, R, N, down), (cr.consistent, 0.1, R, N, up),
    (cr.overhead_small, 20.0, R, N, up), (cr.regret_rate, -0.4, R, N, up), (cr.regret_rate, 0.0, N, X, up),
    (cr.greener, 1.5, R, N, down), (cr.no_more_than, 0.0, R, N, up), (cr.clear_sign, 0.5, N, R, up), (cr.clear_sign, -0.5, N, X, down),
    (cr.meets_target, -0.01, R, N, down),
]


@pytest.mark.parametrize("judge, at, at_verdict, beyond_verdict, step", FLIPS, ids=[f"{f[0].__name__}@{f[1]}" for f in FLIPS])
def test_criterion_flips_exactly_at_its_threshold(judge, at, at_verdict, beyond_verdict, step):
    assert judge(at) == at_verdict
    assert judge(step(at)) == beyond_verdict


def test_within_flips_at_both_ends():
    for lo, hi in (cr.LAM1_ADVICE, cr.ETA_RANGE, (0.0, 1.96)):
        assert cr.within(lo, lo, hi) == R and cr.within(hi, lo, hi) == R
        assert cr.within(down(lo), lo, hi) == N and cr.within(up(hi), lo, hi) == N


def test_correlated_flips_at_plus_and_minus_the_line():
    line = 0.1
    assert cr.correlated({"min": line, "line": line}) == N and cr.correlated({"min": up(line), "line": line}) == R
    assert cr.correlated({"min": -line, "line": line}) == N and cr.correlated({"min": down(-line), "line": line}) == X


def test_fpr_kept_flips_at_alpha_and_at_the_resolution():
    base = dict(level=1e-4, alpha=0.05, detectable=1e-3)
    assert cr.fpr_kept(dict(base, p_adjusted=0.05)) == X and cr.fpr_kept(dict(base, p_adjusted=up(0.05))) == R
    assert cr.fpr_kept(dict(base, p_adjusted=0.5, detectable=10 * 1e-4)) == R
    assert cr.fpr_kept(dict(base, p_adjusted=0.5, detectable=up(10 * 1e-4))) == NA


def test_fpr_test_threshold_is_the_least_k_at_alpha_over_m():
    """k_star is the least k with m P(Bin(n, level) >= k) <= alpha (computed here by a scan)."""
    from scipy.stats import binom

    for m, n in ((1, 500), (3, 20000), (12, 200_000)):
        r = cr.fpr_test([(0, n)] * m)
        k = next(k for k in range(n + 1) if m * binom.sf(k - 1, n, 1e-4) <= 0.05)
        assert r["k_star"] == k, (m, n)
        assert cr.fpr_kept(cr.fpr_test([(k, n)] + [(0, n)] * (m - 1))) == X
        assert cr.fpr_kept(cr.fpr_test([(k - 1, n)] + [(0, n)] * (m - 1))) != X


def test_detectable_is_the_fpr_seen_with_the_stated_power():
    """At the returned FPR the test rejects with probability >= FPR_POWER; a hair below it, less."""
    r = cr.fpr_test([(0, 20000)])
    k = r["k_star"]
    assert cr.binom_sf(k, 20000, r["detectable"]) >= 0.8 > cr.binom_sf(k, 20000, r["detectable"] * (1 - 1e-6))


# ---------------------------------------------------------------- the report's readers


def _robust_doc(rows: dict, rates=(0.0, 0.3)) -> dict:
    return dict(rates=list(rates), attacks={"substitution": rows})


def test_share_below_counts_a_median_exactly_at_minus_four():
    rows = {"srl delta=1 (KL 0.1)": dict(median_log10_p=[-9.0, -4.0]), "atw delta=2 (KL 0.2)": dict(median_log10_p=[-9.0, up(-4.0)])}
    assert report._share_below_at(_robust_doc(rows)) == 0.5


def test_delta_monotone_counts_ties_and_skips_rate_zero():
    rows = {"dualga Delta=0.2 (KL 0.1)": dict(median_log10_p=[-5.0, -3.0, -2.0]), "dualga Delta=0.4 (KL 0.3)": dict(median_log10_p=[-1.0, -3.0, up(-2.0)])}
    assert report._delta_monotone(_robust_doc(rows, rates=(0.0, 0.1, 0.3))) == 0.5  # rate 0 left out; the tie counts


def test_tpr_share_counts_a_difference_of_exactly_the_tolerance():
    cells = [dict(lm="news", paper=[0.0, 0.5, 0, 0, 0, 0], **{"tpr_at_1e-4": 0.1, "tpr_at_1e-6": up(0.6)})]
    assert abs(0.1 - 0.0) == cr.TPR_CLOSE
    assert report._tpr_share(dict(cells=cells), "news") == 0.5


def test_kl_dg_corr_takes_delta_in_the_closed_range():
    pts = [dict(curve="DualGA", params=dict(Delta=D), kl_dg_corr=r) for D, r in ((0.1, -0.9), (0.2, 0.3), (0.5, 0.4), (0.6, -0.8))]
    pts.append(dict(curve="SRL", params=dict(Delta=0.3), kl_dg_corr=-0.7))
    v = report._kl_dg_corr(dict(per_lm={"news": dict(points=pts)}, n=100), "news")
    assert v == {"min": 0.3, "line": pytest.approx(0.2)}


def test_autocov_attacked_takes_rates_strictly_inside():
    d = dict(rates=[0.0, 0.1, 0.2, 0.3], robustness={"substitution": dict(autocov=[-1.0, -5.0, -6.0, -0.5])})
    assert report._autocov_attacked(d) == -5.0


def _claim(prefix: str) -> report.Claim:
    return next(c for c in report.CLAIMS if c.claim.startswith(prefix))


def test_inline_judges_of_the_claims_flip_at_their_ends():
    z = _claim("Unwatermarked z stays inside")
    assert z.judge(1.96) == R and z.judge(up(1.96)) == N and z.judge(0.0) == R
    lam = _claim("lambda_1 is typically about 10 Delta")
    assert lam.judge(2.0) == R and lam.judge(up(2.0)) == N and lam.judge(0.5) == R and lam.judge(down(0.5)) == N
    eta = _claim("The tuned eta falls in")
    assert eta.judge(2.0) == R and eta.judge(up(2.0)) == N and eta.judge(0.1) == R and eta.judge(down(0.1)) == N


def test_one_lm_frontier_claim_needs_two_lms():
    c = next(c for c in report.CLAIMS if c.judge is cr.at_least_one)
    assert c.value(dict(lms=["news", "lfqa"], srl_on_one_frontier_only=[1]), None) == 1
    assert math.isnan(c.value(dict(lms=["news"], srl_on_one_frontier_only=[1]), None))


def test_stealing_table_takes_the_first_n_with_success_at_least_one_half(tmp_path):
    import json

    pts = [dict(n_stolen=n, spoof_success=s, scrub_success=0.1, green_estimate_accuracy=0.6) for n, s in ((10, 0.2), (100, 0.5), (1000, 0.9))]
    d = dict(lm="news", vocab_size=1024, T=200, level=1e-4, n_eval=50, curves={"srl": pts, "dualga": [dict(pts[0], spoof_success=down(0.5))]},
             spoof_test={})
    (tmp_path / "fig_stealing.json").write_text(json.dumps(d))
    lines = report._stealing(tmp_path)
    assert "| srl | 100 |" in "\n".join(lines) and "| dualga | none up to 10 |" in "\n".join(lines)
