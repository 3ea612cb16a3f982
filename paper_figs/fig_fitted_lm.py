"""The fitted preset ``smollm2-fit`` beside SmolLM2-135M-Instruct (:mod:`sims.lm.fitted`).

Panels: per-text mean entropy (empirical CDFs, two-sample KS distance), entropy
autocorrelation at lags 1-10, the G_t distribution under random keys (gamma 0.25, 0.5), and
realised DG, KL per token and TPR at FPR 1e-4 of SRL (gamma 0.25 / 0.5, delta 1, 2, 5) and
DualGA (Delta 0.2, 0.3) on both, with +-2 standard errors.  The SmolLM2 side is the stored
record (``sims/lm/data/smollm2-stats.npz``, ``smollm2-reference.json``); the synthetic side
is generated here with the same T.  Writes PNG, JSON and a markdown table.
"""

from __future__ import annotations

import pathlib

import numpy as np

from paper_figs import save

TITLE = "fitted synthetic LM vs SmolLM2: entropy per text, its autocorrelation, G_t, and SRL / DualGA"


G_BINS = np.linspace(0, 1, 41)
"""Bin edges of the G_t histograms the JSON holds."""
SIDES = (("real", "SmolLM2-135M-Instruct (stored record)", "#000000", "-"), ("synthetic", "smollm2-fit (fitted synthetic LM)", "#CC3311", "--"))
"""The two LMs compared (a key of the JSON's ``curves`` and ``distributions``, its legend entry, colour and line style)."""


def markdown_table(wm_real: dict, wm_fit: dict) -> str:
    """The markdown table of SRL / DualGA on SmolLM2 beside the fitted LM.

    Realised DG, KL and TPR at 1e-4, each +- its standard error.

    Parameters
    ----------
    wm_real : dict
        SmolLM2's stored summary per configuration (:func:`sims.torch_backend.lm_stats.summarise`).
    wm_fit : dict
        The fitted LM's (:func:`sims.experiments.lm_validation.watermark_summary`), same configurations.

    Returns
    -------
    str
    """
    rows = ["| configuration | DG SmolLM2 | DG fitted | KL SmolLM2 | KL fitted | TPR@1e-4 SmolLM2 | TPR@1e-4 fitted |",
            "|---|---|---|---|---|---|---|"]
    for name, r in wm_real.items():
        f = wm_fit[name]
        rows.append(f"| {name} | {r['realized_dg']:.3f} ± {r['dg_se']:.3f} | {f['realized_dg']:.3f} ± {f['dg_se']:.3f} | "
                    f"{r['kl_per_token']:.3f} ± {r['kl_se']:.3f} | {f['kl_per_token']:.3f} ± {f['kl_se']:.3f} | "
                    f"{r['tpr_at_1e-4']:.2f} ± {r['tpr_se']:.2f} | {f['tpr_at_1e-4']:.2f} ± {f['tpr_se']:.2f} |")
    return "\n".join(rows) + "\n"


def main(out_dir: pathlib.Path, quick: bool, lms=None) -> list[pathlib.Path]:
    """Compare the shipped ``smollm2-fit`` preset with SmolLM2's stored records and write the figure and table.

    Parameters
    ----------
    out_dir : pathlib.Path
        The folder the files are written to.
    quick : bool
        Small sizes: 64 synthetic texts for the statistics and per watermark configuration, instead of 512.
    lms : sequence of str, optional
        Ignored (the figure is about the smollm2-fit / SmolLM2 pair).

    Returns
    -------
    list of pathlib.Path
        The files written: fig_fitted_lm.png, fig_fitted_lm.json (:func:`paper_figs.save`) and fig_fitted_lm.md.
    """
    del lms  # this figure is about one LM pair: the shipped smollm2-fit preset beside SmolLM2 itself
    from sims.experiments import lm_validation as val
    from sims.lm.synthetic import open_synthetic

    real, ref = val.load_reference("smollm2")
    T = real["entropy"].shape[1]
    n_stats, n_wm = (64, 64) if quick else (512, 512)
    lm = open_synthetic("smollm2-fit")
    synth = val.token_statistics(lm, n_stats, T, seed=0)
    dist = val.compare_distributions(real, synth)
    wm_real = ref["summary"]
    wm_fit = val.watermark_summary(lm, wm_real, n_wm, T, seed=0)

    curves = {}
    for side, st in (("real", real), ("synthetic", synth)):
        curves[side] = dict(text_mean_entropy=[round(float(x), 5) for x in np.sort(st["entropy"].mean(axis=1))],
                            **{f"{k}_density": np.histogram(st[k].ravel(), G_BINS, density=True)[0].round(5).tolist() for k in ("G25", "G50")})
    summary = dict(T=T, n_real_stats=int(real["entropy"].shape[0]), n_synth_stats=n_stats, n_synth_watermark=n_wm, distributions=dist,
                   watermark_real=wm_real, watermark_fitted=wm_fit, curves=curves, G_bins=G_BINS.tolist())
    files = save(draw(summary), out_dir, "fig_fitted_lm", summary)
    md = out_dir / "fig_fitted_lm.md"
    md.write_text(f"# {TITLE}\n\nKS per-text mean entropy {dist['ks_text_mean_entropy']:.3f}, per-token entropy "
                  f"{dist['ks_token_entropy']:.3f}, G_t {dist['ks_G25']:.3f} / {dist['ks_G50']:.3f}\n\n" + markdown_table(wm_real, wm_fit))
    return files + [md]


def draw(summary: dict):
    """The figure from its JSON summary (``fig_fitted_lm.json``), in the package's style (:mod:`paper_figs.style`): the
    per-text mean entropy (empirical CDFs), entropy autocorrelation, G_t histograms, and realised DG, KL and TPR of each
    watermark configuration on both LMs with +-2 standard errors.  What ``main`` saves and ``python -m paper_figs.redraw``
    redraws; a summary written before the per-text entropies and G_t histograms were recorded has none: rerun it."""
    from paper_figs import style
    from paper_figs._out import agg

    if "curves" not in summary:
        raise ValueError("this fig_fitted_lm.json holds no per-text curves: rerun python -m paper_figs --only fig_fitted_lm")
    plt = agg()
    style.apply()
    dist, curves, T = summary["distributions"], summary["curves"], summary["T"]
    n = {"real": summary["n_real_stats"], "synthetic": summary["n_synth_stats"]}
    fig, axes = plt.subplots(2, 3, figsize=(15, 9.4))
    for side, lab, c, ls in SIDES:
        x = np.asarray(curves[side]["text_mean_entropy"])
        axes[0, 0].step(x, np.arange(1, x.size + 1) / x.size, where="post", color=c, ls=ls, label=lab)
        lags = dist[side]["acf_lags"][:10]
        axes[0, 1].plot(lags, dist[side]["acf"][:10], color=c, ls=ls, marker="o", ms=3, label=lab)
        edges = np.asarray(summary["G_bins"])
        for key, lw in (("G25", 1.6), ("G50", 0.9)):
            axes[0, 2].stairs(curves[side][f"{key}_density"], edges, color=c, ls=ls, lw=lw, label="_" + lab)
    axes[0, 0].set(xlabel="mean entropy of a text (nats)", ylabel="share of texts at or below (empirical CDF)",
                   title=f"per-text mean entropy (SmolLM2 {n['real']}, fit {n['synthetic']} texts), KS = {dist['ks_text_mean_entropy']:.3f}")
    axes[0, 1].set(xlabel="lag (tokens)", ylabel="autocorrelation of the entropy", title="entropy autocorrelation (pooled over texts)",
                   ylim=(0, None))
    axes[0, 2].set(xlabel="green mass G of a step under a random key", ylabel="density", yscale="log",
                   title=f"green mass G: KS {dist['ks_G25']:.3f} at gamma 0.25 (thick),\n{dist['ks_G50']:.3f} at gamma 0.5 (thin)")
    real, fit = summary["watermark_real"], summary["watermark_fitted"]
    names = list(real)
    x = np.arange(len(names))
    for ax, key, se, what in ((axes[1, 0], "realized_dg", "dg_se", "realised DG per token"), (axes[1, 1], "kl_per_token", "kl_se", "KL per token (nats)"),
                              (axes[1, 2], "tpr_at_1e-4", "tpr_se", "TPR at FPR 1e-4")):
        for (_, lab, c, _), d, off in zip(SIDES, (real, fit), (-0.15, 0.15)):
            ax.errorbar(x + off, [d[k][key] for k in names], yerr=[2 * d[k][se] for k in names], fmt="o", color=c, ms=4, capsize=2,
                        label="_" + lab)
        ax.set_xticks(x, [k.replace("-", " ") for k in names], fontsize=8, rotation=35, ha="right")
        ax.set(xlabel="watermark configuration", ylabel=f"{what} (+-2 SE)",
               title=f"{what}: SmolLM2 n = {real[names[0]]['n']}, fit n = {summary['n_synth_watermark']}")
    style.legend_below(fig, ncol=2)
    style.title(fig, "The fitted synthetic LM smollm2-fit beside SmolLM2: entropy, G and watermarks", lm="smollm2-fit and smollm2",
                T=T)
    return fig
