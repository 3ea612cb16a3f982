"""Figure text_attacks: median log10 p against the rate of each text attack (emoji, typo, homoglyph, zero-width,
copy-paste; :mod:`sims.experiments.text_attacks`), every configuration of the robustness figure
(:data:`paper_figs.fig_robustness.CONFIGS`: one or more per detector family), each point's median with its
distribution-free 95 % interval and its TPR at 1e-4 with its Clopper-Pearson 95 % interval in the JSON.

A separate figure, not panels of ``fig_robustness``: that one redraws 100 x 200 texts under eight rates of six
attacks, and the emoji attack draws the texts again through the reference steps.  On a synthetic LM the
character attacks are their token stand-ins, without the defence (``detect --text`` normalises homoglyphs and
zero-width characters away; typos and emojis stay): the homoglyph and zero-width panels are what an
undefended detector sees.
"""

from __future__ import annotations

import pathlib

import numpy as np

from paper_figs import save

TITLE = "Robustness of detection under the text attacks (emoji, typo, homoglyph, zero-width, copy-paste)"


def main(out_dir: pathlib.Path, quick: bool, lms=None, n: int | None = None, T: int | None = None) -> list[pathlib.Path]:
    """Apply the text attacks to watermarked texts of one LM at a range of rates and plot their detection.

    Quick: V = 1000, 4 texts x 40 tokens, rates 0, 0.5, 1; else V = 4000, 50 x 100, rates 0 .. 1 by 0.25 (a real LM: 8 x 64).

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
        The files written: fig_text_attacks.png and fig_text_attacks.json (:func:`paper_figs.save`).
    """
    from paper_figs._data import figure_lm, generations, is_synthetic, label, sized
    from paper_figs.fig_robustness import CONFIGS
    from paper_figs.fig_scores import median_ci
    from sims.core.progress import progress
    from sims.detect.families import detectors
    from sims.experiments.evaluate import clopper_pearson
    from sims.experiments.text_attacks import TEXT_KINDS, attack

    name = (lms or ("lfqa",))[0]
    V = 1000 if quick else 4000 if is_synthetic(name) else None
    lm = figure_lm(name, V)
    n0, T0 = (4, 40) if quick else (50, 100) if is_synthetic(name) else (8, 64)
    n, T = sized(name, n or n0, T or T0)
    rates = [0.0, 0.5, 1.0] if quick else [0.0, 0.25, 0.5, 0.75, 1.0]
    summary = dict(lm=name, vocab_size=lm.vocab_size, n=n, T=T, seed=0, attack_seed=1, rates=rates, attacks={})
    with progress(len(CONFIGS) * len(TEXT_KINDS), f"fig_text_attacks on {name}", unit="attack") as bar:
        for algo, params in CONFIGS:
            gen = generations(name, algo, n, T, 0, vocab_size=V, **params)
            lab = f"{label(algo, params)} (KL {np.nanmean(gen.kl):.2f})"
            lp0 = detectors.score(gen, lm).log10_p
            for kind in TEXT_KINDS:
                lps = [detectors.score(attack(gen, kind, r, seed=1, lm=lm), lm).log10_p if r > 0 else lp0 for r in rates]
                hits = [int(np.sum(lp <= -4.0)) for lp in lps]
                summary["attacks"].setdefault(kind, {})[lab] = dict(
                    median_log10_p=[float(np.median(lp)) for lp in lps], median_log10_p_ci95=[list(median_ci(lp)) for lp in lps],
                    tpr_at_1e_4=[h / lp.size for h, lp in zip(hits, lps)], tpr_ci95=[list(clopper_pearson(h, lp.size)) for h, lp in zip(hits, lps)])
                bar.update()
    return save(draw(summary), out_dir, "fig_text_attacks", summary)


def draw(summary: dict):
    """The figure from its JSON summary (``fig_text_attacks.json``), in the package's style (:mod:`paper_figs.style`).

    What ``main`` saves and ``python -m paper_figs.redraw`` redraws.

    Parameters
    ----------
    summary : dict
        The JSON summary.

    Returns
    -------
    matplotlib.figure.Figure
    """
    from paper_figs import style
    from paper_figs._data import is_synthetic
    from paper_figs._out import agg

    plt = agg()
    style.apply()
    rates, name = summary["rates"], summary["lm"]
    kinds = list(summary["attacks"])
    series = style.Series()
    fig, axes = plt.subplots(1, len(kinds), figsize=(3.6 * len(kinds), 5.6), sharey=True, squeeze=False)
    for ax, kind in zip(axes[0], kinds):
        for lab, v in summary["attacks"][kind].items():
            ax.plot(rates, v["median_log10_p"], label=" ".join(lab.split()), **series(lab))
        style.reference(ax, -4, "detection level: p = 1e-4")
        stand_in = kind in ("homoglyph", "zero-width") and is_synthetic(name)
        ax.set(title=kind + (" (token stand-in,\nno normalisation)" if stand_in else ""),
               xlabel="share of the text unwatermarked" if kind == "copy-paste" else "attack rate (share of tokens attacked)")
    axes[0, 0].set_ylabel("median log10 p-value of the detector")
    style.legend_below(fig, ncol=4)
    style.title(fig, f"Detection under text attacks (vocabulary V = {summary.get('vocab_size')})", lm=name, n=summary["n"],
                T=summary["T"])
    return fig


if __name__ == "__main__":
    from paper_figs._data import run_sized

    run_sized(main, "fig_text_attacks")
