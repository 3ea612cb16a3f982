"""The result record of the offline optimum, shared by the exact dual solver
(:mod:`theory.offline`) and the CVXPY cross-check (:mod:`theory.offline_cvxpy`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class OfflineResult:
    """Primal and dual solution of (opt:nofree).

    Attributes
    ----------
    value : float
        OPT(Delta), the average KL per token at the optimum (nan if infeasible).
    delta : float
        The optimal constant boost (inf for the hard watermark, nan if infeasible).
    lam : float
        The optimal dual variable; equals ``delta`` (Lemma Lagrangian_dual (c)).
    dual_value : float
        g(lam) = (1/T) sum_t g_t(lam); equals ``value`` by strong duality.
    dg : float
        The realised average DG at the optimum (= Delta when the constraint binds).
    feasible : bool
        Whether some boost in [0, inf] reaches Delta.
    max_dg : float
        sup over boosts of the average DG: (1/T) sum_t (1 - G_t) 1{G_t > 0}.
    method : str
        "dual" or "cvxpy".
    iterations : int
        Newton/bisection iterations (dual) or solver iterations (cvxpy).
    boosts : ndarray or None
        Per-token boosts log-odds(x_t) - log-odds(G_t) at the solver's point (cvxpy only).
    status : str or None
        The solver's status (cvxpy only).

    Parameters
    ----------
    value, delta, lam, dual_value, dg, feasible, max_dg, method, iterations, boosts, status
        The attributes above, in that order (built by :func:`theory.offline_opt`).

    Returns
    -------
    OfflineResult
        A frozen record.

    References
    ----------
    Towards Better Statistical Understanding of Watermarking LLMs, problem (4) (opt:nofree) and Lemma 2.6 (lemma:Lagrangian_dual).

    Examples
    --------
    >>> import numpy as np
    >>> from theory import offline_opt
    >>> r = offline_opt(np.array([0.2, 0.3, 0.5, 0.4]), 0.2)
    >>> type(r).__name__, r.method, bool(abs(r.value - r.dual_value) < 1e-12)
    ('OfflineResult', 'dual', True)
    """

    value: float
    delta: float
    lam: float
    dual_value: float
    dg: float
    feasible: bool
    max_dg: float
    method: str
    iterations: int = 0
    boosts: np.ndarray | None = None
    status: str | None = None

    @property
    def duality_gap(self) -> float:
        return self.value - self.dual_value
