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
