"""Theorem dualGA_performance_iid: DualGA's regret and DG gap vs T (log-log), i.i.d.
and non-stationary G, with fitted slopes and 95% bootstrap CIs."""

from __future__ import annotations

import pathlib

import numpy as np

from paper_figs import save

TITLE = "DualGA regret and constraint gap shrink like T^(-1/2) (Theorem dualGA_performance_iid)"

PROCESSES = {"i.i.d. Beta(2,2)": "beta:2,2", "regime switching": "regime:0.001,2,5,5,2", "adversarial": "adversarial:0.3,0.7"}


def main(out_dir: pathlib.Path, quick: bool) -> list[pathlib.Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from sims import reduced
    from sims.reduced import slope_ci

    Ts = np.unique(np.logspace(3, 5 if quick else 7, 5 if quick else 9).astype(int))
    reps = 16 if quick else 64
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
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
    for ax, name in zip(axes, ("|avg KL - OPT|", "|avg DG - Delta|")):
        ref = np.array([Ts[0], Ts[-1]], dtype=float)
        ax.loglog(ref, ax.lines[0].get_ydata()[0] * (ref / ref[0]) ** -0.5, "k--", lw=1, label="T^(-1/2)")
        ax.set_xlabel("T (tokens)")
        ax.set_ylabel(name)
        ax.legend(fontsize=7)
    fig.suptitle(f"DualGA, Delta = 0.2, eta = 1/sqrt(T), lambda_1 = 3, {reps} replications; 95% bootstrap CIs")
    fig.tight_layout()
    return save(fig, out_dir, "fig_convergence", summary)
