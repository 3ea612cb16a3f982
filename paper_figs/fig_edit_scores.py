"""The edit-tolerant scores against the default detectors under substitution, insertion, deletion and
splicing (issue 31): TPR at 1e-4 with its 99 % Clopper-Pearson interval and the median log10 p,
on the synthetic presets ``news`` and ``lfqa``.

Scores: ITS with its default hit count (``hits``, exact Poisson-binomial tail) and the alignment
score ``its-edit`` (:mod:`sims.detect.stats.edit_scores`: exact permutation p-value over 9999 fresh keys,
so 1e-4 is its smallest p-value and the level it is read at); the context-keyed watermarks,
whose keys re-synchronise after an edit by themselves: SRL (delta 2) and DualGA (its defaults) with
the green count and the red-green local score ``green-local`` (:mod:`sims.detect.stats.local_scores`: the
best segment's green likelihood ratio, exact null), EMS with ``ems-ars``.  Attacks
(:mod:`sims.experiments.attacks`, seed 12): none, 10 / 30 % random substitution, insertion and
deletion; for the red-green watermarks also ``splice`` (:mod:`sims.experiments.splice`, seed 12):
each watermarked text pasted whole into a plain text of ``SPLICE_PLAIN`` times its length
(generation seed 13), so a quarter of the tokens are watermarked.  ``N_FULL`` texts of ``T_FULL``
tokens per setting (generation seed 11); quick: ``news`` at vocabulary 2000, 12 texts of 30
tokens, 99 fresh keys, read at 1e-2.
"""

from __future__ import annotations

import math
import pathlib

import numpy as np

from paper_figs._out import md_table, write
from sims.core import defaults
from sims.lm.synthetic import lm_step_probs

TITLE = "edit-tolerant scores (its-edit, green-local) vs the defaults: TPR at 1e-4 under substitution, insertion, deletion and splicing"
KEY = defaults.KEY
ATTACKS = (("none", 0.0), ("substitution", 0.1), ("substitution", 0.3), ("insertion", 0.1), ("insertion", 0.3),
           ("deletion", 0.1), ("deletion", 0.3))
QUICK_ATTACKS = (("none", 0.0), ("insertion", 0.1), ("deletion", 0.1))
ALGOS = {"its": ({}, ("hits", "its-edit")), "srl": (dict(delta=2.0), ("green", "green-local")), "dualga": ({}, ("green", "green-local")),
         "ems": ({}, ("ems-ars",))}
SPLICE_ALGOS = ("srl", "dualga")  # the splicing rows: the red-green watermarks, where the local score is meant to win
SPLICE_PLAIN = 3  # plain tokens per watermarked token of a spliced text
N_FULL = 40
T_FULL = 50
LEVEL = 1e-4


def _label(kind: str, rate: float) -> str:
    return "none" if kind == "none" else kind if kind == "splice" else f"{kind}:{rate:g}"


def keyed_prefix_log10p(name: str, gen, lm, lengths, resamples: int | None = None) -> np.ndarray:
    """log10 p of the keyed-order family ``name`` on the prefixes of ``lengths`` tokens.

    Parameters
    ----------
    name : {"hits", "its-edit"}
        The keyed-order score.
    gen : sims.core.record.Generation
        The texts.
    lm : object
        Their LM (its step probabilities along the texts).
    lengths : sequence of int
        Prefix lengths, capped at each text's length.
    resamples : int, optional
        Resamples of the its-edit null.

    Returns
    -------
    numpy.ndarray
        (n_texts, len(lengths)) log10 p-values; the last column is the whole text.
    """
    from sims.detect.stats import edit_scores, scores

    step_probs = lm.step_probs(gen) if hasattr(lm, "step_probs") else lm_step_probs(lm, gen)
    if name == "hits":
        marks, probs_hit, n = scores.keyed_order_marks(gen, step_probs)
        curve = np.full(marks.shape, np.nan)
        for i in range(n.size):
            for L in {min(int(x), int(n[i])) for x in lengths} | {int(n[i])}:
                if L > 0:
                    curve[i, L - 1] = scores._poisson_binomial_logsf(int(marks[i, :L].sum()), probs_hit[i, :L]) / math.log(10.0)
    elif name == "its-edit":
        kw = {} if resamples is None else dict(resamples=resamples)
        curve = edit_scores.edit_prefix_log10p(gen, step_probs, **kw)[0]
        n = np.sum(np.isfinite(curve), axis=1)
    else:
        raise ValueError(f"name must be one of ('hits', 'its-edit'); got {name!r}")
    cols = [[min(int(x), int(n[i])) for x in lengths[:-1]] + [int(n[i])] for i in range(n.size)]
    return np.array([[curve[i, L - 1] if L > 0 else 0.0 for L in c] for i, c in enumerate(cols)])


def main(out_dir: pathlib.Path, quick: bool, lms=None, algos=None) -> list[pathlib.Path]:
    """Run the settings of ``lms`` (default above) and ``algos`` (default all of ``ALGOS``).

    The rows of other (LM, algorithm) pairs are kept from ``out_dir``'s previous JSON of the same size, so a part can be re-run alone.

    Parameters
    ----------
    out_dir : pathlib.Path
        The folder the files are written to.
    quick : bool
        Small sizes: ``news`` at V = 2000, 12 texts of 30 tokens, the quick attacks, level 1e-2, instead of ``news``
        and ``lfqa`` at full size.
    lms : sequence of str, optional
        LMs of ``python -m paper_figs --lm``: the LMs run (default ``news`` quick, ``news`` and ``lfqa`` full).
    algos : sequence of str, optional
        The algorithms run (default all of ``ALGOS``).

    Returns
    -------
    list of pathlib.Path
        The files written: fig_edit_scores.png, fig_edit_scores.json and fig_edit_scores.md
        (:func:`paper_figs._out.write`).
    """
    import json

    from paper_figs._data import figure_lm, generations
    from sims.detect.families import score_families
    from sims.detect.families.score_families import score_generation
    from sims.experiments.attacks import attack
    from sims.experiments.evaluate import clopper_pearson
    from sims.experiments.splice import splice

    names = tuple(lms or (("news",) if quick else ("news", "lfqa")))
    attacks = QUICK_ATTACKS if quick else ATTACKS
    run_algos = tuple(algos or ALGOS)
    if not set(run_algos) <= set(ALGOS):
        raise ValueError(f"algos must be among {tuple(ALGOS)}; got {run_algos}")
    n, T = (12, 30) if quick else (N_FULL, T_FULL)
    level, resamples = (1e-2, 99) if quick else (LEVEL, None)
    V = 2000 if quick else None
    rows = []
    for lm_name in names:
        lm = figure_lm(lm_name, V)
        for algo in run_algos:
            params, score_names = ALGOS[algo]
            gen0 = generations(lm_name, algo, n, T, 11, key=KEY, vocab_size=V, **params)
            for kind, rate in attacks + ((("splice", 1.0 / (1 + SPLICE_PLAIN)),) if algo in SPLICE_ALGOS else ()):
                if kind == "splice":
                    plain = generations(lm_name, "none", n, SPLICE_PLAIN * T, 13, key=KEY, vocab_size=V, gamma=gen0.meta["gamma"])
                    gen = splice(gen0, plain, seed=12)[0]
                else:
                    gen = attack(gen0, kind, rate, seed=12, lm=lm) if kind != "none" else gen0
                for name in score_names:
                    if score_families.get_score(name).needs_lm:
                        lp = keyed_prefix_log10p(name, gen, lm, [10**9], resamples)[:, -1]
                    else:
                        lp = score_generation(gen, name, lm).log10_p
                    k = int(np.sum(lp <= math.log10(level) + 1e-12))
                    rows.append(dict(lm=lm_name, algo=algo, attack_label=_label(kind, rate), score=name, default=score_families.get_score(name).default,
                                     n=n, T=T, level=level, tpr=k / n, tpr_ci99=clopper_pearson(k, n, 0.99), median_log10_p=float(np.median(lp))))
                    print(f"fig_edit_scores: {lm_name} {algo} {_label(kind, rate)} {name}: TPR@{level:g} {k}/{n}", flush=True)
    old = pathlib.Path(out_dir) / "fig_edit_scores.json"  # read last: keep the pairs not run now
    if old.exists() and json.loads(old.read_text()).get("quick") == quick:
        rows += [r for r in json.loads(old.read_text())["rows"] if (r["lm"], r["algo"]) not in {(x["lm"], x["algo"]) for x in rows}]
    order = [_label(*a) for a in attacks] + ["splice"]
    rows.sort(key=lambda r: (r["lm"] != "news", r["lm"], list(ALGOS).index(r["algo"]), order.index(r["attack_label"]), ALGOS[r["algo"]][1].index(r["score"])))
    table = [[r["lm"], r["algo"], r["attack_label"], f"{r['n']} x {r['T']}", r["score"] + (" (default)" if r["default"] else ""),
              f"{r['tpr']:.3f}", f"[{r['tpr_ci99'][0]:.2f}, {r['tpr_ci99'][1]:.2f}]", f"{r['median_log10_p']:.2f}"] for r in rows]
    summary = dict(rows=rows, quick=quick, key=KEY, level=level, attack_seed=12, generation_seed=11, splice_plain=SPLICE_PLAIN, splice_plain_seed=13)
    header = ["lm", "algo", "attack", "texts x tokens", "score", f"TPR@{level:g}", "99 % interval", "median log10 p"]
    return write(out_dir, "fig_edit_scores", summary, md_table(header, table) + "\n\n" + _verdict(rows), TITLE, draw(summary))


def draw(summary: dict):
    """The figure from its JSON summary (``fig_edit_scores.json``): the TPR of every (algorithm, score) under each
    attack, one panel per LM, bars in the algorithm's registry colour with a hatch per score and their 99 %
    Clopper-Pearson intervals, in the package's style (:mod:`paper_figs.style`); what ``main`` saves and ``python -m
    paper_figs.redraw`` redraws."""
    from paper_figs import style
    from paper_figs._data import display
    from paper_figs._out import agg

    plt = agg()
    style.apply()
    rows, level = summary["rows"], summary["level"]
    lms = list(dict.fromkeys(r["lm"] for r in rows))
    attacks = list(dict.fromkeys(r["attack_label"] for r in rows))
    series = list(dict.fromkeys((r["algo"], r["score"]) for r in rows))
    n, T = rows[0]["n"], rows[0]["T"]
    fig, axes = plt.subplots(1, len(lms), figsize=(8.5 * len(lms), 6.0), sharey=True, squeeze=False)
    width = 0.8 / len(series)
    for ax, lm in zip(axes[0], lms):
        for s_i, (algo, score) in enumerate(series):
            mine = [next((r for r in rows if (r["lm"], r["algo"], r["score"], r["attack_label"]) == (lm, algo, score, a)), None) for a in attacks]
            vals = np.array([np.nan if r is None else r["tpr"] for r in mine])
            lo = np.array([np.nan if r is None else r["tpr_ci99"][0] for r in mine])
            hi = np.array([np.nan if r is None else r["tpr_ci99"][1] for r in mine])
            rec = style.record(algo)
            hatch = style.HATCHES[[s for a, s in series if a == algo].index(score) % len(style.HATCHES)]
            x = np.arange(len(attacks)) + s_i * width
            lab = f"{algo}: {score} score" + (" (default)" if mine[0] is not None and mine[0]["default"] else "")
            ax.bar(x, vals, width, color=rec.color if rec else "#777777", hatch=hatch, edgecolor="white", lw=0.5, label=lab)
            ax.errorbar(x, vals, yerr=[vals - lo, hi - vals], fmt="none", ecolor=style.REFERENCE_COLOR, lw=0.7, label="_" + lab)
        ax.set_xticks(np.arange(len(attacks)) + 0.4 - width / 2, attacks, rotation=30, ha="right")
        ax.set(title=display(lm), xlabel="attack and its rate", ylim=(0, 1.05))
    axes[0][0].set_ylabel(f"TPR at FPR {level:g} (99 % interval)")
    style.legend_below(fig, ncol=4)
    style.title(fig, "Edit-robust scores: detection under each attack, every algorithm's scores",
                lm=", ".join(display(lm) for lm in lms), n=n, T=T)
    return fig


def _verdict(rows) -> str:
    """Per non-default score: the settings where its TPR is above, equal to or below its algorithm's default's."""
    lines = []
    for algo, (_, score_names) in ALGOS.items():
        for name in score_names[1:]:
            out = {"above": [], "equal to": [], "below": []}
            for r in rows:
                if (r["algo"], r["score"]) == (algo, name):
                    same = (r["lm"], algo, r["attack_label"], score_names[0])
                    d = next(x["tpr"] for x in rows if (x["lm"], x["algo"], x["attack_label"], x["score"]) == same)
                    out["above" if r["tpr"] > d else "equal to" if r["tpr"] == d else "below"].append(f"{r['lm']} {r['attack_label']}")
            lines.append(f"- {algo}: {name}'s TPR is " + "; ".join(f"{k} {score_names[0]}'s in {len(v)} ({', '.join(v) or '-'})" for k, v in out.items()))
    return "\n".join(lines)
