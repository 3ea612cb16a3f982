"""The figures' one style (paper_figs.style): registry colours and markers, labelled reference lines, a legend
outside the panels, titles naming LM, n and T; and fig_robustness redrawn from its committed JSON."""

import json
import pathlib

import matplotlib

matplotlib.use("Agg")

from matplotlib import colors  # noqa: E402

from paper_figs import style  # noqa: E402
from sims.watermarks import registry  # noqa: E402

ROOT = pathlib.Path(__file__).parents[2]


def test_series_take_their_algorithm_colour_and_marker_and_a_line_style_per_variant():
    s = style.Series()
    a, b, c = s("srl delta=2 (KL 0.3)"), s("srl delta=4 (KL 0.9)"), s("dualga Delta=0.2 (KL 0.1)")
    assert a["color"] == b["color"] == registry.get("srl").color and a["marker"] == registry.get("srl").marker
    assert a["ls"] != b["ls"], "two variants of one algorithm look alike"
    assert c["color"] == registry.get("dualga").color != a["color"]
    assert s("srl delta=2 (KL 0.3)") == a, "a series keeps its style within a figure"


def test_fig_robustness_redraws_from_its_committed_json():
    """Every series in its algorithm's registry colour, the two reference lines labelled in a figure legend below the
    panels at 8 pt or more, a title naming LM, n and T, axis labels in words."""
    from paper_figs import fig_robustness

    summary = json.loads((ROOT / "docs" / "results" / "fig_robustness.json").read_text())
    fig = fig_robustness.draw(summary)
    title = fig._suptitle.get_text()
    assert f"LM {summary['lm']}" in title and f"n = {summary['n']}" in title and f"T = {summary['T']}" in title, title
    assert len(fig.legends) == 1, "one legend for the panels, outside them"
    legend = fig.legends[0]
    texts = [t.get_text() for t in legend.get_texts()]
    assert min(t.get_fontsize() for t in legend.get_texts()) >= 8
    assert any("p = 1e-4" in t for t in texts) and any("p = 0.5" in t for t in texts), texts
    top = min(ax.get_position().y0 for ax in fig.axes)
    assert legend.get_window_extent().y1 <= top * fig.bbox.height + 1, "the legend overlaps the panels"
    for ax in fig.axes:
        assert ax.get_xlabel() and ax.get_ylabel() and ax.get_title(), ax
        assert "linspace" not in ax.get_xlabel() and "_" not in ax.get_xlabel()
        for line in ax.get_lines():
            algo = style.algo_of(line.get_label())
            rec = style.record(algo)
            if rec is not None and not line.get_label().startswith("worst"):
                assert colors.to_hex(line.get_color()) == colors.to_hex(rec.color), line.get_label()
    import matplotlib.pyplot as plt

    plt.close(fig)


def _committed():
    """(folder, figure) for every redrawable figure whose JSON is committed under docs/results*."""
    from paper_figs.redraw import redrawable

    names = redrawable()
    return [(d.name, n) for d in sorted((ROOT / "docs").glob("results*")) for n in names if (d / f"{n}.json").exists()]


def _artists(ax):
    """Each series and reference line of ``ax`` (lines and scatter collections) with its label and colour (an error
    bar's caps and bars belong to its series: left out)."""
    from matplotlib.container import ErrorbarContainer

    parts = {id(a) for c in ax.containers if isinstance(c, ErrorbarContainer) for a in (*c[1], *c[2])}
    named = {id(c[0]): c.get_label() for c in ax.containers if isinstance(c, ErrorbarContainer)}  # its label is the container's
    out = [(a, named.get(id(a), a.get_label()), a.get_color()) for a in ax.get_lines() if id(a) not in parts]
    for c in ax.collections:
        if id(c) in parts:
            continue
        fc = c.get_edgecolor() if len(c.get_edgecolor()) else c.get_facecolor()
        out.append((c, c.get_label(), fc[0] if len(fc) else None))
    return out


def _data_points(ax) -> int:
    """How many finite values ``ax`` draws in data coordinates: its lines' (reference lines across the axes, drawn in
    axes coordinates, left out), its bars' heights, its histograms' values or outlines and its point sets' positions."""
    import numpy as np

    n = sum(int(np.isfinite(np.asarray(line.get_ydata(), dtype=float)).sum()) for line in ax.get_lines()
            if line.get_transform() == ax.transData)
    for p in ax.patches:  # in data coordinates: bars (their heights), step histograms (values), outlines (vertices)
        if p.get_data_transform() != ax.transData:
            continue
        if hasattr(p, "get_height"):
            n += int(np.isfinite(p.get_height()))
        elif hasattr(p, "get_data"):
            n += int(np.isfinite(np.asarray(p.get_data().values, dtype=float)).sum())
        elif hasattr(p, "get_xy"):
            n += int(np.isfinite(np.asarray(p.get_xy(), dtype=float)).all(axis=-1).sum())
    n += sum(int(np.isfinite(np.asarray(c.get_offsets(), dtype=float)).all(axis=-1).sum()) for c in ax.collections
             if len(c.get_offsets()) and c.get_offset_transform() == ax.transData)
    return n


import pytest  # noqa: E402


@pytest.mark.parametrize("folder,name", _committed())
def test_every_redrawable_figure_is_in_the_style(folder, name):
    """Every figure ``python -m paper_figs.redraw`` draws from a committed JSON: one legend outside the panels at 8 pt or
    more; every drawn line and point set labelled in it (reference lines included); each algorithm's series in its
    registry colour; a title naming n and T (and the LM where the summary has one); axis labels in words; no panel
    without data."""
    from paper_figs.redraw import drawers

    _check(name, json.loads((ROOT / "docs" / folder / f"{name}.json").read_text()), drawers()[name])


def _check(name, summary, draw):
    import matplotlib.pyplot as plt

    from paper_figs._data import display

    fig = draw(summary)
    try:
        title = fig._suptitle.get_text() if fig._suptitle else ""
        for k in ("n", "T"):
            if k in summary:
                assert f"{k} = {summary[k]}" in title, (k, title)
        for lm in summary.get("lms", [summary["lm"]] if "lm" in summary else []):
            assert display(lm) in title, (lm, title)
        assert len(fig.legends) == 1, "one legend for the panels, outside them"
        legend = fig.legends[0]
        texts = {t.get_text() for t in legend.get_texts()}
        assert min(t.get_fontsize() for t in legend.get_texts()) >= 8
        fig.canvas.draw()
        top = min(ax.get_position().y0 for ax in fig.axes)
        assert legend.get_window_extent().y1 <= top * fig.bbox.height + 1, "the legend overlaps the panels"
        for ax in fig.axes:
            if ax.get_label() == "inset_axes" or not ax.get_visible():
                continue
            ylabel = ax.get_ylabel() or next((a.get_ylabel() for a in ax.get_shared_y_axes().get_siblings(ax) if a.get_ylabel()), "")
            assert ax.get_title(), ax
            if ax.axison:  # a panel drawn without axes (a picture of a text) has no axis labels to give
                assert ax.get_xlabel() and ylabel, ax  # panels sharing a y axis: one label for the row
            assert _data_points(ax) > 0, f"{name}: panel {ax.get_title()!r} draws no data"
            for lab in (ax.get_xlabel(), ax.get_ylabel()):
                assert "linspace" not in lab and "_" not in lab, lab
            for art, lab, col in _artists(ax):
                if not art.get_visible() or lab.startswith("worst"):
                    continue
                assert lab.lstrip("_") in texts, f"{name}: an unlabelled line or point set ({lab!r}) in {ax.get_title()!r}"
                rec = style.record(style.algo_of(lab.lstrip("_")))
                if rec is not None and col is not None:
                    assert colors.to_hex(col) == colors.to_hex(rec.color), (name, lab)
    finally:
        plt.close(fig)


def _fake_convergence(curves: bool) -> dict:
    T = [1000, 10000, 100000]
    out = {}
    for p in ("i.i.d. Beta(2,2)", "adversarial"):
        out[p] = dict(spec="x", T=T, regret_slope=[-0.5, -0.52, -0.48], gap_slope=[-0.5, -0.51, -0.49], W2_over_T=[0.0, 0.1, 0.1])
        if curves:
            out[p].update(regret_mean=[0.1, 0.03, 0.01], gap_mean=[0.05, 0.016, 0.005])
    out["vs_W"] = dict(T=100000, swing=[0.1, 0.2], W1_over_T=[0.1, 0.2], W2_over_T=[0.05, 0.1], regret=[1e-3, 2e-3], gap=[1e-3, 3e-3])
    if curves:
        out["setting"] = dict(reps=8)
    return out


def _fake_scatter4() -> dict:
    import numpy as np

    rng = np.random.default_rng(0)
    pts = lambda algo, params: dict(algo=algo, params=params, kl=rng.random(5).tolist(), dg=rng.random(5).tolist())  # noqa: E731
    per = {s: [pts("srl", dict(gamma=0.25, delta=2.0)), pts("dualga", dict(Delta=0.1)), pts("dualga", dict(Delta=0.3))]
           for s in ("0", "11")}
    return dict(n=5, T=50, lms=["news", "lfqa"], prompt_seeds=[0, 11], per_lm={"news": per, "lfqa": per})


@pytest.mark.parametrize("which", ["convergence curves", "convergence slopes", "scatter4"])
def test_figures_without_a_committed_json_of_this_form_draw_in_the_style(which, monkeypatch):
    """fig_convergence as a run since issue 44 records it (per-T means: log-log curves) and as the committed run does
    (slopes only); fig_scatter4 (per-text points, no committed JSON yet): the same checks on small made-up summaries."""
    from paper_figs import fig_convergence, fig_pareto

    summary = _fake_convergence("curves" in which) if which.startswith("convergence") else _fake_scatter4()
    name = "fig_convergence" if which.startswith("convergence") else "fig_scatter4"
    draw = fig_convergence.draw if name == "fig_convergence" else fig_pareto.draw_scatter4
    monkeypatch.setattr("paper_figs.redraw.drawers", lambda: {name: draw})
    fig = draw(summary)
    if "curves" in which:
        assert any(ax.get_xscale() == "log" for ax in fig.axes[:2]), "per-T means drawn as log-log curves"
    import matplotlib.pyplot as plt

    plt.close(fig)
    _check(name, summary, draw)


def test_every_figure_script_draws_from_its_json():
    """Every figure script separates drawing from computing (``draw(summary) -> Figure``), so that ``python -m
    paper_figs.redraw`` can redraw each one from its JSON in the style checked above."""
    import importlib

    from paper_figs.__main__ import scripts

    inline = [s for s in scripts() if s.startswith("fig_") and not hasattr(importlib.import_module(f"paper_figs.{s}"), "draw")]
    assert not inline, f"figure scripts still drawing inline: {inline}"


def test_redraw_names_a_json_that_needs_a_rerun_and_redraws_the_others(tmp_path, capsys):
    """A JSON written before its script recorded the per-prompt values (fig_consistency's, as committed before) is
    left alone and named with its rerun command (exit status 1); a current one beside it is redrawn."""
    from paper_figs import redraw

    old = json.loads((ROOT / "docs" / "results" / "fig_consistency.json").read_text())
    for v in old["algos"].values():
        del v["per_prompt"]
    (tmp_path / "fig_consistency.json").write_text(json.dumps(old))
    (tmp_path / "fig_autocov.json").write_text((ROOT / "docs" / "results" / "fig_autocov.json").read_text())
    assert redraw.main(["--out", str(tmp_path)]) == 1
    assert (tmp_path / "fig_autocov.png").exists() and not (tmp_path / "fig_consistency.png").exists()
    err = capsys.readouterr().err
    assert "fig_consistency.json not redrawn" in err and "python -m paper_figs --only fig_consistency" in err, err
