"""Figure quality: perplexity under the unwatermarked LM against the exact KL per token, every algorithm.

The quality numbers reviewers ask for beside KL (:mod:`sims.experiments.quality`: perplexity, distinct-n,
self-BLEU, repetition rate, each a mean over texts with its 95 % t interval), for every algorithm of the
registry that runs on the LM's backend at its default parameters, SRL at three boosts and DualGA at two
targets, with the unwatermarked LM ("none") as the baseline.  Left: perplexity against KL; right:
distinct-2 and self-BLEU against KL.  On a synthetic LM the perplexity is exact; on SmolLM2 (``--lm
smollm2``) it comes from the model's teacher-forced logits and the KL from its full next-token
distributions at every step.

``python -m paper_figs.fig_quality --lm smollm2 --n 4 --T 32 --out docs/results-smollm2``: the committed
SmolLM2 run (small: n and T are in the title; 5.8 CPU-minutes on a shared 2-core machine, where 8 x 64 ran past 13).
"""

from __future__ import annotations

import pathlib

import numpy as np

from paper_figs import save

TITLE = "Perplexity under the unwatermarked LM against KL per token, every algorithm"
EXTRA = [("srl", dict(delta=1.0)), ("srl", dict(delta=4.0)), ("dualga", dict(Delta=0.2)), ("dualga", dict(Delta=0.4))]
"""Settings beside each algorithm's defaults: the trade-off along SRL's boost and DualGA's target."""
REAL_DEFAULT = dict(n=8, T=64)  # a real LM on a CPU: the small run


def configs(real: bool) -> list[tuple[str, dict]]:
    """Every registered algorithm with a generator on the LM's backend (``"none"`` first), then :data:`EXTRA`.

    Parameters
    ----------
    real : bool
        A real LM (the torch backend) rather than a synthetic one (Numba).

    Returns
    -------
    list of (str, dict)
        (algorithm, parameters) pairs.
    """
    from sims.watermarks import registry

    backend = "torch" if real else "numba"
    return [(a, {}) for a in registry.names() if backend in registry.get(a).backends] + EXTRA


def main(out_dir: pathlib.Path, quick: bool, lms=None, n: int | None = None, T: int | None = None) -> list[pathlib.Path]:
    """Generate every algorithm's texts on one LM and plot their perplexity against KL per token.

    Quick: V = 1000, 4 texts x 40 tokens; else 100 x 200 on a synthetic LM, 8 x 64 on a real one.

    Parameters
    ----------
    out_dir : pathlib.Path
        The folder the files are written to.
    quick : bool
        Small sizes (see above) instead of the paper's.
    lms : sequence of str, optional
        LMs of ``python -m paper_figs --lm``: its first is used (default ``lfqa``).
    n, T : int, optional
        Another size (texts, tokens per text).

    Returns
    -------
    list of pathlib.Path
        The files written: fig_quality.png and fig_quality.json (:func:`paper_figs.save`).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from paper_figs._data import display, figure_lm, generations, is_synthetic, label, sized
    from sims.core.progress import progress
    from sims.experiments.quality import quality

    name = (lms or ("lfqa",))[0]
    V = 1000 if quick else None
    lm = figure_lm(name, V)
    n0, T0 = (4, 40) if quick else (100, 200) if is_synthetic(name) else (REAL_DEFAULT["n"], REAL_DEFAULT["T"])
    n, T = sized(name, n or n0, T or T0)
    rows = []
    todo = configs(not is_synthetic(name))
    with progress(len(todo), f"fig_quality on {name}", unit="config") as bar:
        for algo, params in todo:
            gen = generations(name, algo, n, T, 0, vocab_size=V, **params)
            q = quality(gen, lm)
            rows.append(dict(algo=algo, params=params, label=label(algo, params), kl_per_token=float(np.nanmean(gen.kl)), **q))
            bar.update()
    summary = dict(lm=name, n=n, T=T, seed=0, ci_level=0.95, rows=rows)
    fig, axes = plt.subplots(1, 2, figsize=(13, 5))
    for r in rows:
        kl, ppl = r["kl_per_token"], r["perplexity"]
        lo, hi = r["perplexity_ci95"]
        c = axes[0].errorbar(kl, ppl, yerr=[[ppl - lo], [hi - ppl]], fmt="o", ms=4, capsize=2)[0].get_color()
        axes[0].annotate(r["label"], (kl, ppl), fontsize=6, xytext=(3, 3), textcoords="offset points", color=c)
        axes[1].plot(kl, r["distinct_2"], "o", c=c, ms=4)
        axes[1].plot(kl, r["self_bleu"], "s", c=c, ms=4, mfc="none")
        axes[1].annotate(r["label"], (kl, r["distinct_2"]), fontsize=6, xytext=(3, 3), textcoords="offset points", color=c)
    axes[0].set(xlabel="KL(q || p) per token (nats)", ylabel="perplexity under the unwatermarked LM (mean, 95% t interval)")
    axes[1].set(xlabel="KL(q || p) per token (nats)", ylabel="distinct-2 (filled) and self-BLEU-4 (open)", ylim=(-0.02, 1.02))
    fig.suptitle(f"Quality against KL on {display(name)}: n = {n} texts x T = {T} tokens per configuration, seed 0")
    fig.tight_layout()
    return save(fig, out_dir, "fig_quality", summary)


if __name__ == "__main__":
    from paper_figs._data import run_sized

    run_sized(main, "fig_quality", "100 x 200")
