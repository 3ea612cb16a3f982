"""Runner of the reduced simulator: online controllers vs the hindsight optimum.

Theorem dualGA_performance_iid: with eta ~ 1/sqrt(T), DualGA's average KL exceeds
E[OPT(Delta)] and its average DG falls short of Delta by O(1/sqrt(T)) each,
plus O(W_T / T) on non-stationary processes.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass

import numpy as np
from numba import njit, prange

import theory
import theory._validate  # a submodule: theory's lazy __getattr__ resolves public names only
from sims.core import defaults
from sims.core.progress import progress
from sims.reduced import online
from sims.reduced.gprocess import GProcess, nonstationarity, parse_spec

CHUNK_STEPS = 2**22  #: steps per replication between progress updates
PROGRESS_ABOVE = 10**8  #: runs of more steps (T x replications) show a progress bar and run in chunks


@dataclass
class ReducedResult:
    """Summary of R replications of T steps (per-replication arrays included).

    Parameters
    ----------
    algo, spec, T, reps, seed, Delta, gamma, avg_kl, avg_dg, opt_kl, regret, violation, green_fraction, z_mean,
    dg_spread, W1, W2, steps, elapsed_s, steps_per_s, infeasible_reps, params, per_rep
        Built by :func:`simulate`.

    Returns
    -------
    ReducedResult

    References
    ----------
    Towards Better Statistical Understanding of Watermarking LLMs, Algorithm 2 (alg:DualGA), Theorem 2.8
    (thm:dualGA_performance_iid) and problem (4) (opt:nofree).

    Examples
    --------
    >>> import sims
    >>> r = sims.simulate("dualga", "beta:2,2", T=200, reps=2, seed=0)
    >>> type(r).__name__, r.steps, round(r.avg_dg, 4)
    ('ReducedResult', 400, 0.1844)
    """

    algo: str
    spec: str
    T: int
    reps: int
    seed: int
    Delta: float
    gamma: float
    avg_kl: float
    avg_dg: float
    opt_kl: float
    regret: float
    violation: float
    green_fraction: float
    z_mean: float
    dg_spread: float
    W1: float
    W2: float
    steps: int
    elapsed_s: float
    steps_per_s: float
    infeasible_reps: int
    params: dict
    per_rep: dict

    def summary(self) -> dict:
        """The result without its per-replication arrays (what the CLI prints as JSON).

        Returns
        -------
        dict
            Every field but ``per_rep``.
        """
        out = asdict(self)
        out.pop("per_rep")
        return out


def controller_params(
    algo: str, proc: GProcess, T: int, *, Delta: float, gamma: float | None, eta: float | None,
    eta_mode: str, lam1: float | None, delta: float | None, M: float,
) -> tuple[online.ControllerParams, dict]:
    """Validate the controller's parameters: the kernels' :class:`~sims.reduced.online.ControllerParams`
    and the same values as a dict.

    Parameters
    ----------
    algo : str
        One of :data:`sims.reduced.online.ONLINE_ALGOS`.
    proc : GProcess
        The G_t process (its mean is the default gamma, its :meth:`~GProcess.max_dg` bounds Delta).
    T : int
        Steps per replication (default step size 1/sqrt(T); backpressure's V = sqrt T, alpha = T).
    Delta : float
        DG target, in (0, max_dg).
    gamma : float or None
        Green-list fraction (None: the process's mean G).
    eta : float or None
        Step size (None: 1/sqrt(T) for a constant step, 1 for ``"sqrt"``).
    eta_mode : {"const", "sqrt"}
        Constant step, or eta / sqrt(t).
    lam1 : float or None
        First boost (None: the certainty-equivalent delta*(Delta, gamma), projected on [0, M]).
    delta : float or None
        SRL's boost (required for ``"srl"``).
    M : float
        Projection bound, in (0, inf).

    Returns
    -------
    params : ControllerParams
        What the kernels read.
    info : dict
        ``eta``, ``eta_mode``, ``lam1``, ``M``, ``delta``, ``gamma`` as resolved.

    Raises
    ------
    ValueError
        For an unknown controller or a parameter out of range.
    """
    if algo not in online.ONLINE_ALGOS:
        raise ValueError(f"algo must be one of {sorted(online.ONLINE_ALGOS)}; got {algo!r}")
    if not (M > 0.0 and math.isfinite(M)):
        raise ValueError(f"M must be in (0, inf); got {M!r}")
    gam = proc.mean() if gamma is None else theory._validate.gamma(gamma)
    red = proc.max_dg()
    if not (0.0 < Delta < red):
        raise ValueError(f"Delta must be in (0, E[(1 - G) 1{{G > 0}}]) = (0, {red:.6g}) for G={proc.spec}; got {Delta!r}")
    if eta is None:
        eta = 1.0 / math.sqrt(T) if eta_mode == "const" else 1.0
    if not (eta > 0.0 and math.isfinite(eta)):
        raise ValueError(f"eta must be in (0, inf); got {eta!r}")
    if eta_mode not in ("const", "sqrt"):
        raise ValueError(f"eta_mode must be 'const' or 'sqrt'; got {eta_mode!r}")
    if lam1 is None:  # certainty equivalent, projected onto [0, M] (inf when Delta >= 1 - gamma)
        lam1 = min(float(theory.delta_star(Delta, gam)), M) if Delta < 1.0 - gam else M
    if not (0.0 <= lam1 <= M):
        raise ValueError(f"lam1 must be in [0, M] = [0, {M}]; got {lam1!r}")
    if algo == "srl":
        if delta is None:
            raise ValueError("delta must be given for algo 'srl' (a number in [0, inf))")
        theory._validate.boost("delta", delta)
    d = 0.0 if delta is None else float(delta)
    # backpressure starts its boost x_1 at lam1 too, so the two adaptive controllers compare fairly
    ap = online.ControllerParams(float(Delta), float(eta), 0.0 if eta_mode == "const" else 1.0, float(lam1), float(M), float(d),
                                 math.sqrt(T), float(T))
    info = dict(eta=eta, eta_mode=eta_mode, lam1=lam1, M=M, delta=delta, gamma=gam)
    return ap, info


OPT_TOL = 1e-13  #: relative tolerance on lambda* of the hindsight optimum


@njit(cache=True, parallel=True)
def _opt_per_rep(kind, tables, step, gparams, seed, R, T, Delta):
    """Hindsight OPT(Delta) of each replication's own G sequence (regenerated, not stored)."""
    out = np.full(R, np.nan)
    for r in prange(R):
        out[r] = online.hindsight_opt(kind, tables, step, gparams, seed, r, T, Delta, OPT_TOL)[0]
    return out


def simulate(
    algo: str = "dualga", G: str | GProcess = "beta:2,2", *, T: int, reps: int = 8, seed: int = 0,
    Delta: float = 0.2, gamma: float | None = None, eta: float | None = None, eta_mode: str = "const",
    lam1: float | None = None, delta: float | None = None, M: float = defaults.M, with_opt: bool = True,
) -> ReducedResult:
    """Run ``reps`` replications of ``T`` steps of an online controller on a G_t process.

    Parameters
    ----------
    algo : {"dualga", "srl", "backpressure"}
    G : str or GProcess
        The process (SPEC string, see :mod:`sims.reduced.gprocess`).
    T, reps, seed : int
        Steps per replication, replications, seed (replication r uses stream (seed, r)).
    Delta : float
        DG target of DualGA / backpressure (and of the hindsight optimum).
    gamma : float, optional
        Green-list ratio for z-scores and the default lambda_1; default E[G].
    eta, eta_mode : step size; "const" (default eta = 1/sqrt(T)) or "sqrt" (eta_t = eta / sqrt(t)).
    lam1 : float, optional
        Initial dual variable; default the certainty-equivalent delta_star(Delta, gamma) clipped to M.
    delta : float
        SRL's fixed boost.
    M : float
        Projection bound of the dual variable (Assumption iid (b)).
    with_opt : bool
        Compute the hindsight OPT(Delta) of each replication (by regenerating its G).

    Returns
    -------
    ReducedResult

    References
    ----------
    Towards Better Statistical Understanding of Watermarking LLMs, Algorithm 2 (alg:DualGA), Assumption 2.7
    (assum:iid), Theorem 2.8 (thm:dualGA_performance_iid)
    and the hindsight optimum of problem (4) (opt:nofree).

    Examples
    --------
    >>> import sims
    >>> r = sims.simulate("dualga", "beta:2,2", T=200, reps=2, seed=0)
    >>> round(r.avg_dg, 4), round(r.avg_kl, 4), round(r.opt_kl, 4)
    (0.1844, 0.0885, 0.1042)
    """
    if int(T) < 1:
        raise ValueError(f"T must be in [1, inf); got {T!r}")
    if int(reps) < 1:
        raise ValueError(f"reps must be in [1, inf); got {reps!r}")
    T, reps = int(T), int(reps)
    proc = (parse_spec(G) if isinstance(G, str) else G).with_switch_time(T)
    ap, info = controller_params(algo, proc, T, Delta=Delta, gamma=gamma, eta=eta, eta_mode=eta_mode, lam1=lam1, delta=delta, M=M)
    state = np.zeros((reps, online.N_STATE))
    state[:, online.S_LAM] = ap.lam1
    law_counts = np.zeros((reps, len(proc.tables)), dtype=np.int64)
    t0 = time.perf_counter()
    chunk = T if T * reps <= PROGRESS_ABOVE else CHUNK_STEPS
    with progress(T * reps, f"{algo} on {proc.spec}", force=None if T * reps > PROGRESS_ABOVE else False) as bar:
        for a in range(0, T, chunk):
            b = min(T, a + chunk)
            online.run_chunk(online.ONLINE_ALGOS[algo], ap, proc.kind_code, proc.tables, proc.step, proc.params, seed, a, b, state, law_counts)
            bar.update((b - a) * reps)
    elapsed = time.perf_counter() - t0
    kl = state[:, online.S_KL] / T
    dg = state[:, online.S_DG] / T
    green = state[:, online.S_GREEN]
    gam = info["gamma"]
    z = (green - gam * T) / math.sqrt(T * gam * (1 - gam))
    opt = _opt_per_rep(proc.kind_code, proc.tables, proc.step, proc.params, seed, reps, T, Delta) if with_opt else np.full(reps, np.nan)
    ok = np.isfinite(opt)
    W1, W2 = nonstationarity(proc, law_counts.mean(axis=0), M)
    return ReducedResult(
        algo=algo, spec=proc.spec, T=T, reps=reps, seed=seed, Delta=Delta, gamma=gam,
        avg_kl=float(kl.mean()), avg_dg=float(dg.mean()),
        opt_kl=float(opt[ok].mean()) if ok.any() else float("nan"),
        regret=float((kl[ok] - opt[ok]).mean()) if ok.any() else float("nan"),
        violation=float(np.maximum(0.0, Delta - dg).mean()),
        green_fraction=float(green.sum() / (T * reps)), z_mean=float(z.mean()),
        dg_spread=float(dg.std(ddof=1)) if reps > 1 else 0.0,
        W1=W1, W2=W2, steps=T * reps, elapsed_s=elapsed, steps_per_s=T * reps / elapsed if elapsed > 0 else float("inf"),
        infeasible_reps=int((~ok).sum()) if with_opt else 0,
        params={k: v for k, v in info.items()},
        per_rep=dict(avg_kl=kl, avg_dg=dg, opt_kl=opt, z=z, final_lam=state[:, online.S_LAM].copy()),
    )


def traces(algo: str = "dualga", G: str = "beta:2,2", *, T: int, rep: int = 0, seed: int = 0, every: int = 1, **kw) -> dict:
    """lambda_t (boost used), G_t, DG_t, KL_t of one replication, every ``every`` steps.

    Parameters
    ----------
    algo, G, T, seed, **kw :
        As :func:`simulate`.
    rep : int
        Which replication.
    every : int
        Keep every ``every``-th step.

    Returns
    -------
    dict
        Arrays ``t``, ``lam``, ``G``, ``dg``, ``kl``.

    References
    ----------
    Towards Better Statistical Understanding of Watermarking LLMs, Algorithm 2 (alg:DualGA) and the
    dual-variable dynamics of App. F (fig:body_text_dual_lambda).

    Examples
    --------
    >>> import sims
    >>> tr = sims.traces("dualga", "beta:2,2", T=50, seed=0, every=10)
    >>> sorted(tr), tr["lam"].shape
    (['G', 'dg', 'kl', 'lam', 't'], (5,))
    """
    if int(every) < 1:
        raise ValueError(f"every must be in [1, inf); got {every!r}")
    proc = parse_spec(G).with_switch_time(T)
    ap, _ = controller_params(
        algo, proc, T, Delta=kw.get("Delta", 0.2), gamma=kw.get("gamma"), eta=kw.get("eta"),
        eta_mode=kw.get("eta_mode", "const"), lam1=kw.get("lam1"), delta=kw.get("delta"), M=kw.get("M", defaults.M),
    )
    out = online.trace(online.ONLINE_ALGOS[algo], ap, proc.kind_code, proc.tables, proc.step, proc.params, seed, rep, T, every)
    t = np.arange(0, T, every)
    return dict(t=t, lam=out[0], G=out[1], dg=out[2], kl=out[3])


def slope_ci(Ts, values, seed: int = 0, n_boot: int = 400, level: float = 0.95) -> tuple[float, float, float]:
    """OLS slope of log(mean over replications) on log T, with a bootstrap CI over replications.

    ``values[j]`` holds the per-replication values at ``Ts[j]``; used to check the
    T^(-1/2) rates of Theorem dualGA_performance_iid.

    Parameters
    ----------
    Ts : sequence of int
        Horizons.
    values : sequence of ndarray
        Per-replication values at each horizon.
    seed : int, default 0
        Seed of the bootstrap.
    n_boot : int, default 400
        Bootstrap resamples.
    level : float, default 0.95
        Confidence level.

    Returns
    -------
    slope, lower, upper : float
        The slope and its percentile bootstrap interval.
    """
    rng = np.random.default_rng(seed)
    x = np.log(np.asarray(Ts, dtype=float))
    slope = np.polyfit(x, np.log([v.mean() for v in values]), 1)[0]
    boots = [np.polyfit(x, [np.log(v[rng.integers(0, v.size, v.size)].mean()) for v in values], 1)[0] for _ in range(n_boot)]
    lo, hi = np.quantile(boots, [(1 - level) / 2, (1 + level) / 2])
    return float(slope), float(lo), float(hi)
