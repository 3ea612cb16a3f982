"""Props. free_k and free_t: the general problem (a boost per token and per vocabulary entry)
has the one-boost solution."""

import numpy as np

import theory
from theory.offline_cvxpy import general_opt_cvxpy

from ._check import Check

RESULT = "prop:free_k, prop:free_t"


def run(quick: bool, rng) -> list[Check]:
    n_inst = 4 if quick else 20
    spread = val = 0.0
    for _ in range(n_inst):
        T, V = int(rng.integers(2, 6)), int(rng.integers(3, 8))
        P = rng.dirichlet(np.ones(V), size=T) * (1 - 1e-3 * V) + 1e-3
        green = rng.random((T, V)) < 0.5
        green[:, 0], green[:, 1] = True, False
        G = np.where(green, P, 0.0).sum(axis=1)
        Delta = float(rng.uniform(0.1, 0.7)) * float(np.mean(1 - G))
        res = general_opt_cvxpy(P, green, Delta)
        one = theory.offline_opt(G, Delta)
        spread = max(spread, float(np.ptp(res.boosts[green])) / max(1.0, one.delta))
        val = max(val, abs(res.value / one.value - 1))
    return [
        Check(RESULT, f"max spread of optimal boosts over (t, k), {n_inst} random instances", spread, "0", "1e-4",
              spread < 1e-4, "CVXPY/CLARABEL over full distributions; boosts are logs of interior-point ratios (tolerance ~1e-10 on the objective)"),
        Check(RESULT, "max rel. gap general optimum vs one-boost OPT", val, "0", "1e-6", val < 1e-6, "same solver tolerance"),
    ]
