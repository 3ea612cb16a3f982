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
(seed, token) pairs (:func:`sims.sweep.grid.dedup_rule`).  Its KL is the exact per-key KL
like every other algorithm's; its "DG" is the tournament's mean-g drift (not comparable with DG).

The newer algorithms (issue 45) run as a third grid of their own, ``examples/sweep_matched_new.toml`` (same LMs, sizes,
chunks, seed and key: paired texts, the other grids' hashes and results kept): MorphMark over kappa, SWEET over delta
(alpha 2, the registry's default and ATW's), Unigram over delta (gamma 0.5, one fixed green list) and DiPmark over its
alpha (gamma 0.5; distribution-preserving only on average over keys: its per-key KL, which is what is matched here,
is 0.1 to 0.6 nats).  They are compared with DualGA at common KL and TPR (:data:`NEW`) like the paper's comparators,
on DG too (the green-mass gain of their own detector's green list, :data:`DG_ALGOS`), but are not refined (their
comparisons' margins hold no interpolation error) and are left out on a real LM.  The keyed-sampling ones, PF,
GumbelSoft and EXP (:data:`KEYED`), run as a fourth grid, ``examples/sweep_matched_keyed.toml``: one point each at its
generator's defaults, no DG (EMS's family), their per-key KL above 0.95 nats, beside EMS on the KL axis.
"""

from __future__ import annotations

import dataclasses
import pathlib

import numpy as np

from paper_figs import _matched as mt
from paper_figs import _refine as rf
from paper_figs._data import display
from paper_figs._out import agg, md_table, write

TITLE = "Matched distortion: detection at the same KL, KL at the same TPR"
LMS = ("news", "lfqa", "smollm2-fit")
ALPHA = 0.05  # the family of K intervals of a comparison holds at 95 %
SRL_BEST = "SRL (best gamma)"
SYNTHID = ("SynthID non-distortionary", "SynthID distortionary")  # curves over m, 2 and 4 candidates per match
DUALGA_BEST = "DualGA (best gamma)"
NEW = {"morphmark": "MorphMark", "sweet": "SWEET", "unigram": "Unigram", "dipmark": "DiPmark"}
"""The newer algorithms' curves (``examples/sweep_matched_new.toml``, issue 45): algorithm -> curve name."""
KEYED = {"pf": "PF", "gumbelsoft": "GumbelSoft", "exp": "EXP"}
"""The newer keyed-sampling algorithms (``examples/sweep_matched_keyed.toml``, issue 45), one point each and no DG:
algorithm -> curve name."""
COMPARATORS = ("SRL gamma=0.1", "SRL gamma=0.25", "SRL gamma=0.4", "SRL gamma=0.5", "SRL gamma=0.7", SRL_BEST, "EMS", "UW-delta", "UW-gamma", "ATW",
               "AutoCov", "hard", *SYNTHID, *NEW.values(), *KEYED.values())
SAME_GAMMA = (("DualGA gamma=0.1", "SRL gamma=0.1"), ("DualGA gamma=0.25", "SRL gamma=0.25"), ("DualGA gamma=0.5", "SRL gamma=0.5"),
              ("DualGA gamma=0.7", "SRL gamma=0.7"), ("DualGA gamma=0.25", "ATW"))
"""The controller alone: DualGA with gamma set to the baseline's (ATW's green list has gamma 0.25)."""
GAMMA_CHOICE = (("DualGA", "DualGA gamma=0.25"), ("DualGA", "DualGA gamma=0.5"))
"""App. choose_green_ratio: DualGA at gamma*(Delta) against DualGA at Kirchenbauer et al.'s heuristic gammas."""
EXTRA_PAIRS = (*SAME_GAMMA, (DUALGA_BEST, SRL_BEST), *GAMMA_CHOICE, ("AutoCov", "EMS"), ("AutoCov", SRL_BEST))  # and the AutoCov appendix's claims
METRICS = ("dg", *mt.METRICS_AT_KL, "kl_at_tpr")
DG_ALGOS = ("dualga", "srl", "atw", "hard", "morphmark", "sweet", "unigram", "dipmark")
"""The curves whose DG is the green-mass increase of their own green list (AutoCov's alternating list, SynthID's g-value drift
and the keyed-order and EMS schemes have no comparable DG): only these are compared on DG.  DiPmark's DG is the green-mass
gain of its detector's list (the tail of its keyed permutation, gamma 0.5), positive for each key though zero on average over keys."""
ROUNDS = 4  # bisection rounds of the refinement (paper_figs._refine); quick: 1, a real LM: 0
REFINED = ("SRL gamma=0.1", "SRL gamma=0.25", "SRL gamma=0.4", "SRL gamma=0.5", "SRL gamma=0.7", SRL_BEST, "EMS", "UW-delta", "UW-gamma", "ATW",
           "AutoCov")
"""The comparators of DualGA whose comparison levels the refinement measures (the claims' rows), beside :data:`EXTRA_PAIRS`."""
QUICK_KEEP = {("dualga", "Delta"): (0.1, 0.3, 0.6), ("srl", "delta"): (1.0, 5.0), ("ems", "tau"): (0.5, 1.0), ("atw", "delta"): (1.0, 5.0),
              ("autocov", "Delta"): (0.2, 0.4), ("hard", "gamma"): (0.5, 0.7), ("synthid", "m"): (1, 2, 4),
              ("morphmark", "morph_kappa"): (0.8, 2.0), ("sweet", "delta"): (1.0, 5.0), ("unigram", "delta"): (1.0, 5.0),
              ("dipmark", "dip_alpha"): (0.3, 0.5), ("pf", "tau"): (1.0,), ("gumbelsoft", "gs_tau"): (0.5,), ("exp", "tau"): (1.0,)}
# A real LM on a CPU (5-30 tokens/s): 15 configurations spanning the KL range where DualGA's curve meets the others' (about
# 0.02 to 0.7 nats), the claims' comparators only, at least three points per curve (two points a decade of KL apart
# interpolate a convex curve too high between them): SRL at gamma 0.5 alone (its best gamma on smollm2-fit at most KL
# levels is 0.5 or 0.25), no EMS / UW-delta (their KL on SmolLM2, 1.7 / 2.6 nats, lies beyond DualGA Delta=0.5's), no hard watermark,
# none of the newer algorithms (NEW, KEYED: their grids are skipped there)
REAL_KEEP = {("dualga", "Delta"): (0.1, 0.2, 0.3, 0.5), ("ems", "tau"): (), ("atw", "delta"): (1.0, 2.0, 3.0), ("autocov", "Delta"): (0.1, 0.2, 0.3)}
REAL_SRL = {0.5: (0.5, 1.0, 2.0, 3.0)}  # SRL's gammas and deltas kept on a real LM
GRIDS = ("matched", "matched_gamma", "matched_synthid", "matched_new", "matched_keyed")
"""The grids run (``examples/sweep_<name>.toml``); the first one's sizes are the refinement rounds'."""
REAL_CHUNK = 16  # a real LM's texts per chunk file: a rerun with a larger --real-n keeps the chunks already drawn


def curve_name(algo: str, params: dict) -> str:
    """The curve a configuration belongs to (SRL: one per gamma).

    Parameters
    ----------
    algo : str
        The algorithm.
    params : dict
        Its parameters.

    Returns
    -------
    str
        The curve's display name (``SRL gamma=0.25``, ``DualGA``, ``EMS``, ...).
    """
    if algo == "srl":
        return f"SRL gamma={params['gamma']:g}"
    if algo == "synthid":
        return SYNTHID[int(params.get("candidates", 2)) > 2]
    if algo == "dualga" and "gamma" in params:
        return f"DualGA gamma={params['gamma']:g}"
    return {"dualga": "DualGA", "ems": "EMS", "uw-delta": "UW-delta", "uw-gamma": "UW-gamma", "atw": "ATW", "autocov": "AutoCov",
            "hard": "hard", **NEW, **KEYED}[algo]


def _quick_keep(c) -> bool:
    p = dict(c.params)
    if c.algo in ("srl", "dualga") and p.get("gamma", 0.5) != 0.5:
        return False
    return next((p.get(k) in v for (a, k), v in QUICK_KEEP.items() if a == c.algo), c.algo == "uw-gamma")


def _real_keep(c) -> bool:
    """The configurations kept on a real LM (:data:`REAL_KEEP`, :data:`REAL_SRL`, UW-gamma; DualGA at gamma 0.5 beside SRL's)."""
    p = dict(c.params)
    if c.algo == "dualga" and "gamma" in p:
        return p["gamma"] in REAL_SRL and p["Delta"] in (0.1, 0.2, 0.3)
    if c.algo == "srl":
        return p.get("delta") in REAL_SRL.get(p.get("gamma"), ())
    return next((p.get(k) in v for (a, k), v in REAL_KEEP.items() if a == c.algo), c.algo == "uw-gamma")


def _curves(points: list[dict]) -> dict[str, list]:
    """Curve name -> list of sub-curves (lists of points sorted by KL); SRL's envelope over its gammas."""
    by: dict[str, list] = {}
    for p in points:
        by.setdefault(p["curve"], []).append(p)
    curves = {k: [sorted((p["stats"] for p in v), key=lambda st: st["kl"][0])] for k, v in by.items()}
    for best, prefix, least in ((SRL_BEST, "SRL gamma", 1), (DUALGA_BEST, "DualGA", 2)):  # DualGA's envelope only beside its own gamma*
        subs = [v[0] for k, v in curves.items() if k.startswith(prefix)]
        if len(subs) >= least:
            curves[best] = subs
    return curves


def _ci(x: np.ndarray) -> list[float]:
    return [float(np.quantile(x[1:], ALPHA / 2)), float(np.quantile(x[1:], 1 - ALPHA / 2))] if x.size > 1 else [float(x[0])] * 2


def _points(per_text: dict[str, dict[str, np.ndarray]], configs: dict[str, tuple[str, dict]], w: np.ndarray) -> list[dict]:
    """One point per configuration: its curve, algorithm, parameters, :func:`paper_figs._matched.point_stats` over the
    bootstrap weights ``w`` (DG nan where :data:`DG_ALGOS` says it is not comparable) and the per-text corr(KL, DG)."""
    points = []
    for cid, (algo, params) in configs.items():
        v = per_text[cid]
        dg = v["dg"] if algo in DG_ALGOS else np.full(v["dg"].shape, np.nan)
        st = mt.point_stats(v["kl"], dg, v["log10_p"], w)
        ok = np.isfinite(v["dg"]) & np.isfinite(v["kl"])
        corr = float(np.corrcoef(v["kl"][ok], v["dg"][ok])[0, 1]) if ok.sum() > 2 and np.ptp(v["kl"][ok]) > 0 and np.ptp(v["dg"][ok]) > 0 else float("nan")
        points.append(dict(id=cid, curve=curve_name(algo, params), algo=algo, params=params, stats=st, kl_dg_corr=corr))
    return points


def _weights(per_text: dict, B: int, seed: int = 0) -> np.ndarray:
    n = {v["log10_p"].size for v in per_text.values()}
    if len(n) != 1:
        raise ValueError(f"every configuration needs the same number of texts (paired bootstrap); got {sorted(n)}")
    return mt.bootstrap_weights(n.pop(), B, seed)


def _members(name: str, names) -> list[str]:
    """The measured curves behind a curve name (an envelope's sub-curves, else itself)."""
    prefix = {SRL_BEST: "SRL gamma", DUALGA_BEST: "DualGA"}.get(name)
    return [x for x in names if x.startswith(prefix) and x not in (SRL_BEST, DUALGA_BEST)] if prefix else [name]


def _compare_all(curves: dict, k: int, n: int, points: list | None = None, checks: list | None = None) -> list[dict]:
    """Every pair of :data:`COMPARATORS` and :data:`EXTRA_PAIRS` on every metric.  A level's margin
    (:func:`paper_figs.criteria.matched`) is the metric's resolution (one text in ``n`` for a TPR) plus the
    interpolation error the refinement left there on each curve (:func:`paper_figs._refine.error_at`; an
    envelope: the largest of its sub-curves'), when ``points`` and ``checks`` are given."""
    pairs = [("DualGA", c) for c in COMPARATORS] + list(EXTRA_PAIRS)
    by_curve: dict[str, list] = {}
    for p in points or ():
        by_curve.setdefault(p["curve"], []).append(p)

    def err(name, levels, m):
        if checks is None or m == "kl_at_tpr":
            return np.zeros(len(levels))
        return np.max([rf.error_at([c for c in checks if c["curve"] == x], by_curve.get(x, []), levels, m)
                       for x in _members(name, by_curve)] or [np.zeros(len(levels))], axis=0)

    out = []
    for a, b in pairs:
        if a not in curves or b not in curves:
            continue
        for m in METRICS:
            if m == "dg" and not all(np.isfinite(p["dg"][0]) for c in (a, b) for sub in curves[c] for p in sub):
                continue
            base = 1.0 / n if m.startswith("tpr") else 0.0
            margin = (lambda lv, a=a, b=b, m=m, base=base: base + err(a, lv, m) + err(b, lv, m))
            out.append(dict(a=a, b=b, **mt.compare(curves[a], curves[b], m, k, ALPHA, margin=margin)))
    return out


def analyse(per_text: dict[str, dict[str, np.ndarray]], configs: dict[str, tuple[str, dict]], *, B: int, k: int, seed: int = 0,
            checks: list | None = None) -> dict:
    """Curves and pairwise comparisons on one LM from its per-text arrays.

    Also each point's per-text correlation of KL with realised DG (the paper's scatter_4 remark).

    Parameters
    ----------
    per_text : dict
        Configuration id -> ``{"kl", "dg", "log10_p"}`` arrays in text order (one length across configurations:
        the texts are paired).
    configs : dict
        Configuration id -> (algo, params).
    B : int
        Bootstrap replicates.
    k : int
        Levels compared per pair.
    seed : int, optional
        Seed of the bootstrap weights.
    checks : list, optional
        The refinement's checks on this LM (their residuals widen each level's margin, :func:`_compare_all`).

    Returns
    -------
    dict
        ``points`` (per configuration: curve, KL, DG, TPRs and strength with 95 % intervals, the KL-DG correlation)
        and ``comparisons``.
    """
    w = _weights(per_text, B, seed)
    points = _points(per_text, configs, w)
    comparisons = _compare_all(_curves(points), k, w.shape[1], points, checks)
    out_points = [dict(curve=p["curve"], algo=p["algo"], params=p["params"], kl_dg_corr=p["kl_dg_corr"],
                       **{m: float(p["stats"][m][0]) for m in ("kl", "dg", "tpr_1e-4", "tpr_1e-6", "strength")},
                       **{f"{m}_ci95": _ci(p["stats"][m]) for m in ("kl", "tpr_1e-4", "tpr_1e-6", "strength")}) for p in points]
    return dict(points=out_points, comparisons=comparisons)


def refine_round(per_text: dict, configs: dict, pending: list[dict], settled: dict, *, B: int, k: int) -> tuple[list[dict], list[dict]]:
    """One bisection round on one LM (:mod:`paper_figs._refine`).

    Check the direct runs of ``pending`` (proposals of the last round, now in ``configs``) against their curves
    without them, mark their segments settled where they agree, and propose the next runs.

    Parameters
    ----------
    per_text : dict
        Configuration id -> per-text arrays (as :func:`analyse`).
    configs : dict
        Configuration id -> (algo, params).
    pending : list of dict
        Last round's proposals.
    settled : dict
        Curve -> set of settled parameter segments (updated in place).
    B : int
        Bootstrap replicates.
    k : int
        Levels compared per pair.

    Returns
    -------
    checks : list of dict
        One per pending run: its curve, parameters, segment, level and the check's outcome.
    proposals : list of dict
        The next runs to make.
    """
    w = _weights(per_text, B)
    points = _points(per_text, configs, w)
    by_curve: dict[str, list] = {}
    for p in points:
        by_curve.setdefault(p["curve"], []).append(p)
    checks = []
    for prop in pending:
        new = next(p for p in points if p["id"] == prop["id"])
        others = [p for p in by_curve[new["curve"]] if p["id"] != new["id"]]
        c = rf.check(others, new)
        checks.append(dict(curve=new["curve"], params=new["params"], segment=list(prop["segment"]), level=prop["level"], **c))
        if c["ok"]:
            settled.setdefault(new["curve"], set()).add(tuple(prop["segment"]))
    levels: dict[str, list] = {}
    for c in _compare_all(_curves(points), k, w.shape[1]):
        if c["metric"] == "kl_at_tpr" or not c["levels"] or (c["a"] == "DualGA" and c["b"] not in REFINED):
            continue
        for name in (c["a"], c["b"]):
            subs = [n for n in by_curve if n.startswith("SRL gamma")] if name == SRL_BEST else \
                [n for n in by_curve if n.startswith("DualGA")] if name == DUALGA_BEST else [name]
            for n in subs:
                levels.setdefault(n, []).extend(c["levels"])
    proposals = [dict(curve=n, **p) for n, lv in levels.items() if n in by_curve
                 for p in rf.propose(by_curve[n], np.array(lv), settled.get(n, set()))]
    return checks, proposals


def span(c: dict) -> str:
    """A comparison's cell: ``diff [lo, hi]`` per level.

    ``bounded`` for the diff where on the texts themselves a curve starts above or ends below the level; it says
    where replicates only bound it (``censored``) and where it has no interval (fewer than
    :data:`paper_figs._matched.MIN_DEFINED` of the replicates define it).

    Parameters
    ----------
    c : dict
        A comparison (``diff``, ``lo``, ``hi``, ``defined``, optionally ``censored`` and ``reason``).

    Returns
    -------
    str
        The cells joined by semicolons (the reason where there is no level).
    """
    cells = []
    for i, (d, lo, hi) in enumerate(zip(c["diff"], c["lo"], c["hi"])):
        point = "bounded" if np.isnan(d) else f"{d:+.3g}"  # nan: on the texts themselves a curve only bounds its KL there
        if np.isnan(lo):
            cells.append(f"{point} (no interval: defined in {c['defined'][i]:.0%} of replicates)")
            continue
        cen = c.get("censored", [0.0] * len(c["diff"]))[i]
        cells.append(f"{point} [{lo:+.3g}, {hi:+.3g}]" + (f" ({cen:.0%} censored)" if cen >= 0.01 else " (< 1% censored)" if cen > 0 else ""))
    return "; ".join(cells) or c.get("reason", "")


PANELS = (("tpr_1e-4", "TPR at FPR 1e-4"), ("tpr_1e-6", "TPR at FPR 1e-6"), ("strength", "-median log10 p-value (strength)"))
"""The measures drawn against KL (a key of each point of the JSON, its axis label), one row of panels each."""


def _series_label(point: dict) -> str:
    """A curve's legend entry, its registry algorithm first (``"SRL gamma=0.1"`` -> ``"srl gamma=0.1"``; DualGA at
    gamma*(Delta) named so)."""
    if point["curve"] == "DualGA":
        return "dualga gamma=gamma*(Delta), over Delta"
    return " ".join([point["algo"], *point["curve"].split()[1:]])


def _kl_ticks(ax):
    """Plain tick labels on a log KL axis; at 1, 2 and 5 per decade where it spans less than two decades (where the
    default labels of minor ticks run into each other)."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    lo, hi = ax.get_xlim()
    ax.xaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0) if hi / lo < 100 else (1.0,)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())


def draw(result: dict):
    """The figure from its JSON summary (``fig_matched.json``): TPR at 1e-4 and 1e-6 and -median log10 p against KL, one
    column per LM (one LM: one row), each curve in its algorithm's registry colour and marker (an algorithm's curves told apart by line
    style), its 95 % band shaded, one legend below the panels (:mod:`paper_figs.style`); what ``main`` saves and
    ``python -m paper_figs.redraw`` redraws."""
    from paper_figs import style

    plt = agg()
    style.apply()
    series = style.Series()
    lms = list(result["per_lm"])
    names = list(dict.fromkeys(p["curve"] for res in result["per_lm"].values() for p in res["points"]))
    if len(lms) == 1:  # one LM: its panels side by side
        fig, row = plt.subplots(1, len(PANELS), figsize=(5.2 * len(PANELS), 5.4), squeeze=False)
        axes = row.T
    else:
        fig, axes = plt.subplots(len(PANELS), len(lms), figsize=(5.6 * len(lms), 4.0 * len(PANELS)), squeeze=False)
    for j, lm in enumerate(lms):
        pts = result["per_lm"][lm]["points"]
        for i, (m, what) in enumerate(PANELS):
            ax = axes[i, j]
            for name in names:
                ps = sorted((p for p in pts if p["curve"] == name), key=lambda p: p["kl"])
                if not ps:
                    continue
                lab = _series_label(ps[0])
                kw = series(lab)
                if ps[0]["algo"] == "dualga" and name != "DualGA":  # DualGA at a fixed gamma: thin, under its gamma*(Delta) curve
                    kw.update(lw=1.0, zorder=2)
                x = [p["kl"] for p in ps]
                ax.plot(x, [p[m] for p in ps], label=lab, **dict(kw, ms=3.5, ls=kw["ls"] if len(ps) > 1 else "none"))
                ax.fill_between(x, [p[f"{m}_ci95"][0] for p in ps], [p[f"{m}_ci95"][1] for p in ps], color=kw["color"], alpha=0.1,
                                lw=0, label="_" + lab)
            ax.set(xscale="log", xlabel="KL divergence from the LM per token (nats)", ylabel=what,
                   title=display(lm) if len(lms) > 1 else what)
            _kl_ticks(ax)
            if m == "strength":
                ax.set_yscale("log")
    style.legend_below(fig, ncol=5)
    style.title(fig, "Matched distortion: detection against KL per token, each curve with its 95 % band",
                lm=", ".join(display(lm) for lm in lms), n=result["n"], T=result["T"])
    return fig


def main(out_dir: pathlib.Path, quick: bool, lms=None, only=None) -> list[pathlib.Path]:
    """Run the matched-distortion grids and compare the detectors at the same KL and the KL at the same TPR.

    Quick: news only, 33 configurations (SynthID m = 1, 2, 4 in both modes, two of each newer boosting algorithm and the
    keyed-sampling ones' single points among them), 16 texts x 50 tokens, 50 bootstrap replicates, 3 levels; else the grids'
    (:data:`GRIDS`) 162 + 99 + 24 + 66 + 9 configurations x 300 texts x 200 tokens on news, lfqa and smollm2-fit, 400
    replicates, 5 levels.  A real LM (``--lm smollm2``) keeps the 15 configurations of :func:`_real_keep` at ``--real-n`` x
    ``--real-T``.  ``only``: the algorithms kept (e.g. ``("dualga", "synthid")``: the full-size
    DualGA-SynthID comparison without the 150 other configurations; ``python -m paper_figs.fig_matched --only dualga synthid``).

    Parameters
    ----------
    out_dir : pathlib.Path
        The folder the files are written to.
    quick : bool
        Small sizes (see above) instead of the paper's.
    lms : sequence of str, optional
        LMs of ``python -m paper_figs --lm``: the LMs run (default ``news`` quick, else ``news``, ``lfqa`` and
        ``smollm2-fit``).
    only : sequence of str, optional
        The algorithms whose comparisons are run (default all).

    Returns
    -------
    list of pathlib.Path
        The files written: fig_matched.png, fig_matched.json and fig_matched.md (:func:`paper_figs._out.write`).
    """
    from paper_figs._data import is_synthetic
    from paper_figs._sweep import run_grid, sweep_grid, text_values
    from sims.sweep.grid import Config

    lms = tuple(lms or (("news",) if quick else LMS))
    real = not all(is_synthetic(lm) for lm in lms)
    keep = _quick_keep if quick else _real_keep if real else None
    if only is not None:
        keep = (lambda c, k0=keep: c.algo in only and (k0 is None or k0(c)))
    size = dict(n=16, T=50, chunk=16) if quick else dict(chunk=REAL_CHUNK) if real else {}
    grids = [(name, sweep_grid(name, lms=lms, algos=keep, **size)) for name in GRIDS]
    grids = [(name, g) for name, g in grids if g.configs]
    grid = grids[0][1]
    B, k = (50, 3) if quick else (400, 5)
    rounds = 1 if quick else 0 if real else ROUNDS
    cols = {c: {} for c in ("kl", "dg", "log10_p")}

    def run(name, g):
        _, folder = run_grid(g, out_dir, name, quick)
        for c in cols:
            cols[c].update(text_values(folder, c))

    for name, g in grids:
        run(name, g)
    cfgs = {lm: {c.id: (c.algo, dict(c.params)) for _, g in grids for c in g.configs if c.lm == lm} for lm in lms}
    per_text = lambda lm: {cid: {m: cols[m][cid] for m in cols} for cid in cfgs[lm]}  # noqa: E731
    pending = {lm: [] for lm in lms}
    settled: dict = {lm: {} for lm in lms}
    checks: dict = {lm: [] for lm in lms}
    for rnd in range(rounds + 1):  # the last pass only checks the last round's runs
        new = []
        for lm in lms:
            done, props = refine_round(per_text(lm), cfgs[lm], pending[lm], settled[lm], B=B // 2, k=k)
            checks[lm] += [dict(c, round=rnd) for c in done]
            pending[lm] = []
            if rnd == rounds:
                continue
            for prop in props:
                algo = next(a for a, prm in cfgs[lm].values() if curve_name(a, prm) == prop["curve"])
                c = Config(lm, algo, tuple(sorted(prop["params"].items())))
                if c.id not in cfgs[lm]:
                    new.append(c)
                    pending[lm].append(dict(prop, id=c.id))
        print(f"fig_matched refinement round {rnd + 1}: {sum(len(v) for v in checks.values())} checks so far, {len(new)} new runs", flush=True)
        if not new:
            break
        g = dataclasses.replace(grid, configs=tuple(new), path=f"refinement round {rnd + 1}")
        run(f"matched_refine{rnd + 1}", g)
        for c in new:
            cfgs[c.lm][c.id] = (c.algo, dict(c.params))
    result = dict(lms=list(lms), n=grid.n, T=grid.T, grid=" + ".join(f"examples/sweep_{name}.toml" for name, _ in grids), bootstrap=B, levels=k,
                  alpha=ALPHA, trim=mt.TRIM, tpr_range=list(mt.TPR_RANGE), dedup_rules={a: r for _, g in grids for a, r in g.dedup_rules().items()},
                  refinement=dict(rounds=rounds, confidence=rf.CONFIDENCE, near=rf.NEAR), per_lm={})
    rows = []
    for lm in lms:
        res = analyse(per_text(lm), cfgs[lm], B=B, k=k, checks=checks[lm])
        res["refinement"] = dict(rf.summary(checks[lm]), checks=checks[lm])
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
    return write(out_dir, "fig_matched", result, table, TITLE, draw(result))


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
