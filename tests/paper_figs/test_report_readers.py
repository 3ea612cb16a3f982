"""paper_figs.report's readers on hand-made result records (the survivors of make mutate's sampled
run on this module): which detector a null cell counts as, and the SRL frontier gap of one setting."""

from paper_figs import report


def test_each_null_cell_counts_as_its_own_detector():
    cell = lambda algo, **params: dict(lm="news", algo=algo, params=params)  # noqa: E731
    assert report._detector(cell("srl", gamma=0.25, delta=2.0)) == ("news", "green", 0.25)
    assert report._detector(cell("hard", gamma=0.5)) == ("news", "green", 0.5)
    assert report._detector(cell("dualga", Delta=0.3, gamma=0.4)) == ("news", "dualga", 0.3, 0.4)
    assert report._detector(cell("ems", tau=1.0)) == ("news", "ems")
    assert report._detector(cell("atw", alpha=1.5)) == ("news", "atw", (("alpha", 1.5),))


def test_the_srl_frontier_gap_is_read_for_the_setting_asked():
    cfg = lambda gap, gamma, delta, algo="srl": dict(algo=algo, params=dict(gamma=gamma, delta=delta), frontier_gap=gap)  # noqa: E731
    d = {"per_lm": {"news": {"configs": [cfg(0.1, 0.25, 2.0), cfg(0.7, 0.5, 2.0), cfg(0.9, 0.25, 2.0, algo="hard")]},
                    "lfqa": {"configs": [cfg(0.3, 0.25, 2.0), cfg(0.8, 0.25, 1.0)]}}}
    assert report._srl_gap(d, 0.25, 2.0) == 0.3
    assert report._srl_gap(d, 0.5, 2.0) == 0.7


def test_box_4_block_and_extremes_read_lambda_1_and_eta_in_1_2_5_and_01_1_5():
    """Optimality ratios 1..9 over lambda_1 in {1, 2, 5} x eta in {0.1, 1, 5}, one extreme at lambda_1 = 10 (20), one at
    eta = 10 (4) and one cell outside both (eta = 2, 100): the block's largest is 9, the extremes' least 4."""
    grid = [dict(lam1=lam, eta=eta, frontier_ratio=float(3 * i + j + 1)) for i, lam in enumerate((1.0, 2.0, 5.0)) for j, eta in enumerate((0.1, 1.0, 5.0))]
    grid += [dict(lam1=10.0, eta=1.0, frontier_ratio=20.0), dict(lam1=2.0, eta=10.0, frontier_ratio=4.0), dict(lam1=1.0, eta=2.0, frontier_ratio=100.0)]
    d = {"grid": grid}
    assert report._box_block(d) == 9.0
    assert report._box_extreme(d) == 4.0


def test_the_robustness_claims_read_the_papers_configurations_and_attacks_only():
    """fig_robustness also draws SynthID, the seeding variants over h = 4, the newer schemes and the synonym attack; the
    claims of Sec. exp (robustness) are read on the paper's algorithms and six attacks only."""
    row = lambda *p: dict(median_log10_p=list(p))  # noqa: E731
    paper = {"srl delta=2,gamma=0.25 (KL 0.35)": row(-20.0, -10.0), "dualga Delta=0.2 (KL 0.10)": row(-8.0, -3.0),
             "dualga Delta=0.4 (KL 0.42)": row(-25.0, -9.0)}
    others = {"srl delta=2,gamma=0.25,h=4,selfhash (KL 0.35)": row(-20.0, -1.0), "morphmark morph_kappa=1.3 (KL 0.32)": row(-19.0, -0.5),
              "synthid m=30 (KL 1.75)": row(-60.0, -0.1)}
    d = dict(rates=[0.0, 0.3], attacks={"substitution": {**paper, **others}, "synonym": {**paper, **others}})
    assert report._robust(d) == {"substitution": {k: v["median_log10_p"] for k, v in paper.items()}}
    assert report._share_below_at(d) == 2 / 3
    assert report._delta_monotone(d) == 1.0
