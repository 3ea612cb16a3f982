"""Independent nulls: the false-positive rate of every cheap detector of Table exp_performance,
each detector scoring its OWN unwatermarked texts, judged by an exact binomial test.

Table exp_performance's control texts are drawn from the chunk's seed alone
(:mod:`sims.experiments.sweep_chunk`), so its cells share one null sample per LM and 500 nulls
cannot say anything about an FPR of 1e-4.  Here each (LM, detector) draws ``n`` fresh
unwatermarked texts under its own seed and counts the texts whose exact p-value is <= each level
(1e-2, 1e-3, 1e-4).  The detectors: red-green at SRL's gammas (0.1, 0.5, 0.7), at DualGA's
gamma*(Delta) for Delta 0.2 ... 0.5 and at ATW's gamma (0.25), and EMS's Gamma tail; UW is left
out (its detector asks the LM's probabilities for every token: an hour at this size).
"""

from __future__ import annotations

import pathlib

import numpy as np

from paper_figs._data import generations
from paper_figs._out import md_table, write

TITLE = "Independent nulls: false-positive rates of the exact detectors"
LEVELS = (1e-2, 1e-3, 1e-4)


def detectors() -> list[tuple[str, str, float | None]]:
    """(name, algo whose detector scores, gamma) for each distinct detector."""
    import theory
    from sims.core import defaults

    out = [(f"red-green gamma={g:g} (SRL)", "srl", g) for g in (0.1, 0.5, 0.7)]
    out += [(f"red-green gamma*({D:g}) = {float(theory.gamma_star(D)):.3f} (DualGA)", "dualga", float(theory.gamma_star(D))) for D in (0.2, 0.3, 0.4, 0.5)]
    return out + [(f"red-green gamma={defaults.GAMMA:g} (ATW)", "atw", defaults.GAMMA), ("EMS Gamma tail", "ems", None)]


def main(out_dir: pathlib.Path, quick: bool, lms=None) -> list[pathlib.Path]:
    """Quick: 64 texts x 50 tokens per detector on news; else 8192 x 200 on news and lfqa (one core, ~15 min)."""
    from paper_figs import criteria as cr
    from sims.detect import scores as detect

    lms = tuple(lms or (("news",) if quick else ("news", "lfqa")))
    n, T = (64, 50) if quick else (8192, 200)
    result = dict(lms=list(lms), n=n, T=T, levels=list(LEVELS), per_lm={})
    rows = []
    for lm in lms:
        dets = []
        for i, (name, algo, gamma) in enumerate(detectors()):
            g = generations(lm, "none", n, T, 10_000 + i, **({} if gamma is None else dict(gamma=gamma)))
            lp = detect.score(g, dedup=True, algo=algo, **({} if gamma is None else dict(gamma=gamma))).log10_p
            k = {f"{a:g}": int(np.sum(lp <= np.log10(a))) for a in LEVELS}
            dets.append(dict(name=name, algo=algo, gamma=gamma, seed=10_000 + i, n=n, rejections=k))
        tests = {}
        for a in LEVELS:
            t = cr.fpr_test([(d["rejections"][f"{a:g}"], d["n"]) for d in dets], level=a)
            tests[f"{a:g}"] = dict(t, verdict=cr.fpr_kept(t))
            rows.append(
                [lm, f"{a:g}", sum(d["rejections"][f"{a:g}"] for d in dets), f"{len(dets)} x {n}", t["p_adjusted"], t["detectable"], tests[f"{a:g}"]["verdict"]]
            )
        result["per_lm"][lm] = dict(detectors=dets, tests=tests)
    table = (
        f"{n} fresh unwatermarked texts x {T} tokens per detector and LM (seeds 10000 + detector index), dedup on; exact one-sided binomial "
        f"test per detector, Bonferroni over the {len(detectors())} detectors, alpha {cr.FPR_ALPHA}.\n\n"
        + md_table(
            ["LM", "level", "rejections (all detectors)", "detectors x nulls", "Bonferroni p", f"FPR revealed with power {cr.FPR_POWER}", "verdict"], rows
        )
        + "\n\n"
        + md_table(
            ["LM", "detector", *[f"rejections at {a:g}" for a in LEVELS]],
            [[lm, d["name"], *d["rejections"].values()] for lm, v in result["per_lm"].items() for d in v["detectors"]],
        )
    )
    return write(out_dir, "tab_null_fpr", result, table, TITLE)
