"""Figure ACF_combine: DualGA-AutoCov beside DualGA, SRL and EMS: population KL against the
median detection p-value, and the AutoCov detector's robustness under three attacks
(deletion, insertion, substitution) beside DualGA's red-green detector.

AutoCov texts are scored by the AutoCov statistic Z_T with its exact null
(:func:`sims.detect.stats.scores.score_autocov`); the others by their own detectors.
"""

from __future__ import annotations

import pathlib

import numpy as np

from paper_figs._data import generations, label, sized
from paper_figs._out import agg, md_table, write

TITLE = "DualGA-AutoCov: KL vs p-value beside DualGA, SRL, EMS; robustness under three attacks"
CONFIGS = [("autocov", dict(Delta=D)) for D in (0.2, 0.3, 0.4)] + [("dualga", dict(Delta=D)) for D in (0.2, 0.3, 0.4)] + [
    ("srl", dict(gamma=0.25, delta=d)) for d in (1.0, 2.0, 5.0)] + [("ems", dict(tau=1.0))]
ATTACKS = ("deletion", "insertion", "substitution")


def main(out_dir: pathlib.Path, quick: bool, lms=None) -> list[pathlib.Path]:
    """Run DualGA-AutoCov beside DualGA, SRL and EMS on one LM and write the figure.

    Parameters
    ----------
    out_dir : pathlib.Path
        The folder the files are written to.
    quick : bool
        Small sizes: 12 texts of 100 tokens at V = 2000 and attack rates 0, 0.2, 0.4, instead of 200 of 200 at the
        LM's V and six rates.
    lms : sequence of str, optional
        LMs of ``python -m paper_figs --lm``: its first is used (default ``lfqa``).

    Returns
    -------
    list of pathlib.Path
        The files written: fig_autocov.png, fig_autocov.json and fig_autocov.md (:func:`paper_figs._out.write`).
    """
    from sims.detect.families import detectors
    from sims.experiments.attacks import attack

    plt = agg()
    lm = (lms or ("lfqa",))[0]
    n, T, V = (12, 100, 2000) if quick else (200, 200, None)
    rates = (0.0, 0.2, 0.4) if quick else (0.0, 0.1, 0.2, 0.3, 0.4, 0.5)
    n, T = sized(lm, n, T)
    fig, axes = plt.subplots(1, 4, figsize=(18, 4.2))
    summary = dict(lm=lm, n=n, T=T, rates=rates, configs=[], robustness={})
    rows, gens = [], {}
    for algo, params in CONFIGS:
        g = generations(lm, algo, n, T, 0, vocab_size=V, **params)
        lp = detectors.score(g).log10_p
        c = dict(algo=algo, params=params, kl=float(g.kl.mean()), median_log10_p=float(np.median(lp)), tpr_at_1e_4=float(np.mean(lp <= -4)))
        summary["configs"].append(c)
        rows.append([label(algo, params), c["kl"], c["median_log10_p"], c["tpr_at_1e_4"]])
        gens[algo, params.get("Delta")] = g
    for algo, mk, col in (("autocov", "o-", "C3"), ("dualga", "s-", "red"), ("srl", "x--", "C0"), ("ems", "^", "C2")):
        pts = [(c["kl"], c["median_log10_p"]) for c in summary["configs"] if c["algo"] == algo]
        axes[0].plot(*zip(*pts), mk, c=col, label=algo)
    axes[0].set(xlabel="KL per token", ylabel="median log10 p", title=f"{lm}: {n} texts x {T}")
    axes[0].legend(fontsize=7)
    for j, kind in enumerate(ATTACKS):
        for algo in ("autocov", "dualga"):
            g = gens[algo, 0.3]
            med = [float(np.median(detectors.score(attack(g, kind, r, seed=1) if r > 0 else g).log10_p)) for r in rates]
            summary["robustness"].setdefault(kind, {})[algo] = med
            axes[j + 1].plot(rates, med, "o-", label=f"{algo} Delta=0.3")
        axes[j + 1].axhline(-4, c="k", ls="--", lw=1)
        axes[j + 1].set(title=kind, xlabel="attack rate", ylabel="median log10 p")
        axes[j + 1].legend(fontsize=7)
    fig.tight_layout()
    table = md_table(["configuration", "KL/token", "median log10 p", "TPR at 1e-4"], rows)
    table += "\n\n" + md_table(["attack", "detector", *[f"rate {r:g}" for r in rates]],
                               [[k, a, *v] for k, d in summary["robustness"].items() for a, v in d.items()])
    return write(out_dir, "fig_autocov", summary, table, TITLE, fig)
