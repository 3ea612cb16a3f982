"""paper_figs.report's evaluation and rendering on hand-made output folders (the survivors of make
mutate's sampled runs on report.py): which LM a cell reads, the missing-file and pending branches,
the verdict that shows a row's "why" (the extra columns' verdicts, less the rows they cannot hold),
the cell format, and the matched / findings / stealing sections.  Every expected string is written
from the records by hand."""

from __future__ import annotations

import json
import math
import pathlib

import pytest

from paper_figs import report
from paper_figs.report import NA, NOT_REPRODUCED, REFUTED, REPRODUCED


def _claim(text: str) -> report.Claim:
    return next(c for c in report.CLAIMS if c.claim == text)


TPR = _claim("DualGA Delta=0.3: TPR at FPR 1e-4")  # tab_performance, per LM
KL_RANK = _claim("Table exp_performance: the configurations' KL in the paper's order")  # tab_performance, needs kl_per_token
EXT = _claim("Table exp_performance_ext: the algorithms behave alike on a second LM")  # only in the synthetic column
SPREAD = _claim("Per-prompt DG concentrates at Delta under DualGA, not under a population-tuned SRL")  # fig_consistency: no LM
REGRET = _claim("DualGA regret and DG gap decay like T^-1/2 (Theorem dualGA_performance_iid)")  # fig_convergence: no LM, missing
ETA = _claim("Hyperparameters: robust for eta in [0.1, 1]")  # fig_box4, one value (not per LM), no "lm" in its JSON
NULL_FPR = _claim("The exact tests keep the false-positive rate at 1e-4 (independent nulls)")  # a rate test: its own n and T
QUALITY = _claim("Watermarked responses keep their quality")  # nothing measures it


def _write(folder, name, d):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.json").write_text(json.dumps(d))


def _tab(tprs: dict[str, float]) -> dict:
    """tab_performance with one DualGA Delta=0.3 cell per LM."""
    cells = [dict(lm=lm, algo="dualga", label="DualGA Delta=0.3", params=dict(Delta=0.3, gamma=0.25), **{"tpr_at_1e-4": t}) for lm, t in tprs.items()]
    return dict(lms=list(tprs), cells=cells, n=500, T=200)


def _row(md: str, claim: report.Claim) -> list[str]:
    """The claim's table row split into its cells ("|" inside a cell is escaped as "\\|")."""
    i = report.CLAIMS.index(claim) + 1
    line = next(ln for ln in md.splitlines() if ln.startswith(f"| {i} | "))
    return line[2:-2].split(" | ")  # not stripped: a stray space in a cell counts


@pytest.fixture()
def folders(tmp_path):
    """A synthetic column (news and smollm2 in tab_performance, fig_consistency, tab_performance_ext, fig_box4) and an
    empty smollm2 column folder."""
    main, col = tmp_path / "main", tmp_path / "col"
    _write(main, "tab_performance", _tab({"news": 0.96875, "smollm2": 0.5}))
    _write(main, "tab_performance_ext", dict(cells=[dict(label="DualGA Delta=0.3", **{"tpr_at_1e-4": 0.90625})]))
    _write(main, "fig_consistency", dict(algos=dict(dualga=dict(dg_spread=0.1), srl=dict(dg_spread=0.4))))
    _write(main, "fig_box4", dict(robust_eta_kl_ratio=1.125))
    col.mkdir()
    return main, col


def test_rows_of_the_synthetic_column_and_of_a_real_lm_column(folders):
    main, col = folders
    md = report.render(main, columns={"smollm2": col}, proofs_report=main / "none.md")
    assert "| # | claim (where) | the paper's sentence | paper | ours, synthetic presets | ours, smollm2 | criterion |" in md
    # per LM: the main column leaves smollm2 to its column, which reads it from the main folder's JSON (its own folder has none)
    r = _row(md, TPR)
    assert r[4:7] == ["0.9688, n=500, T=200: **reproduced**", "0.5, n=500, T=200: **not reproduced**", ">= 0.95"]
    assert r[7:] == [TPR.why, "`python -m paper_figs --only tab_performance`"]  # the column's verdict shows the why
    # a reader that fails on this JSON: n/a with the exception's name
    assert _row(md, KL_RANK)[4] == "not in this run's JSON (KeyError), n=500, T=200: **n/a**"
    # only in the synthetic column: the column's n/a does not count, the why is the only_main sentence alone
    r = _row(md, EXT)
    assert r[4:6] == ["0.0625, n=500, T=200: **reproduced**", "n/a (measured on one LM only)"]
    assert r[7:] == [EXT.only_main, "`python -m paper_figs --only tab_performance`"]
    # not reproduced there: its why, then the only_main sentence
    _write(main, "tab_performance_ext", dict(cells=[dict(label="DualGA Delta=0.3", **{"tpr_at_1e-4": 0.5})]))
    r = _row(report.render(main, columns={"smollm2": col}, proofs_report=main / "none.md"), EXT)
    assert r[4] == "0.4688, n=500, T=200: **not reproduced**" and r[7] == f"{EXT.why} {EXT.only_main}"
    # no LM: the column's (missing) verdict does not count either: reproduced, no why
    assert _row(md, SPREAD)[4:] == ["0.25: **reproduced**", "n/a (no LM)", SPREAD.criterion, "", "`python -m paper_figs --only fig_consistency`"]
    assert _row(md, REGRET)[4:6] == ["missing", "n/a (no LM)"]
    # one value, not per LM: the column needs its own JSON
    r = _row(md, ETA)
    assert r[4:6] == ["1.125: **reproduced**", f"pending: `python -m paper_figs --only fig_box4 --lm smollm2 --out {col}`"] and r[7] == ETA.why
    # a script with no JSON in either folder: the column says how to fill it
    r = _row(md, NULL_FPR)
    assert r[4:6] == ["missing", f"pending: `python -m paper_figs --only tab_null_fpr --lm smollm2 --out {col}`"] and r[7] == NULL_FPR.why
    assert _row(md, QUALITY)[4:] == ["not measured: **n/a**", "not measured: **n/a**", "-", QUALITY.why, "-"]


def test_the_why_goes_when_every_column_reproduces(folders):
    main, col = folders
    _write(main, "tab_performance", _tab({"news": 0.96875, "smollm2": 0.95}))
    r = _row(report.render(main, columns={"smollm2": col}, proofs_report=main / "none.md"), TPR)
    assert r[4:6] == ["0.9688, n=500, T=200: **reproduced**", "0.95, n=500, T=200: **reproduced**"] and r[7] == ""


def test_a_column_reads_its_own_folder_first(folders):
    main, col = folders
    _write(col, "tab_performance", dict(_tab({"smollm2": 0.25}), n=16, T=100))
    r = _row(report.render(main, columns={"smollm2": col}, proofs_report=main / "none.md"), TPR)
    assert r[5] == "0.25, n=16, T=100: **not reproduced**"
    # a column folder whose JSON holds another LM: that LM's value
    _write(col, "tab_performance", dict(_tab({"smollm2-fit": 0.96875}), n=16, T=100))
    r = _row(report.render(main, columns={"smollm2": col}, proofs_report=main / "none.md"), TPR)
    assert r[5] == "0.9688, n=16, T=100: **reproduced**"
    # a column whose LM is in neither folder: its per-LM rows are missing, hence pending
    r = _row(report.render(main, columns={"opt": main / "none"}, proofs_report=main / "none.md"), TPR)
    assert r[4:6] == ["news-like (synthetic): 0.9688, n=500, T=200: **reproduced**; smollm2: 0.5, n=500, T=200: **not reproduced**",
                      f"pending: `python -m paper_figs --only tab_performance --lm opt --out {main / 'none'}`"]


def test_one_column_holds_every_lm_and_its_verdict_is_the_worst(folders):
    main, _ = folders
    rows = {r["claim"].claim: r for r in report.evaluate_claims(main)}
    r = rows[TPR.claim]
    assert [(c["lm"], c["value"], c["verdict"]) for c in r["cells"]] == [("news", 0.96875, REPRODUCED), ("smollm2", 0.5, NOT_REPRODUCED)]
    assert r["verdict"] == NOT_REPRODUCED
    assert rows[ETA.claim]["cells"] == [dict(lm=None, value=1.125, verdict=REPRODUCED, size="")]
    assert rows[REGRET.claim] == dict(claim=REGRET, verdict="missing", cells=[])
    assert report._cells(TPR, r) == "news-like (synthetic): 0.9688, n=500, T=200: **reproduced**; smollm2: 0.5, n=500, T=200: **not reproduced**"
    assert report._cells(REGRET, rows[REGRET.claim]) == "missing"
    # skip_lms: the LMs left to their own columns
    r = {r["claim"].claim: r for r in report.evaluate_claims(main, skip_lms=("news",))}[TPR.claim]
    assert [c["lm"] for c in r["cells"]] == ["smollm2"] and r["verdict"] == NOT_REPRODUCED


def test_worst_verdict_order_is_refuted_then_not_reproduced_then_na(tmp_path, monkeypatch):
    for verdicts, worst in [((REPRODUCED, NA), NA), ((NA, NOT_REPRODUCED), NOT_REPRODUCED), ((NOT_REPRODUCED, REFUTED), REFUTED)]:
        _write(tmp_path, "tab_performance", _tab({"news": 0.0, "lfqa": 1.0}))
        monkeypatch.setattr(TPR, "judge", lambda t, v=verdicts: v[int(t)])
        assert {r["claim"].claim: r for r in report.evaluate_claims(tmp_path)}[TPR.claim]["verdict"] == worst


def test_a_rate_test_cell_states_its_own_sample_size(tmp_path):
    res = dict(rejections=0, tests=3, n_min=8000, T=100, shared=False, p_adjusted=1.0, alpha=0.05, detectable=5e-4, level=1e-4, n_needed=8000)
    _write(tmp_path, "tab_null_fpr", dict(lms=["news"], n=999, T=999, per_lm=dict(news=dict(tests_by_group=dict(exact={"0.0001": res})))))
    row = {r["claim"].claim: r for r in report.evaluate_claims(tmp_path)}[NULL_FPR.claim]
    assert report._cells(NULL_FPR, row) == (
        "0 rejections over 3 detectors x 8000 nulls, Bonferroni p 1; n reveals only FPR >= 5.0e-04 "
        "(needs ~8000 nulls per detector for 0.001), n=8000, T=100: **reproduced**"
    )


def test_fmt_writes_four_significant_digits_else_the_note_or_the_claims_own_format():
    assert report._fmt(ETA, dict(value=0.123456)) == "0.1235"
    assert report._fmt(ETA, dict(value=12345678)) == "1.235e+07"
    assert report._fmt(ETA, dict(value="tied")) == "tied"
    assert report._fmt(ETA, dict(value=None, note="not measured")) == "not measured"
    assert report._fmt(ETA, dict(value=None)) == "-"
    assert report._fmt(NULL_FPR, dict(value=dict(rejections=1, tests=2, n_min=5, shared=True, p_adjusted=0.04, detectable=0.5, n_needed=9, level=0.01))) == (
        "1 rejections over 2 detectors x 5 nulls (one shared sample), Bonferroni p 0.04; n reveals only FPR >= 5.0e-01 (needs ~9 nulls per detector for 0.1)"
    )


def test_a_pipe_in_a_cell_is_escaped():
    row = dict(verdict=REPRODUCED, cells=[dict(lm=None, value="a|b", verdict=REPRODUCED)])
    assert report._cells(ETA, row) == "a\\|b: **reproduced**"


def test_dg_across_lms_reads_the_first_two_lms():
    cfg = lambda algo, dg: dict(algo=algo, dg=dg)  # noqa: E731
    d = dict(lms=["news", "lfqa", "opt"], per_lm=dict(news=dict(configs=[cfg("dualga", 0.3), cfg("srl", 0.5)]),
                                                      lfqa=dict(configs=[cfg("dualga", 0.25), cfg("srl", 0.25)]),
                                                      opt=dict(configs=[cfg("dualga", 0.0), cfg("srl", 0.5)])))
    assert report._dg_across_lms(d) == pytest.approx(0.05 / 0.25)


def test_needed_scripts_are_every_claims_scripts_and_fig_matched():
    names = report.needed_scripts()
    assert names == sorted(set(names)) and None not in names
    assert {"tab_performance", "tab_performance_ext", "fig_box4", "fig_convergence", "fig_consistency", "fig_matched"} <= set(names)
    assert set(names) == {s for c in report.CLAIMS if c.script for s in ((c.script,) if isinstance(c.script, str) else c.script)} | {"fig_matched"}


@pytest.fixture(scope="module")
def full_run():
    """docs/results: the committed full run of every script on the synthetic presets."""
    folder = pathlib.Path(__file__).resolve().parents[2] / "docs" / "results"
    return folder, {r["claim"].claim: r for r in report.evaluate_claims(folder)}


def test_every_claim_reads_its_value_from_the_full_runs_json(full_run):
    """Each reader fits the JSON its script writes: a value for every measured claim (none fails with a
    KeyError), one cell per LM of the JSON for a per-LM claim, one unlabelled cell otherwise."""
    folder, rows = full_run
    for c in report.CLAIMS:
        r = rows[c.claim]
        if c.script is None:
            assert [x["value"] for x in r["cells"]] == [None] and r["verdict"] == NA
            continue
        assert r["verdict"] != "missing" and all(x["value"] is not None for x in r["cells"]), (c.claim, r["cells"])
        if c.per_lm:
            d = report._load(c, folder)
            assert [x["lm"] for x in r["cells"]] == report._lms_of(d) and len(r["cells"]) >= 2, c.claim
        else:
            assert [x["lm"] for x in r["cells"]] == [None], c.claim


def test_kl_rank_and_tpr_share_read_the_lms_own_cells_and_paper_columns():
    labs = ["srl delta=1, gamma=0.1", "srl delta=1, gamma=0.5", "srl delta=5, gamma=0.1"]  # the paper's KL rises along these on both LMs
    cells = [dict(lm="news", label=lab, kl_per_token=k) for lab, k in zip(labs, (0.1, 0.2, 0.3))]
    cells += [dict(lm="lfqa", label=lab, kl_per_token=k) for lab, k in zip(labs, (0.3, 0.2, 0.1))]
    assert report._kl_rank(dict(cells=cells), "news") == pytest.approx(1.0) and report._kl_rank(dict(cells=cells), "lfqa") == pytest.approx(-1.0)
    paper = (0.5, 0.25, 9.0, 0.75, 0.125, 9.0)  # TPR 1e-4, 1e-6, KL on C4; the same on LFQA
    cells = [dict(lm="news", paper=paper, **{"tpr_at_1e-4": 0.5 + 0.1, "tpr_at_1e-6": 0.25 - 0.125}),  # 0.1 off: inside; 0.125 off: out
             dict(lm="lfqa", paper=paper, **{"tpr_at_1e-4": 0.75, "tpr_at_1e-6": 0.125})]
    assert report._tpr_share(dict(cells=cells), "news") == 0.5 and report._tpr_share(dict(cells=cells), "lfqa") == 1.0


def _verdict_doc() -> dict:
    comps = [
        _comp("DualGA", "SRL (best gamma)", "tpr_1e-4", "better"),
        _comp("DualGA", "SRL (best gamma)", "tpr_1e-6", "worse"),
        # n to decide: 100 x (0.75 / 0.5)^2 = 225 and 100 x (0.5 / 0.25)^2 = 400
        _comp("DualGA", "EMS", "tpr_1e-4", "tied", diff=[0.5], lo=[-0.25], hi=[1.25]),
        _comp("DualGA", "EMS", "tpr_1e-6", "tied", diff=[0.25], lo=[-0.25], hi=[0.75]),
        _comp("DualGA", "EMS", "kl_at_tpr", "better"),
        _comp("DualGA", "UW-delta", "tpr_1e-6", "better"),
        _comp("DualGA", "UW-gamma", "tpr_1e-4", "mixed"),
        _comp("SRL", "ATW", "tpr_1e-4", "better"),
        _comp("DualGA", "ATW", "strength", "better"),
    ]
    return dict(n=100, per_lm=dict(news=dict(comparisons=comps)))


def test_matched_verdicts_combine_the_metrics_asked_per_comparator():
    pairs = tuple(("DualGA", b) for b in ("SRL (best gamma)", "EMS", "UW-delta", "UW-gamma", "ATW"))
    v = report._matched(_verdict_doc(), "news", ("tpr_1e-4", "tpr_1e-6"), pairs)
    # UW-gamma: mixed on one metric, tied on the other: mixed (crossing curves are never counted as worse)
    assert dict(v) == {"SRL (best gamma)": "mixed", "EMS": "tied", "UW-delta": "better", "UW-gamma": "mixed", "ATW": NA}
    assert v.n_decide == {"EMS": 225.0}
    assert report._show_matched(v).startswith("SRL (best gamma) mixed, EMS tied (clearest level decides at n ~ 225), UW-delta better")


def test_pair_reads_one_comparison():
    d = _verdict_doc()
    assert report._pair(d, "news", "DualGA", "UW-delta", "tpr_1e-6") == "better"
    v = report._pair(d, "news", "DualGA", "EMS", "tpr_1e-6")
    assert v == "tied" and v.n_decide == 400.0 and report._show_verdict(v) == "tied (clearest level decides at n ~ 400)"
    v = report._pair(d, "news", "DualGA", "ATW", "tpr_1e-4")
    assert v == NA and math.isnan(v.n_decide)


def test_autocov_against_a_single_point_is_read_on_autocovs_curve():
    """One EMS point at KL 1: AutoCov's curve (KL 0.5 -> -2, KL 2 -> -4) there, linear in log KL: -3; minus EMS's -5."""
    cfg = lambda algo, kl, m: dict(algo=algo, kl=kl, median_log10_p=m)  # noqa: E731
    d = dict(configs=[cfg("autocov", 0.5, -2.0), cfg("autocov", 2.0, -4.0), cfg("ems", 1.0, -5.0)])
    assert report._autocov_vs(d, "ems") == pytest.approx(2.0)


# ---------------------------------------------------------------- the sections below the claims


def _comp(a, b, metric, verdict, levels=(), diff=(), lo=(), hi=(), **kw):
    return dict(a=a, b=b, metric=metric, verdict=verdict, levels=list(levels), diff=list(diff), lo=list(lo), hi=list(hi), **kw)


def _matched_doc(lm: str, n: int) -> dict:
    comps = [
        _comp("DualGA", "SRL (best gamma)", "tpr_1e-4", "better", diff=[0.1], lo=[0.05], hi=[0.2]),
        _comp("DualGA", "SRL (best gamma)", "tpr_1e-6", "worse", diff=[-0.1], lo=[-0.2], hi=[-0.05]),
        # tied: n (half-width / |diff|)^2 at each level: 100 x (0.75 / 0.5)^2 = 225, 100 x (0.5 / 0.25)^2 = 400: 225
        _comp("DualGA", "SRL (best gamma)", "strength", "tied", levels=[0.1, 0.2], diff=[0.5, 0.25], lo=[-0.25, -0.25], hi=[1.25, 0.75]),
        _comp("DualGA", "SRL (best gamma)", "kl_at_tpr", "n/a"),
        *[_comp("SRL", "EMS", m, "tied", diff=[0.0], lo=[-1.0], hi=[1.0]) for m in ("tpr_1e-4", "tpr_1e-6", "kl_at_tpr")],
        _comp("SRL", "EMS", "strength", "n/a", reason="no common KL range"),
    ]
    return dict(n=n, T=200, grid="quick", levels=2, trim=0.1, tpr_range=[0.05, 0.95], bootstrap=200, alpha=0.05,
                dedup_rules=dict(SynthID="context", SRL="pairs"), per_lm={lm: dict(comparisons=comps, points=[dict(curve="SRL"), dict(curve="DualGA")])})


def test_matched_section_table_and_a_column_of_its_own(tmp_path):
    main, col, other = tmp_path / "main", tmp_path / "col", tmp_path / "other"
    _write(main, "fig_matched", _matched_doc("news", 100))
    _write(col, "fig_matched", dict(_matched_doc("smollm2", 16), T=64, bootstrap=50, levels=3))
    _write(other, "fig_matched", _matched_doc("news", 100))  # an LM the main JSON holds: no section of its own
    lines = report._matched_section(main, {"smollm2": col, "news": other, "opt": tmp_path / "none"})
    text = "\n".join(lines)
    assert "(100 texts x 200 tokens per point, grid `quick`)" in text and "at 2 common KL levels" in text and "10% trimmed" in text
    assert "(levels in [0.05, 0.95])" in text and "(200 replicates)" in text and "hold together at 95% (Bonferroni)" in text
    assert "Dedup: (seed, token) pairs for every other algorithm; SynthID: context (" in text
    span = "KL 0.1: +0.5 [-0.25, +1.25]; KL 0.2: +0.25 [-0.25, +0.75]"
    row = f"| news-like (synthetic) | SRL (best gamma) | - | **better** | **worse** | **tied** | **n/a** | {span} | strength: 225 |"
    assert lines.count(row) == 1  # once: the news column's own file is not read again
    # SRL vs EMS: tied with a zero difference decides nowhere; no strength levels: the reason
    assert "| news-like (synthetic) | (SRL vs EMS) | - | **tied** | **tied** | **n/a** | **tied** | no common KL range | - |" in lines
    assert any(ln.startswith(f"**smollm2** ({col}/fig_matched.json): 16 texts x 64 tokens per point on a CPU, a reduced grid of 2 configurations "
                              "(curves: DualGA, SRL;") and ln.endswith("--real-n 16 --real-T 64`.") and "50 replicates, 3 levels" in ln for ln in lines)
    assert sum(ln.startswith("| smollm2 | SRL (best gamma) |") for ln in lines) == 1
    assert not any("**opt**" in ln or "**news**" in ln for ln in lines)
    assert report._matched_section(tmp_path / "none")[2] == "pending: `python -m paper_figs --only fig_matched --workers 0`"


def test_findings_are_read_from_the_proofs_report(tmp_path):
    name, quantity, fix = report.FINDINGS[0]
    name2, quantity2, fix2 = report.FINDINGS[2]
    f = tmp_path / "report.md"
    f.write_text("\n".join([
        f"| check_adv_robust | {quantity} | 99 / 50 | yes |",  # not a finding row: ignored
        f"| check_adv_robust (finding) | {quantity} | 12 / 50 | yes |",
        f"| check_type_errors (finding) | {quantity2} | 0.01 | no |",
    ]))
    rows = report._findings(f)
    cmd = "`python -m proofs_check --only check_adv_robust --only check_type_errors`"
    assert rows[0] == f"| {name} | {fix} | 12 / 50 | reproduced | {cmd} |"
    assert rows[2] == f"| {name2} | {fix2} | 0.01 | NOT reproduced | {cmd} |"
    assert rows[1] == f"| {report.FINDINGS[1][0]} | {report.FINDINGS[1][2]} | - | pending (run python -m proofs_check) | {cmd} |"
    assert all("| - | pending (run python -m proofs_check) |" in r for r in report._findings(tmp_path / "none.md"))


def _pt(n, spoof, scrub=0.25, acc=0.5, **aware):
    return dict(n_stolen=n, spoof_success=spoof, scrub_success=scrub, green_estimate_accuracy=acc, **aware)


def test_stealing_tables(tmp_path):
    aware = lambda s, a: dict(aware_spoof_success=s, aware_green_estimate_accuracy=a)  # noqa: E731
    d = dict(lm="news", vocab_size=50, T=64, level=1e-4, n_eval=20, curves=dict(
        srl=[_pt(10, 0.25, **aware(0.5, 0.75)), _pt(20, 0.5, 0.125, 0.8125, **aware(0.875, 0.9375))],  # both reach 0.5 exactly
        hard=[_pt(10, 0.125, **aware(0.25, 0.5)), _pt(40, 0.375, 0.5, 0.625, **aware(0.375, 0.5625))],  # neither does
        dualga=[_pt(10, 0.125), _pt(40, 0.25)],  # no aware attacker
    ), spoof_test={"4": [dict(n_stolen=20, T=64, level=0.01, fpr=0.05, fpr_ci95=[0.01, 0.125], genuine_flagged=19, power=0.9,
                               power_ci95=[0.8, 0.96], spoofed_flagged=18)]})
    _write(tmp_path, "fig_stealing", d)
    lines = report._stealing(tmp_path)
    assert any("of the `news` LM (V = 50, 64-token texts)" in ln and "p <= 0.0001" in ln and "over 20 texts" in ln for ln in lines)
    assert "| srl | 20 | 0.50 | 0.12 | 0.812 | 10; 0.88, 0.938 |" in lines
    assert "| hard | none up to 40 | 0.38 | 0.50 | 0.625 | none up to 40; 0.38, 0.562 |" in lines
    assert "| dualga | none up to 40 | 0.25 | 0.25 | 0.500 | - |" in lines
    assert "| 4 | 20 | 64 tokens | 0.01 | 0.050 [0.010, 0.125] (19) | 0.900 [0.800, 0.960] (18) |" in lines
    assert report._stealing(tmp_path / "none")[3] == "pending: `python -m paper_figs --only fig_stealing`"


def test_the_committed_report_is_what_the_committed_json_gives(full_run):
    """docs/reproduction.md's synthetic column, row by row, is what render computes from docs/results (its
    value, sample size and verdict): a reader or criterion changed without regenerating the report fails here.
    Regenerate with ``python -m paper_figs --report --no-run --out docs/results`` (and the real-LM columns)."""
    folder, _ = full_run
    committed = (folder.parent / "reproduction.md").read_text().splitlines()
    head = next(ln for ln in committed if ln.startswith("| # | claim (where) |"))
    lms = [c.removeprefix("ours, ") for c in head[2:-2].split(" | ")[5:] if c.startswith("ours, ")]
    assert lms, head  # the real-LM columns: the synthetic column leaves their LMs out
    md = report.render(folder, columns={lm: folder / "absent" for lm in lms}, proofs_report=folder / "absent.md")
    for c in report.CLAIMS:
        assert _row(md, c)[4] == _row("\n".join(committed), c)[4], (c.claim, "python -m paper_figs --report --no-run --out docs/results")
