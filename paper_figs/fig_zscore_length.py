"""Figure z_dynamic_w_t (appendix "Detectability with Sentence Length"): the z-score of a text's
first t tokens against t, unwatermarked and DualGA-watermarked under random substitution.

Left: one prompt (as the paper). Right: median and interquartile range over all texts, with
the first-order prediction :math:`z(t) \\approx (1-r)^2 \\Delta \\sqrt{t / (\\gamma(1-\\gamma))}`
for substitution rate r (a substituted token is green with probability gamma and, with
h = 1, re-colours the next token too).
"""

from __future__ import annotations

import pathlib

import numpy as np

from paper_figs import save
from sims.core import defaults

TITLE = "z-score vs text length: unwatermarked stays in [-1.96, 1.96], watermarked grows like sqrt(t)"
RATES = (0.0, 0.1, 0.3, 0.5, 0.6)  # 0.6: "more than 50 %"
PAPER_T = 200  # the paper's completions: ~200 tokens (C4 texts with the last 200 cut off)
DELTA = 0.3
KEY = defaults.KEY


def _prefix_z(gen, gamma: float, vocab_size: int) -> np.ndarray:
    """z-score of every prefix (nan past a text's end)."""
    from sims.detect.stats import scores as detect

    g, scored = detect.token_scores(gen.tokens, gen.prompts[:, -gen.meta["h"]:], KEY, gamma=gamma, h=gen.meta["h"], vocab_size=vocab_size)
    k, n = np.cumsum(g, axis=1), np.cumsum(scored, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        z = (k - gamma * n) / np.sqrt(n * gamma * (1 - gamma))
    return np.where(scored, z, np.nan)  # no dedup: scored = inside the text


def main(out_dir: pathlib.Path, quick: bool, lms=None) -> list[pathlib.Path]:
    """Plot the z-score of watermarked and unwatermarked text against its length on one LM.

    Parameters
    ----------
    out_dir : pathlib.Path
        The folder the files are written to.
    quick : bool
        Small sizes: 16 texts of 120 tokens (V = 2000 on a synthetic LM), instead of 200 of 400.
    lms : sequence of str, optional
        LMs of ``python -m paper_figs --lm``: its first is used (default ``lfqa``).

    Returns
    -------
    list of pathlib.Path
        The files written: fig_zscore_length.png and fig_zscore_length.json (:func:`paper_figs.save`).
    """
    from paper_figs._data import generations, is_synthetic, sized
    from sims.experiments.attacks import attack

    name = (lms or ("lfqa",))[0]
    n, T = sized(name, *((16, 120) if quick else (200, 400)))
    V = 2000 if quick and is_synthetic(name) else None
    wm = generations(name, "dualga", n, T, 0, key=KEY, vocab_size=V, Delta=DELTA)
    gamma, vocab = wm.meta["gamma"], wm.meta["vocab_size"]
    null = generations(name, "none", n, T, 1, key=KEY, vocab_size=V, gamma=gamma)
    curves = {"unwatermarked": _prefix_z(null, gamma, vocab)}
    for r in RATES:  # random substitutions: uniform ids, no LM needed
        g = attack(wm, "substitution", r, seed=2) if r > 0 else wm
        curves[f"DualGA, substitution {int(r * 100)}%"] = _prefix_z(g, gamma, vocab)
    summary = dict(lm=name, n=n, T=T, Delta=DELTA, gamma=gamma, key=KEY, paper_T=PAPER_T, rates=list(RATES), median_z_at_T={},
                   median_z_at_50={}, median_z_at_paper_T={}, one_text={}, median={}, q1={}, q3={})
    for curve, z in curves.items():
        med = np.nanmedian(z, axis=0)
        q1, q3 = np.nanpercentile(z, [25, 75], axis=0)
        summary["median_z_at_T"][curve] = float(med[-1])
        summary["median_z_at_50"][curve] = float(med[min(49, T - 1)])
        summary["median_z_at_paper_T"][curve] = float(med[min(PAPER_T, T) - 1])
        for key, v in (("one_text", z[0]), ("median", med), ("q1", q1), ("q3", q3)):  # per prefix length t = 1 .. T
            summary[key][curve] = [round(float(x), 4) for x in v]
    return save(draw(summary), out_dir, "fig_zscore_length", summary)


PREDICTION = "first-order prediction (1-r)^2 Delta sqrt(t / (gamma (1-gamma))), dotted in its rate's colour"
NOT_SIGNIFICANT = "|z| < 1.96: not significant at the 5 % level"


def _series_label(curve: str) -> str:
    """A curve's legend entry (``"DualGA, substitution 10%"`` -> ``"10 % of the tokens substituted"``)."""
    if curve == "unwatermarked":
        return "none (unwatermarked texts)"
    return f"{curve.split()[-1][:-1]} % of the tokens substituted"


def draw(summary: dict):
    """The figure from its JSON summary (``fig_zscore_length.json``): the z-score of the first t tokens against t, of one
    text (left) and the median and interquartile range over all texts (right) with the first-order prediction, one
    colour per substitution rate (every curve is DualGA's but the unwatermarked one), in the package's style
    (:mod:`paper_figs.style`); what ``main`` saves and ``python -m paper_figs.redraw`` redraws.  A summary written
    before the per-t curves were recorded has none to draw: rerun the figure."""
    from paper_figs import style
    from paper_figs._out import agg

    if "median" not in summary:
        raise ValueError("this fig_zscore_length.json holds no per-t curves: rerun python -m paper_figs --only fig_zscore_length")
    plt = agg()
    style.apply()
    T, gamma, Delta = summary["T"], summary["gamma"], summary["Delta"]
    t = np.arange(1, T + 1)
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(12, 5.4), sharey=True)
    curves = list(summary["median"])
    cmap = plt.get_cmap("plasma")
    colour = {c: cmap(i / max(len(curves) - 1, 1) * 0.85) for i, c in enumerate(curves[1:])}
    colour[curves[0]] = style.record("none").color
    for i, curve in enumerate(curves):
        lab, c = _series_label(curve), colour[curve]
        ax.plot(t, np.array(summary["one_text"][curve], dtype=float), color=c, lw=1.2, label=lab)
        ax2.plot(t, np.array(summary["median"][curve], dtype=float), color=c, lw=1.6, label=lab)
        ax2.fill_between(t, np.array(summary["q1"][curve], dtype=float), np.array(summary["q3"][curve], dtype=float), color=c,
                         alpha=0.15, lw=0, label="_" + lab)
        if i:
            r = int(curve.split()[-1][:-1]) / 100
            ax2.plot(t, (1 - r) ** 2 * Delta * np.sqrt(t / (gamma * (1 - gamma))), ls=":", color=c, lw=1.1,
                     label=PREDICTION if i == 1 else "_" + PREDICTION)
    for a in (ax, ax2):
        a.axhspan(-1.96, 1.96, color=style.REFERENCE_COLOR, alpha=0.12, lw=0, label=NOT_SIGNIFICANT)
        a.set_xlabel("text length t (tokens)")
    ax.set(ylabel="z-score of the first t tokens", title="one text")
    ax2.set(title=f"median and interquartile range over the {summary['n']} texts")
    style.legend_below(fig, ncol=3)
    style.title(fig, f"z-score against text length: DualGA (Delta = {Delta:g}, gamma = {gamma:.3f}) under random substitution",
                lm=summary["lm"], n=summary["n"], T=T)
    return fig
