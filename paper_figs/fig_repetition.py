"""Appendix "Repetition Detection via Dual-Variable Dynamics": repetition rate per algorithm on
an LM that loops, lambda_t of a DualGA text with its repeated 4-grams, the lambda monitor's
precision/recall on a fresh seed, and what capping lambda at M costs."""

from __future__ import annotations

import pathlib

import numpy as np

from paper_figs import save

TITLE = "Repetition by algorithm, the lambda_t monitor and the lambda cap (looping LM)"


def main(out_dir: pathlib.Path, quick: bool, lms=None) -> list[pathlib.Path]:
    """Write the figure; ``lms`` is ignored (no LM: the looping LM of the appendix).

    Parameters
    ----------
    out_dir : pathlib.Path
        The folder the files are written to.
    quick : bool
        Small sizes: 16 texts of 200 tokens, instead of 256 of 300.
    lms : sequence of str, optional
        Ignored.

    Returns
    -------
    list of pathlib.Path
        The files written: fig_repetition.png and fig_repetition.json (:func:`paper_figs.save`).
    """
    from sims.experiments.repetition import monitor, repeated_ngram_mask, study
    from sims.lm.synthetic import loop_lm
    from sims.watermarks.generate import generate_synthetic

    n, T = (16, 200) if quick else (256, 300)
    res = study(n=n, T=T)
    lm = loop_lm()
    g = generate_synthetic(lm, "dualga", n=n, T=T, seed=1, key=res["key"], Delta=res["Delta"])
    rep = repeated_ngram_mask(g.tokens)
    tuned = res["monitor"]["tuned_on_seed0"]
    flags = monitor(g.lam, level=tuned["level"], rise=tuned["rise"], window=tuned["window"])
    i = int(np.argmax(rep.sum(axis=1)))
    res["example"] = dict(text=i, lam=[round(float(x), 5) for x in g.lam[i]], repeated=rep[i].astype(int).tolist(),
                          flagged=np.flatnonzero(flags[i]).tolist())
    return save(draw(res), out_dir, "fig_repetition", res)


MITIGATION = (("repetition", "repetition rate", "o"), ("kl_per_token", "KL per token (nats)", "s"), ("realized_dg", "realised DG", "^"),
              ("tpr_at_1e_4", "TPR at FPR 1e-4", "v"))
"""The measures drawn against the cap M on lambda (a key of each mitigation row of the JSON, its legend entry, marker)."""


def draw(summary: dict):
    """The figure from its JSON summary (``fig_repetition.json``), in the package's style (:mod:`paper_figs.style`): the
    repetition rate of each algorithm on the looping LM, lambda_t of DualGA's most repetitive text with its repeated
    4-grams and the monitor's flags, and what capping lambda at M costs.  What ``main`` saves and ``python -m
    paper_figs.redraw`` redraws; a summary written before the example text was recorded has none: rerun the figure."""
    from paper_figs import style
    from paper_figs._out import agg

    if "example" not in summary:
        raise ValueError("this fig_repetition.json holds no example text: rerun python -m paper_figs --only fig_repetition")
    plt = agg()
    style.apply()
    fig, (a1, a2, a3) = plt.subplots(1, 3, figsize=(17, 5.6), gridspec_kw=dict(width_ratios=[1, 1.6, 1]))
    names = list(summary["repetition"])
    colours = [(style.record(k).color if style.record(k) else "#777777") for k in names]
    a1.bar(names, [summary["repetition"][k] for k in names], color=colours)
    a1.tick_params(axis="x", labelrotation=30)
    a1.set(xlabel="algorithm (each at its defaults)", ylabel="share of tokens in a repeated 4-gram", title="repetition by algorithm")
    ex, tuned, m = summary["example"], summary["monitor"]["tuned_on_seed0"], summary["monitor"]["test_seed1"]
    lam = np.asarray(ex["lam"], dtype=float)
    t = np.arange(lam.size)
    top = float(np.nanmax(lam)) + 1
    a2.fill_between(t, 0, top, where=np.asarray(ex["repeated"], dtype=bool), color="#D55E00", alpha=0.2, lw=0,
                    label="token in a repeated 4-gram (truth)")
    lab = f"dualga Delta={summary['Delta']:g}: dual variable lambda_t"
    a2.plot(t, lam, color=style.record("dualga").color, lw=1.1, label=lab)
    a2.plot(ex["flagged"], np.full(len(ex["flagged"]), 0.2), ls="none", marker="|", ms=8, color="#0072B2",
            label=f"monitor flag (tuned on seed 0: level {tuned['level']:g}, rise {tuned['rise']:g} in {tuned['window']} steps)")
    a2.set(xlabel="position t in the text (tokens)", ylabel="dual variable lambda at t", ylim=(0, top),
           title=f"most repetitive text (seed 1): monitor precision {m['precision']:.2f}, recall {m['recall']:.2f}")
    mit = summary["mitigation"]
    Ms = [d["M"] for d in mit]
    for key, what, marker in MITIGATION:
        a3.plot(Ms, [d[key] for d in mit], marker=marker, label=what)
    style.reference(a3, summary["repetition"]["none"], "repetition rate without a watermark", ls=":")
    a3.set(xlabel="cap M on lambda", ylabel="rate, KL, DG or TPR", title="mitigation: lambda capped at M")
    style.legend_below(fig, ncol=3)
    style.title(fig, f"Repetition on a looping LM (p_loop = {summary['p_loop']:g}, V = {summary['vocab_size']}): "
                     "the dual variable as a monitor, and its cap", lm=summary["lm"], n=summary["n"], T=summary["T"])
    return fig
