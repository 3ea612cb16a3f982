"""The matched-distortion comparison (paper_figs._matched, paper_figs.fig_matched): interpolation,
inversion, levels and verdicts against hand-computed cases, the bootstrap statistics against plain
NumPy, and the whole analysis on planted curves whose order is known."""

import numpy as np
import pytest

from paper_figs import _matched as mt
from paper_figs import fig_matched


def test_point_stats_match_numpy():
    rng = np.random.default_rng(3)
    kl, dg, lp = rng.random(41), rng.random(41), -10 * rng.random(41)
    st = mt.point_stats(kl, dg, lp)
    assert st["kl"][0] == pytest.approx(kl.mean()) and st["dg"][0] == pytest.approx(dg.mean())
    assert st["tpr_1e-4"][0] == pytest.approx(np.mean(lp <= -4)) and st["tpr_1e-6"][0] == pytest.approx(np.mean(lp <= -6))
    assert st["strength"][0] == -np.median(lp)  # odd n: the weighted (lower) median is the median
    w = rng.multinomial(41, np.full(41, 1 / 41), size=3)
    st = mt.point_stats(kl, dg, lp, w)
    for r in range(3):
        rep = np.repeat(np.arange(41), w[r])
        assert st["kl"][r] == pytest.approx(kl[rep].mean()) and st["tpr_1e-4"][r] == pytest.approx(np.mean(lp[rep] <= -4))
        assert st["strength"][r] == -np.sort(lp[rep])[(rep.size - 1) // 2]
    with pytest.raises(ValueError, match="kl, dg, log10_p"):
        mt.point_stats(kl, dg, lp[:3])


def test_metric_at_kl_interpolates_in_log_kl_and_refuses_to_extrapolate():
    kls, ys = np.array([0.4, 0.1]), np.array([1.0, 0.0])  # any order
    got = mt.metric_at_kl(kls, ys, [0.1, 0.2, 0.4, 0.05, 0.5])
    assert got[:3] == pytest.approx([0.0, 0.5, 1.0])  # 0.2 is halfway between 0.1 and 0.4 in log
    assert np.isnan(got[3:]).all()
    # a replicate whose end moved inside the point estimate's range answers (held flat) there
    assert mt.metric_at_kl([0.12, 0.4], [0.1, 1.0], [0.1], bounds=(0.1, 0.4))[0] == pytest.approx(0.1)


def test_kl_at_tpr_inverts_the_running_maximum():
    kls, tpr = np.array([0.1, 0.2, 0.3, 0.4]), np.array([0.2, 0.6, 0.5, 1.0])
    got = mt.kl_at_tpr(kls, tpr, [0.4, 0.6, 0.8, 0.1, 1.0])
    assert got[0] == pytest.approx(0.15) and got[1] == pytest.approx(0.2)
    assert got[2] == pytest.approx(0.35)  # the dip at 0.3 is ignored: 0.6 -> 1.0 between 0.3 and 0.4
    assert np.isnan(got[3])  # the curve starts above 0.1: where it reached it is unknown
    assert got[4] == pytest.approx(0.4)
    assert np.isnan(mt.kl_at_tpr(kls, tpr * 0.5, [0.9])).all()


def test_common_levels():
    lv = mt.common_levels((0.01, 1.0), (0.1, 10.0), 3, log=True)
    assert lv.size == 3 and lv[0] > 0.1 and lv[-1] < 1.0 and lv[1] == pytest.approx(np.sqrt(0.1))
    assert mt.common_levels((0.01, 0.05), (0.1, 1.0), 3, log=True).size == 0
    assert mt.common_levels((0.3, 0.3), (0.1, 1.0), 3, log=True).tolist() == [0.3]
    assert mt.common_levels((0.1, 0.9), (0.5, 0.95), 3, log=False) == pytest.approx([0.6, 0.7, 0.8])


def test_verdict_needs_an_interval_clear_of_zero():
    assert mt.verdict([0.1, -0.2], [0.3, 0.1]) == mt.BETTER
    assert mt.verdict([-0.3, -0.2], [-0.1, 0.1]) == mt.WORSE
    assert mt.verdict([0.1, -0.3], [0.3, -0.1]) == mt.MIXED
    assert mt.verdict([0.0, -0.1], [0.3, 0.1]) == mt.TIED  # exactly at the threshold: a lower end of 0 is not above 0
    assert mt.verdict([-0.3], [0.0]) == mt.TIED
    assert mt.verdict([np.nan], [np.nan]) == mt.TIED
    with pytest.raises(ValueError, match="one shape"):
        mt.verdict([0.1], [0.2, 0.3])


def _curve(kls, ys, noise, rng, R=201):
    """One sub-curve of points whose replicates scatter by ``noise`` around (kl, y)."""
    return [[{"kl": k * (1 + 0.01 * rng.standard_normal(R)), "tpr_1e-4": np.clip(y + noise * rng.standard_normal(R), 0, 1),
              "strength": 10 * y + noise * rng.standard_normal(R)} for k, y in zip(kls, ys)]]


def test_compare_orders_planted_curves():
    """Curve a lies 0.2 above b at every KL with replicate noise sd 0.02 (seed 0, 200 replicates,
    3 levels at simultaneous 95 %): a is better, b worse, a against itself tied."""
    rng = np.random.default_rng(0)
    kls = [0.05, 0.1, 0.2, 0.4, 0.8]
    a = _curve(kls, [0.3, 0.5, 0.7, 0.8, 0.9], 0.02, rng)
    b = _curve(kls, [0.1, 0.3, 0.5, 0.6, 0.7], 0.02, rng)
    assert mt.compare(a, b, "tpr_1e-4", 3, 0.05)["verdict"] == mt.BETTER
    assert mt.compare(b, a, "tpr_1e-4", 3, 0.05)["verdict"] == mt.WORSE
    assert mt.compare(a, a, "tpr_1e-4", 3, 0.05)["verdict"] == mt.TIED
    kat = mt.compare(a, b, "kl_at_tpr", 3, 0.05)
    assert kat["verdict"] == mt.BETTER and all(d > 0 for d in kat["diff"])  # a reaches each TPR at less KL
    # b's envelope with a better sub-curve (a itself) is no longer beaten
    assert mt.compare(a, b + a, "tpr_1e-4", 3, 0.05)["verdict"] == mt.TIED
    far = _curve([5.0, 9.0], [0.9, 1.0], 0.02, rng)
    res = mt.compare(a, far, "strength", 3, 0.05)
    assert res["verdict"] == "n/a" and "no KL range" in res["reason"]


def test_a_single_point_curve_is_compared_at_its_own_kl():
    rng = np.random.default_rng(1)
    a = _curve([0.05, 0.1, 0.2, 0.4], [0.3, 0.5, 0.7, 0.8], 0.02, rng)
    uw = _curve([0.2], [0.4], 0.02, rng)
    res = mt.compare(a, uw, "tpr_1e-4", 5, 0.05)
    assert res["levels"] == [pytest.approx(0.2, rel=0.05)] and res["diff"][0] == pytest.approx(0.3, abs=0.05) and res["verdict"] == mt.BETTER


def test_analyse_on_planted_texts():
    """Per-text arrays where DualGA's texts have log10 p 3x lower than SRL's at the same KL
    (seed 0, 300 texts, 100 replicates): DualGA better on every metric at common KL."""
    rng = np.random.default_rng(0)
    n, per_text, cfgs = 300, {}, {}
    for i, kl in enumerate((0.05, 0.1, 0.2, 0.4)):
        base = -40 * kl * (1 + 0.3 * rng.standard_normal(n))
        for algo, params, f in (("dualga", dict(Delta=0.1 * (i + 1)), 3.0), ("srl", dict(gamma=0.5, delta=float(i + 1)), 1.0)):
            cid = f"{algo}{i}"
            cfgs[cid] = (algo, params)
            per_text[cid] = dict(kl=kl * (1 + 0.1 * rng.standard_normal(n)), dg=np.full(n, 0.1), log10_p=f * base)
    res = fig_matched.analyse(per_text, cfgs, B=100, k=3)
    by = {(c["b"], c["metric"]): c["verdict"] for c in res["comparisons"]}
    assert by[("SRL gamma=0.5", "strength")] == by[(fig_matched.SRL_BEST, "tpr_1e-4")] == mt.BETTER
    assert {p["curve"] for p in res["points"]} == {"DualGA", "SRL gamma=0.5"}
    with pytest.raises(ValueError, match="same number of texts"):
        fig_matched.analyse({**per_text, "x": dict(kl=np.ones(3), dg=np.ones(3), log10_p=np.ones(3))},
                            {**cfgs, "x": ("ems", dict(tau=1.0))}, B=10, k=3)


def test_n_to_decide_scales_the_interval_like_one_over_root_n():
    """A level with diff 0.1 and interval [-0.1, 0.3] (half-width 0.2 toward 0) clears 0 at 4 n;
    the clearest level decides; a level with no finite interval is skipped."""
    assert mt.n_to_decide([0.1], [-0.1], [0.3], 16) == 64
    assert mt.n_to_decide([-0.1, 0.1, np.nan], [-0.25, -0.1, np.nan], [0.05, 0.3, np.nan], 16) == 36  # (0.15 / 0.1)^2 x 16
    assert np.isnan(mt.n_to_decide([0.0], [-1.0], [1.0], 16))
    assert mt.n_to_decide([-0.08], [-0.17], [0.0], 16) == 17  # touching 0 at n is still a tie: more than n
    # at the returned n the interval just clears 0: half-width x sqrt(16 / 64) = diff
    assert 0.2 * np.sqrt(16 / mt.n_to_decide([0.1], [-0.1], [0.3], 16)) == pytest.approx(0.1)
    with pytest.raises(ValueError, match="n must be"):
        mt.n_to_decide([0.1], [0.0], [0.2], 0)


def test_kl_at_tpr_bounds_where_a_curve_starts_above_or_never_reaches_a_level():
    kls, tpr = np.array([0.1, 0.2, 0.3, 0.4]), np.array([0.2, 0.6, 0.5, 1.0])
    lo, hi = mt.kl_at_tpr_bounds(kls, tpr, [0.4, 0.1, 0.2, 1.0])
    assert lo == pytest.approx([0.15, 0.0, 0.1, 0.4]) and hi == pytest.approx([0.15, 0.1, 0.1, 0.4])  # 0.1: crossed in [0, 0.1]
    lo, hi = mt.kl_at_tpr_bounds(kls, tpr * 0.5, [0.9])
    assert lo[0] == 0.4 and hi[0] == np.inf  # never reached: beyond the greatest KL
    assert mt.kl_at_tpr_bounds([0.3], [0.5], [0.5]) == (pytest.approx(0.3), pytest.approx(0.3))  # one point, on the level
    # the envelope of two sub-curves: the least lower and the least upper bound (at 0.8 the second, which
    # never reaches it, may still cross it between its greatest KL 0.3 and the first's 0.35)
    lo, hi = mt.envelope_kl_bounds([(kls, tpr), (np.array([0.05, 0.3]), np.array([0.5, 0.7]))], [0.4, 0.8])
    assert lo == pytest.approx([0.0, 0.3]) and hi == pytest.approx([0.05, 0.35])


def _pinned(curve, tprs):
    """``curve`` with its point estimates (replicate 0) of TPR at the planted values."""
    for p, t in zip(curve[0], tprs):
        p["tpr_1e-4"][0] = t
    return curve


def test_kl_at_tpr_interval_where_replicates_start_above_the_first_level():
    """Curve a's least-KL point has TPR 0.88 with replicate sd 0.02 (seed 5, 200 replicates, 3 levels at
    simultaneous 95 %): the first level, 0.8975, lies below a's start in about 19 % of the replicates, which
    bound a's KL there to [0, least KL].  The level still gets a finite interval that holds the point difference,
    whose upper end (b's KL minus 0 in those replicates) reaches at least the median of b's KL among them."""
    rng = np.random.default_rng(5)
    a = _pinned(_curve([0.1, 0.2, 0.4], [0.88, 0.99, 1.0], 0.02, rng), [0.88, 0.99, 1.0])
    b = _pinned(_curve([0.05, 0.1, 0.2, 0.4], [0.3, 0.6, 0.85, 0.99], 0.02, rng), [0.3, 0.6, 0.85, 0.99])
    res = mt.compare(a, b, "kl_at_tpr", 3, 0.05)
    lo, hi, d = (np.array(res[x]) for x in ("lo", "hi", "diff"))
    assert res["levels"][0] == pytest.approx(0.8975)
    assert np.isfinite(lo).all() and np.isfinite(hi).all() and (lo <= d).all() and (d <= hi).all()
    assert 0.1 < res["censored"][0] < 0.3 and res["defined"] == [1.0, 1.0, 1.0]
    lv = res["levels"][0]
    starts_above = np.array([a[0][0]["tpr_1e-4"][r] > lv for r in range(1, 201)])
    kl_b = np.array([mt.kl_at_tpr([p["kl"][r] for p in b[0]], [p["tpr_1e-4"][r] for p in b[0]], [lv])[0] for r in range(1, 201)])
    assert hi[0] >= np.median(kl_b[starts_above])
    assert res["verdict"] == mt.BETTER
    # a curve whose greatest point's TPR straddles a level: its KL there is unbounded above in some replicates
    top = _pinned(_curve([0.05, 0.1, 0.2], [0.5, 0.8, 0.9], 0.02, rng), [0.5, 0.8, 0.9])
    res = mt.compare(a, top, "kl_at_tpr", 1, 0.05)
    assert res["levels"] == [pytest.approx(0.89)] and res["censored"][0] > 0.2 and res["hi"][0] == np.inf and np.isfinite(res["lo"][0])
    cell = fig_matched.span(res)
    assert cell.endswith(f"+inf] ({res['censored'][0]:.0%} censored)")


def test_table_cell_says_where_a_level_has_no_interval():
    c = dict(diff=[0.5, -0.25], lo=[float("nan"), -0.5], hi=[float("nan"), 0.1], defined=[0.8, 1.0], censored=[0.0, 0.0])
    assert fig_matched.span(c) == "+0.5 (no interval: defined in 80% of replicates); -0.25 [-0.5, +0.1]"
    assert fig_matched.span(dict(diff=[], lo=[], hi=[], reason="no overlap")) == "no overlap"
    c = dict(diff=[float("nan")], lo=[-0.03], hi=[0.001], defined=[1.0], censored=[0.96])
    assert fig_matched.span(c) == "bounded [-0.03, +0.001] (96% censored)"  # not "+nan": the point is only bounded


def test_a_grid_left_empty_by_the_real_lm_filter_is_skipped_not_a_crash():
    """``--lm smollm2`` keeps 15 configurations of the main grid and none of SynthID's: its grid must come back
    empty (fig_matched then skips it) rather than fail on the sizes of no configuration."""
    from paper_figs._sweep import sweep_grid

    synthid = sweep_grid("matched_synthid", lms=("smollm2",), algos=fig_matched._real_keep, chunk=fig_matched.REAL_CHUNK)
    main = sweep_grid("matched", lms=("news",), algos=fig_matched._real_keep)
    assert synthid.configs == () and len(main.configs) == 15


@pytest.mark.parametrize("grid, curves, with_dg, quick_points", [("matched_new", fig_matched.NEW, True, 2),
                                                                  ("matched_keyed", fig_matched.KEYED, False, 1)])
def test_the_newer_algorithms_grids_pair_with_the_others_and_name_their_comparators(grid, curves, with_dg, quick_points):
    """``examples/sweep_matched_new.toml`` and ``sweep_matched_keyed.toml`` (issue 45): registered algorithms and parameters
    only, the main grid's settings (so their texts pair with the others'), every curve one of the grid's comparators
    (:data:`fig_matched.NEW`, :data:`fig_matched.KEYED`); the other grids' hashes unchanged (their chunks and refinement are
    reused), the new curves neither refined nor run on a real LM, and compared on DG only where they have one."""
    import dataclasses

    from paper_figs._sweep import EXAMPLES, sweep_grid
    from sims.sweep.grid import load_grid
    from sims.watermarks import registry

    assert grid in fig_matched.GRIDS
    new, main = load_grid(EXAMPLES / f"sweep_{grid}.toml"), load_grid(EXAMPLES / "sweep_matched.toml")
    for c in new.configs:
        rec = registry.get(c.algo)
        assert {k for k, _ in c.params} <= set(rec.params), c
        registry.check_params(c.algo, **dict(c.params))
        registry.resolve_params(c.algo, **dict(c.params))
    shared = [f.name for f in dataclasses.fields(main) if f.name not in ("path", "configs")]
    assert {f: getattr(new, f) for f in shared} == {f: getattr(main, f) for f in shared}
    assert sorted({c.lm for c in new.configs}) == sorted({c.lm for c in main.configs}) == sorted(fig_matched.LMS)
    made = {fig_matched.curve_name(c.algo, dict(c.params)) for c in new.configs}
    assert made == set(curves.values()) and made <= set(fig_matched.COMPARATORS)
    assert (set(curves) <= set(fig_matched.DG_ALGOS)) if with_dg else not set(curves) & set(fig_matched.DG_ALGOS)
    assert not made & set(fig_matched.REFINED)
    quick = sweep_grid(grid, lms=("news",), algos=fig_matched._quick_keep)
    assert sorted(fig_matched.curve_name(c.algo, dict(c.params)) for c in quick.configs) == sorted(quick_points * list(curves.values()))
    assert sweep_grid(grid, lms=("smollm2",), algos=fig_matched._real_keep).configs == ()
    assert {n: load_grid(EXAMPLES / f"sweep_{n}.toml").hash[:8] for n in fig_matched.GRIDS[:3]} == \
        {"matched": "cf73a1c8", "matched_gamma": "ed10d525", "matched_synthid": "c61e1078"}  # the committed run's chunk folders
