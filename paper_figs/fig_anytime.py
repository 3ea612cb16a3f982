"""Anytime-valid detection (issue 30): what peeking costs and what the e-process saves.

Left: false-positive rate when a growing null text is tested at every prefix and flagged at
the first exact p-value <= alpha (the naive rule), beside the anytime-valid e-process of
:mod:`sims.detect.anytime.sequential` and the fixed-length test of the whole text, on simulated null
texts (i.i.d. Bernoulli(gamma) colours of distinct pairs, :func:`sims.detect.anytime.peeking.null_crossings`;
10^6 texts per cell in full mode), with Clopper-Pearson 95 % intervals.

Right: tokens to detection at alpha = 1e-4 on watermarked texts of the synthetic LM, for
DualGA, SRL and EMS at several strengths (dedup): the e-process's median first crossing
(stopping as soon as it may, valid under peeking) beside the fixed-length test's median
design length (the shortest length t at which at least half of the texts' length-t tests
reject, i.e. the length a user fixing t in advance needs for power 1/2), and the first-prefix
median of the naive rule (invalid).  The table also gives the e-process's detection rate by T.

Two more tables (:mod:`sims.detect.multiple`): the family-wise error of Holm over K = 10, 100,
1000 keys on unwatermarked texts of the LM (and of testing every key at alpha), and the realised
false-discovery rate of BH (exact p-values), e-BH (final e-values) and uncorrected screening on
corpora of 20 % SRL-watermarked and 80 % plain texts.
"""

from __future__ import annotations

import math
import pathlib

import numpy as np

from paper_figs._out import agg, md_table, write
from sims.core import defaults

TITLE = "Anytime-valid detection: the false positives of peeking, and tokens to detection of the e-process vs the fixed-length test"
KEY = defaults.KEY
ALPHAS = (1e-4, 1e-6)
GAMMA = 0.25
CONFIGS = (("dualga", dict(Delta=0.1)), ("dualga", dict(Delta=0.2)), ("dualga", dict(Delta=0.3)),
           ("srl", dict(delta=1.0)), ("srl", dict(delta=2.0)), ("srl", dict(delta=4.0)), ("ems", {}))


def _ci(k: int, n: int) -> tuple[float, float]:
    from scipy.stats import beta

    return (0.0 if k == 0 else float(beta.ppf(0.025, k, n - k + 1)), 1.0 if k == n else float(beta.ppf(0.975, k + 1, n - k)))


def fpr_table(n_texts: int, lengths, seed: int = 0) -> list[dict]:
    """Measured false-positive rates of the naive, anytime and fixed-length rules per (alpha, T).

    Parameters
    ----------
    n_texts : int
        Null texts per (alpha, T) (:func:`sims.detect.anytime.peeking.null_crossings`).
    lengths : iterable of int
        The text lengths T.
    seed : int, optional
        Seed of the null texts.

    Returns
    -------
    list of dict
        Per (alpha of ``ALPHAS``, T): ``alpha``, ``T``, ``n``, ``seed`` and, for each rule (``naive``, ``anytime``,
        ``fixed``), its rate and 95 % Clopper-Pearson interval (``RULE_ci``).
    """
    from sims.detect.anytime.peeking import null_crossings

    rows = []
    for a in ALPHAS:
        for T in lengths:
            r = null_crossings(n_texts, T, GAMMA, a, seed=seed)
            row = dict(alpha=a, T=T, n=n_texts, seed=seed)
            for rule, hit in (("naive", r["naive_stop"] > 0), ("anytime", r["anytime_stop"] > 0), ("fixed", r["fixed"])):
                k = int(hit.sum())
                row[rule] = k / n_texts
                row[f"{rule}_ci"] = _ci(k, n_texts)
            rows.append(row)
    return rows


def detection_table(lm: str, n: int, T: int, vocab_size, alpha: float = 1e-4) -> list[dict]:
    """Tokens to detection of the anytime and fixed-length tests per watermark configuration.

    Parameters
    ----------
    lm : str
        The LM.
    n, T : int
        Texts per configuration and tokens per text.
    vocab_size : int or None
        A synthetic LM's vocabulary (None: its own).
    alpha : float, optional
        The level.

    Returns
    -------
    list of dict
        Per configuration of ``CONFIGS``: ``anytime_median`` (median stopping time of the e-process) and
        ``anytime_detected`` (share stopped), ``fixed_n50`` (shortest length with fixed-length power >= 0.5) and
        ``fixed_power_at_T``, ``naive_median`` (first prefix below the level), and their ratio.
    """
    from paper_figs._data import generations
    from sims.detect.families import detectors
    from sims.detect.stats import scores

    rows = []
    for j, (algo, params) in enumerate(CONFIGS):
        gen = generations(lm, algo, n, T, 100 + j, key=KEY, vocab_size=vocab_size, **params)
        res = detectors.sequential_score(gen, alpha=alpha, dedup=True)
        stop = np.where(res.stop > 0, res.stop, np.inf)
        stat = "ems" if algo == "ems" else "green"
        pre = scores.prefix_log10p(gen.tokens, gen.prompts[:, -gen.meta["h"]:], KEY, stat=stat, gamma=None if algo == "ems" else gen.meta["gamma"],
                                   dedup=True, vocab_size=gen.meta["vocab_size"], lengths=gen.lengths)
        below = pre <= math.log10(alpha)
        power_at = below.mean(axis=0)  # fixed-length power at each length t
        n50 = int(np.argmax(power_at >= 0.5)) + 1 if (power_at >= 0.5).any() else None
        naive = np.where(below.any(axis=1), below.argmax(axis=1) + 1, np.inf)
        med = float(np.median(stop))
        rows.append(dict(algo=algo, params=params, gamma=float(gen.meta["gamma"]), n=n, T=T, anytime_median=med if math.isfinite(med) else None,
                         anytime_detected=float(np.isfinite(stop).mean()), fixed_n50=n50, fixed_power_at_T=float(power_at[-1]),
                         naive_median=float(np.median(naive)) if np.isfinite(np.median(naive)) else None,
                         ratio_anytime_over_fixed=med / n50 if (n50 and math.isfinite(med)) else None))
    return rows


def fwer_table(lm: str, n: int, T: int, vocab_size, alpha: float = 0.05) -> list[dict]:
    """Family-wise error over K keys on unwatermarked texts (keys 1..K, dedup).

    Parameters
    ----------
    lm : str
        The LM.
    n, T : int
        Null texts and tokens per text.
    vocab_size : int or None
        A synthetic LM's vocabulary (None: its own).
    alpha : float, optional
        The family-wise level.

    Returns
    -------
    list of dict
        Per K in 10, 100, 1000: the rates of Holm's step-down (``holm``) and of the uncorrected test
        (``uncorrected``) with their 95 % intervals.
    """
    from paper_figs._data import generations
    from sims.detect import multiple

    gen = generations(lm, "none", n, T, 7, key=KEY, vocab_size=vocab_size)
    rows = []
    for K in (10, 100, 1000):
        lp, _, _ = multiple.score_redgreen_keys(gen.tokens, gen.prompts[:, -gen.meta["h"]:], range(1, K + 1), GAMMA, vocab_size=gen.meta["vocab_size"])
        row = dict(K=K, n=n, T=T, alpha=alpha, seed=7)
        for rule, hit in (("holm", multiple.holm(lp, alpha).any(axis=0)), ("uncorrected", (lp <= math.log10(alpha)).any(axis=0))):
            k = int(hit.sum())
            row[rule], row[f"{rule}_ci"] = k / n, _ci(k, n)
        rows.append(row)
    return rows


def fdr_table(lm: str, corpora: int, N: int, T: int, vocab_size, q: float = 0.1) -> dict:
    """Realised FDR and power of BH, e-BH and the uncorrected test on corpora of N texts, 20 % watermarked with SRL delta = 1.

    The FDR is the mean false-discovery proportion over corpora, with its standard error.

    Parameters
    ----------
    lm : str
        The LM.
    corpora : int
        Corpora.
    N : int
        Texts per corpus.
    T : int
        Tokens per text.
    vocab_size : int or None
        A synthetic LM's vocabulary (None: its own).
    q : float, optional
        The FDR level.

    Returns
    -------
    dict
        Rule (``bh``, ``e-bh``, ``uncorrected``) -> ``fdr``, ``se`` (None for one corpus) and ``power``.
    """
    from paper_figs._data import generations
    from sims.detect import multiple
    from sims.detect.families import detectors

    n1 = N // 5
    wm = generations(lm, "srl", corpora * n1, T, 8, key=KEY, vocab_size=vocab_size, delta=1.0)
    plain = generations(lm, "none", corpora * (N - n1), T, 9, key=KEY, vocab_size=vocab_size)
    lp, le = [], []
    for g in (wm, plain):
        lp.append(detectors.score(g, dedup=True, key=KEY, gamma=GAMMA, algo="srl").log10_p)
        le.append(detectors.sequential_score(g, dedup=True, key=KEY, gamma=GAMMA, algo="srl").log_e)
    truth = np.arange(N) < n1
    out = {}
    for rule in ("bh", "e-bh", "uncorrected"):
        fdp, power = [], []
        for c in range(corpora):
            p = np.concatenate([lp[0][c * n1 : (c + 1) * n1], lp[1][c * (N - n1) : (c + 1) * (N - n1)]])
            e = np.concatenate([le[0][c * n1 : (c + 1) * n1], le[1][c * (N - n1) : (c + 1) * (N - n1)]])
            rej = multiple.benjamini_hochberg(p, q) if rule == "bh" else (multiple.e_bh(e, q) if rule == "e-bh" else p <= math.log10(q))
            fdp.append((rej & ~truth).sum() / max(1, rej.sum()))
            power.append((rej & truth).sum() / n1)
        out[rule] = dict(fdr=float(np.mean(fdp)), se=float(np.std(fdp, ddof=1) / math.sqrt(corpora)) if corpora > 1 else None, power=float(np.mean(power)))
    return dict(q=q, corpora=corpora, N=N, T=T, watermarked_share=n1 / N, rules=out)


def main(out_dir: pathlib.Path, quick: bool, lms=None) -> list[pathlib.Path]:
    """Run the anytime-valid study on one LM and write its figure and tables.

    Parameters
    ----------
    out_dir : pathlib.Path
        The folder the files are written to.
    quick : bool
        Small sizes: 20000 null texts of 200 tokens, 12 detection texts of 150 tokens (V = 2000 on a synthetic LM)
        and small FWER / FDR tables, instead of 1e6 null texts of 200 and 1000 tokens and 400 texts of 600.
    lms : sequence of str, optional
        LMs of ``python -m paper_figs --lm``: its first is used (default ``news``).

    Returns
    -------
    list of pathlib.Path
        The files written: fig_anytime.png, fig_anytime.json and fig_anytime.md (:func:`paper_figs._out.write`).
    """
    from paper_figs._data import is_synthetic, sized

    name = (lms or ("news",))[0]
    n_null, lengths = (20_000, (200,)) if quick else (1_000_000, (200, 1000))
    n, T = sized(name, *((12, 150) if quick else (400, 600)))
    V = 2000 if quick and is_synthetic(name) else None
    fpr = fpr_table(n_null, lengths)
    det = detection_table(name, n, T, V)
    fwer = fwer_table(name, *((300, 50) if quick else (4000, 100)), V)
    fdr = fdr_table(name, *((4, 50, 60) if quick else (40, 200, 100)), V)
    summary = dict(lm=name, gamma=GAMMA, key=KEY, quick=quick, fpr=fpr, detection=det, fwer=fwer, fdr=fdr,
                   naive_over_alpha={f"{r['alpha']:g}_T{r['T']}": r["naive"] / r["alpha"] for r in fpr})
    rows = [[f"{r['alpha']:g}", r["T"], r["n"], r["naive"], f"[{r['naive_ci'][0]:.3g}, {r['naive_ci'][1]:.3g}]", r["anytime"],
             f"[{r['anytime_ci'][0]:.3g}, {r['anytime_ci'][1]:.3g}]", r["fixed"]] for r in fpr]
    table = md_table(["alpha", "T", "null texts", "naive FPR", "95% CI", "anytime FPR", "95% CI", "fixed-length FPR"], rows)
    labels = [_config_label(r) for r in det]
    rows2 = [[lab, f"{r['gamma']:.3f}", r["anytime_median"], r["anytime_detected"], r["fixed_n50"], r["fixed_power_at_T"], r["naive_median"],
              r["ratio_anytime_over_fixed"]] for lab, r in zip(labels, det)]
    table += "\n\n" + md_table(["watermark", "gamma", "anytime median stop", "anytime detected by T", "fixed length for power 1/2",
                                f"fixed power at T={T}", "naive median (invalid)", "anytime / fixed"], rows2)
    table += "\n\n" + md_table(["keys K", "null texts", "alpha", "Holm FWER", "95% CI", "uncorrected FWER", "95% CI"],
                                 [[r["K"], r["n"], r["alpha"], r["holm"], f"[{r['holm_ci'][0]:.3g}, {r['holm_ci'][1]:.3g}]", r["uncorrected"],
                                   f"[{r['uncorrected_ci'][0]:.3g}, {r['uncorrected_ci'][1]:.3g}]"] for r in fwer])
    table += "\n\n" + md_table([f"screening (q={fdr['q']}, {fdr['corpora']} corpora of {fdr['N']} texts, 20% SRL)", "realised FDR", "s.e.", "power"],
                                 [[k, v["fdr"], v["se"], v["power"]] for k, v in fdr["rules"].items()])
    return write(out_dir, "fig_anytime", summary, table, TITLE, draw(summary))


RULES = (("naive", "naive: first prefix with p <= alpha (not valid)", "#D55E00"), ("fixed", "fixed length T", "#777777"),
         ("anytime", "anytime-valid e-process", "#0072B2"))
"""The three detection rules compared (a key of each FPR row of the JSON, its legend entry, its colour)."""
STOPS = ("naive_median", "fixed_n50", "anytime_median")
"""The tokens to detection under each rule of :data:`RULES` (a key of each detection row of the JSON): the naive and
anytime rules' median stopping time, the fixed-length test's least length reaching power 1/2."""


def _config_label(r: dict) -> str:
    """A detection row's configuration (``"srl delta=2.0"``)."""
    return f"{r['algo']} {','.join(f'{k}={v}' for k, v in r['params'].items())}".strip()


def draw(summary: dict):
    """The figure from its JSON summary (``fig_anytime.json``), in the package's style (:mod:`paper_figs.style`): left,
    the false-positive rate of the naive, fixed-length and anytime rules on null texts at each (alpha, T) with
    Clopper-Pearson 95 % intervals and alpha marked; right, tokens to detection of each configuration under the three
    rules.  What ``main`` saves and ``python -m paper_figs.redraw`` redraws."""
    from paper_figs import style

    plt = agg()
    style.apply()
    fpr, det = summary["fpr"], summary["detection"]
    n, T = det[0]["n"], det[0]["T"]
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(14, 5.8))
    x = np.arange(len(fpr))
    for off, (rule, lab, c) in zip((-0.27, 0.0, 0.27), RULES):
        v = np.array([max(r[rule], 0.5 / r["n"]) for r in fpr])  # a rate of 0 drawn at half a text, on the log scale
        lo, hi = np.array([r[f"{rule}_ci"][0] for r in fpr]), np.array([r[f"{rule}_ci"][1] for r in fpr])
        ax.bar(x + off, v, 0.25, color=c, label=lab)
        ax.errorbar(x + off, v, yerr=[np.maximum(v - lo, 0), np.maximum(hi - v, 0)], fmt="none", ecolor=style.REFERENCE_COLOR, lw=0.8,
                    label="_" + lab)
    for i, r in enumerate(fpr):
        ax.hlines(r["alpha"], i - 0.45, i + 0.45, colors=style.REFERENCE_COLOR, linestyles="--", lw=1.1,
                  label="alpha: the level each rule should hold" if i == 0 else "_alpha: the level each rule should hold")
    ax.set_xticks(x, [f"alpha = {r['alpha']:g}\nT = {r['T']}" for r in fpr])
    ax.set(yscale="log", xlabel="level alpha and text length T", ylabel="false-positive rate on null texts (95 % interval)",
           title=f"{fpr[0]['n']:,} null texts per cell, gamma = {summary['gamma']}")
    y = np.arange(len(det))
    big = 1.05 * T
    for off, key, (_, lab, c) in zip((-0.27, 0.0, 0.27), STOPS, RULES):
        ax2.barh(y + off, [big if r[key] is None else r[key] for r in det], 0.25, color=c, label=lab)
    ax2.set_yticks(y, [_config_label(r) for r in det])
    style.reference(ax2, T, f"text length T = {T} (a bar beyond it: not detected within T)", ls=":", horizontal=False)
    ax2.set(xlabel="tokens to detection at alpha = 1e-4 (deduplicated)", ylabel="watermark configuration",
            title="tokens to detection: median stop (naive, anytime),\nleast length with power 1/2 (fixed)")
    style.legend_below(fig, ncol=3)
    style.title(fig, "Anytime-valid detection: false positives of peeking, and tokens to detection", lm=summary["lm"], n=n, T=T)
    return fig
