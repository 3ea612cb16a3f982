"""Theorem dualGA_performance_iid: DualGA's regret and DG gap vs T (log-log), i.i.d.
and non-stationary G, with fitted slopes and 95% bootstrap CIs."""

from __future__ import annotations

import pathlib

import numpy as np

from paper_figs import save
from paper_figs._out import _plain, agg

TITLE = "DualGA regret and constraint gap shrink like T^(-1/2) (Theorem dualGA_performance_iid)"

# adversarial half/half schedules G = 0.5 -+ s: W_T / T grows with s at fixed T
SWINGS = (0.02, 0.05, 0.1, 0.2, 0.3, 0.4)
PROCESSES = {"i.i.d. Beta(2,2)": "beta:2,2", "regime switching": "regime:0.001,2,5,5,2", "adversarial": "adversarial:0.3,0.7"}


def main(out_dir: pathlib.Path, quick: bool, lms=None) -> list[pathlib.Path]:
    """Write the figure; ``lms`` is ignored (no LM: the reduced simulator's G processes).

    The figure is drawn by :func:`draw` from the JSON summary it is saved with (``python -m paper_figs.redraw`` redraws it).

    Parameters
    ----------
    out_dir : pathlib.Path
        The folder the files are written to.
    quick : bool
        Small sizes: horizons up to 1e4 (3 of them) and 8 replications, instead of up to 1e7 (9) and 64.
    lms : sequence of str, optional
        Ignored.

    Returns
    -------
    list of pathlib.Path
        The files written: fig_convergence.png and fig_convergence.json (:func:`paper_figs.save`).
    """
    from sims.reduced import runner as reduced
    from sims.reduced.runner import slope_ci

    Ts = np.unique(np.logspace(3, 4 if quick else 7, 3 if quick else 9).astype(int))
    reps = 8 if quick else 64
    summary = {}
    for label, spec in PROCESSES.items():
        reg, gap, W = [], [], []
        for T in Ts:
            r = reduced.simulate("dualga", spec, T=int(T), reps=reps, seed=0, Delta=0.2, lam1=3.0)
            reg.append(np.abs(r.per_rep["avg_kl"] - r.per_rep["opt_kl"]))
            gap.append(np.abs(r.per_rep["avg_dg"] - 0.2))
            W.append(r.W2 / T)
        s1, s2 = slope_ci(Ts, reg), slope_ci(Ts, gap)
        summary[label] = dict(spec=spec, T=Ts.tolist(), regret_slope=s1, gap_slope=s2, W2_over_T=W,
                              regret_mean=[float(v.mean()) for v in reg], gap_mean=[float(v.mean()) for v in gap])
    summary["vs_W"] = _nonstationary(Ts[-1], reps)
    summary["setting"] = dict(algo="dualga", Delta=0.2, eta="1/sqrt(T)", lam1=3.0, reps=reps)
    summary = _plain(summary)
    return save(draw(summary), out_dir, "fig_convergence", summary)


def _nonstationary(T: int, reps: int) -> dict:
    """Excess regret and DG gap at fixed T vs the measured W_{T,1} / T and W_{T,2} / T."""
    from sims.reduced import runner as reduced

    rows = dict(T=int(T), swing=list(SWINGS), W1_over_T=[], W2_over_T=[], regret=[], gap=[])
    for s in SWINGS:
        r = reduced.simulate("dualga", f"adversarial:{0.5 - s},{0.5 + s}", T=int(T), reps=reps, seed=0, Delta=0.2, lam1=3.0)
        rows["W1_over_T"].append(r.W1 / T)
        rows["W2_over_T"].append(r.W2 / T)
        rows["regret"].append(float(np.mean(np.abs(r.per_rep["avg_kl"] - r.per_rep["opt_kl"]))))
        rows["gap"].append(float(np.mean(np.abs(r.per_rep["avg_dg"] - 0.2))))
    return rows


PROCESS_STYLE = {"i.i.d. Beta(2,2)": dict(color="#0072B2", marker="o"), "regime switching": dict(color="#E69F00", marker="s"),
                 "adversarial": dict(color="#CC79A7", marker="^")}
"""Colour and marker of each G process (every series here is DualGA: the colours name processes, not algorithms)."""

QUANTITIES = (("regret", "regret |mean KL - OPT| (nats per token)"), ("gap", "constraint gap |mean DG - Delta|"))


def _reps(summary: dict) -> int:
    """Replications per point: recorded since issue 44; an older JSON's follow ``main``'s rule (8 for a quick run, whose
    T stops at 10^4, else 64)."""
    if "setting" in summary:
        return summary["setting"]["reps"]
    return 8 if summary["vs_W"]["T"] <= 10**4 else 64


def _pow10(T: float) -> str:
    e = int(round(np.log10(T)))
    return f"10^{e}" if np.isclose(T, 10.0**e) else f"{T:g}"


def draw(summary: dict):
    """fig_convergence from its JSON summary.

    Per process, DualGA's regret and constraint gap against T (log-log) with the T^(-1/2) rate; and, at the largest
    T, both against the measured non-stationarity W_T / T.  A JSON written before the per-T means were recorded
    (the committed full run) gives each process's fitted log-log slope and its 95 % bootstrap interval in place of
    the curves.

    Parameters
    ----------
    summary : dict
        The figure's JSON summary (``fig_convergence.json``).

    Returns
    -------
    matplotlib.figure.Figure
    """
    from paper_figs import style

    plt = agg()
    style.apply()
    procs = [k for k in summary if k in PROCESS_STYLE or isinstance(summary[k], dict) and "spec" in summary[k]]
    fig, axes = plt.subplots(1, 3, figsize=(16, 5.6))
    for ax, (q, ylabel) in zip(axes[:2], QUANTITIES):
        curves = all(f"{q}_mean" in summary[p] for p in procs)
        for i, p in enumerate(procs):
            v, kw = summary[p], PROCESS_STYLE.get(p, dict(color=f"C{i}", marker="o"))
            b = v[f"{q}_slope"]
            slope = f"slope {b[0]:.2f}\n[{b[1]:.2f}, {b[2]:.2f}]"
            if curves:
                ax.loglog(v["T"], v[f"{q}_mean"], ls="-", label=f"G process: {p}", **kw)
                ax.annotate(slope, (v["T"][-1], v[f"{q}_mean"][-1]), xytext=(6, 0), textcoords="offset points", fontsize=8,
                            color=kw["color"], va="center")
            else:
                ax.errorbar([i], [b[0]], yerr=[[b[0] - b[1]], [b[2] - b[0]]], ls="", capsize=5, ms=8, label=f"G process: {p}", **kw)
                ax.annotate(slope, (i, b[0]), xytext=(10, 0), textcoords="offset points", fontsize=8, color=kw["color"], va="center")
        if curves:
            Ts = np.array([min(summary[p]["T"][0] for p in procs), max(summary[p]["T"][-1] for p in procs)], dtype=float)
            y0 = summary[procs[0]][f"{q}_mean"][0]
            ax.loglog(Ts, y0 * (Ts / Ts[0]) ** -0.5, color=style.REFERENCE_COLOR, ls="--", lw=1.1,
                      label="rate T^(-1/2) (Theorem dualGA_performance_iid)")
            ax.set(xlabel="horizon T (tokens)", ylabel=ylabel, title=f"{ylabel.split(' (')[0]} against T")
        else:
            style.reference(ax, -0.5, "rate T^(-1/2): slope -1/2 (Theorem dualGA_performance_iid)")
            ax.set_xticks(range(len(procs)), [p.replace(" ", "\n", 1) if len(p) > 12 else p for p in procs])
            ax.set_xlim(-0.6, len(procs) - 0.1)
            ax.set_ylim(-0.65, -0.15)
            T = summary[procs[0]]["T"]
            ax.set(xlabel=f"G process (T from {_pow10(T[0])} to {_pow10(T[-1])} tokens)",
                   ylabel=f"log-log slope of the {ylabel.split(' (')[0].split(' |')[0]} against T",
                   title=f"{ylabel.split(' (')[0]}: fitted slope, 95 % CI")
        for i, p in enumerate(procs):
            W = summary[p]["W2_over_T"]
            if q == "gap" and curves and max(W) > 0:
                ax.loglog(summary[p]["T"], W, ls=":", color=PROCESS_STYLE.get(p, {}).get("color", f"C{i}"),
                          label=f"G process: {p}: non-stationarity W2(T) / T")
    _nonstationary_panel(axes[2], summary["vs_W"], style)
    style.legend_below(fig, ncol=3)
    T = summary[procs[0]]["T"]
    style.title(fig, "DualGA (Delta = 0.2, step 1/sqrt(T), lambda_1 = 3): regret and constraint gap shrink like T^(-1/2)",
                lm="none: G_t drawn from simulated processes", n=_reps(summary), T=f"{_pow10(T[0])} to {_pow10(T[-1])}",
                n_what="replications")
    return fig


def _nonstationary_panel(ax, rows: dict, style) -> None:
    """Regret and DG gap at the largest T against the measured W_{T,1} / T and W_{T,2} / T."""
    ax.loglog(rows["W1_over_T"], rows["regret"], "o-", color="#009E73", label="regret |mean KL - OPT| against W1(T) / T")
    ax.loglog(rows["W2_over_T"], rows["gap"], "s-", color="#D55E00", label="constraint gap |mean DG - Delta| against W2(T) / T")
    w = np.array(rows["W1_over_T"] + rows["W2_over_T"])
    ref = np.array([w.min(), w.max()])
    ax.loglog(ref, ref, color=style.REFERENCE_COLOR, ls=":", lw=1.1, label="bound's extra term W(T) / T (constant 1)")
    style.reference(ax, 1 / np.sqrt(rows["T"]), f"1 / sqrt(T) at T = {_pow10(rows['T'])}", ls="--")
    ax.set(xlabel="measured non-stationarity W(T) / T (largest over boosts 0 to 15)",
           ylabel=f"regret or gap at T = {_pow10(rows['T'])} tokens",
           title=f"non-stationary G: 0.5 - s then 0.5 + s (s {min(rows['swing']):g} to {max(rows['swing']):g})")
