"""Figure seeding_tradeoff: the seeding schemes of :mod:`sims.core.seeding` on the trade-off (beyond the paper).

SRL (gamma 0.25, delta 2) under ``lefthash``, ``selfhash``, ``minhash`` and ``skipgram``, the same key:

* cost and detection: mean per-token KL (exact) and median log10 p (dedup by (seed, token) pair) on
  ``lfqa`` texts with the green list seeded over ``h_edit`` tokens;
* edits: median log10 p and TPR at FPR 1e-4 after random substitution, deletion and insertion at
  each rate (:func:`sims.experiments.attacks.attack`): what one edit re-colours depends on how many
  windows it enters (every window for left-hash, only those whose anchor it is for min-hash, one for
  skip-gram, and the candidate's own under self-hash);
* stealing at ``h_steal``: spoof and scrub success and the estimate's accuracy against the number of
  stolen texts (:func:`sims.steal.attack_point`; the attacker estimates a colour per
  (window, token) pair, which decides the colour under every scheme, and ignores a scheme's structure).

A markdown table (``fig_seeding_tradeoff.md``) gives the numbers.
"""

from __future__ import annotations

import pathlib

from paper_figs import save

TITLE = "Seeding schemes: KL, detection, edits and stealing of SRL under left-, self-, min-hash and skip-gram"

SCHEMES = ("lefthash", "selfhash", "minhash", "skipgram")
PARAMS = dict(gamma=0.25, delta=2.0)
EDITS = ("substitution", "deletion", "insertion")
FULL = dict(edit_lm="lfqa", V=None, n=100, T=200, h_edit=4, rates=(0.0, 0.1, 0.2, 0.3, 0.4, 0.5),
            steal_lm="news", steal_V=1024, steal_T=32, n_eval=100, h_steal=2, Ns=(300, 1000, 3000, 10000))
QUICK = dict(edit_lm="lfqa", V=1000, n=6, T=60, h_edit=4, rates=(0.0, 0.3), steal_lm="news", steal_V=256, steal_T=16, n_eval=20, h_steal=2, Ns=(100,))


def main(out_dir: pathlib.Path, quick: bool, lms=None) -> list[pathlib.Path]:
    """Run SRL under each seeding scheme (KL, detection, edits, stealing) and write the figure and table.

    Parameters
    ----------
    out_dir : pathlib.Path
        The folder the files are written to.
    quick : bool
        Small sizes: ``QUICK``'s sizes (6 texts of 60 tokens at V = 1000; stealing from 100 texts), instead of
        ``FULL``'s.
    lms : sequence of str, optional
        Ignored (the LMs of ``QUICK`` / ``FULL``).

    Returns
    -------
    list of pathlib.Path
        The files written: fig_seeding_tradeoff.png, fig_seeding_tradeoff.json (:func:`paper_figs.save`) and
        fig_seeding_tradeoff.md.
    """
    import numpy as np

    from sims import steal
    from sims.detect.families import detectors
    from sims.experiments.attacks import attack
    from sims.lm.synthetic import open_synthetic
    from sims.watermarks.generate import generate_synthetic

    cfg = QUICK if quick else FULL
    lm = open_synthetic(cfg["edit_lm"], cfg["V"])
    slm = open_synthetic(cfg["steal_lm"], vocab_size=cfg["steal_V"])
    summary = dict(config={k: list(v) if isinstance(v, tuple) else v for k, v in cfg.items()}, params=PARAMS, seed=0, schemes={})
    shared = {}
    for s in SCHEMES:
        gen = generate_synthetic(lm, "srl", n=cfg["n"], T=cfg["T"], seed=0, key=15485863, h=cfg["h_edit"], seeding=s, **PARAMS)
        row = dict(kl_per_token=float(gen.kl.mean()), dg_per_token=float(gen.dg.mean()), edits={})
        for kind in EDITS:
            lps = [detectors.score(attack(gen, kind, r, seed=1, lm=lm) if r > 0 else gen, dedup=True).log10_p for r in cfg["rates"]]
            row["edits"][kind] = dict(median_log10_p=[float(np.median(lp)) for lp in lps], tpr_at_1e_4=[float(np.mean(lp <= -4.0)) for lp in lps])
        haul = steal.generate_stealing_texts(slm, "srl", n_max=cfg["Ns"][-1], T=cfg["steal_T"], n_eval=cfg["n_eval"], h=cfg["h_steal"], seeding=s, **shared,
                               **PARAMS)
        shared = dict(base=haul.base, held_out=haul.held_out)
        row["stealing"] = [steal.attack_point(haul, N) for N in cfg["Ns"]]
        summary["schemes"][s] = row
    files = save(draw(summary), out_dir, "fig_seeding_tradeoff", summary)
    md = out_dir / "fig_seeding_tradeoff.md"
    md.write_text(_markdown(summary))
    return files + [md]


STEALING = (("spoof_success", "spoof success (share with p <= 1e-4)"), ("scrub_success", "scrub success (edit rate <= 0.5)"),
            ("green_estimate_accuracy", "balanced accuracy of the colour estimate"))
"""The stealing measures drawn (a key of each stealing point of the JSON, its axis label), one panel each."""


def draw(summary: dict):
    """The figure from its JSON summary (``fig_seeding_tradeoff.json``): SRL under each seeding scheme, its median log10 p
    after each random edit (top) and the stealing attack's success against the number of stolen texts (bottom), in the
    package's style (:mod:`paper_figs.style`); what ``main`` saves and ``python -m paper_figs.redraw`` redraws."""
    from paper_figs import style
    from paper_figs._out import agg

    plt = agg()
    style.apply()
    series = style.Series()
    cfg, p = summary["config"], summary["params"]
    fig, axes = plt.subplots(2, 3, figsize=(15, 9.4))
    for s, row in summary["schemes"].items():
        lab = f"srl {s} seeding (KL {row['kl_per_token']:.3f})"
        for ax, kind in zip(axes[0], EDITS):
            ax.plot(cfg["rates"], row["edits"][kind]["median_log10_p"], label=lab, **series(lab))
        for ax, (key, _) in zip(axes[1], STEALING):
            ax.plot([r["n_stolen"] for r in row["stealing"]], [r[key] for r in row["stealing"]], label=lab, **series(lab))
    for ax, kind in zip(axes[0], EDITS):
        style.reference(ax, -4, "detection level: p = 1e-4")
        ax.set(title=f"random {kind} ({cfg['edit_lm']}, n = {cfg['n']}, T = {cfg['T']}, h = {cfg['h_edit']})",
               xlabel="edit rate (share of tokens edited)", ylabel="median log10 p-value (deduplicated)")
    for ax, (_, what) in zip(axes[1], STEALING):
        ax.set(xscale="log", ylim=(-0.03, 1.03), xlabel="number of stolen texts", ylabel=what,
               title=f"stealing ({cfg['steal_lm']}, V = {cfg['steal_V']}, T = {cfg['steal_T']}, h = {cfg['h_steal']})")
    style.legend_below(fig, ncol=3)
    style.title(fig, f"Seeding schemes of SRL (gamma = {p['gamma']:g}, delta = {p['delta']:g}): edits and stealing",
                lm=cfg["edit_lm"], n=cfg["n"], T=cfg["T"])
    return fig


def _markdown(summary: dict) -> str:
    cfg = summary["config"]
    rates = cfg["rates"]
    lines = [f"# {TITLE}", "",
             f"SRL gamma 0.25 delta 2, key 15485863, seed 0. Edits: {cfg['edit_lm']}, {cfg['n']} texts x {cfg['T']} tokens, h = {cfg['h_edit']}, "
             f"median log10 p with dedup (seed, token) at edit rates {rates}. Stealing: {cfg['steal_lm']} V = {cfg['steal_V']}, "
             f"texts of {cfg['steal_T']} tokens, h = {cfg['h_steal']}, {cfg['n_eval']} spoofs / targets.", "",
             "| scheme | KL / token | " + " | ".join(f"{k} {r:g}" for k in EDITS for r in rates if r > 0) + " |",
             "|---|---|" + "---|" * sum(1 for _ in EDITS for r in rates if r > 0)]
    for s, row in summary["schemes"].items():
        cells = [f"{row['edits'][k]['median_log10_p'][i]:.1f} ({row['edits'][k]['tpr_at_1e_4'][i]:.2f})"
                 for k in EDITS for i, r in enumerate(rates) if r > 0]
        lines.append(f"| {s} (unedited {row['edits'][EDITS[0]]['median_log10_p'][0]:.1f}) | {row['kl_per_token']:.3f} | " + " | ".join(cells) + " |")
    lines += ["", "(cells: median log10 p (TPR at FPR 1e-4))", "",
              "| scheme | N stolen | genuine detected | spoof success | scrub success (edit rate; blind) | estimate accuracy |", "|---|---|---|---|---|---|"]
    for s, row in summary["schemes"].items():
        for r in row["stealing"]:
            lines.append(f"| {s} | {r['n_stolen']} | {r['detected_before']:.2f} | {r['spoof_success']:.2f} | {r['scrub_success']:.2f} "
                         f"({r['scrub_edit_rate']:.2f}; {r['scrub_blind_success']:.2f}) | {r['green_estimate_accuracy']:.2f} |")
    return "\n".join(lines) + "\n"
