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
    from paper_figs._data import figure_lm, generations, is_synthetic, label, sized
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
    return save(draw(summary), out_dir, "fig_quality", summary)


KL_LABEL = "KL divergence from the LM per token (nats)"
PANELS = (("perplexity", "perplexity under the unwatermarked LM"), ("distinct_2", "distinct-2: share of distinct bigrams"),
          ("self_bleu", "self-BLEU-4 between the texts"))
"""The quality measures drawn (a key of each row of the JSON, its axis label), one panel each."""


def _series_label(row: dict) -> str:
    """A configuration's legend entry: its label, ``(default parameters)`` where it sets none."""
    if row["algo"] == "none":
        return "none (the unwatermarked LM)"
    return row["label"] if row["params"] else f"{row['label']} (default parameters)"


def draw(summary: dict):
    """The figure from its JSON summary (``fig_quality.json``): each configuration's perplexity, distinct-2 and self-BLEU
    against its KL per token (means over texts with their 95 % t intervals), in the package's style
    (:mod:`paper_figs.style`); what ``main`` saves and ``python -m paper_figs.redraw`` redraws."""
    from paper_figs import style
    from paper_figs._out import agg

    plt = agg()
    style.apply()
    series = style.Series()
    entries = len(summary["rows"]) // 4 + 1  # legend rows under the panels (4 columns)
    fig, axes = plt.subplots(1, len(PANELS), figsize=(5.4 * len(PANELS), 4.4 + 0.22 * entries))
    for ax, (key, what) in zip(axes, PANELS):
        for r in summary["rows"]:
            lab = _series_label(r)
            kw = dict(series(lab), ls="none")
            y = r[key]
            lo, hi = r.get(f"{key}_ci95", (y, y))
            ax.errorbar(r["kl_per_token"], y, yerr=[[y - lo], [hi - y]], capsize=2, label=lab, **kw)
            if r["params"] and key == PANELS[0][0]:  # an algorithm's variants share its marker: their parameters beside them
                ax.annotate(" ".join(lab.split()[1:]), (r["kl_per_token"], y), xytext=(4, 3), textcoords="offset points",
                            fontsize=8, color=kw["color"])
        ax.set(title=what.split(":")[0], xlabel=KL_LABEL, ylabel=what)
    axes[0].set_ylim(bottom=0)  # a t interval over few texts reaches below 0: perplexity does not
    for ax in axes[1:]:
        ax.set_ylim(-0.02, 1.02)
    style.legend_below(fig, ncol=4)
    style.title(fig, f"Text quality against KL, every algorithm: means over the texts with 95 % t intervals (sampling seed "
                     f"{summary.get('seed', 0)})", lm=summary["lm"],
                n=summary["n"], T=summary["T"])
    return fig


if __name__ == "__main__":
    from paper_figs._data import run_sized

    run_sized(main, "fig_quality", "100 x 200")
