"""Table exp_performance: TPR at FPR 1e-4 / 1e-6 and KL per token for every algorithm
configuration of the paper, on ``news`` (C4 stand-in) and ``lfqa``, run as the sweep
``examples/sweep_tab_performance.toml`` (:mod:`paper_figs._sweep`).

A text counts as detected when its exact p-value (binomial, Gamma, AutoCov or Poisson-binomial
tail) is <= the FPR, so the thresholds come from the exact null.  Every cell also
scores as many unwatermarked texts of the same LM with the same key and detector; the
rejections at 1e-4, pooled over all cells, are reported with their Clopper-Pearson interval
(the promise: at most 1e-4).  The paper's Llama-3-8B numbers are printed beside ours; the
synthetic LMs are not Llama, so only the ordering of configurations is comparable.
"""

from __future__ import annotations

import json
import pathlib

# the paper's Table exp_performance (Llama-3-8B) by configuration (parameters in the grid's sorted order):
# C4 TPR 1e-4, TPR 1e-6, KL, LFQA TPR 1e-4, TPR 1e-6, KL
PAPER = {
    "srl delta=1, gamma=0.1": (0.08, 0.02, 0.02, 0.17, 0.06, 0.02), "srl delta=1, gamma=0.5": (0.27, 0.09, 0.05, 0.31, 0.11, 0.05),
    "srl delta=1, gamma=0.7": (0.17, 0.03, 0.04, 0.18, 0.07, 0.03), "srl delta=5, gamma=0.1": (1.0, 0.99, 1.2, 1.0, 1.0, 1.2),
    "srl delta=5, gamma=0.5": (1.0, 1.0, 0.65, 1.0, 1.0, 0.65), "srl delta=5, gamma=0.7": (0.99, 0.97, 0.35, 0.99, 0.96, 0.35),
    "srl delta=10, gamma=0.1": (0.99, 0.99, 1.4, 1.0, 0.99, 1.4), "srl delta=10, gamma=0.5": (1.0, 1.0, 1.2, 1.0, 0.99, 1.2),
    "srl delta=10, gamma=0.7": (0.98, 0.93, 0.57, 0.98, 0.92, 0.54),
    "ems tau=0.5": (0.38, 0.16, 0.71, 0.22, 0.14, 0.54), "ems tau=1": (0.90, 0.82, 1.03, 0.92, 0.87, 0.46),
    "ems tau=1.5": (1.0, 1.0, 2.6, 1.0, 1.0, 2.7), "uw-delta": (1.0, 1.0, 2.3, 1.0, 1.0, 2.1), "uw-gamma": (1.0, 1.0, 1.1, 1.0, 0.99, 1.2),
    "atw alpha=2, delta=1": (0.51, 0.29, 0.07, 0.56, 0.33, 0.07), "atw alpha=2, delta=5": (0.99, 0.92, 0.36, 1.0, 0.96, 0.36),
    "dualga Delta=0.2": (0.92, 0.91, 0.28, 0.89, 0.87, 0.27), "dualga Delta=0.3": (0.99, 0.98, 0.34, 0.98, 0.98, 0.31),
    "dualga Delta=0.4": (1.0, 1.0, 0.57, 1.0, 0.99, 0.59), "dualga Delta=0.5": (1.0, 1.0, 1.1, 1.0, 1.0, 0.97),
}
QUICK = ("srl delta=1, gamma=0.1", "srl delta=5, gamma=0.5", "ems tau=1", "uw-delta", "atw alpha=2, delta=1", "dualga Delta=0.3")
LMS = ("news", "lfqa")
TITLE = "Table exp_performance: TPR at FPR 1e-4 / 1e-6 and KL"
KEEP = ("tpr_at_1e-4", "tpr_at_1e-4_lo", "tpr_at_1e-4_hi", "tpr_at_1e-6", "kl_per_token", "realized_dg", "empirical_fpr_at_1e-4",
        "empirical_fpr_at_1e-4_lo", "empirical_fpr_at_1e-4_hi", "n_null", "n_texts", "median_log10_p", "tokens_to_detect_median",
        "mean_entropy")


def main(out_dir: pathlib.Path, quick: bool, lms=None, name: str = "tab_performance") -> list[pathlib.Path]:
    """Run the grid of Table exp_performance and tabulate TPR at FPR 1e-4 / 1e-6 and KL per configuration.

    Quick: 6 configurations, 16 texts x 100 tokens; else the grid's 20 x 500 texts x 200 tokens (each with 500 controls).
    A real LM runs the quick configurations at :data:`paper_figs._data.REAL_SIZE`.

    Parameters
    ----------
    out_dir : pathlib.Path
        The folder the files are written to.
    quick : bool
        Small sizes (see above) instead of the paper's.
    lms : sequence of str, optional
        LMs of ``python -m paper_figs --lm``: its first two are used (default the grid's).
    name : str, optional
        The output name (``tab_performance_ext`` for the second LM).

    Returns
    -------
    list of pathlib.Path
        The files written: tab_performance.md and tab_performance.json.
    """
    from paper_figs._data import is_synthetic, label
    from paper_figs._sweep import run_grid, sweep_grid
    from sims.experiments.evaluate import clopper_pearson

    lms = tuple(lms or LMS)[:2]
    keep = (lambda c: label(c.algo, dict(c.params)) in QUICK) if quick or not all(map(is_synthetic, lms)) else None
    grid = sweep_grid("tab_performance", lms=lms, algos=keep, **(dict(n=16, T=100, chunk=16) if quick else {}))
    by_id = {c.id: c for c in grid.configs}
    cells = []
    for r in run_grid(grid, out_dir, "tab_performance", quick)[0]:  # one folder per grid: _ext and --lm runs share chunks
        c = by_id[r["config"]]
        cells.append(dict(lm=c.lm, algo=c.algo, params=dict(c.params), label=label(c.algo, dict(c.params)), paper=PAPER[label(c.algo, dict(c.params))],
                          **{k: r[k] for k in KEEP}))
    null_rej = sum(round(c["empirical_fpr_at_1e-4"] * c["n_null"]) for c in cells)
    null_n = sum(c["n_null"] for c in cells)
    rows = []
    for lab in dict.fromkeys(c["label"] for c in cells):
        mine = {c["lm"]: c for c in cells if c["label"] == lab}
        vals = [f"{mine[lm]['tpr_at_1e-4']:.2f} | {mine[lm]['tpr_at_1e-6']:.2f} | {mine[lm]['kl_per_token']:.2f}" if lm in mine else "- | - | -"
                for lm in lms]
        rows.append(f"| {lab} | " + " | ".join(vals) + " | " + " / ".join(f"{x:g}" for x in PAPER[lab]) + " |")
    lo, hi = clopper_pearson(null_rej, null_n)
    md = "\n".join([
        f"# {TITLE} on {', '.join(lms)}", "",
        f"{grid.n} watermarked and {grid.n} unwatermarked texts x {grid.T} tokens per cell, seed 0, key {grid.key}, dedup on; a text is "
        "detected when its exact p-value is <= the FPR.  Run as the sweep examples/sweep_tab_performance.toml "
        f"(chunks in {out_dir / 'sweeps'}).", "",
        "| configuration | " + " | ".join(f"{lm} {c}" for lm in lms for c in ("TPR 1e-4", "TPR 1e-6", "KL"))
        + " | paper (C4 TPR, TPR, KL / LFQA TPR, TPR, KL) |",
        "|---|" + "---|" * (3 * len(lms) + 1), *rows, "",
        f"Empirical FPR at 1e-4 on the unwatermarked texts of all cells: {null_rej} / {null_n} = {null_rej / null_n:.2e}, "
        f"95% Clopper-Pearson interval [{lo:.2e}, {hi:.2e}] (the exact tests promise <= 1e-4).", "",
    ])
    f1, f2 = out_dir / f"{name}.md", out_dir / f"{name}.json"
    f1.write_text(md)
    f2.write_text(json.dumps(dict(lms=list(lms), n=grid.n, T=grid.T, grid="examples/sweep_tab_performance.toml", cells=cells,
                                  pooled_null=dict(rejections=null_rej, n=null_n, ci95=[lo, hi])), indent=1))
    return [f1, f2]
