"""SynthID-Text on the paper's trade-off: per-key KL vs detection, beside DualGA (issue 32).

Each configuration draws ``n`` texts of ``T`` tokens on one synthetic LM with one key and records
the exact mean per-token :math:`D_{kl}(q_t\\|p_t)` of that key (:mod:`sims.watermarks.tournament`
for SynthID, :func:`sims.generate` for DualGA) and the median over texts of the exact
:math:`-\\log_{10} p` of its own detector: the mean g-value score (Binomial(m n, 1/2) tail) and the
weighted-mean score for SynthID (:mod:`sims.detect.stats.tournament_scores`), the green count for DualGA.
SynthID runs both modes (two candidates per match, the non-distortionary one; four, distortionary)
over m layers; DualGA over its target Delta.

What to read in it: the non-distortionary mode is unbiased only on average over keys; for the one
key a deployment holds, its per-token KL grows with m like an EMS-type watermark's, so at equal
detection DualGA's KL can be compared with it directly; the per-layer drift DG (the increase of the
expected mean g-value) falls with m, which is why the mean score saturates and the weighted one
helps.
"""

from __future__ import annotations

import pathlib

import numpy as np

from paper_figs._data import figure_lm, is_synthetic
from paper_figs._out import agg, md_table, write

TITLE = "SynthID-Text (m layers, both modes) vs DualGA: per-key KL per token against the median -log10 p of each one's detector"
LAYERS = (1, 2, 4, 8, 16, 30)
DELTAS = (0.1, 0.2, 0.3, 0.4, 0.5)
KEY = 15485863


def main(out_dir: pathlib.Path, quick: bool, lms=None) -> list[pathlib.Path]:
    """Run SynthID-Text (m layers, both modes) beside DualGA on one synthetic LM and write the figure.

    Parameters
    ----------
    out_dir : pathlib.Path
        The folder the files are written to.
    quick : bool
        Small sizes: 8 texts of 60 tokens at V = 2000 and m in 1, 4, 30, instead of 100 of 200 and every m of
        ``LAYERS``.
    lms : sequence of str, optional
        LMs of ``python -m paper_figs --lm``: its first synthetic LM is used (default ``news``).

    Returns
    -------
    list of pathlib.Path
        The files written: fig_synthid_tradeoff.png, fig_synthid_tradeoff.json and fig_synthid_tradeoff.md
        (:func:`paper_figs._out.write`).
    """
    from sims.detect.families.detectors import score
    from sims.detect.stats.tournament_scores import score_tournament
    from sims.watermarks.generate import generate_synthetic, sample_prompts
    from sims.watermarks.tournament import generate_tournament

    lm_name = next((x for x in (lms or ()) if is_synthetic(x)), "news")
    n, T, V = (8, 60, 2000) if quick else (100, 200, None)
    layers = (1, 4, 30) if quick else LAYERS
    lm = figure_lm(lm_name, V)
    prompts = sample_prompts(lm, n, 0, 16)
    rows, confs = [], []
    for mode in ("non-distortionary", "distortionary"):
        for m in layers:
            g = generate_tournament(lm, n=n, T=T, seed=1, key=KEY, m=m, mode=mode, prompts=prompts)
            kl, dg = float(g.kl.mean()), float(g.dg.mean())
            mean_p = float(-np.median(score_tournament(g).log10_p))
            weighted_p = float(-np.median(score_tournament(g, stat="weighted").log10_p))
            confs.append(dict(algo="synthid", mode=mode, m=m, candidates=g.meta["candidates"], kl=kl, dg=dg, median_neg_log10_p_mean=mean_p,
                              median_neg_log10_p_weighted=weighted_p))
            rows.append([f"SynthID {mode}, m={m}", kl, dg, mean_p, weighted_p])
    for D in DELTAS:
        g = generate_synthetic(lm, "dualga", n=n, T=T, seed=1, key=KEY, Delta=D, prompts=prompts)
        kl, dg = float(g.kl.mean()), float(g.dg.mean())
        p = float(-np.median(score(g).log10_p))
        confs.append(dict(algo="dualga", Delta=D, kl=kl, dg=dg, median_neg_log10_p=p))
        rows.append([f"DualGA Delta={D:g}", kl, dg, p, float("nan")])
    summary = dict(lm=lm_name, n=n, T=T, vocab_size=lm.vocab_size, key=KEY, configs=confs)
    table = md_table(["configuration", "KL/token", "DG (mean g drift for SynthID)", "median -log10 p", "median -log10 p (weighted)"], rows)
    return write(out_dir, "fig_synthid_tradeoff", summary, table, TITLE, draw(summary))


def draw(summary: dict):
    """The figure from its JSON summary (``fig_synthid_tradeoff.json``): the median -log10 p of each configuration's
    own detector against its per-key KL, SynthID in both modes over m (mean and weighted-mean score) and DualGA over
    Delta, in the package's style (:mod:`paper_figs.style`); what ``main`` saves and ``python -m paper_figs.redraw``
    redraws."""
    from paper_figs import style

    plt = agg()
    style.apply()
    series = style.Series()
    fig, ax = plt.subplots(figsize=(9, 6.4))
    confs = summary["configs"]
    for mode in dict.fromkeys(c["mode"] for c in confs if c["algo"] == "synthid"):
        cs = [c for c in confs if c["algo"] == "synthid" and c["mode"] == mode]
        for key, score in (("median_neg_log10_p_mean", "mean g-value score"), ("median_neg_log10_p_weighted", "weighted mean score")):
            lab = f"synthid {mode}, {score} ({cs[0]['candidates']} candidates, m {cs[0]['m']}..{cs[-1]['m']} layers)"
            ax.plot([c["kl"] for c in cs], [c[key] for c in cs], label=lab, **series(lab))
    cs = [c for c in confs if c["algo"] == "dualga"]
    if cs:
        lab = "dualga Delta " + ", ".join(f"{c['Delta']:g}" for c in cs) + ": green count"
        ax.plot([c["kl"] for c in cs], [c["median_neg_log10_p"] for c in cs], label=lab, **series(lab))
    ax.set(xscale="log", yscale="log", xlabel="KL divergence from the LM per token, for the key (nats)",
           ylabel="median -log10 p-value of each one's detector", title="SynthID-Text and DualGA on the trade-off")
    style.legend_below(fig, ncol=1)
    style.title(fig, "SynthID-Text (both modes, over m layers) vs DualGA: per-key KL against detection", lm=summary["lm"],
                n=summary["n"], T=summary["T"])
    return fig
