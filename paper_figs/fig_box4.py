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
    for cfg, vcfg in zip(test.configs, val.configs):
        p, t, v = dict(cfg.params), summ[test][cfg.id], summ[val][vcfg.id]
        kl = test_kl[cfg.id]
        c = dict(lam1=p["lam1"], eta=p["eta"], kl_mean=float(kl.mean()), kl_percentiles=np.percentile(kl, (0, 25, 50, 75, 100)),
                 dg=t["realized_dg"], val_kl=v["kl_per_token"], val_dg=v["realized_dg"])
        grid.append(c)
        rows.append([c["lam1"], c["eta"], c["kl_mean"], c["dg"], c["val_kl"], c["val_dg"]])
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
    return write(out_dir, "fig_box4", summary, table, TITLE, draw(summary))


def draw(summary: dict):
    """The figure from its JSON summary (``fig_box4.json``), in the package's style (:mod:`paper_figs.style`): left, the
    KL per text of DualGA at each (lambda_1, eta) as a box of its 0/25/50/75/100th percentiles, with the setting tuned
    on the validation prompts and the hindsight optimum where the summary has it; right, DualGA's mean KL and the sd of
    a text's realised DG over eta beside SRL's at delta = lambda_1.  What ``main`` saves and ``python -m
    paper_figs.redraw`` redraws."""
    from paper_figs import style

    plt = agg()
    style.apply()
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(14, 5.6), gridspec_kw=dict(width_ratios=[2, 1]))
    grid, Delta = summary["grid"], summary["Delta"]
    dual = style.record("dualga").color
    lab = f"dualga Delta={Delta:g}: KL per text (box 25th to 75th, whiskers 0 to 100th percentile)"
    stats = [dict(whislo=c["kl_percentiles"][0], q1=c["kl_percentiles"][1], med=c["kl_percentiles"][2], q3=c["kl_percentiles"][3],
                  whishi=c["kl_percentiles"][4], label=f"{c['lam1']:g} / {c['eta']:g}") for c in grid]
    parts = ax.bxp(stats, showfliers=False, boxprops=dict(color=dual), whiskerprops=dict(color=dual), capprops=dict(color=dual),
                   medianprops=dict(color=dual, lw=2))
    for i, line in enumerate(x for v in parts.values() for x in v):
        line.set_label(lab if i == 0 else "_" + lab)
    x = np.arange(1, len(grid) + 1)
    if all("opt_kl" in c for c in grid):
        ax.plot(x, [c["opt_kl"] for c in grid], ls="none", marker="_", ms=14, mew=2, color=style.REFERENCE_COLOR,
                label="hindsight optimum OPT(min(Delta, realised DG)) on the same prompts")
    chosen = summary["tuning"]["chosen"]
    i = next(j for j, c in enumerate(grid) if (c["lam1"], c["eta"]) == (chosen["lam1"], chosen["eta"]))
    ax.plot(x[i], grid[i]["kl_mean"], ls="none", marker="*", ms=16, mfc="none", mew=1.5, color="#E69F00",
            label=f"tuned on {summary['tuning']['validation_prompts']} validation prompts: λ₁ = {chosen['lam1']:g}, "
                  f"η = {chosen['eta']:g} (its mean KL)")
    ax.tick_params(axis="x", labelrotation=60)
    ax.set(xlabel="initial dual variable λ₁ / step size η", ylabel="KL divergence from the LM of a text, per token (nats)",
           title="KL per text at each (λ₁, η)")
    sweep, srl = summary["eta_sweep"], summary["srl_same_lambda"]
    series = style.Series()
    for key, what in (("kl", "mean KL per token"), ("dg_sd", "sd of a text's realised DG")):
        lab = f"dualga Delta={Delta:g}, λ₁ = δ*: {what}"
        ax2.plot([e["eta"] for e in sweep], [e[key] for e in sweep], label=lab, **series(lab))
    srl_color = style.record("srl").color
    style.reference(ax2, srl["kl"], f"srl delta = λ₁ = {srl['delta']:.2f}: mean KL per token", color=srl_color)
    style.reference(ax2, srl["dg_sd"], "srl: sd of a text's realised DG", ls=":", color=srl_color)
    ax2.set(xscale="log", yscale="log", xlabel="step size η (with λ₁ = δ*(Δ, γ))",
            ylabel="mean KL per token (nats) or sd of DG",
            title="step size against SRL at the same boost")
    style.legend_below(fig, ncol=2)
    style.title(fig, f"DualGA (Delta = {Delta:g}) over λ₁ and η, and the step-size remarks", lm=summary["lm"],
                n=summary["n"], T=summary["T"])
    return fig
