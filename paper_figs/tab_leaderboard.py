"""Leaderboard: every algorithm's detection and perplexity at the same exact KL per token (0.05, 0.1, 0.2 nats).

For each LM (the synthetic ``news`` and ``lfqa`` presets and ``smollm2-fit``, the bigram LM fitted to SmolLM2) and
each algorithm of the registry that runs on the Numba generator, a curve over the parameter that sets its strength
(:data:`STRENGTH`; an algorithm without one is a single point at its defaults), at the generator's default for every
other parameter (gamma included).  Each point is ``n`` texts of ``T`` tokens, all drawn with seed 0 and key
:data:`sims.core.defaults.KEY`, so text ``j`` of every configuration starts from the same prompt and the bootstrap
below is paired.  Per text:

- KL: the mean over its tokens of the exact :math:`D_{kl}(q_t \\| p_t)` (the per-key KL, as in the matched comparison
  :mod:`paper_figs.fig_matched`: for the keyed schemes this is the KL of the law one key draws from, not of the
  key-averaged law, which is ``p_t`` itself for the distortion-free ones);
- log10 p: the exact p-value of its algorithm's own detector family with (context, token) pair dedup
  (:func:`sims.detect.families.detectors.score`; a family with its own rule, the tournament's, runs its
  generation's: SynthID's ``mask_repeated``);
- log-perplexity: the mean over its tokens of :math:`-\\log p(y_t \\mid \\cdot)` under the *unwatermarked* LM
  (:meth:`sims.lm.door.LM.token_logprobs`, exact on these LMs).

A configuration's numbers: the mean KL; TPR at 1e-6 (share of texts with log10 p <= -6); the median log10 p; and
perplexity = exp(mean log-perplexity over texts), the geometric mean of the texts' perplexities.  Each is read at
the KL :data:`LEVELS` by linear interpolation in log KL between the curve's points (:func:`paper_figs._matched.metric_at_kl`,
no extrapolation: a level outside a curve's KL range is "out of range", with the range given).  Intervals: 95 %
percentile intervals of :data:`BOOTSTRAP` replicates resampling the texts (the same resampled indices for every
configuration of an LM), each replicate redoing every point and every interpolation; one interval per cell, not
simultaneous over the table.  The row "none" is the unwatermarked LM's perplexity (its KL is 0).

``python -m paper_figs.tab_leaderboard --out docs/results`` (200 texts x 200 tokens per point); ``--quick``: ``news``
alone at V = 1000, 40 x 40.
"""

from __future__ import annotations

import itertools
import pathlib

import numpy as np

from paper_figs import _matched as mt
from paper_figs._out import md_table, write

TITLE = "Leaderboard: TPR at 1e-6, median log10 p and perplexity at the same KL per token"
LMS = ("news", "lfqa", "smollm2-fit")
LEVELS = (0.05, 0.1, 0.2)
"""The KL per token (nats) at which every algorithm is read."""
BOOTSTRAP = 400
CONFIDENCE = 0.95
STRENGTH = {
    "srl": ("delta", (0.25, 0.5, 1.0, 2.0, 3.0, 5.0)),
    "dualga": ("Delta", (0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7)),
    "autocov": ("Delta", (0.05, 0.1, 0.2, 0.3, 0.5)),
    "atw": ("delta", (0.5, 1.0, 2.0, 3.0, 5.0, 10.0)),
    "unigram": ("delta", (0.25, 0.5, 1.0, 2.0, 3.0, 5.0)),
    "hard": ("gamma", (0.5, 0.7, 0.9, 0.97, 0.99)),
    "ems": ("tau", (0.25, 1.0)),
    "dipmark": ("dip_alpha", (0.05, 0.1, 0.2, 0.35, 0.5)),
    "synthid": ("m", (1, 2, 4, 8)),
    "morphmark": ("morph_kappa", (0.1, 0.2, 0.4, 0.7, 1.0, 1.3)),
    "sweet": ("delta", (0.5, 1.0, 2.0, 3.0, 5.0, 10.0)),
    "pf": ("tau", (0.5, 1.0)),
    "gumbelsoft": ("gs_tau", (0.5, 1.0)),
}
"""Each algorithm's strength parameter and its values (an algorithm not listed: one point at its defaults)."""


def configs(algos=None) -> list[tuple[str, dict]]:
    """Every configuration of the board: ``none``, then each Numba algorithm of the registry over its
    :data:`STRENGTH` values (or at its defaults), in registry order.

    Parameters
    ----------
    algos : sequence of str, optional
        Restrict to these algorithms (``none`` is always included).

    Returns
    -------
    list of (str, dict)
        ``(algo, params)`` pairs.
    """
    from sims.watermarks import registry

    out = [("none", {})]
    for a in registry.names():
        if a == "none" or "numba" not in registry.get(a).backends or (algos and a not in algos):
            continue
        name, values = STRENGTH.get(a, (None, (None,)))
        out += [(a, {} if name is None else {name: v}) for v in values]
    return out


def per_text(gen, lm, detect: bool = True) -> dict[str, np.ndarray]:
    """Per-text KL per token, exact log10 p of the algorithm's detector (pair dedup where the family takes it) and
    log-perplexity under ``lm``.

    Parameters
    ----------
    gen : Generation
        The texts (:func:`sims.generate`).
    lm : LM
        The unwatermarked LM they were drawn from.
    detect : bool
        Score the texts; else their log10 p is nan (a curve that reaches no KL level is never read).

    Returns
    -------
    dict
        ``kl``, ``log10_p`` and ``log_ppl``, each of shape ``(n,)``.
    """
    from sims.detect import families
    from sims.detect.families.detectors import score

    kl = np.nanmean(gen.kl, axis=1)  # the records and log-probabilities are nan past each text's length
    log_ppl = -np.nanmean(lm.token_logprobs(gen), axis=1)
    if not detect:
        return dict(kl=kl, log10_p=np.full(kl.shape, np.nan), log_ppl=log_ppl)
    dedup = families.of(gen.meta["algo"]).own_dedup is None
    return dict(kl=kl, log10_p=np.asarray(score(gen, lm, dedup=dedup).log10_p, float), log_ppl=log_ppl)


def point_numbers(arrays: dict, weights: np.ndarray) -> dict[str, np.ndarray]:
    """A configuration's numbers for each row of bootstrap ``weights`` (shape ``(B, n)``; a row of ones is the
    point estimate): mean KL, TPR at 1e-6, median log10 p (:func:`paper_figs._matched.point_stats`) and
    perplexity exp(mean log-perplexity).

    Parameters
    ----------
    arrays : dict
        :func:`per_text`'s arrays.
    weights : ndarray (B, n)
        Bootstrap counts of each text.

    Returns
    -------
    dict
        ``kl``, ``tpr_1e-6``, ``median_log10_p`` and ``perplexity``, each of shape ``(B,)``.
    """
    s = mt.point_stats(arrays["kl"], np.zeros_like(arrays["kl"]), arrays["log10_p"], weights)
    ppl = np.exp(weights @ arrays["log_ppl"] / weights.sum(axis=1))
    return {"kl": s["kl"], "tpr_1e-6": s["tpr_1e-6"], "median_log10_p": -s["strength"], "perplexity": ppl}


METRICS = ("tpr_1e-6", "median_log10_p", "perplexity")


def board(points: list[tuple[str, dict, dict]], *, B: int = BOOTSTRAP, seed: int = 0,
          confidence: float = CONFIDENCE, levels=LEVELS) -> list[dict]:
    """Each algorithm's metrics at the KL ``levels``, with percentile bootstrap intervals.

    Parameters
    ----------
    points : list of (algo, params, arrays)
        Every configuration of one LM with its :func:`per_text` arrays (one ``n`` for all).
    B, seed : int
        Bootstrap replicates and the seed of their text indices (shared by all configurations: paired).
    confidence : float
        Level of each cell's percentile interval.
    levels : sequence of float
        KL per token at which to read the curves.

    Returns
    -------
    list of dict
        One row per algorithm: ``algo``, ``param`` (its strength parameter or None), ``kl_range`` [min, max] of its
        points, and for each metric and level ``{metric: [{"kl": level, "value", "ci": [lo, hi]} or value None]}``;
        the ``none`` row holds its perplexity with its interval.
    """
    n = points[0][2]["kl"].size
    w = np.vstack([np.ones((1, n)), mt.bootstrap_weights(n, B, seed)])
    q = (1 - confidence) / 2
    by_algo: dict[str, list] = {}
    for algo, params, arrays in points:
        by_algo.setdefault(algo, []).append((params, point_numbers(arrays, w)))
    rows = []
    lv = np.asarray(levels, float)
    for algo, pts in by_algo.items():
        kls = np.array([p["kl"] for _, p in pts])  # (points, B + 1)
        param = next(iter(pts[0][0]), None)
        row = dict(algo=algo, param=param, values=[pp.get(param) for pp, _ in pts],
                   kl_range=[float(kls[:, 0].min()), float(kls[:, 0].max())])
        if algo == "none":
            ppl = pts[0][1]["perplexity"]
            row["perplexity"] = dict(value=float(ppl[0]), ci=[float(np.quantile(ppl[1:], q)), float(np.quantile(ppl[1:], 1 - q))])
            rows.append(row)
            continue
        bounds = (kls[:, 0].min(), kls[:, 0].max())
        for m in METRICS:
            ys = np.array([p[m] for _, p in pts])
            at = np.array([mt.metric_at_kl(kls[:, r], ys[:, r], lv, bounds) for r in range(w.shape[0])])  # (B + 1, levels)
            cells = []
            for j, level in enumerate(lv):
                if np.isnan(at[0, j]):
                    cells.append(dict(kl=float(level), value=None))
                    continue
                rep = at[1:, j][np.isfinite(at[1:, j])]
                cells.append(dict(kl=float(level), value=float(at[0, j]), ci=[float(np.quantile(rep, q)), float(np.quantile(rep, 1 - q))]))
            row[m] = cells
        rows.append(row)
    return rows


def _cell(c: dict, fmt: str) -> str:
    if c.get("value") is None:
        return "out of range"
    lo, hi = c["ci"]
    return f"{c['value']:{fmt}} [{lo:{fmt}}, {hi:{fmt}}]"


def table(summary: dict) -> str:
    """The leaderboard as markdown: per LM and metric, one row per algorithm, a column per KL level."""
    fmts = {"tpr_1e-6": ".2f", "median_log10_p": ".1f", "perplexity": ".2f"}
    names = {"tpr_1e-6": "TPR at 1e-6", "median_log10_p": "median log10 p", "perplexity": "perplexity under the unwatermarked LM"}
    parts = [f"Each cell: value [{summary['confidence']:.0%} percentile bootstrap interval, {summary['bootstrap']} replicates "
             "over texts, paired across configurations], read at the KL level by interpolation in log KL along the "
             "algorithm's curve over its strength (no extrapolation: \"out of range\" where the curve does not reach the "
             "level). KL is the exact per-key KL per token; detection is each algorithm's own exact detector; perplexity "
             "is under the unwatermarked LM."]
    for name, rows in summary["per_lm"].items():
        parts.append(f"## {name}: n = {summary['n']} texts x T = {summary['T']} tokens per point, seed {summary['seed']}")
        for r in rows:
            if r["algo"] == "none":
                p = r["perplexity"]
                parts.append(f"Unwatermarked text (KL 0): perplexity {p['value']:.2f} [{p['ci'][0]:.2f}, {p['ci'][1]:.2f}].")
        for m in METRICS:
            header = ["algorithm", "strength", "KL range (nats)"] + [f"KL {lv:g}" for lv in summary["levels"]]
            body = []
            for r in rows:
                if r["algo"] == "none":
                    continue
                strength = f"{r['param']} in {', '.join(f'{v:g}' for v in r['values'])}" if r["param"] else "defaults"
                rng = f"{r['kl_range'][0]:.3g} to {r['kl_range'][1]:.3g}"
                body.append([r["algo"], strength, rng] + [_cell(c, fmts[m]) for c in r[m]])
            parts.append(f"### {name}: {names[m]}\n\n" + md_table(header, body))
    return "\n\n".join(parts)


def main(out_dir: pathlib.Path, quick: bool, lms=None, n: int | None = None, T: int | None = None,
         algos=None) -> list[pathlib.Path]:
    """Run every configuration of :func:`configs` on each LM and write tab_leaderboard.{json,md}.

    A row depends on its own algorithm's texts only (the bootstrap's resampled indices depend on ``n``, the
    replicates and the seed alone), so ``algos`` recomputes those rows and keeps the others of the board already in
    ``out_dir``, which must have the same LMs and sizes.

    Parameters
    ----------
    out_dir : pathlib.Path
        Output folder.
    quick : bool
        ``news`` alone (unless ``lms``) at V = 1000, 40 texts x 40 tokens per point (else each preset's
        vocabulary, 200 x 200).
    lms : sequence of str, optional
        LMs (default :data:`LMS`; synthetic ones only).
    n, T : int, optional
        Texts and tokens per point, overriding the defaults.
    algos : sequence of str, optional
        Recompute only these algorithms' rows (and ``none``'s), keeping the others of ``out_dir``'s board.

    Returns
    -------
    list of pathlib.Path
        The files written.

    Raises
    ------
    ValueError
        A real LM in ``lms``; ``algos`` with no board in ``out_dir`` of the same LMs and sizes.
    """
    import json

    from paper_figs._data import figure_lm, generations, is_synthetic
    from sims.core.progress import progress

    lms = tuple(lms or (LMS[:1] if quick else LMS))
    for name in lms:
        if not is_synthetic(name):
            raise ValueError(f"lm must be a synthetic LM (the board reads exact KL and perplexity); got {name!r}")
    V = 1000 if quick else None
    n, T = n or (40 if quick else 200), T or (40 if quick else 200)
    old = None
    if algos:
        path = out_dir / "tab_leaderboard.json"
        old = json.loads(path.read_text()) if path.exists() else None
        same = old is not None and (old["lms"], old["n"], old["T"], old["vocab_size"]) == (list(lms), n, T, V)
        if not same:
            raise ValueError(f"algos needs a board of the same LMs {list(lms)}, n = {n}, T = {T} in {path} to update; "
                             f"got {'none' if old is None else (old['lms'], old['n'], old['T'])}")
    todo = configs(algos)
    per_lm = {}
    with progress(len(todo) * len(lms), "tab_leaderboard", unit="config") as bar:
        for name in lms:
            lm = figure_lm(name, V)
            points = []
            for algo, group in itertools.groupby(todo, key=lambda c: c[0]):
                gens = []
                for _, params in group:
                    gens.append((params, generations(name, algo, n, T, 0, vocab_size=V, **params)))
                    bar.update()
                kls = [float(np.nanmean(g.kl)) for _, g in gens]
                read = algo != "none" and min(kls) <= max(LEVELS) and max(kls) >= min(LEVELS)  # the curve reaches a level
                points += [(algo, params, per_text(g, lm, detect=read)) for params, g in gens]
            rows = {r["algo"]: r for r in board(points)}
            if old is not None:  # keep the other algorithms' rows, in registry order
                rows = {r["algo"]: rows.get(r["algo"], r) for r in old["per_lm"][name]} | rows
                rows = {a: rows[a] for a in dict.fromkeys(a for a, _ in configs()) if a in rows}
            per_lm[name] = list(rows.values())
    summary = dict(lms=list(lms), n=n, T=T, seed=0, levels=list(LEVELS), bootstrap=BOOTSTRAP, confidence=CONFIDENCE,
                   vocab_size=V, per_lm=per_lm)
    return write(out_dir, "tab_leaderboard", summary, table(summary), TITLE)


def cli(argv=None) -> None:
    """``python -m paper_figs.tab_leaderboard --out DIR [--quick] [--lm LM ...] [--n N] [--T T] [--algo A ...]``.

    Parameters
    ----------
    argv : list of str, optional
        The arguments (default ``sys.argv[1:]``).
    """
    import argparse

    ap = argparse.ArgumentParser(prog="python -m paper_figs.tab_leaderboard", description=TITLE)
    ap.add_argument("--out", type=pathlib.Path, required=True, help="folder of tab_leaderboard.{json,md}")
    ap.add_argument("--quick", action="store_true", help="news at V = 1000, 40 x 40")
    ap.add_argument("--lm", action="append", help=f"LM (repeatable; default {', '.join(LMS)})")
    ap.add_argument("--n", type=int, help="texts per point (default 200)")
    ap.add_argument("--T", type=int, help="tokens per text (default 200)")
    ap.add_argument("--algo", action="append", help="recompute only this algorithm's rows (repeatable), keeping the others")
    a = ap.parse_args(argv)
    a.out.mkdir(parents=True, exist_ok=True)
    print(main(a.out, a.quick, a.lm, n=a.n, T=a.T, algos=a.algo))


if __name__ == "__main__":
    cli()
