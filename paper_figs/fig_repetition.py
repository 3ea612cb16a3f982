"""Appendix "Repetition Detection via Dual-Variable Dynamics": repetition rate per algorithm,
lambda_t of the most repetitive DualGA text, the monitor's precision/recall, the cap mitigation."""

from __future__ import annotations

import pathlib

import numpy as np

from paper_figs import save

TITLE = "Repetition by algorithm and the lambda_t monitor (loopy LM)"


def main(out_dir: pathlib.Path, quick: bool) -> list[pathlib.Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from sims.generate import generate
    from sims.lm import get_lm
    from sims.repetition import repeated_ngram_mask, study

    n, T = (24, 200) if quick else (256, 300)
    res = study("loopy", n=n, T=T)
    g = generate(get_lm("loopy"), "dualga", n=n, T=T, seed=0, key=3, Delta=0.5)
    rep = repeated_ngram_mask(g.tokens)
    i = int(np.argmax(rep.sum(axis=1)))
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 3.8))
    names = list(res["repetition"])
    a1.bar(names, [res["repetition"][k] for k in names])
    a1.set(ylabel="share of tokens in a repeated 4-gram", title=f"loopy LM, {n} texts x {T}")
    a2.plot(g.lam[i], lw=1, label="lambda_t")
    a2.fill_between(np.arange(T), 0, 15, where=rep[i], color="red", alpha=0.2, label="repeated 4-gram")
    m = res["monitor"]["test_seed1"]
    a2.set(xlabel="t", ylabel="lambda_t", title=f"DualGA Delta=0.5, most repetitive text\nlambda monitor on a fresh seed: precision {m['precision']:.2f}, recall {m['recall']:.2f}")
    a2.legend(fontsize=7)
    fig.tight_layout()
    return save(fig, out_dir, "fig_repetition", res)
