"""Figures LFQA_scatter and LFQA_boxplot_zscore: the detection z-score of each text against its
realised DG (SRL and DualGA configurations), and z-score boxplots of SRL, EMS and DualGA placed
at x = their mean KL.

The z-score of a red-green text is :math:`(|s|_G - \\gamma T)/\\sqrt{T\\gamma(1-\\gamma)}`; EMS's
is the standardised sum of :math:`-\\ln(1 - r_{t,y_t})` (its null is Gamma(T, 1)).  Boxes
show the 0/10/50/90/100th percentiles, as the paper's.  The paper's reading: z grows with the
realised DG, so DualGA (DG concentrated at Delta) has a tight z distribution, SRL a wide one.
"""

from __future__ import annotations

import pathlib

import numpy as np

from paper_figs._data import KEY, generations, label, sized
from paper_figs._out import agg, md_table, write

TITLE = "z-score vs realised DG per text, and z-score percentiles at each configuration's KL"
SRL = [dict(gamma=0.25, delta=1.0), dict(gamma=0.25, delta=2.0), dict(gamma=0.5, delta=2.0), dict(gamma=0.5, delta=5.0)]
DUALGA = [dict(Delta=0.2), dict(Delta=0.3), dict(Delta=0.4)]
EMS = [dict(tau=1.0)]
PCT = (0, 10, 50, 90, 100)


def main(out_dir: pathlib.Path, quick: bool, lms=None) -> list[pathlib.Path]:
    """Plot z-score against realised DG per text, and z percentiles at each configuration's KL, on one LM.

    Parameters
    ----------
    out_dir : pathlib.Path
        The folder the files are written to.
    quick : bool
        Small sizes: 16 texts of 100 tokens at V = 2000, instead of 200 of 200.
    lms : sequence of str, optional
        LMs of ``python -m paper_figs --lm``: its first is used (default ``lfqa``).

    Returns
    -------
    list of pathlib.Path
        The files written: fig_zscore_dg.png, fig_zscore_dg.json and fig_zscore_dg.md
        (:func:`paper_figs._out.write`).
    """
    from sims.detect.families import detectors

    lm = (lms or ("lfqa",))[0]
    n, T, V = (16, 100, 2000) if quick else (200, 200, None)
    n, T = sized(lm, n, T)
    summary = dict(lm=lm, n=n, T=T, key=KEY, percentiles=PCT, configs=[])
    rows = []
    for algo, grid in (("srl", SRL), ("dualga", DUALGA), ("ems", EMS)):
        for params in grid:
            g = generations(lm, algo, n, T, 0, vocab_size=V, **params)
            z = detectors.score(g).z
            dg, kl = g.dg.mean(axis=1), float(g.kl.mean())
            c = dict(algo=algo, params=params, kl=kl, dg_mean=float(dg.mean()), dg_sd=float(dg.std(ddof=1)), z_percentiles=np.percentile(z, PCT),
                     z_sd=float(z.std(ddof=1)), z_dg_corr=float(np.corrcoef(z, dg)[0, 1]) if algo != "ems" else None,
                     z=[round(float(x), 4) for x in z], dg=[round(float(x), 5) for x in dg])
            summary["configs"].append(c)
            rows.append([label(algo, params), kl, c["dg_mean"], c["dg_sd"], *c["z_percentiles"]])
    table = md_table(["configuration", "KL/token", "DG mean", "DG sd", *[f"z p{q}" for q in PCT]], rows)
    return write(out_dir, "fig_zscore_dg", summary, table, TITLE, draw(summary))


def draw(summary: dict):
    """The figure from its JSON summary (``fig_zscore_dg.json``), in the package's style (:mod:`paper_figs.style`): left,
    each text's z-score against its realised DG (a summary written before the per-text values were recorded: each
    configuration's 0/10/50/90/100th z percentiles at its mean DG, with its DG's standard deviation); right, the z
    percentiles of every configuration at its mean KL.  What ``main`` saves and ``python -m paper_figs.redraw`` redraws."""
    from paper_figs import style

    plt = agg()
    style.apply()
    series = style.Series()
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(13, 5.6))
    per_text = all("z" in c for c in summary["configs"])
    for c in summary["configs"]:
        lab = label(c["algo"], c["params"])
        kw = series(lab)
        p = c["z_percentiles"]
        if c["algo"] != "ems":  # EMS has no green list: no DG
            if per_text:
                hollow = kw.get("mfc") == "white"  # a variant told apart from its algorithm's other settings
                ax.scatter(c["dg"], c["z"], s=10, alpha=0.6, edgecolors=kw["color"], facecolors="none" if hollow else kw["color"],
                           marker=kw["marker"], linewidths=0.8, label=lab)
            else:
                ax.errorbar(c["dg_mean"], p[2], xerr=c["dg_sd"], yerr=[[p[2] - p[1]], [p[3] - p[2]]], capsize=2, label=lab,
                            **dict(kw, ls="none"))
        x = c["kl"]
        ax2.plot([x, x], [p[0], p[4]], color=kw["color"], lw=1, label="_" + lab)
        ax2.plot([x, x], [p[1], p[3]], color=kw["color"], lw=6, alpha=0.5, solid_capstyle="butt", label="_" + lab)
        ax2.plot(x, p[2], label=lab, **dict(kw, ls="none", ms=7))
        ax2.annotate(" ".join(lab.split()[1:]), (x, p[4]), xytext=(2, 4), textcoords="offset points", fontsize=7, rotation=60,
                     color=kw["color"])
    ax.set(xlabel="realised DG of a text (green-probability gain per token)", ylabel="z-score of the text",
           title="z-score against realised DG, one point per text" if per_text
           else "median z (10th to 90th percentile) at the mean DG (+- its sd)")
    ax2.set(xscale="log", xlabel="KL divergence from the LM per token (nats)", ylabel="z-score of the texts",
            title="z percentiles: marker 50th, thick 10th to 90th, thin 0 to 100th")
    lo, hi = ax2.get_ylim()
    ax2.set_ylim(lo, hi + 0.15 * (hi - lo))  # room for the labels above the boxes
    style.legend_below(fig, ncol=4)
    style.title(fig, "z-score against realised DG, and z percentiles at each configuration's KL", lm=summary["lm"], n=summary["n"],
                T=summary["T"])
    return fig
