"""Independent nulls: the false-positive rate of every detector of Table exp_performance, each
detector scoring its OWN unwatermarked texts, judged by an exact binomial test.

Table exp_performance's control texts are drawn from the chunk's seed alone
(:mod:`sims.sweep.chunk`), so its cells share one null sample per LM and 500 nulls
cannot say anything about an FPR of 1e-4.  Here each (LM, detector) draws ``n`` fresh
unwatermarked texts under its own seed and counts the texts whose exact p-value is <= each level
(1e-2, 1e-3, 1e-4).  The detectors: red-green at SRL's gammas (0.1, 0.5, 0.7), at DualGA's
gamma*(Delta) for Delta 0.2 ... 0.5 and at ATW's gamma (0.25), EMS's Gamma tail (group ``exact``),
and UW-delta's / UW-gamma's keyed-order tests (group ``uw``: exact Poisson-binomial tails that ask
the LM's next-token distribution at every step, so they score :data:`UW_N` texts per detector).

A real LM (``--lm smollm2``) draws ONE null sample (``--real-n`` x ``--real-T``) that every
detector scores: Bonferroni over the detectors holds under any dependence, so the family test
stays valid; what the sample can reveal is stated (``detectable``, ``n_needed``).  A rerun into a
folder whose JSON already holds a detector at the same seed and size reuses its counts.
"""

from __future__ import annotations

import json
import pathlib

import numpy as np

from paper_figs._data import figure_lm, generations, is_synthetic, sized
from paper_figs._out import md_table, write

TITLE = "Independent nulls: false-positive rates of the exact detectors"
LEVELS = (1e-2, 1e-3, 1e-4)
UW_N = 512  # UW's nulls per detector and synthetic LM (each text asks T next-token distributions of the LM)
GROUPS = {"exact": "red-green and EMS (exact binomial / Gamma tails)", "uw": "UW-delta and UW-gamma (keyed-order Poisson-binomial tails)"}


def detectors() -> list[tuple[str, str, float | None]]:
    """(name, algo whose detector scores, gamma) for each distinct detector.

    Returns
    -------
    list of (str, str, float or None)
        Red-green at SRL's, DualGA's and ATW's gammas, EMS's Gamma tail, and the UW keyed orders.
    """
    import theory
    from sims.core import defaults

    out = [(f"red-green gamma={g:g} (SRL)", "srl", g) for g in (0.1, 0.5, 0.7)]
    out += [(f"red-green gamma*({D:g}) = {float(theory.gamma_star(D)):.3f} (DualGA)", "dualga", float(theory.gamma_star(D))) for D in (0.2, 0.3, 0.4, 0.5)]
    out += [(f"red-green gamma={defaults.GAMMA:g} (ATW)", "atw", defaults.GAMMA), ("EMS Gamma tail", "ems", None)]
    return out + [("UW-delta keyed order", "uw-delta", None), ("UW-gamma keyed order", "uw-gamma", None)]


def group(algo: str) -> str:
    """The detector group of ``algo``: ``uw`` for the keyed-order tests, else ``exact``.

    Parameters
    ----------
    algo : str
        The algorithm.

    Returns
    -------
    str
    """
    return "uw" if algo.startswith("uw-") else "exact"


def _rejections(lp: np.ndarray) -> dict[str, int]:
    return {f"{a:g}": int(np.sum(lp <= np.log10(a))) for a in LEVELS}


def _score(g, algo: str, gamma, lm):
    from sims.detect.families import detectors

    oracle = lm if group(algo) == "uw" else None
    return detectors.score(g, oracle, dedup=True, algo=algo, **({} if gamma is None else dict(gamma=gamma))).log10_p


def _previous(out_dir: pathlib.Path) -> dict:
    """(lm, name, seed, n, T) -> rejections of the detectors already in ``out_dir``'s JSON."""
    f = out_dir / "tab_null_fpr.json"
    if not f.exists():
        return {}
    d = json.loads(f.read_text())
    return {(lm, x["name"], x["seed"], x["n"], x.get("T", d["T"])): x["rejections"] for lm, v in d["per_lm"].items() for x in v["detectors"]}


def _tests(dets: list[dict]) -> dict:
    from paper_figs import criteria as cr

    out = {}
    for a in LEVELS:
        t = cr.fpr_test([(d["rejections"][f"{a:g}"], d["n"]) for d in dets], level=a)
        out[f"{a:g}"] = dict(t, verdict=cr.fpr_kept(t), T=dets[0]["T"], shared=dets[0]["shared"])
    return out


def null_counts(lm: str, n: int, T: int, n_uw: int, previous: dict | None = None, log=print) -> list[dict]:
    """Each detector's rejection counts on LM ``lm``.

    A synthetic preset draws ``n`` (UW: ``n_uw``) fresh texts per detector under seed 10000 + its index; a real LM
    one shared sample of ``n``.

    Parameters
    ----------
    lm : str
        The LM.
    n, T : int
        Null texts and tokens per text.
    n_uw : int
        Null texts of the UW keyed-order detectors.
    previous : dict, optional
        Counts of an earlier run, by (lm, detector, seed, n, T), reused instead of recomputed.
    log : callable, optional
        Receives one line per detector.

    Returns
    -------
    list of dict
        Per detector: name, algo, gamma, group, seed, n, T, whether the sample is shared, and ``rejections``
        (count per level).
    """
    previous = previous or {}
    real = not is_synthetic(lm)
    oracle = figure_lm(lm)
    shared = generations(lm, "none", n, T, 10_000) if real else None
    dets = []
    for i, (name, algo, gamma) in enumerate(detectors()):
        m = n if real or group(algo) == "exact" else n_uw
        seed = 10_000 if real else 10_000 + i
        rej = previous.get((lm, name, seed, m, T))
        if rej is None:
            g = shared if real else generations(lm, "none", m, T, seed, **({} if gamma is None else dict(gamma=gamma)))
            rej = _rejections(_score(g, algo, gamma, oracle))
            log(f"{lm} {name}: {m} nulls x {T}: {rej}")
        dets.append(dict(name=name, algo=algo, gamma=gamma, group=group(algo), seed=seed, n=m, T=T, shared=real, rejections=rej))
    return dets


def main(out_dir: pathlib.Path, quick: bool, lms=None) -> list[pathlib.Path]:
    """Count the false positives of each exact detector on independent null texts and tabulate them.

    Quick: 64 texts x 50 tokens per detector (UW 16) on news; else 8192 x 200 (UW :data:`UW_N`) on news and
    lfqa; a real LM one shared sample of ``--real-n`` x ``--real-T``.

    Parameters
    ----------
    out_dir : pathlib.Path
        The folder the files are written to.
    quick : bool
        Small sizes (see above) instead of the paper's.
    lms : sequence of str, optional
        LMs of ``python -m paper_figs --lm``: the LMs run (default ``news`` quick, ``news`` and ``lfqa`` full).

    Returns
    -------
    list of pathlib.Path
        The files written: tab_null_fpr.png, tab_null_fpr.json and tab_null_fpr.md (:func:`paper_figs._out.write`);
        the full run resumes from a previous tab_null_fpr.json.
    """
    from paper_figs import criteria as cr

    lms = tuple(lms or (("news",) if quick else ("news", "lfqa")))
    n0, T0, n_uw = (64, 50, 16) if quick else (8192, 200, UW_N)
    previous = {} if quick else _previous(out_dir)
    result = dict(lms=list(lms), levels=list(LEVELS), groups=GROUPS, per_lm={})
    rows = []
    for lm in lms:
        n, T = sized(lm, n0, T0)
        dets = null_counts(lm, n, T, n_uw, previous)
        by_group = {gname: _tests([d for d in dets if d["group"] == gname]) for gname in GROUPS}
        result["per_lm"][lm] = dict(n=n, T=T, shared=dets[0]["shared"], detectors=dets, tests=_tests(dets), tests_by_group=by_group)
        for gname, tests in (("all", result["per_lm"][lm]["tests"]), *by_group.items()):
            for a in LEVELS:
                t = tests[f"{a:g}"]
                ns = sorted({d["n"] for d in dets if gname == "all" or d["group"] == gname})
                rows.append([lm, gname, f"{a:g}", t["rejections"], f"{t['tests']} x {'/'.join(map(str, ns))}", t["p_adjusted"], t["detectable"],
                             t["n_needed"], t["verdict"]])
    first = result["per_lm"][lms[0]]
    result.update(n=first["n"], T=first["T"])  # the exact group's size on the first LM (the report's n and T)
    table = (
        f"Synthetic presets: {n0} fresh unwatermarked texts x {T0} tokens per detector (UW: {n_uw}; seeds 10000 + detector index); a real "
        f"LM: one shared sample that every detector scores.  Dedup on; exact one-sided binomial test per detector, Bonferroni over the "
        f"detectors of the group (valid under any dependence), alpha {cr.FPR_ALPHA}; n_needed: nulls per detector to reveal "
        f"{cr.FPR_RESOLUTION:g} x the level with power {cr.FPR_POWER}.\n\n"
        + md_table(["LM", "group", "level", "rejections", "detectors x nulls", "Bonferroni p", f"FPR revealed with power {cr.FPR_POWER}",
                    "n_needed", "verdict"], rows)
        + "\n\n"
        + md_table(
            ["LM", "detector", "nulls x T", *[f"rejections at {a:g}" for a in LEVELS]],
            [[lm, d["name"], f"{d['n']} x {d['T']}" + (" (shared)" if d["shared"] else ""), *d["rejections"].values()]
             for lm, v in result["per_lm"].items() for d in v["detectors"]],
        )
    )
    return write(out_dir, "tab_null_fpr", result, table, TITLE)
