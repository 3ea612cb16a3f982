"""Theorem dualGA_performance_iid: DualGA's regret and DG gap vs T (log-log), i.i.d.
and non-stationary G, with fitted slopes and 95% bootstrap CIs."""

from __future__ import annotations

import pathlib

import numpy as np

from paper_figs import save

TITLE = "DualGA regret and constraint gap shrink like T^(-1/2) (Theorem dualGA_performance_iid)"

# adversarial half/half schedules G = 0.5 -+ s: W_T / T grows with s at fixed T
SWINGS = (0.02, 0.05, 0.1, 0.2, 0.3, 0.4)
PROCESSES = {"i.i.d. Beta(2,2)": "beta:2,2", "regime switching": "regime:0.001,2,5,5,2", "adversarial": "adversarial:0.3,0.7"}


def main(out_dir: pathlib.Path, quick: bool, lms=None) -> list[pathlib.Path]:
    """Write the figure; ``lms`` is ignored (no LM: the reduced simulator's G processes)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from sims.reduced import runner as reduced
    from sims.reduced.runner import slope_ci

    Ts = np.unique(np.logspace(3, 4 if quick else 7, 3 if quick else 9).astype(int))
    reps = 8 if quick else 64
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    summary = {}
    for label, spec in PROCESSES.items():
        reg, gap, W = [], [], []
        for T in Ts:
            r = reduced.simulate("dualga", spec, T=int(T), reps=reps, seed=0, Delta=0.2, lam1=3.0)
            reg.append(np.abs(r.per_rep["avg_kl"] - r.per_rep["opt_kl"]))
            gap.append(np.abs(r.per_rep["avg_dg"] - 0.2))
            W.append(r.W2 / T)
        s1, s2 = slope_ci(Ts, reg), slope_ci(Ts, gap)
        summary[label] = dict(spec=spec, T=Ts.tolist(), regret_slope=s1, gap_slope=s2, W2_over_T=W)
        axes[0].loglog(Ts, [v.mean() for v in reg], "o-", label=f"{label}: slope {s1[0]:.2f} [{s1[1]:.2f}, {s1[2]:.2f}]")
        axes[1].loglog(Ts, [v.mean() for v in gap], "o-", label=f"{label}: slope {s2[0]:.2f} [{s2[1]:.2f}, {s2[2]:.2f}]")
        if max(W) > 0:
            axes[1].loglog(Ts, W, ":", c=axes[1].lines[-1].get_color(), label=f"{label}: W_T,2 / T")
    for ax, name in zip(axes[:2], ("|avg KL - OPT|", "|avg DG - Delta|")):
        ref = np.array([Ts[0], Ts[-1]], dtype=float)
        ax.loglog(ref, ax.lines[0].get_ydata()[0] * (ref / ref[0]) ** -0.5, "k--", lw=1, label="T^(-1/2)")
        ax.set_xlabel("T (tokens)")
        ax.set_ylabel(name)
        ax.legend(fontsize=7)
    summary["vs_W"] = _nonstationary_panel(axes[2], Ts[-1], reps)
    fig.suptitle(f"DualGA, Delta = 0.2, eta = 1/sqrt(T), lambda_1 = 3, {reps} replications; 95% bootstrap CIs")
    fig.tight_layout()
    return save(fig, out_dir, "fig_convergence", summary)


def _nonstationary_panel(ax, T: int, reps: int) -> dict:
    """Excess regret and DG gap at fixed T vs the measured W_{T,1} / T and W_{T,2} / T."""
    from sims.reduced import runner as reduced

    rows = dict(T=int(T), swing=list(SWINGS), W1_over_T=[], W2_over_T=[], regret=[], gap=[])
    for s in SWINGS:
        r = reduced.simulate("dualga", f"adversarial:{0.5 - s},{0.5 + s}", T=int(T), reps=reps, seed=0, Delta=0.2, lam1=3.0)
        rows["W1_over_T"].append(r.W1 / T)
        rows["W2_over_T"].append(r.W2 / T)
        rows["regret"].append(float(np.mean(np.abs(r.per_rep["avg_kl"] - r.per_rep["opt_kl"]))))
        rows["gap"].append(float(np.mean(np.abs(r.per_rep["avg_dg"] - 0.2))))
    ax.loglog(rows["W1_over_T"], rows["regret"], "o-", label="|avg KL - OPT| vs W_T,1 / T")
    ax.loglog(rows["W2_over_T"], rows["gap"], "s-", label="|avg DG - Delta| vs W_T,2 / T")
    w = np.array(rows["W1_over_T"] + rows["W2_over_T"])
    ref = np.array([w.min(), w.max()])
    ax.loglog(ref, ref, "k:", lw=1, label="W_T / T (the bound's extra term, constant 1)")
    ax.axhline(1 / np.sqrt(T), c="grey", lw=1, ls="--", label="1 / sqrt(T)")
    ax.set_xlabel("measured W_T / T (sup over delta in linspace(0, 15, 61))")
    ax.set_ylabel(f"gap at T = {T:.0e}")
    ax.set_title("adversarial G = 0.5 -+ s, switch at T/2", fontsize=9)
    ax.legend(fontsize=7)
    return rows
