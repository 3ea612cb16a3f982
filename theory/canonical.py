"""Canonical instances of (opt:nofree) whose optimum and dual are known exactly.

Reused by the tests of the exact dual solver, the CVXPY program, the online
simulators and the torch backend.  Each instance fixes the dual optimum
:math:`\\lambda^*` first and sets :math:`\\Delta = \\frac1T\\sum_t \\mathrm{DG}_t(\\lambda^*)`,
so that by Lemma Lagrangian_dual (c) the optimum is :math:`\\delta^* = \\lambda^*`
with value :math:`\\frac1T\\sum_t D_{kl,t}(\\lambda^*)` -- no solver involved.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from theory import certainty, soft


@dataclass(frozen=True)
class CanonicalProblem:
    r"""One instance: green masses ``G``, target ``Delta`` and the known optimum.

    Attributes
    ----------
    name : str
        What the instance is, for test ids.
    G : ndarray, shape (T,)
        Green masses of the steps.
    Delta : float
        DG target, :math:`\frac1T\sum_t \mathrm{DG}_t(\lambda^*)`.
    lam : float
        The dual optimum :math:`\lambda^*`, which is also the optimal boost (inf: hard red list).
    opt : float
        The optimal value, :math:`\frac1T\sum_t D_{kl,t}(\lambda^*)`.
    """

    name: str
    G: np.ndarray
    Delta: float
    lam: float
    opt: float


def _from_lambda(name: str, G: np.ndarray, lam: float) -> CanonicalProblem:
    Delta = float(np.mean(soft.dg_step(lam, G)))
    return CanonicalProblem(name, G, Delta, lam, float(np.mean(soft.kl_step(lam, G))))


def canonical_problems() -> list[CanonicalProblem]:
    """The instances: constant G (the certainty equivalent), two-point, Beta(2,2) draws, hard limit.

    Returns
    -------
    list of CanonicalProblem
        Five instances, each with its optimum known in closed form (module docstring).
    """
    gamma, Delta = 0.398, 0.3
    out = [
        CanonicalProblem(
            "constant G = gamma (certainty equivalent)",
            np.full(64, gamma),
            Delta,
            certainty.delta_star(Delta, gamma),
            certainty.kl_certainty_equivalent(Delta, gamma),
        ),
        _from_lambda("two-point G in {0.1, 0.9}", np.tile([0.1, 0.9], 50), 1.5),
        _from_lambda("Beta(2, 2), T = 1000, seed 0", np.random.default_rng(0).beta(2.0, 2.0, 1000), 1.0),
        _from_lambda("low entropy: G in {0.02, 0.98, 0.5}", np.tile([0.02, 0.98, 0.5], 40), 3.0),
    ]
    G = np.array([0.2, 0.5, 0.8])
    out.append(CanonicalProblem("hard red list: Delta = mean(1 - G)", G, float(np.mean(1 - G)), np.inf, float(np.mean(-np.log(G)))))
    return out
