"""Figure robustness_6_attacks: median log10 p vs attack rate for six attacks, every configuration (SRL, DualGA,
EMS, UW, ATW, SynthID, MorphMark, SWEET, Unigram, DiPmark, PF, GumbelSoft and EXP) labelled with its KL (each
point's median with its distribution-free 95 % interval and its TPR at 1e-4 with its Clopper-Pearson 95 % interval in the JSON), the colour oracle replaced by a
score oracle that means something for every detector (:mod:`paper_figs._oracle`); and the realised DG after worst-case attacks beside the
closed-form Delta' of Prop. adv_robust."""

from __future__ import annotations

import json
import pathlib

import numpy as np

from paper_figs import resume, save

TITLE = "Robustness of detection under six attacks, and Prop. adv_robust's Delta'"

CONFIGS = [("srl", dict(delta=2.0, gamma=0.25)), ("dualga", dict(Delta=0.2)), ("dualga", dict(Delta=0.4)), ("ems", {}), ("uw-gamma", {}),
           ("atw", dict(delta=2.0))]
CONFIGS += [("synthid", dict(m=30)), ("synthid", dict(m=30, candidates=4))]  # issue 32: SynthID-Text, both modes, its mean g-value score
# issue 45: the newer red-green schemes at their generators' defaults but the strength (MorphMark: MarkLLM's kappa 1.3),
# each detected by its own family (SWEET: the green count over its entropy-gated positions)
CONFIGS += [("morphmark", dict(morph_kappa=1.3)), ("sweet", dict(delta=2.0)), ("unigram", dict(delta=2.0)), ("dipmark", dict(dip_alpha=0.45))]
# the keyed-sampling schemes (EMS family; EXP keyed by position), each by its own family's sum
CONFIGS += [("pf", {}), ("gumbelsoft", {}), ("exp", {})]
SEEDED = [("srl", dict(delta=2.0, gamma=0.25, h=4, seeding=s)) for s in ("lefthash", "selfhash", "minhash", "skipgram")]
"""SRL under each seeding scheme of :mod:`sims.core.seeding` over h = 4 tokens (synthetic LMs): what an edit re-colours."""


def main(out_dir: pathlib.Path, quick: bool, lms=None, n: int | None = None, T: int | None = None) -> list[pathlib.Path]:
    """Attack watermarked texts of one LM at a range of rates and plot their detection.

    Quick: V = 1000, 4 texts x 80 tokens, rates 0, 0.3, 0.6; else the LM's V, 100 x 200, eight rates (four on a
    real LM).  ``n``, ``T``: another size (``python -m paper_figs.fig_robustness --n 20``).

    Parameters
    ----------
    out_dir : pathlib.Path
        The folder the files are written to.
    quick : bool
        Small sizes (see above) instead of the paper's.
    lms : sequence of str, optional
        LMs of ``python -m paper_figs --lm``: its first is used (default ``lfqa``).
    n, T : int, optional
        Another size (``python -m paper_figs.fig_robustness --n 20``).

    Returns
    -------
    list of pathlib.Path
        The files written: fig_robustness.png and fig_robustness.json (:func:`paper_figs.save`); a long run's
        progress is kept in fig_robustness.partial.json while it runs.
    """
    from paper_figs._data import figure_lm, generations, is_synthetic, sized
    from paper_figs._oracle import oracle_contributions, score_oracle
    from paper_figs.fig_scores import median_ci
    from sims.core.progress import progress
    from sims.detect.families import detectors
    from sims.experiments.attacks import KINDS, attack
    from sims.experiments.evaluate import clopper_pearson

    name = (lms or ("lfqa",))[0]
    V = 1000 if quick else None
    lm = figure_lm(name, V)
    n0, T0 = (4, 80) if quick else (100, 200)
    n, T = sized(name, n or n0, T or T0)
    # on a real LM every position the entropy, paraphrase and score-oracle attacks touch costs a
    # forward pass (about 0.1 s for SmolLM2 on one CPU thread): four rates there
    rates = [0.0, 0.3, 0.6] if quick else [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7] if is_synthetic(name) else [0.0, 0.1, 0.3, 0.5]
    kinds = [k if k != "color" else "score_oracle" for k in KINDS]
    summary = dict(lm=name, n=n, T=T, rates=rates, attacks={}, done={})
    partial = out_dir / "fig_robustness.partial.json"  # long runs: a rerun of the same size resumes after the configurations done
    summary = resume(partial, summary, ("lm", "n", "T", "rates"))
    gens = {}
    configs = CONFIGS + (SEEDED if is_synthetic(name) else [])
    with progress(len(configs) * len(kinds), f"fig_robustness on {name}", unit="attack") as bar:
        for algo, params in configs:
            key = f"{algo} {','.join(v if isinstance(v, str) else f'{k}={v:g}' for k, v in params.items())}"
            if key in summary["done"]:
                bar.update(len(kinds))
                continue
            gen = gens[key] = generations(name, algo, n, T, 0, vocab_size=V, **params)
            label = f"{key} (KL {gen.kl.mean():.2f})"
            lp0 = detectors.score(gen, lm).log10_p  # rate 0: the same texts under every attack
            contrib = oracle_contributions(gen, lm)  # the score oracle's ranking, the same at every rate
            for kind in kinds:
                if algo == "synthid" and kind == "entropy":  # that attack swaps in red tokens: it has no tournament form
                    bar.update()
                    continue
                att = (lambda r: score_oracle(gen, lm, r, contrib=contrib)) if kind == "score_oracle" else (lambda r: attack(gen, kind, r, seed=1, lm=lm))
                lps = [detectors.score(att(r), lm).log10_p if r > 0 else lp0 for r in rates]
                hits = [int(np.sum(lp <= -4.0)) for lp in lps]  # TPR at FPR 1e-4 (exact null)
                summary["attacks"].setdefault(kind, {})[label] = dict(
                    median_log10_p=[float(np.median(lp)) for lp in lps], median_log10_p_ci95=[list(median_ci(lp)) for lp in lps],
                    tpr_at_1e_4=[h / lp.size for h, lp in zip(hits, lps)], detected=hits,
                    tpr_ci95=[list(clopper_pearson(h, lp.size)) for h, lp in zip(hits, lps)])
                bar.update()
            summary["done"][key] = label
            partial.write_text(json.dumps(summary, indent=1))
    del summary["done"]
    # Prop. adv_robust: realised green excess after worst-case attacks vs Delta'
    gen = gens.get("dualga Delta=0.4") or generations(name, "dualga", n, T, 0, vocab_size=V, Delta=0.4)
    gamma = gen.meta["gamma"]
    s0 = detectors.score(gen, lm)
    e0 = float(np.mean(s0.score / s0.n_scored - gamma))
    summary["adv_robust_setting"] = dict(algo="dualga", Delta=0.4, gamma=gamma, e0=e0)
    ls = np.array([0.0, 0.05, 0.1, 0.2, 0.3])
    for kind, name in (("worst_deletion", "deletion"), ("worst_insertion", "insertion"), ("worst_edit", "edit")):
        real = []
        for l in ls:
            s1 = detectors.score(attack(gen, kind, l, 0) if l > 0 else gen, lm)
            real.append(float(np.mean(s1.score / s1.n_scored - gamma)))
        summary.setdefault("adv_robust", {})[name] = dict(l=ls.tolist(), realised=real)
    fig = draw(summary)
    files = save(fig, out_dir, "fig_robustness", summary)
    partial.unlink()
    return files


ATTACK_NAMES = {"deletion": "deletion", "insertion": "insertion", "substitution": "substitution",
                "entropy": "low-entropy substitution", "score_oracle": "score oracle", "paraphrase": "paraphrase"}
"""Panel titles of the attacks (``sims.experiments.attacks.KINDS``, the colour oracle replaced by the score oracle)."""


def draw(summary: dict):
    """The figure from its JSON summary (``fig_robustness.json``).

    What ``main`` saves, and what ``python -m paper_figs.redraw`` redraws without rerunning anything.

    Parameters
    ----------
    summary : dict
        The JSON summary.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import theory
    from paper_figs import style
    from paper_figs._out import agg

    plt = agg()
    style.apply()
    rates, T = summary["rates"], summary["T"]
    series = style.Series()
    fig, axes = plt.subplots(2, 4, figsize=(16, 8.6))
    axes = axes.ravel()
    kinds = list(summary["attacks"])
    for j, kind in enumerate(kinds[:6]):
        ax = axes[j]
        for label, v in summary["attacks"][kind].items():
            ax.plot(rates, v["median_log10_p"], label=" ".join(label.split()), **series(label))
            if kind == "substitution":
                axes[7].plot(rates, v["tpr_at_1e_4"], label=" ".join(label.split()), **series(label))
        style.reference(ax, -4, "detection level: p = 1e-4")
        style.reference(ax, float(np.log10(0.5)), "median p = 0.5: no evidence left", ls=":")
        ax.set(title=ATTACK_NAMES.get(kind, kind), xlabel="attack rate (share of tokens attacked)",
               ylabel="median log10 p-value of the detector")
    # Prop. adv_robust, from the realised green excess at l = 0 when an older JSON lacks the setting
    setting = summary.get("adv_robust_setting") or {}
    adv = summary.get("adv_robust", {})
    ax = axes[6]
    if adv:
        gamma = setting.get("gamma", theory.gamma_star(0.4))
        e0 = setting.get("e0", next(iter(adv.values()))["realised"][0])
        colors = {"deletion": "#0072B2", "insertion": "#D55E00", "edit": "#009E73"}
        for name, v in adv.items():
            ls = np.asarray(v["l"])
            c = colors.get(name, "#777777")
            ax.plot(ls, v["realised"], "o", color=c, label=f"worst {name}: realised DG")
            ax.plot(ls, [theory.robust_delta(name, e0, gamma, l, T) for l in ls], "-", color=c,
                    label=f"worst {name}: bound Delta' (Prop. adv_robust)")
            if name == "deletion":
                ax.plot(ls, [theory.robust_delta(name, e0, gamma, l, T, rehash="scattered") for l in ls], ":", color=c,
                        label="worst deletion: Delta' with re-colouring")
        ax.set(title="DualGA (Delta = 0.4): worst-case attacks", xlabel="share l of tokens attacked",
               ylabel="green excess over gamma (DG)")
        ax.legend(loc="lower left", fontsize=8, frameon=True, framealpha=0.9)
    style.reference(axes[7], 1.0, "TPR = 1: every text detected", ls=":")
    axes[7].set(title="substitution: true-positive rate", xlabel="attack rate (share of tokens attacked)",
                ylabel="TPR at FPR 1e-4", ylim=(-0.05, 1.05))
    style.legend_below(fig, axes=[*axes[:6], axes[7]], ncol=4)
    style.title(fig, "Robustness of detection under six attacks, and Prop. adv_robust's Delta'",
                lm=summary.get("lm"), n=summary.get("n"), T=T)
    return fig


if __name__ == "__main__":
    from paper_figs._data import run_sized

    run_sized(main, "fig_robustness", "100 x 200")
