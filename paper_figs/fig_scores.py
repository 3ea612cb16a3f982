"""Detection power of every score family side by side (issue 31): TPR at 1e-4 and 1e-6 and the
median tokens to detect, against today's default score, unattacked and under 10 / 30 % random
substitution, on the synthetic presets and the fitted ``smollm2-fit``.

Scores (:mod:`sims.detect.score_families`): SRL (delta 2) and DualGA (Delta 0.2) with the green
count (default) and the likelihood-ratio score ``lr``; EMS with ``ems-ars`` (default), ``ems-log``,
``ems-opt`` (Delta = 0.1), ``ems-hc`` and ``ems-trgof``.  Every test is exact at its level:
p-values of the sum scores and of ``lr`` per text, and for HC / Tr-GoF / ``ems-opt`` the exact
critical value of each length (bisection on the exact tail).  Texts: 150 of ``T_FULL`` tokens
(quick: 12 of 60).  Tokens to detect: on ``PREFIXES`` prefix lengths, the shortest prefix from
which every longer one has p <= 1e-4 (infinite if the whole text does not; the median is over
all texts, nan when fewer than half get there).
"""

from __future__ import annotations

import functools
import math
import pathlib

import numpy as np

from paper_figs._out import md_table, write
from sims.core import defaults

TITLE = "power of each detection score vs the default: TPR at 1e-4 / 1e-6 and median tokens to detect"
KEY = defaults.KEY
LEVELS = (1e-4, 1e-6)
RATES = (0.0, 0.1, 0.3)
PREFIXES = 10  # tokens to detect is read on prefixes of T / PREFIXES, 2 T / PREFIXES, ..., T tokens
ALGOS = {"srl": (dict(delta=2.0), ("green", "lr")), "dualga": (dict(Delta=0.2), ("green", "lr")),
         "ems": ({}, ("ems-ars", "ems-log", "ems-opt", "ems-hc", "ems-trgof"))}
T_FULL = {"srl": 200, "dualga": 200, "ems": 50}  # EMS detects in a few dozen tokens: shorter texts separate its scores
DEFAULT = {"srl": "green", "dualga": "green", "ems": "ems-ars"}


@functools.cache
def _order_critical(kind: str, n: int, level: float) -> float:
    """Exact critical value of HC / Tr-GoF on n p-values: smallest c with tail <= level (bisection on ln c)."""
    from sims.detect import gumbel_scores as gs

    lo, hi = math.log(1e-3), math.log(1e8)
    for _ in range(32):  # c to a relative 25 / 2^32 ~ 6e-9
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if gs.order_stat_logsf(kind, math.exp(mid), n) > math.log(level) else (lo, mid)
    return math.exp(hi)


def _prefix_rejects(name, gen, inputs, lengths, levels):
    """level -> (n_texts, len(lengths)) bool: the exact test of ``name`` at that level rejects the
    prefix; ``inputs`` are the red-green texts' :func:`sims.detect.lr_scores.lr_token_inputs`."""
    from sims.detect import gumbel_scores as gs
    from sims.detect import lr_scores as lr
    from sims.detect.nulls import LN10, binom_logsf, gamma_logsf
    from sims.detect.scores import token_scores

    m = gen.meta
    outs = {a: np.zeros((gen.tokens.shape[0], len(lengths)), dtype=bool) for a in levels}
    if name in ("green", "lr"):
        gam = m["gamma"]
        for i in range(gen.tokens.shape[0]):
            X, G, p_y, keep = inputs[i]
            if name == "green":
                keep = np.ones_like(keep)
                k = np.ones(X.size, dtype=np.int64)
            else:
                delta = lr.lr_delta(m)
                k = lr.quantise(lr.lr_weights(G - p_y * X, p_y, delta), delta)
            g_eff = float(np.floor(gam * 2.0**53) / 2.0**53)
            for j, L in enumerate(lengths):
                kk, xx = k[:L][keep[:L]], X[:L][keep[:L]]
                if name == "green":
                    lp = float(binom_logsf(int(xx.sum()), xx.size, g_eff))
                else:
                    lp = lr.weighted_bernoulli_logsf(kk, int(kk[xx].sum()), g_eff)
                for a in levels:
                    outs[a][i, j] = xx.size > 1 and lp <= math.log(a)
        return outs
    v, scored = token_scores(gen.tokens, gen.prompts[:, -m["h"]:], KEY, stat="ems", h=m["h"], vocab_size=m["vocab_size"], lengths=gen.lengths)
    for j, L in enumerate(lengths):
        vv = v[:, :L]
        for a in levels:
            out = outs[a]
            if name == "ems-ars":
                out[:, j] = gamma_logsf(vv.sum(axis=1), L) / LN10 <= math.log10(a)
            elif name == "ems-log":
                out[:, j] = gs.log_gamma_cdf(-gs.log_pivot(vv).sum(axis=1), L) <= math.log(a)
            elif name == "ems-opt":
                _, kmin, pmf = gs.opt_lattice(gs.OPT_DELTA)
                k = gs.opt_cells(gs.log_pivot(vv), gs.OPT_DELTA).sum(axis=1) - L * kmin
                out[:, j] = k >= gs.iid_lattice_critical(L, pmf, a)
            else:
                p = np.sort(np.exp(-vv), axis=1)
                kind = "hc" if name == "ems-hc" else "trgof"
                stat = np.array([(gs.hc_terms(r) if kind == "hc" else gs.trgof_terms(r, gs.TRGOF_S)).max() for r in p])
                out[:, j] = stat >= _order_critical(kind, L, a)
    return outs


def _ttd(rej: np.ndarray, lengths) -> np.ndarray:
    stays = np.flip(np.logical_and.accumulate(np.flip(rej, axis=1), axis=1), axis=1)
    first = np.argmax(stays, axis=1)
    return np.where(stays.any(axis=1), np.asarray(lengths)[first], np.nan)


def main(out_dir: pathlib.Path, quick: bool, lms=None) -> list[pathlib.Path]:
    from paper_figs._data import get_lm, sized
    from sims.detect.lr_scores import lr_token_inputs
    from sims.experiments.attacks import attack
    from sims.experiments.evaluate import clopper_pearson
    from sims.watermarks.generate import generate

    plt = __import__("paper_figs._out", fromlist=["agg"]).agg()
    names = tuple(lms or (("news",) if quick else ("news", "lfqa", "smollm2-fit")))
    rows, table = [], []
    for lm_name in names:
        lm = get_lm(lm_name, 2000 if quick and lm_name != "smollm2-fit" else None)
        for algo, (params, score_names) in ALGOS.items():
            n, T = sized(lm_name, *((12, 60) if quick else (150, T_FULL[algo])))
            lengths = [T * (j + 1) // PREFIXES for j in range(PREFIXES)]
            gen0 = generate(lm, algo, n=n, T=T, seed=11, key=KEY, **params)
            for rate in RATES:
                gen = attack(gen0, "substitution", rate, seed=12) if rate > 0 else gen0
                inputs = [lr_token_inputs(gen, lm, KEY, gen.meta["gamma"], i) for i in range(n)] if algo != "ems" else None
                for name in score_names:
                    rej = _prefix_rejects(name, gen, inputs, lengths, LEVELS)
                    ttd = _ttd(rej[1e-4], lengths)
                    med = float(np.median(np.where(np.isfinite(ttd), ttd, np.inf)))
                    med = med if math.isfinite(med) else math.nan
                    r = dict(lm=lm_name, algo=algo, attack=rate, score=name, default=name == DEFAULT[algo], n=n, T=T, tokens_to_detect_median=med)
                    for a in LEVELS:
                        k = int(rej[a][:, -1].sum())
                        r[f"tpr_at_{a:g}"], r[f"tpr_at_{a:g}_ci99"] = k / n, clopper_pearson(k, n, 0.99)
                    rows.append(r)
                    print(f"fig_scores: {lm_name} {algo} {rate} {name}: TPR@1e-6 {r['tpr_at_1e-06']:.3f}, ttd {med}", flush=True)
                    table.append([lm_name, algo, f"{int(rate * 100)}%", name + (" (default)" if r["default"] else ""), r["tpr_at_0.0001"],
                                  r["tpr_at_1e-06"], med])
    best = {}
    for r in rows:
        key = (r["lm"], r["algo"], r["attack"])
        rank = (r["tpr_at_1e-06"], r["tpr_at_0.0001"], -(r["tokens_to_detect_median"] if math.isfinite(r["tokens_to_detect_median"]) else 1e9))
        if key not in best or rank > best[key][0]:
            best[key] = (rank, r["score"])
    default_best = [f"{k[0]}/{k[1]}/{int(k[2] * 100)}%" for k, (rank, s) in best.items()
                    if any(r["score"] == DEFAULT[k[1]] and (r["tpr_at_1e-06"], r["tpr_at_0.0001"]) == rank[:2] for r in rows
                           if (r["lm"], r["algo"], r["attack"]) == k)]
    fig, axes = plt.subplots(1, len(ALGOS), figsize=(15, 4.2), sharey=True)
    for ax, (algo, (_, score_names)) in zip(axes, ALGOS.items()):
        settings = [(lm_name, rate) for lm_name in names for rate in RATES]
        width = 0.8 / len(score_names)
        for s_i, name in enumerate(score_names):
            vals = [next(r["tpr_at_1e-06"] for r in rows if (r["lm"], r["attack"], r["algo"], r["score"]) == (lm_name, rate, algo, name))
                    for lm_name, rate in settings]
            ax.bar(np.arange(len(settings)) + s_i * width, vals, width, label=name + (" (default)" if name == DEFAULT[algo] else ""))
        ax.set_xticks(np.arange(len(settings)) + 0.4 - width / 2)
        ax.set_xticklabels([f"{lm_name}\n{int(rate * 100)}%" for lm_name, rate in settings], fontsize=7)
        ax.set_title(f"{algo}: TPR at 1e-6 (substitution rate below)", fontsize=9)
        ax.legend(fontsize=7)
    axes[0].set_ylabel("TPR at fpr 1e-6")
    fig.tight_layout()
    summary = dict(rows=rows, best_score={f"{k[0]}/{k[1]}/{int(k[2] * 100)}%": v[1] for k, v in best.items()},
                   default_ties_or_wins=default_best, quick=quick, key=KEY, prefixes=PREFIXES)
    header = ["lm", "algo", "substitution", "score", "TPR@1e-4", "TPR@1e-6", "median tokens to detect (1e-4)"]
    return write(out_dir, "fig_scores", summary, md_table(header, table), TITLE, fig)
