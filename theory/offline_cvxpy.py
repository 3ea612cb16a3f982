"""CVXPY formulations of the offline problems (imported lazily: cvxpy is heavy).

* :func:`offline_opt_cvxpy` -- problem (opt:free_t) written in the tilted green
  masses :math:`x_t = q_{G,t}` with ``rel_entr``; by Prop. free_t its optimum has
  one boost for all t, so it cross-checks :func:`theory.offline_opt`.
* :func:`general_opt_cvxpy` -- the general problem (opt:free_t_k) over full
  next-token distributions on a small vocabulary (proof of Prop. free_k,
  program opt:transformed_one_step_k summed over t).

All solves use CLARABEL with tight tolerances.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from theory._validate import in_unit_interval
from theory.offline_result import OfflineResult

#: Tried in order until CLARABEL reports "optimal": the tight setting recovers the dual
#: multiplier to ~1e-9, but on large T it can stall ("optimal_inaccurate").
SOLVER_OPTS = (
    dict(tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12, tol_ktratio=1e-10, max_iter=400),
    dict(tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10, max_iter=400),
    dict(max_iter=400),  # CLARABEL defaults (1e-8)
)


def _solve(prob):
    """Solve with CLARABEL, tightest tolerances first; return the first optimal solve,
    else the last "optimal_inaccurate" one (its ``status`` is reported to the caller).

    Each attempt solves a fresh copy (cvxpy keeps solver state between solves).
    The constraints are shared, so their ``dual_value`` is that of the returned solve.
    """
    import warnings

    cp = _cp()
    for opts in SOLVER_OPTS:
        prob = cp.Problem(prob.objective, prob.constraints)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # "Solution may be inaccurate": we retry
            try:
                prob.solve(solver=cp.CLARABEL, **opts)
            except cp.error.SolverError:  # numerical failure at this tolerance: try the next
                continue
        if prob.status == "optimal":
            return prob
    if prob.status == "optimal_inaccurate":  # CLARABEL's reduced tolerances (~5e-5) were met
        return prob
    raise RuntimeError(f"CLARABEL returned status {prob.status!r}")


def _cp():
    import cvxpy as cp

    return cp


def _logit(x):
    return np.log(x) - np.log1p(-x)


def offline_opt_cvxpy(G: np.ndarray, Delta: float, max_dg: float) -> OfflineResult:
    r"""Solve (opt:free_t) in the tilted green masses.

    .. math::
        \min_{x} \frac1T \sum_t \bigl[x_t \log\tfrac{x_t}{G_t}
            + (1-x_t)\log\tfrac{1-x_t}{1-G_t}\bigr]
        \ \text{s.t.}\ \frac1T \sum_t (x_t - G_t) \ge \Delta

    The boost of step t is :math:`\mathrm{logit}\,x_t - \mathrm{logit}\,G_t`; the
    dual of the constraint is :math:`\lambda^*`.  Steps with G_t in {0, 1} are
    fixed (no boost changes them).

    Parameters
    ----------
    G : ndarray, shape (T,)
        Green masses of the unwatermarked next-token distributions, in [0, 1].
    Delta : float
        DG target per token.
    max_dg : float
        The largest achievable mean DG (mean red mass), recorded in the result.

    Returns
    -------
    OfflineResult
        The optimum (``method="cvxpy"``): value, median boost, the constraint's dual, the dual function at it, the
        achieved DG, per-step boosts and the solver's status.
    """
    cp = _cp()
    T = G.size
    free = (G > 0.0) & (G < 1.0)
    g = G[free]
    x = cp.Variable(g.size)
    # sums, not means: the dual of the constraint is lambda* either way and the scaling is better
    obj = cp.sum(cp.rel_entr(x, g)) + cp.sum(cp.rel_entr(1.0 - x, 1.0 - g))
    con = cp.sum(x - g) >= T * Delta
    prob = cp.Problem(cp.Minimize(obj), [con])  # rel_entr keeps 0 <= x <= 1
    prob = _solve(prob)
    xv = np.clip(x.value, 1e-300, 1.0 - 1e-16)
    boosts = _logit(xv) - _logit(g)
    lam = float(con.dual_value)
    # value of the primal at the solver's point, and the dual g(lam) of Lemma Lagrangian_dual
    from theory import soft

    dual_value = float(np.mean(soft.dual_step(lam, G, Delta)))
    res = OfflineResult(
        value=float(prob.value) / T,
        delta=float(np.median(boosts)) if boosts.size else 0.0,
        lam=lam,
        dual_value=dual_value,
        dg=float(np.sum(xv - g) / T),
        feasible=True,
        max_dg=max_dg,
        method="cvxpy",
        iterations=int(prob.solver_stats.num_iters or 0),
        boosts=boosts,
        status=prob.status,
    )
    return res


@dataclass(frozen=True)
class GeneralResult:
    """Solution of (opt:free_t_k) over full next-token distributions.

    Attributes
    ----------
    value : float
        Optimal average KL per token.
    lam : float
        Dual of the DG constraint.
    Q : ndarray, shape (T, V)
        Optimal watermarked distributions.
    log_ratio : ndarray, shape (T, V)
        log(Q / P); Prop. free_k says it takes one value on the green tokens and
        one on the red tokens of each step, and Prop. free_t says their
        difference (the boost) is the same for all t.
    boosts : ndarray, shape (T, V)
        Per-token, per-entry boost delta_{t,k} = log_ratio - (red level of step t),
        nan on red entries.
    """

    value: float
    lam: float
    Q: np.ndarray
    log_ratio: np.ndarray
    boosts: np.ndarray


def general_opt_cvxpy(P, green, Delta: float) -> GeneralResult:
    r"""Solve the general problem (opt:free_t_k) with one free probability per (t, k).

    .. math::
        \min_{q_t \in \Delta(\mathcal V)} \frac1T \sum_t D_{kl}(q_t \| p_t)
        \ \text{s.t.}\ \frac1T \sum_t \sum_{k\ \mathrm{green}} (q_{t,k} - p_{t,k}) \ge \Delta

    Parameters
    ----------
    P : array_like, shape (T, V)
        Unwatermarked next-token distributions (rows sum to 1, entries > 0).
    green : array_like of bool, shape (T, V)
        Green-list membership of each entry.
    Delta : float
        DG target in (0, mean red mass).

    Returns
    -------
    GeneralResult
        The optimal distributions, their log ratio to ``P``, the per-entry boosts, the value and the dual.

    Raises
    ------
    ValueError
        If the shapes differ, ``P`` has a zero entry or a row not summing to 1, or ``Delta`` is outside
        (0, mean red mass).
    """
    cp = _cp()
    P = in_unit_interval("P", P)
    green = np.asarray(green, dtype=bool)
    if P.ndim != 2 or green.shape != P.shape:
        raise ValueError(f"P and green must be 2-d arrays of one shape; got {P.shape} and {green.shape}")
    if (P <= 0.0).any():
        raise ValueError("P must have all entries in (0, 1]; got a zero entry")
    if not np.allclose(P.sum(axis=1), 1.0, atol=1e-12):
        raise ValueError("P rows must sum to 1")
    T, V = P.shape
    red_mass = float(np.mean(np.sum(np.where(green, 0.0, P), axis=1)))
    if not (0.0 < Delta < red_mass):
        raise ValueError(f"Delta must be in (0, mean red mass) = (0, {red_mass!r}); got {Delta!r}")
    Q = cp.Variable((T, V), nonneg=True)
    gm = green.astype(float)
    obj = cp.sum(cp.rel_entr(Q, P)) / T
    con = cp.sum(cp.multiply(gm, Q - P)) / T >= Delta
    prob = cp.Problem(cp.Minimize(obj), [con, cp.sum(Q, axis=1) == 1.0])
    prob = _solve(prob)
    Qv = np.maximum(Q.value, 1e-300)
    lr = np.log(Qv) - np.log(P)
    red_level = np.array([lr[t, ~green[t]].mean() if (~green[t]).any() else 0.0 for t in range(T)])
    boosts = np.where(green, lr - red_level[:, None], np.nan)
    return GeneralResult(float(prob.value), float(con.dual_value), Qv, lr, boosts)
