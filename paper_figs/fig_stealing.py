"""Figure stealing: what it takes to forge each red-green scheme.

A watermark-stealing attacker (:mod:`sims.steal`, after Jovanovic et al., ICML
2024) sees N watermarked and N base-LM texts, estimates the green lists by frequency ratios,
then spoofs (boosts its estimated green lists, owner's detector at p <= 1e-4) and scrubs
(re-samples the tokens it believes green, edit rate stated).  Rows: context width h = 1, 2, 4 (and 0: Unigram);
columns: spoof success, scrub success, balanced accuracy of the estimated lists against the
key's true ones, each against N.  A markdown table (``fig_stealing.md``) gives, per scheme and
h, the smallest N with spoof success >= 1/2, and the spoof test's (:mod:`sims.steal.spoof_test`:
rank correlation of colour and reference pair frequency, calibrated on the owner's own texts)
false-positive rate and power on texts of ``spoof_T`` tokens, SRL gamma 0.25 delta 2.

Seeding schemes (:mod:`sims.core.seeding`): SRL gamma 0.25 delta 2 also under ``selfhash``, ``minhash`` and
``skipgram`` (``SEEDED``; at h = 1 min-hash and skip-gram are left-hash and are left out).  The attacker
is the same for every scheme: it estimates a colour per (h-window, token) pair, which decides the colour
under every scheme; it does not exploit a scheme's structure (skip-gram's green list depends on one token).
The scheme-aware attacker (:mod:`sims.steal.aware`) does: it pools its evidence over the seed the
scheme uses (skip-gram: the token h back; min-hash: each window token as a candidate anchor; self-hash: the
same plus the candidate alone; left-hash: the window, so there it is the unaware attacker).  Its spoof
success is drawn dashed beside the unaware one's for SRL gamma 0.25 delta 2 under each scheme, and the
table gives the texts it needs (``N for aware spoof >= 1/2``).

The newer red-green schemes (issue 45): MorphMark and SWEET at their generator's defaults (MorphMark gamma 0.5,
kappa 1.3, p0 0.15; SWEET gamma 0.25, delta 2, alpha 2) at every h, and Unigram (gamma 0.5, delta 2) once, in a row
h = 0 of its own (:data:`FIXED_WIDTH`): its one green list is the same in every context, so the attacker estimates a
single list from every token it sees.  Each is scored by its own detector family (SWEET: ``entropy_gated``, its
green count over the positions where the LM's entropy exceeds alpha; the attacker boosts its estimate everywhere).
"""

from __future__ import annotations

import json
import pathlib

from paper_figs import resume, save

TITLE = "Watermark stealing: spoof and scrub success against the number of stolen texts"

SCHEMES = [("srl", dict(gamma=0.25, delta=2.0)), ("srl", dict(gamma=0.25, delta=4.0)), ("srl", dict(gamma=0.5, delta=2.0)),
           ("dualga", dict(Delta=0.2)), ("dualga", dict(Delta=0.4)), ("hard", dict(gamma=0.25)), ("autocov", dict(Delta=0.3)),
           ("morphmark", {}), ("sweet", {})]
FIXED_WIDTH = [("unigram", {})]
"""The schemes whose context width is fixed at h = 0 (one green list for every context): run once, as the row h = 0,
after the rows of ``hs``."""
FULL = dict(V=1024, T=32, n_eval=200, Ns=(100, 300, 1000, 3000, 10000, 30000, 100000), hs=(1, 2, 4),
            spoof_T=200, spoof_n_eval=1000, spoof_n_calibration=1000, spoof_Ns={1: (30, 100, 300, 1000), 2: (300, 1000, 3000)})
AWARE = ("lefthash", "selfhash", "minhash", "skipgram")  # SRL gamma 0.25 delta 2 under these schemes: the aware attacker too
SEEDED = [("srl", dict(gamma=0.25, delta=2.0, seeding=s)) for s in AWARE[1:]]
QUICK = dict(V=256, T=16, n_eval=50, Ns=(100, 1000), hs=(1, 2), spoof_T=100, spoof_n_eval=200, spoof_n_calibration=200,
             spoof_Ns={1: (30,), 2: (300,)})


def _label(algo: str, params: dict) -> str:
    return (f"{algo} " + ",".join(v if isinstance(v, str) else f"{k}={v:g}" for k, v in params.items())).rstrip()  # defaults: the name alone


def main(out_dir: pathlib.Path, quick: bool, lms=None) -> list[pathlib.Path]:
    """Steal, spoof and scrub each scheme against the number of stolen texts on one LM and write the figure and table.

    Parameters
    ----------
    out_dir : pathlib.Path
        The folder the files are written to.
    quick : bool
        Small sizes: ``QUICK``'s sizes and four of the schemes (and :data:`FIXED_WIDTH`'s), instead of ``FULL``'s and all.
    lms : sequence of str, optional
        LMs of ``python -m paper_figs --lm``: its first is used (default ``news``).

    Returns
    -------
    list of pathlib.Path
        The files written: fig_stealing.png, fig_stealing.json (:func:`paper_figs.save`) and fig_stealing.md;
        progress is kept in fig_stealing.partial.json while it runs.
    """
    import numpy as np

    from sims import steal
    from sims.lm.synthetic import open_synthetic
    from sims.steal import aware as steal_aware

    cfg = QUICK if quick else FULL
    schemes = ([SCHEMES[0], SCHEMES[4], SCHEMES[5], SCHEMES[6]] if quick else SCHEMES) + SEEDED
    name = (lms or ("news",))[0]
    lm = open_synthetic(name, vocab_size=cfg["V"])  # a synthetic LM: up to 100000 stolen texts, and exact spoofing probabilities
    Ns = list(cfg["Ns"])
    summary = dict(lm=name, vocab_size=cfg["V"], T=cfg["T"], n_eval=cfg["n_eval"], Ns=Ns, seed=0, boost=4.0, budget=0.5, level=1e-4,
                   curves={}, spoof_test={})
    partial = out_dir / "fig_stealing.partial.json"  # long runs: keep what is done; a rerun of the same sizes resumes after it
    summary = resume(partial, summary, ("lm", "vocab_size", "T", "n_eval", "Ns", "seed", "boost", "budget", "level"))
    shared = {}
    for h in (*cfg["hs"], 0):  # h = 0: the fixed-width schemes only, after the others (whose hauls and results they leave as they were)
        for algo, params in (schemes if h else FIXED_WIDTH):
            if h == 1 and params.get("seeding") in ("minhash", "skipgram"):  # the same green lists as left-hash at h = 1
                continue
            label = _label(algo, params)
            if f"h={h} {label}" in summary["curves"]:
                continue
            haul = steal.generate_stealing_texts(lm, algo, n_max=Ns[-1], T=cfg["T"], n_eval=cfg["n_eval"], h=h, **shared, **params)
            shared = dict(base=haul.base, held_out=haul.held_out)  # unwatermarked text does not depend on the scheme
            rows = [steal.attack_point(haul, N) for N in Ns]
            if algo == "srl" and params.get("gamma") == 0.25 and params.get("delta") == 2.0:
                for row in rows:  # the scheme-aware attacker on the same haul
                    aw = steal_aware.attack_point_aware(haul, row["n_stolen"])
                    row.update(aware_spoof_success=aw["spoof_success"], aware_green_estimate_accuracy=aw["green_estimate_accuracy"])
            summary["curves"][f"h={h} {label}"] = rows
            partial.write_text(json.dumps(summary, indent=1))
        if h in cfg["spoof_Ns"] and f"h={h}" not in summary["spoof_test"]:  # the spoof test wants long texts: its own haul
            sN = cfg["spoof_Ns"][h]
            haul = steal.generate_stealing_texts(lm, "srl", n_max=sN[-1], T=cfg["spoof_T"], n_eval=cfg["spoof_n_eval"], h=h, gamma=0.25, delta=2.0)
            summary["spoof_test"][f"h={h}"] = [dict(steal.spoof_test_power(haul, N, n_calibration=cfg["spoof_n_calibration"]),
                                                    spoof_success=steal.attack_point(haul, N)["spoof_success"]) for N in sN]
            partial.write_text(json.dumps(summary, indent=1))
    files = save(draw(summary), out_dir, "fig_stealing", summary)
    md = out_dir / "fig_stealing.md"
    md.write_text(_markdown(summary, np))
    partial.unlink()
    return files + [md]


PANELS = (("spoof_success", "spoof success (share with p <= 1e-4)", "spoof"),
          ("aware_spoof_success", "spoof success (share with p <= 1e-4)", "scheme-aware spoof"),
          ("scrub_success", "scrub success (edit rate <= 0.5)", "scrub"),
          ("green_estimate_accuracy", "balanced accuracy of the colour estimate", "estimated green lists"))
"""The measures drawn (a key of each attack point of the JSON, its axis label, the panel's subject), one column each;
the scheme-aware attacker ran on SRL gamma 0.25 delta 2 under each seeding scheme only."""


def draw(summary: dict):
    """The figure from its JSON summary (``fig_stealing.json``): one row per context width h, one column per measure of
    :data:`PANELS` against the number of stolen texts, every scheme in its algorithm's registry colour (an algorithm's
    settings told apart by line style), in the package's style (:mod:`paper_figs.style`); what ``main`` saves and
    ``python -m paper_figs.redraw`` redraws."""
    from paper_figs import style
    from paper_figs._out import agg

    plt = agg()
    style.apply()
    series = style.Series()
    hs = sorted(dict.fromkeys(name.split(" ", 1)[0] for name in summary["curves"]), key=lambda h: int(h[2:]))
    fig, axes = plt.subplots(len(hs), len(PANELS), figsize=(4.8 * len(PANELS), 3.9 * len(hs)), squeeze=False)
    for r, h in enumerate(hs):
        for name, rows in summary["curves"].items():
            if not name.startswith(f"{h} "):
                continue
            lab = name.split(" ", 1)[1].replace(",", ", ")
            for ax, (key, _, _) in zip(axes[r], PANELS):
                if key in rows[0]:
                    ax.plot([row["n_stolen"] for row in rows], [row[key] for row in rows], label=lab, **series(lab))
        for ax, (_, what, subject) in zip(axes[r], PANELS):
            if not ax.lines:  # a measure no scheme of this row has (the scheme-aware attacker at h = 0): no panel there
                ax.set_visible(False)
                continue
            ax.set(xscale="log", ylim=(-0.03, 1.03), xlabel="number of stolen texts", ylabel=what, title=f"{subject}, {h.replace('=', ' = ')}")
    style.legend_below(fig, ncol=4)
    style.title(fig, f"Watermark stealing: {summary['n_eval']} spoofs and scrub targets per point (V = {summary['vocab_size']})",
                lm=summary["lm"], T=summary["T"])
    return fig


def _aware_cells(rows: list[dict]) -> str:
    """The scheme-aware attacker's columns (``-`` where it did not run)."""
    if "aware_spoof_success" not in rows[-1]:
        return "- | -"
    hit = next((r["n_stolen"] for r in rows if r["aware_spoof_success"] >= 0.5), None)
    last = rows[-1]
    return f"{hit if hit else '> ' + str(last['n_stolen'])} | {last['aware_spoof_success']:.2f} ({last['aware_green_estimate_accuracy']:.2f})"


def _markdown(summary: dict, np) -> str:
    lines = [f"# {TITLE}", "",
             f"news LM, V = {summary['vocab_size']}, texts of {summary['T']} tokens, seed 0; attacker: N watermarked + N base texts, "
             f"spoof boost {summary['boost']}, scrub budget {summary['budget']} of the tokens; success at p <= 1e-4 "
             f"over {summary['n_eval']} texts.", "",
             "| scheme | h | genuine detected | N for spoof >= 1/2 | spoof at max N | scrub at max N (edit rate; blind) | accuracy at max N "
             "| N for aware spoof >= 1/2 | aware spoof at max N (accuracy) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name, rows in sorted(summary["curves"].items(), key=lambda kv: int(kv[0].split(" ", 1)[0][2:])):  # by h, as run within an h
        h, label = name.split(" ", 1)
        hit = next((r["n_stolen"] for r in rows if r["spoof_success"] >= 0.5), None)
        last = rows[-1]
        lines.append(f"| {label} | {h[2:]} | {last['detected_before']:.2f} | {hit if hit else '> ' + str(last['n_stolen'])} | {last['spoof_success']:.2f} | "
                     f"{last['scrub_success']:.2f} ({last['scrub_edit_rate']:.2f}; {last['scrub_blind_success']:.2f}) | "
                     f"{last['green_estimate_accuracy']:.2f} | {_aware_cells(rows)} |")
    lines += ["", "Spoof test (sims.steal.spoof_test: rank correlation of colour and log reference pair count, conformal p-value from the "
              "owner's calibration texts; level 0.01) on texts the detector flags, SRL gamma 0.25 delta 2; the owner's reference is "
              "the haul's watermarked texts (what the attacker saw included):", "",
              "| h | tokens | N stolen | spoof success | reference texts | calibration texts | mean Z genuine / spoofed | FPR (95% CI) | power (95% CI) |",
              "|---|---|---|---|---|---|---|---|---|"]
    for h, rows in summary["spoof_test"].items():
        for r in rows:
            lines.append(f"| {h[2:]} | {r['T']} | {r['n_stolen']} | {r['spoof_success']:.2f} | {r['n_reference']} | {r['n_calibration']} | "
                         f"{r['genuine_mean_z']:.2f} / {r['spoofed_mean_z']:.2f} | "
                         f"{r['fpr']:.3f} ({r['fpr_ci95'][0]:.3f}, {r['fpr_ci95'][1]:.3f}) of {r['genuine_flagged']} | "
                         f"{r['power']:.3f} ({r['power_ci95'][0]:.3f}, {r['power_ci95'][1]:.3f}) of {r['spoofed_flagged']} |")
    return "\n".join(lines) + "\n"
