r"""DualGA against the backpressure (virtual-queue) algorithm of Neely & Yu (2017) on the reduced simulator
(Section algorithm analysis, Remark after Theorem dualGA_performance_iid: "Numerically, we find Algorithm
DualGA performs better than the backpressure algorithm").

Both controllers run on the same G_t sequences (the reduced simulator's G process is exogenous: replication
``r`` of a seed sees one sequence whatever the controller; :mod:`sims.reduced`), at the same target Delta and
starting boost.  They trade distortion against the constraint differently (backpressure undershoots Delta more
and so spends less KL), so neither the regret nor the violation alone orders them.  The comparison is on the
paper's frontier: a replication's *excess* is its average KL minus the hindsight optimum at the DG it realised,

.. math:: \mathrm{excess}_r = \frac1T \sum_t D_{kl,t} - \mathrm{OPT}_r\Big(\frac1T \sum_t \mathrm{DG}_t\Big),

which is >= 0 for any controller (OPT is the least KL that reaches that DG on that sequence), and 0 on the
frontier.  Per process: the paired difference backpressure - DualGA over replications with a 95 % t-interval;
``better`` when the interval lies above 0, ``worse`` below, else ``tied``.
"""

from __future__ import annotations

import pathlib

import numpy as np

from paper_figs._out import md_table, write

TITLE = "DualGA vs backpressure: KL excess over the hindsight frontier at the realised DG (reduced simulator)"
PROCESSES = ("beta:2,2", "regime:0.001,2,5,5,2", "adversarial:0.3,0.7")
"""An i.i.d. process, a regime-switching one and a deterministic alternation (the non-stationary cases of fig_convergence)."""
DELTA = 0.2
CONFIDENCE = 0.95


def excess(res) -> np.ndarray:
    """Per replication: average KL minus OPT at the replication's own realised DG (nan where that DG is infeasible).

    Parameters
    ----------
    res : sims.reduced.runner.ReducedResult
        A controller's run (its per-replication average KL and DG).

    Returns
    -------
    numpy.ndarray
        (reps,) KL excess over the hindsight optimum (:func:`sims.reduced.online.hindsight_opt`).
    """
    from sims.reduced import online
    from sims.reduced.gprocess import parse_spec
    from sims.reduced.runner import OPT_TOL

    proc = parse_spec(res.spec).with_switch_time(res.T)
    dg, kl = res.per_rep["avg_dg"], res.per_rep["avg_kl"]
    opt = np.array([online.hindsight_opt(proc.kind_code, proc.tables, proc.step, proc.params, res.seed, r, res.T, float(dg[r]), OPT_TOL)[0]
                    for r in range(res.reps)])
    return kl - opt


def main(out_dir: pathlib.Path, quick: bool, lms=None) -> list[pathlib.Path]:
    """Run DualGA and backpressure in the reduced simulator and tabulate their KL excess over the hindsight frontier.

    Parameters
    ----------
    out_dir : pathlib.Path
        The folder the files are written to.
    quick : bool
        Small sizes: T = 5000 and 8 replications, instead of 1e5 and 32.
    lms : sequence of str, optional
        Ignored (the reduced simulator has no LM).

    Returns
    -------
    list of pathlib.Path
        The files written: tab_backpressure.png, tab_backpressure.json and tab_backpressure.md
        (:func:`paper_figs._out.write`).
    """
    from scipy import stats

    from paper_figs import criteria as cr
    from sims.reduced.runner import simulate

    T, reps = (5_000, 8) if quick else (100_000, 32)
    summary = dict(T=T, reps=reps, Delta=DELTA, seed=0, confidence=CONFIDENCE, processes={})
    rows = []
    for spec in PROCESSES:
        runs = {a: simulate(a, spec, T=T, reps=reps, seed=0, Delta=DELTA) for a in ("dualga", "backpressure")}
        ex = {a: excess(r) for a, r in runs.items()}
        d = ex["backpressure"] - ex["dualga"]  # positive: DualGA nearer the frontier
        d = d[np.isfinite(d)]
        half = stats.t.ppf(0.5 + CONFIDENCE / 2, d.size - 1) * d.std(ddof=1) / np.sqrt(d.size) if d.size > 1 else np.nan
        lo, hi = float(d.mean() - half), float(d.mean() + half)
        verdict = cr.matched([lo], [hi])
        summary["processes"][spec] = dict(
            verdict=verdict, diff=float(d.mean()), ci=[lo, hi],
            **{a: dict(avg_kl=r.avg_kl, avg_dg=r.avg_dg, regret=r.regret, violation=r.violation, excess=float(np.nanmean(ex[a])))
               for a, r in runs.items()})
        for a, r in runs.items():
            rows.append([spec, a, r.avg_kl, r.avg_dg, r.regret, r.violation, float(np.nanmean(ex[a]))])
        rows.append([spec, "backpressure - DualGA", "", "", "", "", f"{d.mean():+.3g} [{lo:+.3g}, {hi:+.3g}]: DualGA {verdict}"])
    table = (f"{reps} replications x {T} steps per process, Delta = {DELTA}, seed 0; excess = avg KL - OPT(realised DG) on the "
             f"replication's own sequence; paired {CONFIDENCE:.0%} t-interval over replications.\n\n"
             + md_table(["G process", "controller", "avg KL", "avg DG", "regret (KL - OPT(Delta))", "violation (Delta - DG)+", "excess"], rows))
    return write(out_dir, "tab_backpressure", summary, table, TITLE)
