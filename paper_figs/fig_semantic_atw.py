"""ATW as the paper ran it (App. algs_implement): the green list seeded by *semantic hashing* of the context, against
window hashing, on the trade-off and under attacks.

The paper ran Liu et al.'s adaptive text watermark (ATW) with its semantic hashing: the green list follows an
embedding of the context, so that rewording the context keeps it.  Here that is the ``semantic`` seeding
scheme (:mod:`sims.core.seeding`): the window's embedding is the sum of its tokens' cluster centroids, and a
keyed SimHash of it (16 random hyperplanes) seeds the green list.  The synthetic LMs have no embedding model, so
the clusters stand in for one: tokens of one cluster are synonyms (the ``synonym`` attack swaps a token for
another of its cluster).  Everything else is ATW as elsewhere (boost delta where the entropy of p_t exceeds
alpha = 2), with exact KL and DG from the generator and the exact binomial test with (seed, token) dedup.

* Trade-off: ATW over delta under three seedings (window hashing with h = 1, the package's ATW elsewhere; window
  hashing with h = 4; semantic hashing of a window of 4) beside DualGA over Delta, all on the same prompts
  (paired), and DualGA compared with each ATW curve at the same KL (:func:`paper_figs._matched.compare`: TPR at
  1e-4 and 1e-6 and median log10 p, paired bootstrap, simultaneous 95 % over the levels, a TPR's resolution one
  text in n as in fig_matched; the curves are the grids below, not refined).
* Robustness: ATW delta = 2 under each seeding, the median log10 p after synonym substitution, random
  substitution and a paraphrase (spans of 4 tokens resampled from the LM) at rates 0 to 0.5.
"""

from __future__ import annotations

import pathlib

import numpy as np

from paper_figs import _matched as mt
from paper_figs._data import KEY, display, figure_lm
from paper_figs._out import agg, md_table, write

TITLE = "ATW with semantic hashing (as the paper ran it) vs window hashing: trade-off and robustness"
LM = "news"
SCHEMES = {"window h=1": dict(seeding="lefthash", h=1), "window h=4": dict(seeding="lefthash", h=4), "semantic h=4": dict(seeding="semantic", h=4)}
ATW_DELTAS = (0.5, 1.0, 2.0, 3.0, 5.0)
DUALGA_DELTAS = (0.05, 0.1, 0.2, 0.3, 0.4, 0.5)
ROBUST_DELTA = 2.0
ATTACKS = ("synonym", "substitution", "paraphrase")
RATES = (0.0, 0.1, 0.2, 0.3, 0.5)
ALPHA = 0.05


def _texts(g, lm):
    """Per-text KL, DG and exact log10 p of a generation scored with its own seeding."""
    import sims

    return dict(kl=g.kl.mean(axis=1), dg=g.dg.mean(axis=1), log10_p=sims.score(g, lm, key=g.meta["key"]).log10_p)


def main(out_dir: pathlib.Path, quick: bool, lms=None) -> list[pathlib.Path]:
    """Run ATW with semantic and with window hashing on one LM and write the figure.

    Parameters
    ----------
    out_dir : pathlib.Path
        The folder the files are written to.
    quick : bool
        Small sizes: 24 texts of 80 tokens at V = 2000, 50 bootstrap replicates and 3 levels, instead of 300 of 200,
        400 and 5.
    lms : sequence of str, optional
        LMs of ``python -m paper_figs --lm``: its first is used (default :data:`LM`).

    Returns
    -------
    list of pathlib.Path
        The files written: fig_semantic_atw.png, fig_semantic_atw.json and fig_semantic_atw.md
        (:func:`paper_figs._out.write`).
    """
    import sims

    lm_name = (lms or (LM,))[0]
    n, T, V = (24, 80, 2000) if quick else (300, 200, None)
    B, k = (50, 3) if quick else (400, 5)
    lm = figure_lm(lm_name, V)  # opened once: every generation and every attack below reads it
    gen = lambda algo, **p: sims.generate(lm, algo, n=n, T=T, seed=0, key=KEY, **p)  # noqa: E731  (seed 0 for all: paired texts)
    per_text = {("DualGA", D): _texts(gen("dualga", Delta=D), lm) for D in DUALGA_DELTAS}
    for name, kw in SCHEMES.items():
        for d in ATW_DELTAS:
            per_text[(f"ATW {name}", d)] = _texts(gen("atw", delta=d, alpha=2.0, **kw), lm)
    w = mt.bootstrap_weights(n, B, 0)
    stats = {c: mt.point_stats(v["kl"], v["dg"], v["log10_p"], w) for c, v in per_text.items()}
    curves = {}
    for (curve, _), st in stats.items():
        curves.setdefault(curve, []).append(st)
    curves = {c: [sorted(v, key=lambda st: st["kl"][0])] for c, v in curves.items()}
    comparisons = [dict(b=c, **mt.compare(curves["DualGA"], curves[c], m, k, ALPHA, margin=1.0 / n if m.startswith("tpr") else 0.0))
                   for c in curves if c != "DualGA" for m in ("tpr_1e-4", "tpr_1e-6", "strength")]
    points = [dict(curve=c, param=p, kl=float(st["kl"][0]), dg=float(st["dg"][0]), tpr_1e6=float(st["tpr_1e-6"][0]), strength=float(st["strength"][0]))
              for (c, p), st in stats.items()]
    robust = {}
    for name, kw in SCHEMES.items():
        g = gen("atw", delta=ROBUST_DELTA, alpha=2.0, **kw)
        for kind in ATTACKS:
            robust.setdefault(name, {})[kind] = [
                float(np.median(sims.score(g if r == 0 else sims.attack(g, kind, r, seed=1, lm=lm), lm, key=g.meta["key"]).log10_p)) for r in RATES]
    summary = dict(lm=lm_name, n=n, T=T, bootstrap=B, levels=k, alpha=ALPHA, schemes={k_: v for k_, v in SCHEMES.items()}, points=points,
                   comparisons=comparisons, robust_delta=ROBUST_DELTA, rates=list(RATES), robustness=robust)
    rows = [[c["b"], c["metric"], ", ".join(f"{x:.3g}" for x in c["levels"]),
             "; ".join(f"{d:+.3g} [{lo:+.3g}, {hi:+.3g}]" for d, lo, hi in zip(c["diff"], c["lo"], c["hi"])), c["verdict"]] for c in comparisons]
    rob = [[name, kind, *[f"{x:.3g}" for x in v]] for name, kinds in robust.items() for kind, v in kinds.items()]
    table = (f"{n} texts x {T} tokens on {display(lm_name)}; DualGA minus ATW at common KL, paired bootstrap ({B} replicates), "
             f"{k} levels, simultaneous {1 - ALPHA:.0%}.\n\n"
             + md_table(["DualGA vs", "metric", "KL levels", "diff per level [interval]", "verdict"], rows)
             + f"\n\nMedian log10 p of ATW delta = {ROBUST_DELTA:g} under attack:\n\n"
             + md_table(["seeding", "attack", *[f"rate {r:g}" for r in RATES]], rob)
             + "\n\n" + md_table(["curve", "parameter", "KL", "DG", "TPR 1e-6", "-median log10 p"],
                                 [[p["curve"], p["param"], p["kl"], p["dg"], p["tpr_1e6"], p["strength"]] for p in points]))
    return write(out_dir, "fig_semantic_atw", summary, table, TITLE, draw(summary))


def _series_label(curve: str) -> str:
    """A curve's legend entry, its algorithm first (``"ATW window h=1"`` -> ``"atw window hashing, h=1"``)."""
    if curve == "DualGA":
        return "dualga over Delta"
    kind, h = curve.split()[1:]
    return f"atw {kind} hashing, {h}"


def draw(summary: dict):
    """The figure from its JSON summary (``fig_semantic_atw.json``): TPR at 1e-6 against KL of DualGA and of ATW under
    each seeding, and ATW's median log10 p under each attack, in the package's style (:mod:`paper_figs.style`); what
    ``main`` saves and ``python -m paper_figs.redraw`` redraws."""
    from paper_figs import style

    plt = agg()
    style.apply()
    series = style.Series()
    kinds = list(next(iter(summary["robustness"].values())))
    fig, axes = plt.subplots(1, 1 + len(kinds), figsize=(4.6 * (1 + len(kinds)), 5.2))
    curves = list(dict.fromkeys(p["curve"] for p in summary["points"]))
    for c in curves:
        pts = sorted((p for p in summary["points"] if p["curve"] == c), key=lambda p: p["kl"])
        lab = _series_label(c)
        axes[0].plot([p["kl"] for p in pts], [p["tpr_1e6"] for p in pts], label=lab, **series(lab))
    params = lambda c: ", ".join(f"{p['param']:g}" for p in summary["points"] if p["curve"] == c)  # noqa: E731
    axes[0].set(xscale="log", xlabel="KL divergence from the LM per token (nats)", ylabel="TPR at FPR 1e-6",
                title=f"trade-off: ATW delta {params(curves[-1])};\nDualGA Delta {params('DualGA')}")
    rates = summary["rates"]
    for ax, kind in zip(axes[1:], kinds):
        for scheme, v in summary["robustness"].items():
            lab = _series_label(f"ATW {scheme}")
            ax.plot(rates, v[kind], label=lab, **series(lab))
        style.reference(ax, -4, "detection level: p = 1e-4")
        ax.set(xlabel="attack rate (share of tokens attacked)", ylabel="median log10 p-value of the detector",
               title=f"ATW delta = {summary['robust_delta']:g} under {kind} attack")
    style.legend_below(fig, ncol=3)
    style.title(fig, "ATW with semantic hashing (as the paper ran it) vs window hashing", lm=summary["lm"], n=summary["n"],
                T=summary["T"])
    return fig
