"""Hindsight optimum OPT(Delta) of problem (opt:nofree) for a realised G_1..G_T.

By Props. free_k and free_t the optimum of the general problem (a boost per
token and per vocabulary entry) is a single constant boost, so the offline
optimum is fixed by the one-dimensional dual of Lemma Lagrangian_dual:
:math:`\\lambda^*` solves :math:`\\frac1T\\sum_t \\mathrm{DG}_t(\\lambda) = \\Delta` and
:math:`\\delta^* = \\lambda^*`.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from theory import _scalar, _validate
from theory.offline_cvxpy import offline_opt_cvxpy
from theory.offline_result import OfflineResult


@njit(cache=True)
def _mean_dg_slope(lam, G):
    s = 0.0
    ds = 0.0
    for g in G:
        s += _scalar.dg(lam, g)
        ds += _scalar.dg_slope(lam, g)
    n = G.shape[0]
    return s / n, ds / n


@njit(cache=True)
def _means_at(lam, G, Delta):
    kl = 0.0
    dg = 0.0
    du = 0.0
    for g in G:
        kl += _scalar.kl(lam, g)
        dg += _scalar.dg(lam, g)
        du += _scalar.dual(lam, g, Delta)
    n = G.shape[0]
    return kl / n, dg / n, du / n


@njit(cache=True, inline="always")
def rtsafe_step(lam, lo, hi, f, slope, tol):
    """One safeguarded Newton step on the bracket [lo, hi] of an increasing f(lam) (the mean DG
    minus Delta): returns (next lam, lo, hi, converged); bisects where Newton leaves the bracket.

    Converged: the step is within ``tol * max(1, lam)``.  That covers a bracket narrowed to ``tol``:
    lam is one end of the new bracket and the next point lies inside it, so the step is shorter."""
    if f > 0.0:
        hi = lam
    else:
        lo = lam
    if f == 0.0:
        return lam, lo, hi, True
    new = lam - f / slope if slope > 0.0 else 0.5 * (lo + hi)
    if not (lo < new < hi):
        new = 0.5 * (lo + hi)
    return new, lo, hi, abs(new - lam) <= tol * max(1.0, lam)


@njit(cache=True)
def _solve_lam(G, Delta, tol):
    """Safeguarded Newton (rtsafe) for mean DG(lam) = Delta on a doubling bracket."""
    lo = 0.0
    hi = 1.0
    it = 0
    while True:
        m, _ = _mean_dg_slope(hi, G)
        it += 1
        if m >= Delta or hi > 1e6:
            break
        lo = hi
        hi *= 2.0
    lam = 0.5 * (lo + hi)
    for _ in range(200):
        it += 1
        m, dm = _mean_dg_slope(lam, G)
        lam, lo, hi, done = rtsafe_step(lam, lo, hi, m - Delta, dm, tol)
        if done:
            break
    return lam, it


def offline_opt(G, Delta: float, method: str = "dual", on_infeasible: str = "raise") -> OfflineResult:
    r"""Hindsight optimum :math:`\mathrm{OPT}(\Delta)` of (opt:nofree).

    .. math::
        \mathrm{OPT}(\Delta) = \min_{\delta\ge 0} \frac1T\sum_t D_{kl,t}(\delta)
        \ \text{s.t.}\ \frac1T\sum_t \mathrm{DG}_t(\delta) \ge \Delta

    Parameters
    ----------
    G : array_like, shape (T,)
        Realised green masses of the unwatermarked LM, each in [0, 1].
    Delta : float
        DG target, > 0.
    method : {"dual", "cvxpy"}
        "dual" solves the one-dimensional dual exactly (bracketing + safeguarded
        Newton, to 1e-15 relative in lambda); "cvxpy" solves the convex program in
        the tilted green masses with ``rel_entr`` (CLARABEL) and reads the dual
        of the DG constraint (see :mod:`theory.offline_cvxpy`).
    on_infeasible : {"raise", "report"}
        When no boost reaches Delta (mean of (1-G_t) 1{G_t>0} < Delta): raise
        ValueError, or return a result with ``feasible=False``.

    Returns
    -------
    OfflineResult

    References
    ----------
    Towards Better Statistical Understanding of Watermarking LLMs, problem (4) (opt:nofree), Lemma 2.6 (lemma:Lagrangian_dual) and strong duality eq. (6).

    Examples
    --------
    >>> import numpy as np
    >>> from theory import offline_opt
    >>> r = offline_opt(np.array([0.2, 0.3, 0.5, 0.4]), 0.2)
    >>> r.feasible, round(r.value, 4), round(r.delta, 4), round(r.dg, 4)
    (True, 0.0883, 0.8719, 0.2)
    """
    G = _validate.in_unit_interval("G", G)
    if G.ndim != 1 or G.size == 0:
        raise ValueError(f"G must be a non-empty 1-d array; got shape {G.shape}")
    Delta = float(Delta)
    if not (Delta > 0.0) or math.isinf(Delta):
        raise ValueError(f"Delta must be in (0, inf); got {Delta!r}")
    if method not in ("dual", "cvxpy"):
        raise ValueError(f"method must be one of 'dual', 'cvxpy'; got {method!r}")
    if on_infeasible not in ("raise", "report"):
        raise ValueError(f"on_infeasible must be 'raise' or 'report'; got {on_infeasible!r}")
    G = np.ascontiguousarray(G, dtype=np.float64)
    max_dg = float(np.mean(np.where(G > 0.0, 1.0 - G, 0.0)))
    if Delta > max_dg:
        if on_infeasible == "raise":
            raise ValueError(
                f"Delta must be at most mean((1 - G_t) 1{{G_t > 0}}) = {max_dg!r} for this G "
                f"(no boost can reach it); got {Delta!r}"
            )
        nan = float("nan")
        return OfflineResult(nan, nan, nan, nan, nan, False, max_dg, method)
    if method == "cvxpy":
        return offline_opt_cvxpy(G, Delta, max_dg)
    if Delta == max_dg:  # only the hard watermark reaches it
        lam, it = math.inf, 0
    else:
        lam, it = _solve_lam(G, Delta, 1e-15)
    kl, dg, du = _means_at(lam, G, Delta)
    return OfflineResult(float(kl), float(lam), float(lam), float(du), float(dg), True, max_dg, "dual", int(it))
