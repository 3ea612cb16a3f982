r"""Props. free_k and free_t (and Lemma one_step_k in their proof).

The general problem (opt:free_t_k), a boost :math:`\delta_{t,k}` per token and vocabulary
entry, solved by CVXPY over the full distributions
(:func:`theory.offline_cvxpy.general_opt_cvxpy`), has the one-boost solution of
(opt:nofree): :math:`\log(q_{t,k}/p_{t,k})` takes one value on the green and one on the red
entries of each step (free_k), and their difference is the same boost for every t
(free_t), equal to the exact one-dimensional dual solution :func:`theory.offline_opt`.

Lemma one_step_k (T = 1) has closed forms, checked against CVXPY:

.. math:: \lambda^* = \log\frac{(\Delta+G)R}{(R-\Delta)G},\qquad
          \phi^* = (R-\Delta)\log\frac{R-\Delta}{R} + (\Delta+G)\log\frac{\Delta+G}{G}.
"""

import math

import numpy as np

import theory
from proofs_check._check import Check
from theory.offline_cvxpy import general_opt_cvxpy

RESULT = "prop:free_k, prop:free_t"
BOOST_TOL = 1e-4  # boosts are logs of interior-point ratios: CLARABEL's ~1e-9 accuracy on q, divided by q >= 1e-4
VALUE_TOL = 1e-6  # relative; objective accuracy of CLARABEL at its tightest tolerances


def _instance(rng, T: int, V: int):
    P = rng.dirichlet(np.ones(V), size=T) * (1 - 1e-3 * V) + 1e-3
    green = rng.random((T, V)) < 0.5
    green[:, 0], green[:, 1] = True, False
    G = np.where(green, P, 0.0).sum(axis=1)
    Delta = float(rng.uniform(0.1, 0.7)) * float(np.mean(1 - G))
    return P, green, G, Delta


def run(quick: bool, rng) -> list[Check]:
    """CVXPY's general optimum vs the one-boost optimum on random instances; Lemma one_step_k.

    Parameters
    ----------
    quick : bool
        ``--quick``: 4 random instances instead of 20.
    rng : numpy.random.Generator
        The module's generator, seeded ``[seed, crc32(module name)]`` by ``python -m proofs_check``.

    Returns
    -------
    list of proofs_check._check.Check
        One row of the report per quantity checked: measured against claimed at the stated tolerance.
    """
    n_inst = 4 if quick else 20
    spread = red_spread = boost_gap = val = 0.0
    for _ in range(n_inst):
        P, green, G, Delta = _instance(rng, int(rng.integers(2, 6)), int(rng.integers(3, 8)))
        res = general_opt_cvxpy(P, green, Delta)
        one = theory.offline_opt(G, Delta)
        scale = max(1.0, one.delta)
        spread = max(spread, float(np.ptp(res.boosts[green])) / scale)
        red_spread = max(red_spread, max(float(np.ptp(res.log_ratio[t, ~green[t]])) for t in range(P.shape[0])) / scale)
        boost_gap = max(boost_gap, float(np.max(np.abs(res.boosts[green] - one.delta))) / scale)
        val = max(val, abs(res.value / one.value - 1))
    out = [
        Check(RESULT, f"free_k+free_t: max spread of green boosts over (t, k), {n_inst} instances", spread, "0", f"{BOOST_TOL:g}",
              spread < BOOST_TOL, "CVXPY/CLARABEL over full distributions, T in 2..5, V in 3..7; relative to max(1, delta*)"),
        Check(RESULT, "free_k: max spread of log(q/p) over the red entries of a step", red_spread, "0", f"{BOOST_TOL:g}",
              red_spread < BOOST_TOL, "same solves: the red entries share one ratio"),
        Check(RESULT, "max |general boost - exact one-boost delta*|", boost_gap, "0", f"{BOOST_TOL:g}", boost_gap < BOOST_TOL,
              "theory.offline_opt (dual solved to 1e-15) vs CVXPY"),
        Check(RESULT, "max rel. gap general optimum vs one-boost OPT", val, "0", f"{VALUE_TOL:g}", val < VALUE_TOL, "CLARABEL objective accuracy"),
    ]
    lam_gap = phi_gap = 0.0
    for _ in range(n_inst):
        P, green, G, Delta = _instance(rng, 1, int(rng.integers(3, 8)))
        g, R = float(G[0]), 1.0 - float(G[0])
        lam_star = math.log((Delta + g) * R / ((R - Delta) * g))
        phi_star = (R - Delta) * math.log((R - Delta) / R) + (Delta + g) * math.log((Delta + g) / g)
        res = general_opt_cvxpy(P, green, Delta)
        lam_gap = max(lam_gap, float(np.max(np.abs(res.boosts[green] - lam_star))) / max(1.0, lam_star))
        phi_gap = max(phi_gap, abs(res.value / phi_star - 1))
    out += [
        Check("lemma:one_step_k", "max |CVXPY boost - closed-form lambda*|", lam_gap, "0", f"{BOOST_TOL:g}", lam_gap < BOOST_TOL,
              f"{n_inst} one-step instances"),
        Check("lemma:one_step_k", "max rel. |CVXPY optimum - closed-form phi(lambda*, mu*)|", phi_gap, "0", f"{VALUE_TOL:g}", phi_gap < VALUE_TOL,
              "strong duality of the one-step program"),
    ]
    return out
