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

    lm = (lms or ("lfqa",))[0]
    n, T, V = (12, 100, 2000) if quick else (200, 200, None)
    rates = (0.0, 0.2, 0.4) if quick else (0.0, 0.1, 0.2, 0.3, 0.4, 0.5)
    n, T = sized(lm, n, T)
    summary = dict(lm=lm, n=n, T=T, rates=rates, configs=[], robustness={})
    rows, gens = [], {}
    for algo, params in CONFIGS:
        g = generations(lm, algo, n, T, 0, vocab_size=V, **params)
        lp = detectors.score(g).log10_p
        c = dict(algo=algo, params=params, kl=float(g.kl.mean()), median_log10_p=float(np.median(lp)), tpr_at_1e_4=float(np.mean(lp <= -4)))
        summary["configs"].append(c)
        rows.append([label(algo, params), c["kl"], c["median_log10_p"], c["tpr_at_1e_4"]])
        gens[algo, params.get("Delta")] = g
    for kind in ATTACKS:
        for algo in ("autocov", "dualga"):
            g = gens[algo, 0.3]
            med = [float(np.median(detectors.score(attack(g, kind, r, seed=1) if r > 0 else g).log10_p)) for r in rates]
            summary["robustness"].setdefault(kind, {})[algo] = med
    table = md_table(["configuration", "KL/token", "median log10 p", "TPR at 1e-4"], rows)
    table += "\n\n" + md_table(["attack", "detector", *[f"rate {r:g}" for r in rates]],
                               [[k, a, *v] for k, d in summary["robustness"].items() for a, v in d.items()])
    return write(out_dir, "fig_autocov", summary, table, TITLE, draw(summary))


def _curve_label(algo: str, confs: list[dict]) -> str:
    """The legend entry of ``algo``'s configurations drawn as one curve (``"srl gamma=0.25, delta 1, 2, 5"``)."""
    varied = [k for k in confs[0]["params"] if len({c["params"][k] for c in confs}) > 1]
    fixed = [f"{k}={v:g}" for k, v in confs[0]["params"].items() if k not in varied]
    along = [f"{k} " + ", ".join(f"{c['params'][k]:g}" for c in confs) for k in varied]
    return " ".join([algo, ", ".join(fixed + along)]).strip()


def draw(summary: dict):
    """The figure from its JSON summary (``fig_autocov.json``): median log10 p against KL of every configuration, and
    the median log10 p of AutoCov and DualGA (Delta = 0.3) under each attack, in the package's style
    (:mod:`paper_figs.style`); what ``main`` saves and ``python -m paper_figs.redraw`` redraws."""
    from paper_figs import style

    plt = agg()
    style.apply()
    series = style.Series()
    kinds = list(summary["robustness"])
    fig, axes = plt.subplots(1, 1 + len(kinds), figsize=(4.6 * (1 + len(kinds)), 5.2))
    for algo in dict.fromkeys(c["algo"] for c in summary["configs"]):
        confs = sorted((c for c in summary["configs"] if c["algo"] == algo), key=lambda c: c["kl"])
        lab = _curve_label(algo, confs)
        axes[0].plot([c["kl"] for c in confs], [c["median_log10_p"] for c in confs], label=lab, **series(lab))
    axes[0].set(xlabel="KL divergence from the LM per token (nats)", ylabel="median log10 p-value of the detector",
                title="detection against distortion")
    rates = summary["rates"]
    for ax, kind in zip(axes[1:], kinds):
        for algo, med in summary["robustness"][kind].items():
            lab = f"{algo} Delta=0.3 under attack"
            ax.plot(rates, med, label=lab, **series(lab))
        ax.set(xlabel="attack rate (share of tokens attacked)", ylabel="median log10 p-value of the detector",
               title=f"{kind} attack")
    for ax in axes:
        style.reference(ax, -4, "detection level: p = 1e-4")
    style.legend_below(fig, ncol=3)
    style.title(fig, "DualGA-AutoCov beside DualGA, SRL and EMS: distortion and robustness", lm=summary["lm"], n=summary["n"],
                T=summary["T"])
    return fig
