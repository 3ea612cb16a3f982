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
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

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
    fig, (a1, a2, a3) = plt.subplots(1, 3, figsize=(16, 4.2), gridspec_kw=dict(width_ratios=[1, 1.6, 1]))
    names = list(res["repetition"])
    a1.bar(names, [res["repetition"][k] for k in names])
    a1.set(ylabel="share of tokens in a repeated 4-gram", title=f"{res['lm']}, {n} texts x {T}")
    a1.tick_params(axis="x", labelrotation=30)
    top = float(np.nanmax(g.lam[i])) + 1
    a2.fill_between(np.arange(T), 0, top, where=rep[i], color="red", alpha=0.2, label="repeated 4-gram (truth)")
    a2.plot(g.lam[i], lw=1, label="lambda_t")
    a2.plot(np.flatnonzero(flags[i]), np.full(int(flags[i].sum()), 0.2), "k|", ms=6, label="monitor flag")
    m = res["monitor"]["test_seed1"]
    a2.set(xlabel="t", ylabel="lambda_t", ylim=(0, top),
           title=f"DualGA Delta={res['Delta']:g}, seed 1 (most repetitive text)\nmonitor tuned on seed 0 "
                 f"(level {tuned['level']:g}, rise {tuned['rise']:g} in {tuned['window']} steps): "
                 f"precision {m['precision']:.2f}, recall {m['recall']:.2f}")
    a2.legend(fontsize=7, loc="upper left")
    mit = res["mitigation"]
    Ms = [d["M"] for d in mit]
    a3.plot(Ms, [d["repetition"] for d in mit], "o-", label="repetition rate")
    a3.plot(Ms, [d["kl_per_token"] for d in mit], "s-", label="KL per token (nats)")
    a3.plot(Ms, [d["realized_dg"] for d in mit], "^-", label="realised DG")
    a3.plot(Ms, [d["tpr_at_1e_4"] for d in mit], "v-", label="TPR at FPR 1e-4")
    a3.axhline(res["repetition"]["none"], c="gray", ls=":", lw=1, label="repetition, no watermark")
    a3.set(xlabel="cap M on lambda", title="mitigation: lambda <= M")
    a3.legend(fontsize=7)
    fig.tight_layout()
    return save(fig, out_dir, "fig_repetition", res)
