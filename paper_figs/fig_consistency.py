r"""Per-prompt consistency: DualGA reaches the DG target on every prompt, SRL only on average.

Prompts differ in entropy: the green mass :math:`G_t` of a prompt is i.i.d. Beta(a, a)
with mean gamma = 1/2 and a in {0.3 (low entropy), 2, 20 (high entropy)}.  SRL uses one
population-level boost, calibrated so that the average DG over all prompts equals
Delta (the paper's tuning of Kirchenbauer et al.'s delta); DualGA starts every prompt
from the certainty-equivalent lambda_1 = delta*(Delta, 1/2) and adapts (Algorithm
DualGA).  Each replication is one prompt of T tokens; the spread of the realised
average DG across prompts quantifies the paper's per-prompt claim (Section exp).
"""

from __future__ import annotations

import pathlib

import numpy as np

from paper_figs import save

TITLE = "Per-prompt realised DG: DualGA concentrates at Delta, a population-tuned SRL spreads"

PROMPTS = {"low entropy Beta(0.3,0.3)": "beta:0.3,0.3", "Beta(2,2)": "beta:2,2", "high entropy Beta(20,20)": "beta:20,20"}
DELTA = 0.2
ETA = 0.5  # DualGA step size (within the paper's tuned range [0.1, 2])
MISS = 0.05  # a prompt "misses" the target when its realised DG < Delta - MISS


def srl_population_delta(specs, Delta: float) -> float:
    r"""The boost whose DG, averaged over prompt types (equal weights), equals Delta.

    .. math:: \frac{1}{K}\sum_k E_{G \sim P_k}[\mathrm{DG}(\delta, G)] = \Delta

    Parameters
    ----------
    specs : sequence of str
        The K prompt types' G processes (:func:`sims.reduced.gprocess.parse_spec`), each integrated over 4096
        quantile nodes of its first table.
    Delta : float
        The DG target.

    Returns
    -------
    float
        delta in [0, 15] (Brent's root).
    """
    from scipy.optimize import brentq

    import theory
    from sims.reduced import gprocess

    nodes = (np.arange(4096) + 0.5) / 4096
    G = np.concatenate([[gprocess.draw_from_table(p.tables[0], p.step, u) for u in nodes] for p in map(gprocess.parse_spec, specs)])
    return brentq(lambda d: float(theory.dg_step(d, G).mean()) - Delta, 0.0, 15.0, xtol=1e-12)


def main(out_dir: pathlib.Path, quick: bool, lms=None) -> list[pathlib.Path]:
    """Write the figure; ``lms`` is ignored (no LM: the reduced simulator's G processes).

    Parameters
    ----------
    out_dir : pathlib.Path
        The folder the files are written to.
    quick : bool
        Small sizes: 32 replications of T = 200, instead of 512 of 400.
    lms : sequence of str, optional
        Ignored.

    Returns
    -------
    list of pathlib.Path
        The files written: fig_consistency.png and fig_consistency.json (:func:`paper_figs.save`).
    """
    import theory
    from sims.reduced import runner as reduced

    T = 200 if quick else 400
    reps = 32 if quick else 512
    d_srl = srl_population_delta(PROMPTS.values(), DELTA)
    lam1 = float(theory.delta_star(DELTA, 0.5))
    runs = {}
    for algo in ("dualga", "srl"):
        for i, (label, spec) in enumerate(PROMPTS.items()):
            r = reduced.simulate(algo, spec, T=T, reps=reps, seed=100 + i, Delta=DELTA, gamma=0.5, eta=ETA,
                                 lam1=lam1, delta=d_srl, with_opt=False)
            runs[algo, label] = r.per_rep
    summary = dict(T=T, reps_per_prompt_type=reps, Delta=DELTA, eta=ETA, lam1=lam1, srl_delta=d_srl, miss_margin=MISS, algos={})
    for algo in ("dualga", "srl"):
        dg_all = np.concatenate([runs[algo, lab]["avg_dg"] for lab in PROMPTS])
        z_all = np.concatenate([runs[algo, lab]["z"] for lab in PROMPTS])
        spread = float(dg_all.std(ddof=1))
        miss = float(np.mean(dg_all < DELTA - MISS))
        summary["algos"][algo] = dict(
            dg_mean=float(dg_all.mean()), dg_spread=spread, miss_fraction=miss, z_min=float(z_all.min()),
            z_median=float(np.median(z_all)),
            per_type={lab: dict(dg_mean=float(runs[algo, lab]["avg_dg"].mean()), dg_spread=float(runs[algo, lab]["avg_dg"].std(ddof=1)),
                                kl_mean=float(runs[algo, lab]["avg_kl"].mean())) for lab in PROMPTS},
        )
        summary["algos"][algo]["per_prompt"] = {lab: dict(avg_dg=[round(float(x), 5) for x in runs[algo, lab]["avg_dg"]],
                                                          avg_kl=[round(float(x), 6) for x in runs[algo, lab]["avg_kl"]]) for lab in PROMPTS}
    return save(draw(summary), out_dir, "fig_consistency", summary)


TYPE_STYLES = (("-", "o"), ("--", "s"), (":", "^"))
"""Line style (histograms) and marker (points) of the prompt types, low to high entropy; the algorithm is told by its
registry colour."""


def draw(summary: dict):
    """The figure from its JSON summary (``fig_consistency.json``): per prompt type, the histogram of each prompt's
    realised average DG (left) and its average KL against it (right), DualGA beside the population-tuned SRL, in the
    package's style (:mod:`paper_figs.style`); what ``main`` saves and ``python -m paper_figs.redraw`` redraws.  A summary
    written before the per-prompt values were recorded has none to draw: rerun the figure."""
    from paper_figs import style
    from paper_figs._out import agg

    if "per_prompt" not in next(iter(summary["algos"].values())):
        raise ValueError("this fig_consistency.json holds no per-prompt values: rerun python -m paper_figs --only fig_consistency")
    plt = agg()
    style.apply()
    Delta, miss = summary["Delta"], summary.get("miss_margin", MISS)
    fig, axes = plt.subplots(1, 2, figsize=(13, 6.0))
    bins = np.linspace(0.0, 0.45, 61)
    for algo, v in summary["algos"].items():
        name = f"dualga eta={summary['eta']:g}" if algo == "dualga" else f"srl delta={summary['srl_delta']:.2f} (tuned on the population)"
        color = style.record(algo).color
        for (ls, marker), (kind, per) in zip(TYPE_STYLES, v["per_prompt"].items()):
            lab = f"{name}, {kind} prompts"
            axes[0].hist(per["avg_dg"], bins=bins, histtype="step", ls=ls, lw=1.6, color=color, label="_" + lab)
            axes[1].scatter(per["avg_dg"], per["avg_kl"], s=9, alpha=0.5, marker=marker, edgecolors=color,
                            facecolors=color if algo == "dualga" else "none", linewidths=0.7, label="_" + lab)
            axes[1].plot([], [], ls=ls, marker=marker, color=color, mfc=color if algo == "dualga" else "white", label=lab)  # its key
        axes[0].plot([], [], " ", color=color, label=f"{name}: spread (sd) {v['dg_spread']:.3f}, "
                                                     f"{100 * v['miss_fraction']:.0f} % of prompts below Delta - {miss:g}")
    for ax in axes:
        style.reference(ax, Delta, f"target Delta = {Delta:g}", horizontal=False)
    dg = np.concatenate([per["avg_dg"] for v in summary["algos"].values() for per in v["per_prompt"].values()])
    axes[0].set_xlim(min(dg.min(), Delta) - 0.02, max(dg.max(), Delta) + 0.02)
    axes[0].set(xlabel="realised average DG of one prompt", ylabel="number of prompts",
                title="realised DG per prompt (line style: prompt type)")
    axes[1].set(xlabel="realised average DG of one prompt", ylabel="average KL of one prompt (nats per token)", yscale="log",
                title="KL against realised DG, one point per prompt")
    style.legend_below(fig, ncol=2, axes=[axes[1], axes[0]])
    style.title(fig, f"Per-prompt consistency: DualGA reaches Delta = {Delta:g} on every prompt type, a population-tuned SRL on average",
                lm="none: G drawn from Beta processes", n=summary["reps_per_prompt_type"], T=summary["T"], n_what="prompts per type")
    return fig
