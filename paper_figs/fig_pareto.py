"""Figures LFQA_Pareto and scatter_4 on two LMs side by side: realised DG vs KL per configuration
(population level) with the offline Pareto frontier of each LM, and per text (2 x 2: two prompt
sets x two LMs).

The frontier of an LM is the hindsight optimum OPT(Delta) (:func:`theory.offline_opt`) of the
green masses G_t met by its unwatermarked texts at gamma = gamma*(Delta): the least mean KL of
any per-step boost sequence reaching mean DG = Delta on those steps.  A configuration's
*frontier gap* is its KL over the frontier's KL at its realised DG, relative
(``kl / OPT(dg) - 1``, frontier interpolated in DG).  The paper's point: a tuned SRL
configuration near the frontier for one LM falls off it for another, while DualGA stays on it.
KL and DG are the exact per-step values recorded by :func:`sims.generate`.
"""

from __future__ import annotations

import pathlib

import numpy as np

from paper_figs import save
from paper_figs._data import generations, label, sized
from paper_figs._out import _plain, agg, md_table, write

TITLE = "Realised DG vs KL on two LMs: DualGA on each LM's Pareto frontier, SRL off it unless tuned for that LM"
SRL = [dict(gamma=g, delta=d) for g in (0.25, 0.5, 0.7) for d in (1.0, 2.0, 5.0)]
DUALGA = [dict(Delta=D) for D in (0.1, 0.2, 0.3, 0.4, 0.5)]
# SynthID-Text (issue 32), both modes (2 candidates per match: non-distortionary; 4: distortionary) over m layers.
# Its "DG" is the tournament's own drift, the increase of the expected mean g-value (sims.watermarks.tournament),
# the analogue of the green-mass gain: its points sit beside the red-green frontier, not on the same scale of DG.
SYNTHID = [dict(m=m, candidates=K) for K in (2, 4) for m in (1, 2, 4, 8, 16, 30)]
# SRL gamma 0.25 delta 2 under each seeding scheme of sims.core.seeding over h = 4 tokens (issue 32): the scheme decides which
# tokens are green, not how many, so its (KL, DG) point should sit on SRL's own (scheme-free) point: the check that it costs nothing.
SEEDED = [dict(gamma=0.25, delta=2.0, h=4, seeding=s) for s in ("lefthash", "selfhash", "minhash", "skipgram")]
# Unigram (issue 45, Zhao et al.: one fixed green list, h = 0) at the paper's gamma 0.5 over delta, and DiPmark (Wu et al.:
# distribution-preserving alpha-reweight) over alpha; DiPmark's DG is the green-mass gain of its detector's list (the tail
# of its permutation, gamma 0.5).  Both at gamma 0.5, not gamma*(Delta): their distance to the frontier is indicative only.
UNIGRAM = [dict(delta=d) for d in (1.0, 2.0, 5.0)]
DIPMARK = [dict(dip_alpha=a) for a in (0.1, 0.2, 0.3, 0.4, 0.45, 0.5)]
# MorphMark (Wang et al. 2025: a boost adapting to the green mass, the closest published relative of DualGA) over kappa, and
# SWEET (Lee et al. 2023: SRL's boost only where the entropy of p_t exceeds alpha) over delta, each at its generator's defaults.
MORPHMARK = [dict(morph_kappa=k) for k in (0.4, 0.7, 1.0, 1.3)]
SWEET = [dict(delta=d) for d in (1.0, 2.0, 5.0)]
FRONT = np.linspace(0.05, 0.6, 12)
ON_FRONTIER = 0.05  # a configuration is "on the frontier" when its KL is within 5 % of OPT at its DG


def frontier_gap(kl: float, dg: float, front_dg, front_kl) -> float:
    """Relative KL excess over the frontier at the configuration's realised DG (linear interpolation).

    Parameters
    ----------
    kl, dg : float
        The configuration's KL per token and realised DG.
    front_dg, front_kl : array_like
        The hindsight frontier, DG increasing.

    Returns
    -------
    float
        ``kl / KL_frontier(dg) - 1``.
    """
    return float(kl / np.interp(dg, front_dg, front_kl) - 1.0)


def main(out_dir: pathlib.Path, quick: bool, lms=None) -> list[pathlib.Path]:
    """Compute both figures' data, then draw them (:func:`draw`, :func:`draw_scatter4`).

    They are drawn from the JSON summaries they are saved as (``fig_pareto.json``, ``fig_scatter4.json``):
    ``python -m paper_figs.redraw`` redraws them without running.

    Parameters
    ----------
    out_dir : pathlib.Path
        The folder the files are written to.
    quick : bool
        Small sizes: 12 texts of 100 tokens at V = 2000, instead of 200 of 200 at the LMs' V.
    lms : sequence of str, optional
        LMs of ``python -m paper_figs --lm``: its first two are used (default ``news`` and ``lfqa``).

    Returns
    -------
    list of pathlib.Path
        The files written: fig_pareto.png / .json / .md (:func:`paper_figs._out.write`) and fig_scatter4.png / .json
        (:func:`paper_figs.save`).
    """
    import theory

    lms = tuple(lms or ("news", "lfqa"))[:2]
    n, T, V = (12, 100, 2000) if quick else (200, 200, None)
    n, T = min(sized(lm, n, T) for lm in lms)
    summary = dict(n=n, T=T, vocab_size=V, lms=list(lms), on_frontier_tolerance=ON_FRONTIER, per_lm={})
    scatter = dict(n=n, T=T, vocab_size=V, lms=list(lms), prompt_seeds=list(PROMPT_SEEDS), per_lm={})
    rows = []
    for lm in lms:
        front_kl = []
        for D in FRONT:
            G = generations(lm, "none", n, T, 7, vocab_size=V, gamma=float(theory.gamma_star(D))).G.ravel()
            front_kl.append(theory.offline_opt(G, float(D)).value)
        confs, texts = [], {}
        for algo, grid in (("srl", SRL), ("dualga", DUALGA), ("synthid", SYNTHID), ("seeded", SEEDED), ("unigram", UNIGRAM),
                           ("dipmark", DIPMARK), ("morphmark", MORPHMARK), ("sweet", SWEET)):
            for params in grid:
                g = generations(lm, "srl" if algo == "seeded" else algo, n, T, 0, vocab_size=V, **params)
                kl, dg = float(g.kl.mean()), float(g.dg.mean())
                gap = frontier_gap(kl, dg, FRONT, front_kl)
                name = f"srl {params['seeding']} h=4, gamma=0.25, delta=2" if algo == "seeded" else label(algo, params)
                confs.append(dict(algo=algo, params=params, kl=kl, dg=dg, frontier_gap=gap, on_frontier=gap <= ON_FRONTIER))
                rows.append([lm, name, kl, dg, gap, "yes" if gap <= ON_FRONTIER else "no"])
                if algo == "dualga" or (algo == "srl" and params == dict(gamma=0.25, delta=2.0)):  # scatter_4: two prompt sets
                    for prompt_seed in PROMPT_SEEDS:
                        gp = g if prompt_seed == 0 else generations(lm, algo, n, T, prompt_seed, vocab_size=V, **params)
                        texts.setdefault(str(prompt_seed), []).append(dict(algo=algo, params=params, kl=gp.kl.mean(axis=1),
                                                                           dg=gp.dg.mean(axis=1)))
        summary["per_lm"][lm] = dict(frontier=dict(Delta=FRONT, kl=front_kl), configs=confs)
        scatter["per_lm"][lm] = texts
    # the paper's point, computed: SRL configurations on the frontier of one LM but not the other
    if len(lms) == 2:
        a, b = (summary["per_lm"][lm]["configs"] for lm in lms)
        srl_flip = [label(x["algo"], x["params"]) for x, y in zip(a, b) if x["algo"] == "srl" and x["on_frontier"] != y["on_frontier"]]
        summary["srl_on_one_frontier_only"] = srl_flip
    summary["dualga_max_frontier_gap"] = max(c["frontier_gap"] for v in summary["per_lm"].values() for c in v["configs"] if c["algo"] == "dualga")
    summary["srl_min_frontier_gap"] = min(c["frontier_gap"] for v in summary["per_lm"].values() for c in v["configs"] if c["algo"] == "srl")
    summary, scatter = _plain(summary), _plain(scatter)  # what the JSON holds, and what a redraw reads
    table = md_table(["LM", "configuration", "KL/token", "realised DG", "frontier gap", f"on frontier (<= {ON_FRONTIER:.0%})"], rows)
    files = write(out_dir, "fig_pareto", summary, table, TITLE, draw(summary))
    return files + save(draw_scatter4(scatter), out_dir, "fig_scatter4", scatter)


DRAWS = {"fig_scatter4": "draw_scatter4"}
"""The other figure this script draws, by the name of its JSON and PNG, and its drawing function (:mod:`paper_figs.redraw`)."""

PROMPT_SEEDS = (0, 11)
"""Sampling seeds of fig_scatter4's two prompt sets: two independent draws of the n prompts (and of the texts after them)."""

SEEDING_LETTERS = {"lefthash": "L", "selfhash": "S", "minhash": "M", "skipgram": "K"}
"""Marker letter of each seeding scheme of SRL (gamma 0.25, delta 2, h = 4): drawn on SRL's own point, told apart in a zoom."""

KL_LABEL = "KL divergence from the LM per token (nats)"
DG_LABEL = "realised DG: green-probability gain per token"


def _lm_names(lms) -> str:
    from paper_figs._data import display

    return " and ".join(display(lm) for lm in lms)


def _variants(algo: str, confs, key: str):
    """The configurations of ``algo`` grouped by their value of ``key`` (the other parameter varies along a line)."""
    out = {}
    for c in confs:
        if c["algo"] == algo:
            out.setdefault(c["params"].get(key), []).append(c)
    return out


def draw(summary: dict):
    """fig_pareto from its JSON summary (``fig_pareto.json``).

    Per LM, realised DG vs KL of every configuration over the LM's hindsight frontier, in the package's style
    (:mod:`paper_figs.style`).

    Parameters
    ----------
    summary : dict
        The JSON summary.

    Returns
    -------
    matplotlib.figure.Figure
    """
    from paper_figs import style
    from paper_figs._data import display

    plt = agg()
    style.apply()
    lms = summary["lms"]
    series = style.Series()
    fig, axes = plt.subplots(1, len(lms), figsize=(6.5 * len(lms), 6.4), squeeze=False)
    for ax, lm in zip(axes[0], lms):
        v = summary["per_lm"][lm]
        confs = v["configs"]
        ax.plot(v["frontier"]["kl"], v["frontier"]["Delta"], color=style.REFERENCE_COLOR, ls=":", lw=1.4, zorder=1,
                label="Pareto frontier: hindsight optimum OPT(Delta) at gamma*(Delta)")
        for gamma, cs in _variants("srl", confs, "gamma").items():
            lab = f"srl gamma={gamma:g}, delta " + ", ".join(f"{c['params']['delta']:g}" for c in cs)
            ax.plot([c["kl"] for c in cs], [c["dg"] for c in cs], label=lab, **series(lab))
        cs = [c for c in confs if c["algo"] == "dualga"]
        if cs:
            lab = "dualga Delta " + ", ".join(f"{c['params']['Delta']:g}" for c in cs)
            ax.plot([c["kl"] for c in cs], [c["dg"] for c in cs], label=lab, **series(lab))
        for K, cs in _variants("synthid", confs, "candidates").items():
            mode = "non-distortionary" if K == 2 else "distortionary"
            lab = f"synthid {mode} ({K} candidates), m {cs[0]['params']['m']}..{cs[-1]['params']['m']} layers (DG: mean-g drift)"
            ax.plot([c["kl"] for c in cs], [c["dg"] for c in cs], label=lab, **series(lab))
        for algo, key, what in (("unigram", "delta", "gamma=0.5, delta"), ("dipmark", "dip_alpha", "gamma=0.5, alpha"),
                                ("morphmark", "morph_kappa", "gamma=0.5, p0=0.15, kappa"), ("sweet", "delta", "gamma=0.25, alpha=2, delta")):
            cs = [c for c in confs if c["algo"] == algo]
            if cs:
                lab = f"{algo} {what} " + ", ".join(f"{c['params'][key]:g}" for c in cs)
                ax.plot([c["kl"] for c in cs], [c["dg"] for c in cs], label=lab, **series(lab))
        seeded = [c for c in confs if c["algo"] == "seeded"]
        if seeded:
            _seeding_zoom(ax, confs, seeded, series)
        ax.set(title=display(lm), xlabel=KL_LABEL, ylabel=DG_LABEL)
        ax.set_xlim(left=0)
    style.legend_below(fig, ncol=2)
    style.title(fig, "Realised DG vs KL per configuration, over each LM's Pareto frontier", lm=_lm_names(lms), n=summary["n"],
                T=summary["T"])
    return fig


def _seeding_zoom(ax, confs, seeded, series):
    """SRL (gamma 0.25, delta 2) under each seeding scheme: a letter per scheme, in a zoom on SRL's own point (they sit
    within about 0.001 of it: the scheme decides which tokens are green, not how many)."""
    from matplotlib.ticker import MaxNLocator

    from paper_figs import style

    ref = next((c for c in confs if c["algo"] == "srl" and c["params"] == dict(gamma=0.25, delta=2.0)), None)
    pts = [(c["kl"], c["dg"]) for c in seeded] + ([(ref["kl"], ref["dg"])] if ref else [])
    xs, ys = zip(*pts)
    pad = lambda lo, hi: max(hi - lo, 1e-4) * 0.35  # noqa: E731
    x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)
    ins = ax.inset_axes([0.57, 0.55, 0.40, 0.33])  # top right: empty in every committed run
    kw = series("srl gamma=0.25, delta 1, 2, 5")
    for c in seeded:
        s = c["params"]["seeding"]
        lab = f"srl gamma=0.25, delta=2 with {s} seeding over h=4 tokens (zoom, letter {SEEDING_LETTERS.get(s, s[0].upper())})"
        mk = f"${SEEDING_LETTERS.get(s, s[0].upper())}$"
        ins.plot(c["kl"], c["dg"], ls="", marker=mk, ms=10, color=kw["color"], label=lab)
        ax.plot(c["kl"], c["dg"], ls="", marker=mk, ms=7, color=kw["color"], label="_" + lab)
    if ref:
        ins.plot(ref["kl"], ref["dg"], ls="", marker=kw["marker"], ms=8, mfc="white", color=kw["color"],
                 label="srl gamma=0.25, delta=2: scheme-free seeding (zoom, hollow)")
    ins.set_xlim(x0 - pad(x0, x1), x1 + pad(x0, x1))
    ins.set_ylim(y0 - pad(y0, y1), y1 + pad(y0, y1))
    ins.tick_params(labelsize=7)
    ins.xaxis.set_major_locator(MaxNLocator(3))
    ins.yaxis.set_major_locator(MaxNLocator(3))
    ins.set_title("zoom: SRL seeding schemes", fontsize=8)
    ins.grid(True, alpha=0.3)
    ax.indicate_inset_zoom(ins, edgecolor=style.REFERENCE_COLOR)
    # the inset's entries join the figure legend through the parent axes' handles
    for h in ins.get_lines():
        if not h.get_label().startswith("_"):
            ax.plot([], [], ls="", marker=h.get_marker(), ms=8, color=h.get_color(), mfc=h.get_markerfacecolor(), label=h.get_label())


def draw_scatter4(summary: dict):
    """fig_scatter4 from its JSON summary (``fig_scatter4.json``).

    Each text's KL and DG, for two independent prompt sets (rows) on two LMs (columns), SRL gamma 0.25 delta 2 and
    DualGA over Delta.

    Parameters
    ----------
    summary : dict
        The JSON summary.

    Returns
    -------
    matplotlib.figure.Figure
    """
    from paper_figs import style
    from paper_figs._data import display

    plt = agg()
    style.apply()
    lms, seeds = summary["lms"], summary["prompt_seeds"]
    series = style.Series()
    fig, axes = plt.subplots(len(seeds), len(lms), figsize=(6.2 * len(lms), 4.4 * len(seeds)), squeeze=False)
    for j, lm in enumerate(lms):
        for i, seed in enumerate(seeds):
            ax = axes[i, j]
            cs = summary["per_lm"][lm][str(seed)]
            groups = {}  # DualGA's targets in one series (its Deltas sit apart along DG), SRL's configuration in another
            for c in cs:
                groups.setdefault(c["algo"] if c["algo"] == "dualga" else label(c["algo"], c["params"]), []).append(c)
            for key, g in groups.items():
                lab = "dualga Delta " + ", ".join(f"{c['params']['Delta']:g}" for c in g) if key == "dualga" else key
                kw = series(lab)
                ax.scatter(np.concatenate([c["kl"] for c in g]), np.concatenate([c["dg"] for c in g]), s=10, alpha=0.55,
                           color=kw["color"], marker=kw["marker"], linewidths=0.6, label=lab)
            ax.set(title=f"{display(lm)}: prompt set {i + 1} (sampling seed {seed})", xlabel="KL divergence from the LM of a text, per token (nats)",
                   ylabel="realised DG of a text, per token")
    leg = style.legend_below(fig, ncol=4)
    for h in leg.legend_handles:
        h.set_alpha(1)
        h.set_sizes([30])
    style.title(fig, f"Per-text KL and DG: one point per text; prompt sets 1 and 2 are two independent draws of the {summary['n']} prompts",
                lm=_lm_names(lms), n=summary["n"], T=summary["T"])
    return fig
