"""Figure box_4 and the paper's hyperparameter remarks: KL per text of DualGA over
lambda_1 in {1, 2, 5, 10} x eta in {0.1, 1, 5, 10} at Delta = 0.4 (the sweep
``examples/sweep_lam1_eta.toml``, test prompts under seed 0 and 16 validation prompts under
seed 1), the tuning protocol (lambda_1 and eta chosen on the validation set) and the step-size
remarks checked.

* Tuning: on the 16 validation prompts pick the (lambda_1, eta) of least mean KL among
  those whose realised DG reaches Delta - 0.02; report it on the test prompts (seed 0).
* "eta below 0.05 behaves like SRL": for eta in {0.01, 0.02, 0.05} (lambda_1 = delta*(Delta,
  gamma)), the relative difference of DualGA's mean KL and DG from SRL's with delta =
  lambda_1 and the same gamma; and the across-text sd of realised DG, DualGA vs SRL.
* "robust for eta in [0.1, 1]": the max / min of mean KL and the largest |DG - Delta| over
  eta in {0.1, 0.2, 0.5, 1}.
* "close to optimal" / "noticeably suboptimal": each setting's *optimality ratio*, its mean KL over the
  hindsight optimum OPT(min(Delta, realised DG)) (:func:`theory.offline_opt` on the green masses of the same
  prompts' unwatermarked texts at this gamma, as in fig_pareto's frontier): a setting that meets Delta is
  compared with the optimum of the paper's problem at Delta (overshooting Delta costs KL the problem does not
  ask for), one that misses Delta with the optimum at the DG it reached (it is infeasible, so the question
  left is whether it is at least on the frontier), never with the other settings.
"""

from __future__ import annotations

import pathlib

import numpy as np

from paper_figs._data import generations
from paper_figs._out import agg, md_table, write
from paper_figs._sweep import run_grid, sweep_grid, text_values

TITLE = "DualGA's KL over lambda_1 x eta at Delta = 0.4; tuning on 16 prompts; step-size remarks"
DELTA = 0.4
SMALL_ETAS = (0.01, 0.02, 0.05)
ROBUST_ETAS = (0.1, 0.2, 0.5, 1.0)
DG_SLACK = 0.02


def main(out_dir: pathlib.Path, quick: bool, lms=None) -> list[pathlib.Path]:
    """Run the lambda_1 x eta grid of DualGA (test and validation sweeps) on one LM and write the figure.

    Parameters
    ----------
    out_dir : pathlib.Path
        The folder the files are written to.
    quick : bool
        Small sizes: the test grid at 8 texts of 100 tokens (V = 2000), instead of the grid file's sizes.
    lms : sequence of str, optional
        LMs of ``python -m paper_figs --lm``: its first is used (default ``lfqa``).

    Returns
    -------
    list of pathlib.Path
        The files written: fig_box4.png, fig_box4.json and fig_box4.md (:func:`paper_figs._out.write`).
    """
    import theory

    plt = agg()
    lm = (lms or ("lfqa",))[0]
    test = sweep_grid("lam1_eta", lms=[lm], **(dict(n=8, T=100, chunk=8) if quick else {}))
    n, T, V = test.n, test.T, (2000 if quick else None)
    val = sweep_grid("lam1_eta", lms=[lm], n=16, T=T, chunk=16, seeds=(1,))  # T: the test grid's
    gamma = float(theory.gamma_star(DELTA))
    run = lambda seed, nn, **p: generations(lm, "dualga", nn, T, seed, vocab_size=V, Delta=DELTA, **p)  # noqa: E731
    (test_rows, test_dir), (val_rows, _) = (run_grid(g, out_dir, f"fig_box4-{part}", quick) for g, part in ((test, "test"), (val, "val")))
    summ = {test: {r["config"]: r for r in test_rows}, val: {r["config"]: r for r in val_rows}}
    test_kl = text_values(test_dir, "kl")
    grid, rows = [], []
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(13, 4.4), gridspec_kw=dict(width_ratios=[2, 1]))
    data, names = [], []
    for cfg, vcfg in zip(test.configs, val.configs):
        p, t, v = dict(cfg.params), summ[test][cfg.id], summ[val][vcfg.id]
        kl = test_kl[cfg.id]
        c = dict(lam1=p["lam1"], eta=p["eta"], kl_mean=float(kl.mean()), kl_percentiles=np.percentile(kl, (0, 25, 50, 75, 100)),
                 dg=t["realized_dg"], val_kl=v["kl_per_token"], val_dg=v["realized_dg"])
        grid.append(c)
        data.append(kl)
        names.append(f"{c['lam1']:g}/{c['eta']:g}")
        rows.append([c["lam1"], c["eta"], c["kl_mean"], c["dg"], c["val_kl"], c["val_dg"]])
    ax.boxplot(data, whis=(0, 100))
    ax.set_xticks(range(1, len(names) + 1), names, rotation=60, fontsize=7)
    ax.set(xlabel="lambda_1 / eta", ylabel="KL per token of a text", title=f"{lm}: DualGA Delta={DELTA}, {n} texts x {T}")
    G = generations(lm, "none", n, T, 0, vocab_size=V, gamma=gamma).G.ravel()  # the test prompts' unwatermarked green masses
    for c in grid:
        c["opt_kl"] = float(theory.offline_opt(G, min(DELTA, float(c["dg"]))).value)
        c["frontier_ratio"] = c["kl_mean"] / c["opt_kl"]
    ok = [c for c in grid if c["val_dg"] >= DELTA - DG_SLACK]
    best = min(ok or grid, key=lambda c: c["val_kl"])
    # step-size remarks
    lam_ce = float(theory.delta_star(DELTA, gamma))
    srl = generations(lm, "srl", n, T, 0, vocab_size=V, gamma=gamma, delta=lam_ce)
    s_kl, s_dg = float(srl.kl.mean()), float(srl.dg.mean())
    small = []
    for eta in SMALL_ETAS + ROBUST_ETAS:
        g = run(0, n, eta=eta)
        small.append(dict(eta=eta, kl=float(g.kl.mean()), dg=float(g.dg.mean()), dg_sd=float(g.dg.mean(axis=1).std(ddof=1)),
                          rel_kl_vs_srl=float(g.kl.mean() / s_kl - 1), rel_dg_vs_srl=float(g.dg.mean() / s_dg - 1)))
    like_srl = [s for s in small if s["eta"] in SMALL_ETAS]
    robust = [s for s in small if s["eta"] in ROBUST_ETAS]
    ax2.plot([s["eta"] for s in small], [s["kl"] for s in small], "o-", label="DualGA mean KL")
    ax2.plot([s["eta"] for s in small], [s["dg_sd"] for s in small], "s-", label="sd of a text's realised DG")
    ax2.axhline(s_kl, c="C0", ls=":", label=f"SRL delta=lambda_1={lam_ce:.2f}: KL")
    ax2.axhline(float(srl.dg.mean(axis=1).std(ddof=1)), c="C1", ls=":", label="SRL: sd of DG")
    ax2.set(xscale="log", xlabel="eta (lambda_1 = delta*(Delta, gamma))", title="step size")
    ax2.legend(fontsize=6)
    fig.tight_layout()
    summary = dict(lm=lm, n=n, T=T, Delta=DELTA, gamma=gamma, grid=grid,
                   tuning=dict(validation_prompts=16, rule=f"least validation KL with validation DG >= Delta - {DG_SLACK}", chosen=best),
                   srl_same_lambda=dict(delta=lam_ce, kl=s_kl, dg=s_dg, dg_sd=float(srl.dg.mean(axis=1).std(ddof=1))), eta_sweep=small,
                   small_eta_max_rel_kl_vs_srl=max(abs(s["rel_kl_vs_srl"]) for s in like_srl),
                   small_eta_max_rel_dg_vs_srl=max(abs(s["rel_dg_vs_srl"]) for s in like_srl),
                   robust_eta_kl_ratio=max(s["kl"] for s in robust) / min(s["kl"] for s in robust),
                   robust_eta_max_dg_gap=max(abs(s["dg"] - DELTA) for s in robust))
    table = md_table(["lambda_1", "eta", "test KL", "test DG", "validation KL", "validation DG"], rows)
    table += (f"\n\nTuned on 16 validation prompts: lambda_1 = {best['lam1']:g}, eta = {best['eta']:g}.\n\n"
              + md_table(["eta", "KL", "DG", "sd of DG", "KL vs SRL", "DG vs SRL"],
                         [[s["eta"], s["kl"], s["dg"], s["dg_sd"], s["rel_kl_vs_srl"], s["rel_dg_vs_srl"]] for s in small]))
    return write(out_dir, "fig_box4", summary, table, TITLE, fig)
