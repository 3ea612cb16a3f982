"""Table: how many stolen texts it takes to forge each seeding scheme, by the window attacker and by the
scheme-aware one (issue 32).

SRL gamma 0.25 delta 2 over a context of h = 2 tokens under left-, self-, min-hash and skip-gram
(:mod:`sims.core.seeding`), on the ``news`` LM at V = 1024 with texts of 32 tokens (the stealing setting of
``fig_seeding_tradeoff``).  For each N, both attackers steal the first N texts of one haul per scheme (with N
base texts) and spoof ``n_eval`` texts; success = the owner's exact detector says p <= 1e-4.  The window
attacker (:mod:`sims.steal`) estimates one list per h-window; the scheme-aware one
(:mod:`sims.steal.aware`) per seed of the scheme, mixes the anchors' posterior probabilities of
green and boosts the k most-likely-green candidates that maximise its own expected green share; under
left-hash it differs from the window attacker in that rule only.  Spoof success carries its 95 % Clopper-Pearson interval over the
``n_eval`` spoofs; ``green share`` is the share of spoofed tokens green under the owner's key.
"""

from __future__ import annotations

import pathlib

from paper_figs._out import agg, md_table, write

TITLE = "Forging each seeding scheme: spoof success of the window attacker and of the scheme-aware attacker against the texts stolen"
SCHEMES = ("lefthash", "selfhash", "minhash", "skipgram")
FULL = dict(V=1024, T=32, n_eval=200, h=2, Ns=(1000, 3000, 10000, 30000))
QUICK = dict(V=256, T=16, n_eval=40, h=2, Ns=(100, 300))


def main(out_dir: pathlib.Path, quick: bool, lms=None) -> list[pathlib.Path]:
    """Tabulate the spoof success of the window attacker and of the scheme-aware attacker for each seeding scheme on one LM.

    Parameters
    ----------
    out_dir : pathlib.Path
        The folder the files are written to.
    quick : bool
        Small sizes: ``QUICK``'s sizes (V = 256, 16 tokens, 100 and 300 stolen texts), instead of ``FULL``'s.
    lms : sequence of str, optional
        LMs of ``python -m paper_figs --lm``: its first is used (default ``news``).

    Returns
    -------
    list of pathlib.Path
        The files written: tab_stealing_aware.png, tab_stealing_aware.json and tab_stealing_aware.md
        (:func:`paper_figs._out.write`).
    """
    from sims import steal
    from sims.experiments.evaluate import clopper_pearson
    from sims.lm.synthetic import open_synthetic
    from sims.steal import aware as steal_aware

    plt = agg()
    cfg = QUICK if quick else FULL
    name = (lms or ("news",))[0]
    lm = open_synthetic(name, vocab_size=cfg["V"])
    Ns = list(cfg["Ns"])
    summary = dict(lm=name, vocab_size=cfg["V"], T=cfg["T"], h=cfg["h"], n_eval=cfg["n_eval"], Ns=Ns, seed=0, boost=4.0, threshold=None, level=1e-4, gamma=0.25,
                   delta=2.0, schemes={})
    rows, shared = [], {}
    fig, ax = plt.subplots(figsize=(7, 4.4))
    for c, s in enumerate(SCHEMES):
        haul = steal.generate_stealing_texts(lm, "srl", n_max=Ns[-1], T=cfg["T"], n_eval=cfg["n_eval"], h=cfg["h"], gamma=0.25, delta=2.0, seeding=s, **shared)
        shared = dict(base=haul.base, held_out=haul.held_out)  # unwatermarked texts do not depend on the scheme
        pts = []
        for N in Ns:
            u = steal.attack_point(haul, N)
            a = steal_aware.attack_point_aware(haul, N)
            ci = {k: clopper_pearson(round(r["spoof_success"] * cfg["n_eval"]), cfg["n_eval"]) for k, r in (("", u), ("aware_", a))}
            pts.append(dict(n_stolen=N, spoof_success=u["spoof_success"], spoof_success_ci95=ci[""], spoof_median_log10_p=u["spoof_median_log10_p"],
                            green_estimate_accuracy=u["green_estimate_accuracy"], aware_spoof_success=a["spoof_success"],
                            aware_spoof_success_ci95=ci["aware_"], aware_spoof_median_log10_p=a["spoof_median_log10_p"],
                            aware_spoof_green_share=a["spoof_green_share"], aware_green_estimate_accuracy=a["green_estimate_accuracy"]))
        summary["schemes"][s] = dict(detected_before=u["detected_before"], points=pts)
        for who, key in (("window", ""), ("aware", "aware_")):
            hit = next((p["n_stolen"] for p in pts if p[f"{key}spoof_success"] >= 0.5), None)
            summary["schemes"][s][f"{who}_n_to_forge"] = hit
        rows += [[s, p["n_stolen"], _ci(p["spoof_success"], p["spoof_success_ci95"]), _ci(p["aware_spoof_success"], p["aware_spoof_success_ci95"]),
                  p["spoof_median_log10_p"], p["aware_spoof_median_log10_p"], p["aware_spoof_green_share"], p["green_estimate_accuracy"],
                  p["aware_green_estimate_accuracy"]] for p in pts]
        ax.plot(Ns, [p["spoof_success"] for p in pts], "o-", c=f"C{c}", label=f"{s}: window attacker")
        ax.plot(Ns, [p["aware_spoof_success"] for p in pts], "x--", c=f"C{c}", label=f"{s}: scheme-aware attacker")
    ax.set(xscale="log", xlabel="N stolen texts", ylabel="spoof success (p <= 1e-4)", ylim=(-0.03, 1.03),
           title=f"SRL gamma 0.25 delta 2, h = {cfg['h']}, {name} V = {cfg['V']}, {cfg['T']}-token texts")
    ax.legend(fontsize=6)
    fig.tight_layout()
    forge = "; ".join(f"{s}: window {_n(v['window_n_to_forge'], Ns)}, aware {_n(v['aware_n_to_forge'], Ns)}" for s, v in summary["schemes"].items())
    table = (f"{name} V = {cfg['V']}, {cfg['T']}-token texts, h = {cfg['h']}, {cfg['n_eval']} spoofs per point, seed 0, boost 4; N texts to "
             f"reach spoof success 1/2: {forge}. Spoof success [95 % Clopper-Pearson interval over {cfg['n_eval']} spoofs].\n\n"
             + md_table(["scheme", "N stolen", "spoof (window)", "spoof (aware)", "median log10 p (window)", "median log10 p (aware)",
                         "green share (aware)", "accuracy (window)", "accuracy (aware)"], rows))
    return write(out_dir, "tab_stealing_aware", summary, table, TITLE, fig)


def _n(hit, Ns) -> str:
    return str(hit) if hit is not None else f"> {Ns[-1]}"


def _ci(x: float, ci) -> str:
    return f"{x:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]"
