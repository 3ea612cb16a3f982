"""Figure LFQA_Pareto and scatter_4: realised DG vs KL per configuration (population level) and
per text, SRL grid vs DualGA, with the offline Pareto frontier of the same LM.

The frontier is the hindsight optimum OPT(Delta) (:func:`theory.offline_opt`) of the green
masses G_t met by the unwatermarked LM with gamma = gamma*(Delta): the least mean KL of any
per-step boost sequence reaching mean DG = Delta on those steps.  KL and DG are exact
per-step values recorded by :func:`sims.watermarks.generate.generate`.
"""

from __future__ import annotations

import pathlib

import numpy as np

from paper_figs import save
from sims.core import defaults

KEY = defaults.KEY
TITLE = "Realised DG vs KL: DualGA on the Pareto frontier, SRL off it unless tuned"


def main(out_dir: pathlib.Path, quick: bool) -> list[pathlib.Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    import theory
    from sims.watermarks.generate import generate
    from sims.lm.synthetic import get_lm

    def run(algo, **kw):  # population means and per-text means of KL and realised DG
        g = generate(lm, algo, n=n, T=T, seed=0, key=KEY, **kw)
        return dict(kl_per_token=float(g.kl.mean()), realized_dg=float(g.dg.mean()), arrays=dict(kl=g.kl.mean(axis=1), dg=g.dg.mean(axis=1)))

    n, T = (24, 150) if quick else (200, 200)
    lm_name = "lfqa"
    lm = get_lm(lm_name)
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    summary = []
    for gamma in (0.25, 0.5, 0.7):
        pts = []
        for delta in (1.0, 2.0, 5.0):
            r = run("srl", gamma=gamma, delta=delta)
            pts.append((r["kl_per_token"], r["realized_dg"]))
            summary.append(dict(algo="srl", gamma=gamma, delta=delta, kl=r["kl_per_token"], dg=r["realized_dg"]))
            if delta == 2.0:
                ax2.scatter(r["arrays"]["kl"], r["arrays"]["dg"], s=6, alpha=0.5, label=f"SRL gamma={gamma}, delta=2")
        ax.plot(*zip(*pts), "s--", label=f"SRL gamma={gamma}, delta in 1, 2, 5")
    dpts = []
    for Delta in (0.1, 0.2, 0.3, 0.4, 0.5):
        r = run("dualga", Delta=Delta)
        dpts.append((r["kl_per_token"], r["realized_dg"]))
        summary.append(dict(algo="dualga", Delta=Delta, kl=r["kl_per_token"], dg=r["realized_dg"]))
        ax2.scatter(r["arrays"]["kl"], r["arrays"]["dg"], s=6, c="red", alpha=0.5, label="DualGA" if Delta == 0.1 else None)
    ax.plot(*zip(*dpts), "o-", c="red", lw=2, label="DualGA, Delta in 0.1..0.5")
    # offline frontier: hindsight OPT(Delta) of the unwatermarked LM's green masses at gamma*(Delta)
    front = []
    for Delta in np.linspace(0.05, 0.55, 11):
        g = theory.gamma_star(Delta)
        G = generate(lm, "none", n=n, T=T, seed=7, key=KEY, gamma=g).G.ravel()
        front.append((theory.offline_opt(G, Delta).value, Delta))
    ax.plot(*zip(*front), "k:", label="hindsight OPT(Delta) at gamma*(Delta)")
    ax.set(xlabel="KL per token (nats)", ylabel="realised DG", title=f"{lm_name}: population level ({n} texts x {T})")
    ax.legend(fontsize=7)
    ax2.set(xlabel="KL per token of a text", ylabel="realised DG of a text", title="per text: DualGA concentrates, SRL spreads")
    ax2.legend(fontsize=7, markerscale=3)
    fig.tight_layout()
    return save(fig, out_dir, "fig_pareto", summary)
