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
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

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

    fig, axes = plt.subplots(2, 3, figsize=(14, 7.5))
    ax = axes[0, 0]
    for st, lab, c in ((real, f"SmolLM2 ({real['entropy'].shape[0]} texts)", "k"), (synth, f"smollm2-fit ({n_stats} texts)", "C3")):
        x = np.sort(st["entropy"].mean(axis=1))
        ax.step(x, np.arange(1, x.size + 1) / x.size, where="post", c=c, label=lab)
    ax.set(xlabel="mean entropy of a text (nats)", ylabel="CDF", title=f"per-text mean entropy, KS = {dist['ks_text_mean_entropy']:.3f}")
    ax.legend(fontsize=8)
    ax = axes[0, 1]
    lags = dist["real"]["acf_lags"]
    ax.plot(lags[:10], dist["real"]["acf"][:10], "k-o", ms=3, label="SmolLM2")
    ax.plot(lags[:10], dist["synthetic"]["acf"][:10], "C3-o", ms=3, label="smollm2-fit")
    ax.set(xlabel="lag", ylabel="autocorrelation of entropy", title="entropy autocorrelation (pooled over texts)", ylim=(0, None))
    ax.legend(fontsize=8)
    ax = axes[0, 2]
    bins = np.linspace(0, 1, 41)
    for key, ls in (("G25", "-"), ("G50", "--")):
        ax.hist(real[key].ravel(), bins, density=True, histtype="step", color="k", ls=ls, label=f"SmolLM2 {key}")
        ax.hist(synth[key].ravel(), bins, density=True, histtype="step", color="C3", ls=ls, label=f"fit {key}")
    ax.set(xlabel="G_t under random keys", ylabel="density", yscale="log",
           title=f"G_t: KS {dist['ks_G25']:.3f} (gamma .25), {dist['ks_G50']:.3f} (gamma .5)")
    ax.legend(fontsize=7)
    names = list(wm_real)
    x = np.arange(len(names))
    for ax, key, se, lab in ((axes[1, 0], "realized_dg", "dg_se", "realised DG"), (axes[1, 1], "kl_per_token", "kl_se", "KL per token"),
                             (axes[1, 2], "tpr_at_1e-4", "tpr_se", "TPR at FPR 1e-4")):
        for d, c, off, lab2 in ((wm_real, "k", -0.15, "SmolLM2"), (wm_fit, "C3", 0.15, "smollm2-fit")):
            ax.errorbar(x + off, [d[k][key] for k in names], yerr=[2 * d[k][se] for k in names], fmt="o", c=c, ms=4, label=lab2)
        ax.set_xticks(x, [k.replace("-gamma", "\ngamma").replace("dualga-", "dualga\n") for k in names], fontsize=6)
        ax.set(title=f"{lab} (+-2 SE; SmolLM2 n={wm_real[names[0]]['n']}, fit n={n_wm}, T={T})")
        ax.title.set_fontsize(8)
        ax.legend(fontsize=7)
    fig.tight_layout()
    summary = dict(T=T, n_real_stats=int(real["entropy"].shape[0]), n_synth_stats=n_stats, n_synth_watermark=n_wm, distributions=dist,
                   watermark_real=wm_real, watermark_fitted=wm_fit)
    files = save(fig, out_dir, "fig_fitted_lm", summary)
    md = out_dir / "fig_fitted_lm.md"
    md.write_text(f"# {TITLE}\n\nKS per-text mean entropy {dist['ks_text_mean_entropy']:.3f}, per-token entropy "
                  f"{dist['ks_token_entropy']:.3f}, G_t {dist['ks_G25']:.3f} / {dist['ks_G50']:.3f}\n\n" + markdown_table(wm_real, wm_fit))
    return files + [md]
