"""Matched distortion: every algorithm's curve of (KL per token, TPR at 1e-4 and 1e-6, median
log10 p, realised DG) over its parameter on each LM, and DualGA compared with each of the others
at common KL (and at common TPR), with a paired bootstrap over texts (:mod:`paper_figs._matched`).

The paper's central claim (Section exp, Table exp_performance): "for a certain level of model
distortion, our algorithm achieves a higher TPR, and conversely, for a certain level of TPR, our
algorithm exhibits a smaller model distortion" than SRL, EMS, UW and ATW.  Its table holds one
to nine configurations per algorithm; here each algorithm is a curve, so the comparison is made
at the same KL rather than between configurations that happen to be near each other.  Run as
the sweep ``examples/sweep_matched.toml`` (resumable).  SRL is compared at each gamma and at its
best gamma per KL level (the envelope), which is the strongest SRL a user could tune.

SynthID-Text (issue 32) runs as a grid of its own, ``examples/sweep_matched_synthid.toml`` (same LMs,
sizes, chunks, seed and key, so its texts are paired with the others' and the main grid keeps its
hash): two curves over m layers, non-distortionary (2 candidates per match) and distortionary (4),
scored by the mean g-value score with its repeated-context mask where the other algorithms dedup
(seed, token) pairs (:func:`sims.experiments.sweep_grid.dedup_rule`).  Its KL is the exact per-key KL
like every other algorithm's; its "DG" is the tournament's mean-g drift (not comparable with DG).
"""

from __future__ import annotations

import pathlib

import numpy as np

from paper_figs import _matched as mt
from paper_figs._out import agg, md_table, write

TITLE = "Matched distortion: detection at the same KL, KL at the same TPR"
LMS = ("news", "lfqa", "smollm2-fit")
ALPHA = 0.05  # the family of K intervals of a comparison holds at 95 %
SRL_BEST = "SRL (best gamma)"
SYNTHID = ("SynthID non-distortionary", "SynthID distortionary")  # curves over m, 2 and 4 candidates per match
COMPARATORS = ("SRL gamma=0.1", "SRL gamma=0.25", "SRL gamma=0.5", "SRL gamma=0.7", SRL_BEST, "EMS", "UW-delta", "UW-gamma", "ATW", "AutoCov", "hard",
               *SYNTHID)
EXTRA_PAIRS = (("AutoCov", "EMS"), ("AutoCov", SRL_BEST))  # the AutoCov appendix's claims
METRICS = (*mt.METRICS_AT_KL, "kl_at_tpr")
QUICK_KEEP = {("dualga", "Delta"): (0.1, 0.3, 0.6), ("srl", "delta"): (1.0, 5.0), ("ems", "tau"): (0.5, 1.0), ("atw", "delta"): (1.0, 5.0),
              ("autocov", "Delta"): (0.2, 0.4), ("hard", "gamma"): (0.5, 0.7), ("synthid", "m"): (1, 2, 4)}
# A real LM on a CPU (5-30 tokens/s): 15 configurations spanning the KL range where DualGA's curve meets the others' (about
# 0.02 to 0.7 nats), the claims' comparators only, at least three points per curve (two points a decade of KL apart
# interpolate a convex curve too high between them): SRL at gamma 0.5 alone (its best gamma on smollm2-fit at most KL
# levels is 0.5 or 0.25), no EMS / UW-delta (their KL on SmolLM2, 1.7 / 2.6 nats, lies beyond DualGA Delta=0.5's), no hard watermark
REAL_KEEP = {("dualga", "Delta"): (0.1, 0.2, 0.3, 0.5), ("ems", "tau"): (), ("atw", "delta"): (1.0, 2.0, 3.0), ("autocov", "Delta"): (0.1, 0.2, 0.3)}
REAL_SRL = {0.5: (0.5, 1.0, 2.0, 3.0)}  # SRL's gammas and deltas kept on a real LM
REAL_CHUNK = 16  # a real LM's texts per chunk file: a rerun with a larger --real-n keeps the chunks already drawn


def curve_name(algo: str, params: dict) -> str:
    """The curve a configuration belongs to (SRL: one per gamma)."""
    if algo == "srl":
        return f"SRL gamma={params['gamma']:g}"
    if algo == "synthid":
        return SYNTHID[int(params.get("candidates", 2)) > 2]
    return {"dualga": "DualGA", "ems": "EMS", "uw-delta": "UW-delta", "uw-gamma": "UW-gamma", "atw": "ATW", "autocov": "AutoCov",
            "hard": "hard"}[algo]


def _quick_keep(c) -> bool:
    p = dict(c.params)
    if c.algo == "srl" and p.get("gamma") != 0.5:
        return False
    return next((p.get(k) in v for (a, k), v in QUICK_KEEP.items() if a == c.algo), c.algo == "uw-gamma")


def _real_keep(c) -> bool:
    """The configurations kept on a real LM (:data:`REAL_KEEP`, :data:`REAL_SRL`, UW-gamma)."""
    p = dict(c.params)
    if c.algo == "srl":
        return p.get("delta") in REAL_SRL.get(p.get("gamma"), ())
    return next((p.get(k) in v for (a, k), v in REAL_KEEP.items() if a == c.algo), c.algo == "uw-gamma")


def _curves(points: list[dict]) -> dict[str, list]:
    """Curve name -> list of sub-curves (lists of points sorted by KL); SRL's envelope over its gammas."""
    by: dict[str, list] = {}
    for p in points:
        by.setdefault(p["curve"], []).append(p)
    curves = {k: [sorted((p["stats"] for p in v), key=lambda st: st["kl"][0])] for k, v in by.items()}
    srl = [v[0] for k, v in curves.items() if k.startswith("SRL gamma")]
    if srl:
        curves[SRL_BEST] = srl
    return curves


def _ci(x: np.ndarray) -> list[float]:
    return [float(np.quantile(x[1:], ALPHA / 2)), float(np.quantile(x[1:], 1 - ALPHA / 2))] if x.size > 1 else [float(x[0])] * 2


def analyse(per_text: dict[str, dict[str, np.ndarray]], configs: dict[str, tuple[str, dict]], *, B: int, k: int, seed: int = 0) -> dict:
    """Curves and pairwise comparisons on one LM from its per-text arrays (and each point's
    per-text correlation of KL with realised DG, the paper's scatter_4 remark).

    ``per_text``: configuration id -> ``{"kl", "dg", "log10_p"}`` arrays in text order (one length
    across configurations: the texts are paired); ``configs``: id -> (algo, params)."""
    n = {v["log10_p"].size for v in per_text.values()}
    if len(n) != 1:
        raise ValueError(f"every configuration needs the same number of texts (paired bootstrap); got {sorted(n)}")
    w = mt.bootstrap_weights(n.pop(), B, seed)
    points = []
    for cid, (algo, params) in configs.items():
        v = per_text[cid]
        st = mt.point_stats(v["kl"], v["dg"], v["log10_p"], w)
        ok = np.isfinite(v["dg"]) & np.isfinite(v["kl"])
        corr = float(np.corrcoef(v["kl"][ok], v["dg"][ok])[0, 1]) if ok.sum() > 2 and np.ptp(v["kl"][ok]) > 0 and np.ptp(v["dg"][ok]) > 0 else float("nan")
        points.append(dict(curve=curve_name(algo, params), algo=algo, params=params, stats=st, kl_dg_corr=corr))
    curves = _curves(points)
    pairs = [("DualGA", c) for c in COMPARATORS] + list(EXTRA_PAIRS)
    comparisons = [dict(a=a, b=b, **mt.compare(curves[a], curves[b], m, k, ALPHA)) for a, b in pairs if a in curves and b in curves for m in METRICS]
    out_points = [dict(curve=p["curve"], algo=p["algo"], params=p["params"], kl_dg_corr=p["kl_dg_corr"],
                       **{m: float(p["stats"][m][0]) for m in ("kl", "dg", "tpr_1e-4", "tpr_1e-6", "strength")},
                       **{f"{m}_ci95": _ci(p["stats"][m]) for m in ("kl", "tpr_1e-4", "tpr_1e-6", "strength")}) for p in points]
    return dict(points=out_points, comparisons=comparisons)


def span(c: dict) -> str:
    """A comparison's cell: ``diff [lo, hi]`` per level (``bounded`` for the diff where on the texts themselves a
    curve starts above or ends below the level), saying where replicates only bound it (``censored``) and
    where it has no interval (fewer than :data:`paper_figs._matched.MIN_DEFINED` of the replicates define it)."""
    cells = []
    for i, (d, lo, hi) in enumerate(zip(c["diff"], c["lo"], c["hi"])):
        point = "bounded" if np.isnan(d) else f"{d:+.3g}"  # nan: on the texts themselves a curve only bounds its KL there
        if np.isnan(lo):
            cells.append(f"{point} (no interval: defined in {c['defined'][i]:.0%} of replicates)")
            continue
        cen = c.get("censored", [0.0] * len(c["diff"]))[i]
        cells.append(f"{point} [{lo:+.3g}, {hi:+.3g}]" + (f" ({cen:.0%} censored)" if cen >= 0.01 else " (< 1% censored)" if cen > 0 else ""))
    return "; ".join(cells) or c.get("reason", "")


def _figure(plt, result: dict):
    lms = list(result["per_lm"])
    fig, axes = plt.subplots(3, len(lms), figsize=(5.5 * len(lms), 11), squeeze=False)
    for j, lm in enumerate(lms):
        pts = result["per_lm"][lm]["points"]
        for i, (m, lab) in enumerate((("tpr_1e-4", "TPR at FPR 1e-4"), ("tpr_1e-6", "TPR at FPR 1e-6"), ("strength", "-median log10 p"))):
            ax = axes[i, j]
            for c, name in enumerate(dict.fromkeys(p["curve"] for p in pts)):
                ps = sorted((p for p in pts if p["curve"] == name), key=lambda p: p["kl"])
                x = [p["kl"] for p in ps]
                style = dict(c="red", lw=2.2, zorder=5) if name == "DualGA" else dict(c=f"C{c % 10}", lw=1)
                ax.plot(x, [p[m] for p in ps], "o-" if len(ps) > 1 else "D", ms=3, label=name, **style)
                ax.fill_between(x, [p[f"{m}_ci95"][0] for p in ps], [p[f"{m}_ci95"][1] for p in ps], color=style["c"], alpha=0.15, lw=0)
            ax.set(xscale="log", xlabel="KL per token (nats)", ylabel=lab, title=f"{lm} ({result['n']} texts x {result['T']})")
            if m == "strength":
                ax.set_yscale("log")
        axes[0, j].legend(fontsize=6)
    fig.tight_layout()
    return fig


def main(out_dir: pathlib.Path, quick: bool, lms=None, only=None) -> list[pathlib.Path]:
    """Quick: news only, 18 configurations (SynthID m = 1, 2, 4 in both modes among them), 16 texts x 50 tokens, 50
    bootstrap replicates, 3 levels; else the grids' 162 + 8 configurations x 300 texts x 200 tokens on news, lfqa and
    smollm2-fit, 400 replicates, 5 levels.  A real LM (``--lm smollm2``) keeps the 15 configurations of :func:`_real_keep`
    at ``--real-n`` x ``--real-T``.  ``only``: the algorithms kept (e.g. ``("dualga", "synthid")``: the full-size
    DualGA-SynthID comparison without the 150 other configurations; ``python -m paper_figs.fig_matched --only dualga synthid``)."""
    from paper_figs._data import is_synthetic
    from paper_figs._sweep import run_grid, sweep_grid, text_values

    plt = agg()
    lms = tuple(lms or (("news",) if quick else LMS))
    real = not all(is_synthetic(lm) for lm in lms)
    keep = _quick_keep if quick else _real_keep if real else None
    if only is not None:
        keep = (lambda c, k0=keep: c.algo in only and (k0 is None or k0(c)))
    size = dict(n=16, T=50, chunk=16) if quick else dict(chunk=REAL_CHUNK) if real else {}
    grids = [(name, sweep_grid(name, lms=lms, algos=keep, **size)) for name in ("matched", "matched_synthid")]
    grids = [(name, g) for name, g in grids if g.configs]
    grid = grids[0][1]
    B, k = (50, 3) if quick else (400, 5)
    cols = {c: {} for c in ("kl", "dg", "log10_p")}
    for name, g in grids:
        _, folder = run_grid(g, out_dir, name, quick)
        for c in cols:
            cols[c].update(text_values(folder, c))
    result = dict(lms=list(lms), n=grid.n, T=grid.T, grid=" + ".join(f"examples/sweep_{name}.toml" for name, _ in grids), bootstrap=B, levels=k,
                  alpha=ALPHA, trim=mt.TRIM, tpr_range=list(mt.TPR_RANGE), dedup_rules={a: r for _, g in grids for a, r in g.dedup_rules().items()},
                  per_lm={})
    rows = []
    for lm in lms:
        cfgs = {c.id: (c.algo, dict(c.params)) for _, g in grids for c in g.configs if c.lm == lm}
        per_text = {cid: {m: cols[m][cid] for m in cols} for cid in cfgs}
        res = analyse(per_text, cfgs, B=B, k=k)
        result["per_lm"][lm] = res
        for c in res["comparisons"]:
            lv = ", ".join(f"{x:.3g}" for x in c["levels"])
            rows.append([lm, f"{c['a']} vs {c['b']}", c["metric"], lv, span(c), c["verdict"]])
    table = (f"{grid.n} texts x {grid.T} tokens per point; paired bootstrap over texts ({B} replicates), {k} levels per comparison, "
             f"simultaneous {1 - ALPHA:.0%} (Bonferroni over levels).  diff = first - second (for kl_at_tpr: second's KL - first's, "
             "so positive = first better).  \"x % censored\": in x % of the replicates a curve starts above (or ends below) that TPR, "
             "which bounds its KL there to [0, its least KL] (or [its greatest KL, inf)); the interval spans those bounds.  "
             f"\"no interval\": fewer than {mt.MIN_DEFINED:.0%} of the replicates define the difference (counted as tied).\n\n"
             + md_table(["LM", "pair", "metric", "levels (KL or TPR)", "diff per level [interval]", "verdict"], rows))
    return write(out_dir, "fig_matched", result, table, TITLE, _figure(plt, result))


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description="fig_matched on some algorithms only (python -m paper_figs --only fig_matched runs them all)")
    ap.add_argument("--only", nargs="+", required=True, help="algorithms kept, e.g. dualga synthid")
    ap.add_argument("--lm", action="append", help="LMs (default news, lfqa, smollm2-fit)")
    ap.add_argument("--out", type=pathlib.Path, required=True)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--workers", type=int, default=0, help="sweep workers of a local Dask cluster (default 0: in this process)")
    a = ap.parse_args()
    from paper_figs._sweep import WHERE

    WHERE["workers"] = a.workers
    a.out.mkdir(parents=True, exist_ok=True)
    print(main(a.out, a.quick, a.lm, only=tuple(a.only)))
