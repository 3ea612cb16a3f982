"""Detection power of every score family side by side (issue 31): TPR at 1e-4 and 1e-6 and the
median tokens to detect, against today's default score, unattacked, under 10 / 30 % random
substitution and under the entropy attack (10 % of the tokens, the highest-entropy ones, replaced
by their most probable red token), on the synthetic presets, the fitted ``smollm2-fit`` and real
SmolLM2 texts (``smollm2``).

Scores: every detector family the algorithm registry lists for the algorithm
(:func:`sims.detect.families.score_families.score_names`, registered by :mod:`sims.detect.families.score_families`;
:data:`ELSEWHERE` names those left out and why):
SRL (delta 2) and DualGA (Delta 0.2) with the green count (default), the local score
``green-local``, the likelihood-ratio score ``lr`` and EWD's entropy-weighted green count ``ewd``; EMS with ``ems-ars``
(default), ``ems-log``, ``ems-opt`` (Delta = 0.1), ``ems-hc`` and ``ems-trgof``.  Every test is exact at its level: p-values of the sum scores and of ``lr``
per text, and for HC / Tr-GoF / ``ems-opt`` the exact critical value of each length (bisection on
the exact tail).  Texts: ``N_FULL`` of ``T_FULL`` tokens on a synthetic preset, capped for a real LM by
:func:`paper_figs._data.sized` (32 x 100, EMS 32 x 50; quick: 12 of 60).  Tokens to detect: on
``PREFIXES`` prefix lengths, the shortest prefix from which every longer one has p <= 1e-4
(infinite if the whole text does not; the median is over all texts, nan when fewer than half
get there), with the distribution-free 95 % interval of the median (order statistics).

Running the script for some LMs (``--lm``) replaces their rows of an existing ``fig_scores.json``
in the output folder and keeps the other LMs' rows (a real LM's run is long); a kept LM's rows that lack a score
registered since its run are listed in the table's notes (``missing``), not left as a silent hole.  :func:`render`
rewrites the table and figure from a saved ``fig_scores.json`` without drawing texts.
"""

from __future__ import annotations

import functools
import math
import pathlib

import numpy as np

from paper_figs._out import md_table, write
from sims.core import defaults

TITLE = "power of each detection score vs the default: TPR at 1e-4 / 1e-6 and median tokens to detect"
KEY = defaults.KEY
LEVELS = (1e-4, 1e-6)
ATTACKS = (("none", 0.0), ("substitution", 0.1), ("substitution", 0.3), ("entropy", 0.1))
PREFIXES = 10  # tokens to detect is read on prefixes of T / PREFIXES, 2 T / PREFIXES, ..., T tokens
ALGOS = {"srl": dict(delta=2.0), "dualga": dict(Delta=0.2), "ems": {}}
ELSEWHERE = {"ems-edit": "aligns EMS text past inserted tokens, and this figure's attacks are substitutions (an aligned "
                         "substitution keeps its wrong key); its permutation p-value over 9999 fresh keys is at least 1e-4, "
                         "so the figure's TPR at 1e-6 is 0 by construction; an insertion attack here would add a column "
                         "for every score and LM (a real-LM rerun); its power under insertions: tests/detect/stats/test_ems_edit.py"}
"""Registered scores this figure leaves out, with the reason."""
N_FULL = 150  # texts per setting on a synthetic preset (each row records the n it ran with)
T_FULL = {"srl": 200, "dualga": 200, "ems": 50}  # EMS detects in a few dozen tokens: shorter texts separate its scores


def _label(kind: str, rate: float) -> str:
    return "none" if kind == "none" else f"{kind}:{rate:g}"


def median_ci(x, level: float = 0.95) -> tuple[float, float]:
    """Distribution-free interval of the median of ``x`` (inf allowed).

    Order statistics k and n + 1 - k, k the largest with P(Bin(n, 1/2) <= k - 1) <= (1 - level) / 2 (coverage >=
    ``level``).

    Parameters
    ----------
    x : array_like of float
        The sample.
    level : float, optional
        The coverage.

    Returns
    -------
    lo, hi : float
        The ends; nan where infinite, and both nan when the sample is too small for the level.
    """
    from scipy.stats import binom

    x = np.sort(np.asarray(x, dtype=float))
    n = x.size
    k = int(binom.ppf((1.0 - level) / 2.0, n, 0.5))
    while k > 0 and binom.cdf(k - 1, n, 0.5) > (1.0 - level) / 2.0:
        k -= 1
    if k < 1:
        return math.nan, math.nan
    lo, hi = float(x[k - 1]), float(x[n - k])
    return (lo if math.isfinite(lo) else math.nan), (hi if math.isfinite(hi) else math.nan)


@functools.cache
def _order_critical(kind: str, n: int, level: float) -> float:
    """Exact critical value of HC / Tr-GoF on n p-values: smallest c with tail <= level (bisection on ln c)."""
    from sims.detect.stats import gumbel_scores as gs

    lo, hi = math.log(1e-3), math.log(1e8)
    for _ in range(32):  # c to a relative 25 / 2^32 ~ 6e-9
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if gs.order_stat_logsf(kind, math.exp(mid), n) > math.log(level) else (lo, mid)
    return math.exp(hi)


def _prefix_rejects(name, gen, inputs, lengths, levels, lm=None):
    """level -> (n_texts, len(lengths)) bool: the exact test of ``name`` at that level rejects the
    prefix; ``inputs`` are the red-green texts' :func:`sims.detect.stats.lr_scores.lr_token_inputs`; ``lm``
    the LM of the keyed-order families (``hits``, ``its-edit``) and of EWD's spike entropies (each prefix's exact EWD
    p-value: :func:`sims.detect.stats.ewd_scores.ewd_prefix_log10p`); ``green-local`` reads its prefixes' local scores."""
    from sims.detect.stats import gumbel_scores as gs
    from sims.detect.stats import lr_scores as lr
    from sims.detect.stats.nulls import LN10, binom_logsf, gamma_logsf
    from sims.detect.stats.scores import token_scores

    m = gen.meta
    if name in ("hits", "its-edit"):
        from paper_figs.fig_edit_scores import keyed_prefix_log10p

        lp = keyed_prefix_log10p(name, gen, lm, lengths)
        return {a: lp <= math.log10(a) for a in levels}
    if name == "green-local":
        from sims.detect.stats.local_scores import local_prefix_log10p

        lp = local_prefix_log10p(gen, lengths, key=KEY)
        return {a: lp <= math.log10(a) for a in levels}
    if name == "ewd":
        from sims.detect.stats.ewd_scores import ewd_prefix_log10p

        lp = ewd_prefix_log10p(gen, lm, lengths, key=KEY)
        return {a: lp <= math.log10(a) for a in levels}
    outs = {a: np.zeros((gen.tokens.shape[0], len(lengths)), dtype=bool) for a in levels}
    if name in ("green", "lr"):
        gam = m["gamma"]
        for i in range(gen.tokens.shape[0]):
            X, G, p_y, keep = inputs[i]
            if name == "green":
                keep = np.ones_like(keep)
                k = np.ones(X.size, dtype=np.int64)
            else:
                delta = lr.lr_delta(m)
                k = lr.quantise(lr.lr_weights(G - p_y * X, p_y, delta), delta)
            g_eff = float(np.floor(gam * 2.0**53) / 2.0**53)
            for j, L in enumerate(lengths):
                kk, xx = k[:L][keep[:L]], X[:L][keep[:L]]
                if name == "green":
                    lp = float(binom_logsf(int(xx.sum()), xx.size, g_eff))
                else:
                    lp = lr.weighted_bernoulli_logsf(kk, int(kk[xx].sum()), g_eff)
                for a in levels:
                    outs[a][i, j] = xx.size > 1 and lp <= math.log(a)
        return outs
    v, scored = token_scores(gen.tokens, gen.prompts[:, -m["h"]:], KEY, stat="ems", h=m["h"], vocab_size=m["vocab_size"], lengths=gen.lengths)
    for j, L in enumerate(lengths):
        vv = v[:, :L]
        for a in levels:
            out = outs[a]
            if name == "ems-ars":
                out[:, j] = gamma_logsf(vv.sum(axis=1), L) / LN10 <= math.log10(a)
            elif name == "ems-log":
                out[:, j] = gs.log_gamma_cdf(-gs.log_pivot(vv).sum(axis=1), L) <= math.log(a)
            elif name == "ems-opt":
                _, kmin, pmf = gs.opt_lattice(gs.OPT_DELTA)
                k = gs.opt_cells(gs.log_pivot(vv), gs.OPT_DELTA).sum(axis=1) - L * kmin
                out[:, j] = k >= gs.iid_lattice_critical(L, pmf, a)
            else:
                p = np.sort(np.exp(-vv), axis=1)
                kind = "hc" if name == "ems-hc" else "trgof"
                stat = np.array([(gs.hc_terms(r) if kind == "hc" else gs.trgof_terms(r, gs.TRGOF_S)).max() for r in p])
                out[:, j] = stat >= _order_critical(kind, L, a)
    return outs


def _ttd(rej: np.ndarray, lengths) -> np.ndarray:
    stays = np.flip(np.logical_and.accumulate(np.flip(rej, axis=1), axis=1), axis=1)
    first = np.argmax(stays, axis=1)
    return np.where(stays.any(axis=1), np.asarray(lengths)[first], np.nan)


def scores(algo: str) -> tuple[str, ...]:
    """The scores of ``algo`` this figure compares: the registered ones (registry order) but :data:`ELSEWHERE`.

    Parameters
    ----------
    algo : str
        A registered algorithm.

    Returns
    -------
    tuple of str
        Score names (:func:`sims.detect.families.score_families.score_names`).
    """
    from sims.detect.families import score_families

    return tuple(s for s in score_families.score_names(algo) if s not in ELSEWHERE)


def main(out_dir: pathlib.Path, quick: bool, lms=None, only=None) -> list[pathlib.Path]:
    """Score each algorithm's texts with every detection score of its family and write the figure and table.

    Parameters
    ----------
    out_dir : pathlib.Path
        The folder the files are written to.
    quick : bool
        Small sizes: ``news`` at V = 2000, 12 texts of 60 tokens per algorithm, instead of ``news``, ``lfqa``,
        ``smollm2-fit`` and ``smollm2`` at full size.
    lms : sequence of str, optional
        LMs of ``python -m paper_figs --lm``: the LMs run (default ``news`` quick, else ``news``, ``lfqa``,
        ``smollm2-fit``, ``smollm2``).
    only : sequence of str, optional
        Draw only these scores' rows (of :func:`scores`) on ``lms`` and keep every other row of an existing
        ``fig_scores.json`` (a score that joins the figure without redrawing the others: the same texts, seeds and
        attacks, so its rows are those a full run gives); None: every score.

    Returns
    -------
    list of pathlib.Path
        The files written: fig_scores.png, fig_scores.json and fig_scores.md (:func:`paper_figs._out.write`)
        (:func:`render`).
    """
    import json

    from paper_figs._data import figure_lm, generations, is_synthetic, sized
    from sims.detect.families import score_families
    from sims.detect.stats.lr_scores import lr_token_inputs
    from sims.experiments.attacks import attack
    from sims.experiments.evaluate import clopper_pearson

    names = tuple(lms or (("news",) if quick else ("news", "lfqa", "smollm2-fit", "smollm2")))
    rows = []
    for lm_name in names:
        lm = figure_lm(lm_name, 2000 if quick and is_synthetic(lm_name) and lm_name != "smollm2-fit" else None)
        for algo, params in ALGOS.items():
            score_names = tuple(s for s in scores(algo) if only is None or s in only)
            if not score_names:
                continue
            n, T = sized(lm_name, *((12, 60) if quick else (N_FULL, T_FULL[algo])))
            lengths = [T * (j + 1) // PREFIXES for j in range(PREFIXES)]
            gen0 = generations(lm_name, algo, n, T, 11, key=KEY, vocab_size=2000 if quick and lm_name != "smollm2-fit" else None, **params)
            for kind, rate in ATTACKS:
                gen = attack(gen0, kind, rate, seed=12, lm=lm) if kind != "none" else gen0
                inputs = [lr_token_inputs(gen, lm, KEY, gen.meta["gamma"], i) for i in range(n)] if {"green", "lr"} & set(score_names) else None
                for name in score_names:
                    rej = _prefix_rejects(name, gen, inputs, lengths, LEVELS, lm)
                    ttd = _ttd(rej[1e-4], lengths)
                    ttd = np.where(np.isfinite(ttd), ttd, np.inf)
                    med = float(np.median(ttd))
                    med = med if math.isfinite(med) else math.nan
                    r = dict(lm=lm_name, algo=algo, attack=rate, attack_kind=kind, attack_label=_label(kind, rate), score=name,
                             default=score_families.get_score(name).default, n=n, T=T, tokens_to_detect_median=med, tokens_to_detect_median_ci95=median_ci(ttd))
                    for a in LEVELS:
                        k = int(rej[a][:, -1].sum())
                        r[f"tpr_at_{a:g}"], r[f"tpr_at_{a:g}_ci99"] = k / n, clopper_pearson(k, n, 0.99)
                    rows.append(r)
                    print(f"fig_scores: {lm_name} {algo} {r['attack_label']} {name}: TPR@1e-6 {r['tpr_at_1e-06']:.3f}, ttd {med}", flush=True)
    old = pathlib.Path(out_dir) / "fig_scores.json"  # read last: another LM's run may have written it meanwhile
    rows += [r for r in json.loads(old.read_text()).get("rows", []) if "attack_label" in r
             and (r["lm"] not in names or (only is not None and r["score"] not in only))] if old.exists() else []
    return render(out_dir, rows, quick)


def render(out_dir: pathlib.Path, rows: list[dict], quick: bool) -> list[pathlib.Path]:
    """Write fig_scores' JSON, table and figure from its ``rows``.

    The rows :func:`main` draws, or a saved ``fig_scores.json``'s; the table gives each TPR with its 99 %
    Clopper-Pearson interval.

    Parameters
    ----------
    out_dir : pathlib.Path
        The output folder.
    rows : list of dict
        One per (LM, algorithm, attack, score); sorted in place.
    quick : bool
        Whether they come from a quick run (recorded).

    Returns
    -------
    list of pathlib.Path
        fig_scores.png, fig_scores.json and fig_scores.md.
    """
    order = {lm: i for i, lm in enumerate(("news", "lfqa", "smollm2-fit", "smollm2"))}
    score_rank = {algo: {s: i for i, s in enumerate(scores(algo))} for algo in ALGOS}  # within a setting: the order of scores(algo)
    rows.sort(key=lambda r: (order.get(r["lm"], 9), list(ALGOS).index(r["algo"]), [_label(*a) for a in ATTACKS].index(r["attack_label"]),
                             score_rank[r["algo"]].get(r["score"], -1)))
    table = []
    for r in rows:
        lo, hi = r["tokens_to_detect_median_ci95"]
        tpr = [f"{r[f'tpr_at_{a:g}']:.3g} [{r[f'tpr_at_{a:g}_ci99'][0]:.2f}, {r[f'tpr_at_{a:g}_ci99'][1]:.2f}]" for a in LEVELS]
        table.append([r["lm"], r["algo"], r["attack_label"], f"{r['n']} x {r['T']}", r["score"] + (" (default)" if r["default"] else ""),
                      *tpr, r["tokens_to_detect_median"], f"[{lo:g}, {hi:g}]"])
    best = {}
    for r in rows:
        key = (r["lm"], r["algo"], r["attack_label"])
        rank = (r["tpr_at_1e-06"], r["tpr_at_0.0001"], -(r["tokens_to_detect_median"] if math.isfinite(r["tokens_to_detect_median"]) else 1e9))
        if key not in best or rank > best[key][0]:
            best[key] = (rank, r["score"])
    default_best = [f"{k[0]}/{k[1]}/{k[2]}" for k, (rank, s) in best.items()
                    if any(r["default"] and (r["tpr_at_1e-06"], r["tpr_at_0.0001"]) == rank[:2] for r in rows
                           if (r["lm"], r["algo"], r["attack_label"]) == k)]
    missing = missing_scores(rows)
    summary = dict(rows=rows, best_score={f"{k[0]}/{k[1]}/{k[2]}": v[1] for k, v in best.items()},
                   default_ties_or_wins=default_best, quick=quick, key=KEY, prefixes=PREFIXES, missing=missing)
    header = ["lm", "algo", "attack", "texts x tokens", "score", "TPR@1e-4 [99 % CI]", "TPR@1e-6 [99 % CI]", "median tokens to detect (1e-4)", "95 % interval"]
    notes = "".join(f"\n\nNo `{s}` rows for {k.replace('/', ' ')}: that LM's rows were drawn before the score was added to this figure "
                    f"(rerun with `--lm {k.split('/')[0]}`)." for k, v in missing.items() for s in v)
    return write(out_dir, "fig_scores", summary, md_table(header, table) + notes, TITLE, draw(summary))


def missing_scores(rows: list[dict]) -> dict:
    """The scores this figure compares (:func:`scores`) that an LM's rows lack, per LM and algorithm.

    Parameters
    ----------
    rows : list of dict
        The figure's rows (:func:`main`, or a saved ``fig_scores.json``'s).

    Returns
    -------
    dict
        ``"lm/algo"`` -> the missing score names in the figure's order, for each (LM, algorithm) that lacks one.
    """
    have = {}
    for r in rows:
        have.setdefault(f"{r['lm']}/{r['algo']}", set()).add(r["score"])
    out = {k: [s for s in scores(k.split("/")[1]) if s not in v] for k, v in have.items()}
    return {k: v for k, v in out.items() if v}


def draw(summary: dict):
    """The figure from its JSON summary (``fig_scores.json``): the TPR at 1e-6 of every score of each algorithm (one
    panel each) in every (LM, attack) setting, bars in the algorithm's registry colour with a hatch per score and their
    99 % Clopper-Pearson intervals, in the package's style (:mod:`paper_figs.style`); what :func:`render` saves and
    ``python -m paper_figs.redraw`` redraws."""
    from paper_figs import style
    from paper_figs._data import display
    from paper_figs._out import agg

    plt = agg()
    style.apply()
    rows = summary["rows"]
    algos = list(dict.fromkeys(r["algo"] for r in rows))
    lms = list(dict.fromkeys(r["lm"] for r in rows))
    attacks = list(dict.fromkeys(r["attack_label"] for r in rows))
    settings = [(lm, a) for lm in lms for a in attacks]
    fig, axes = plt.subplots(len(algos), 1, figsize=(16, 3.9 * len(algos)), sharey=True, squeeze=False)
    for ax, algo in zip(axes[:, 0], algos):
        mine = [r for r in rows if r["algo"] == algo]
        scores = list(dict.fromkeys(r["score"] for r in mine))
        color = (style.record(algo).color if style.record(algo) else "#777777")
        width = 0.8 / len(scores)
        for s_i, score in enumerate(scores):
            got = [next((r for r in mine if (r["lm"], r["attack_label"], r["score"]) == (*st, score)), None) for st in settings]
            vals = np.array([np.nan if r is None else r["tpr_at_1e-06"] for r in got])
            lo = np.array([np.nan if r is None else r["tpr_at_1e-06_ci99"][0] for r in got])
            hi = np.array([np.nan if r is None else r["tpr_at_1e-06_ci99"][1] for r in got])
            default = any(r["default"] for r in mine if r["score"] == score)
            lab = f"{algo}: {score} score" + (" (default)" if default else "")
            x = np.arange(len(settings)) + s_i * width
            ax.bar(x, vals, width, color=color, hatch=style.HATCHES[s_i % len(style.HATCHES)], edgecolor="white", lw=0.5, label=lab)
            ax.errorbar(x, vals, yerr=[vals - lo, hi - vals], fmt="none", ecolor=style.REFERENCE_COLOR, lw=0.7, label="_" + lab)
        ax.set_xticks(np.arange(len(settings)) + 0.4 - width / 2, [f"{lm}\n{a}" for lm, a in settings], fontsize=8, rotation=30,
                      ha="right")
        sizes = ", ".join(dict.fromkeys(f"{r['lm']} {r['n']} x {r['T']}" for r in mine))
        ax.set(title=f"{algo}: texts x tokens {sizes}", xlabel="LM and attack (kind: rate)", ylabel="TPR at FPR 1e-6 (99 % interval)",
               ylim=(0, 1.05))
    style.legend_below(fig, ncol=4)
    style.title(fig, "Power of each detection score against the default: TPR at FPR 1e-6", lm=", ".join(display(lm) for lm in lms))
    return fig
