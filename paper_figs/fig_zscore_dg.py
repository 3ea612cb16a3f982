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

    plt = agg()
    lm = (lms or ("lfqa",))[0]
    n, T, V = (16, 100, 2000) if quick else (200, 200, None)
    n, T = sized(lm, n, T)
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(12, 4.4))
    summary = dict(lm=lm, n=n, T=T, key=KEY, percentiles=PCT, configs=[])
    rows = []
    for algo, grid in (("srl", SRL), ("dualga", DUALGA), ("ems", EMS)):
        for params in grid:
            g = generations(lm, algo, n, T, 0, vocab_size=V, **params)
            z = detectors.score(g).z
            dg, kl = g.dg.mean(axis=1), float(g.kl.mean())
            name = label(algo, params)
            c = dict(algo=algo, params=params, kl=kl, dg_mean=float(dg.mean()), dg_sd=float(dg.std(ddof=1)), z_percentiles=np.percentile(z, PCT),
                     z_sd=float(z.std(ddof=1)), z_dg_corr=float(np.corrcoef(z, dg)[0, 1]) if algo != "ems" else None)
            summary["configs"].append(c)
            rows.append([name, kl, c["dg_mean"], c["dg_sd"], *c["z_percentiles"]])
            if algo != "ems":
                ax.scatter(dg, z, s=6, alpha=0.5, marker="o" if algo == "dualga" else "x", label=name)
            p = c["z_percentiles"]
            col = dict(srl="C0", dualga="red", ems="C2")[algo]
            ax2.plot([kl, kl], [p[0], p[4]], c=col, lw=1)
            ax2.plot([kl, kl], [p[1], p[3]], c=col, lw=6, alpha=0.6)
            ax2.plot(kl, p[2], "_", c="k", ms=12)
            ax2.annotate(name, (kl, p[4]), fontsize=6, rotation=60)
    ax.set(xlabel="realised DG of a text", ylabel="z-score", title=f"{lm}: {n} texts x {T} tokens per configuration")
    ax.legend(fontsize=6, markerscale=3)
    ax2.set(xlabel="mean KL per token", ylabel="z-score (0/10/50/90/100th percentiles)", title="blue SRL, red DualGA, green EMS")
    fig.tight_layout()
    table = md_table(["configuration", "KL/token", "DG mean", "DG sd", *[f"z p{q}" for q in PCT]], rows)
    return write(out_dir, "fig_zscore_dg", summary, table, TITLE, fig)
