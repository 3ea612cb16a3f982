r"""Online watermark controllers on a G_t process, as Numba kernels with a NumPy reference.

Per step t the process draws G_t (uniform lane 0 of the counter stream), the
controller picks a boost, the exact per-token KL and DG follow from
:mod:`theory._scalar`, and the token's colour is drawn green with probability
:math:`q_G = G_t + \mathrm{DG}_t` (lane 2).  Controllers:

* ``dualga`` -- Algorithm DualGA: :math:`\delta_t = \lambda_t`,
  :math:`\lambda_{t+1} = \Pi_{[0,M]}(\lambda_t + \eta_t(\Delta - \mathrm{DG}_t(\delta_t)))`,
  :math:`\eta_t = \eta` or :math:`c/\sqrt t`.
* ``srl`` -- the soft red list with a fixed :math:`\delta` (Algorithm kirchen).
* ``backpressure`` -- the virtual-queue algorithm of Neely & Yu (2017) for online
  convex optimisation with long-term constraints: the boost is chosen *before*
  G_t is seen, :math:`x_{t+1} = \Pi_{[0,M]}\bigl(x_t - (V f_t'(x_t) + Q_t g_t'(x_t))/(2\alpha)\bigr)`,
  :math:`Q_{t+1} = \max(Q_t + g_t(x_t) + g_t'(x_t)(x_{t+1} - x_t), 0)` with
  :math:`f_t = D_{kl,t}`, :math:`g_t = \Delta - \mathrm{DG}_t`, :math:`V = \sqrt T`, :math:`\alpha = T`,
  :math:`Q_1 = 0` and :math:`x_1 = \lambda_1` (the same start as DualGA).

All three see each G_t exactly once, after choosing the boost (the order of
Algorithm DualGA); DualGA and backpressure differ only in their update rule.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
from numba import njit, prange

from sims.core import rng
from theory import _scalar
from theory.offline import rtsafe_step

#: Kernel codes of the online controllers (:data:`ONLINE_ALGOS`).
DUALGA, SRL, BACKPRESSURE = 0, 1, 2
#: The online controllers of the reduced simulator, by name: their kernel codes (``--algo`` of ``python -m sims reduced``).
ONLINE_ALGOS = {"dualga": DUALGA, "srl": SRL, "backpressure": BACKPRESSURE}
LANES = 4  #: counter layout: index = LANES * t + lane; lane 0 G, 1 regime, 2 colour

ControllerParams = namedtuple("ControllerParams", "Delta eta eta_mode lam1 M delta V alpha")
ControllerParams.__doc__ = """A controller's parameters as the kernels read them (floats).

Attributes
----------
Delta : float
    DG target per token.
eta : float
    Step size of the dual update.
eta_mode : float
    0 (constant step) or 1 (``eta / sqrt(t)``).
lam1 : float
    First boost, in [0, M].
M : float
    Projection bound of the dual variable.
delta : float
    SRL's constant boost.
V, alpha : float
    Backpressure's weight of the KL and its proximal coefficient (module docstring: sqrt T and T).
"""
#: Indices of the per-replication state vector: [lam_or_x, Q, regime, sum_kl, sum_dg, n_green].
S_LAM, S_Q, S_REG, S_KL, S_DG, S_GREEN = 0, 1, 2, 3, 4, 5
N_STATE = 6  #: length of the state vector


@njit(cache=True, inline="always")
def _draw(table, step, u):
    n = table.shape[0]
    if step:
        i = int(u * n)
        if i > n - 1:
            i = n - 1
        return table[i]
    x = u * (n - 1)
    i = int(x)
    if i > n - 2:
        i = n - 2
    w = x - i
    return table[i] + w * (table[i + 1] - table[i])


@njit(cache=True, inline="always")
def _law(kind, gparams, t, regime, n_laws):
    if kind == 0:
        return 0
    if kind == 1:
        return regime
    if kind == 2:
        return int(t // int(gparams[0])) % n_laws
    if kind == 3:
        period = gparams[0]
        phase = (t % period) / period
        b = int(phase * n_laws)
        return b if b < n_laws else n_laws - 1
    return 0 if t < gparams[0] else 1


@njit(cache=True, inline="always")
def _regime_step(kind, gparams, key, t, regime, n_laws):
    """Markov regime switching: with probability p the regime is redrawn uniformly."""
    if kind != 1 or t == 0:
        return regime
    u = rng.uniform_nb(key, LANES * t + 1)
    p = gparams[0]
    if u < p:
        r = int((u / p) * n_laws)
        return r if r < n_laws else n_laws - 1
    return regime


@njit(cache=True, inline="always")
def _step(algo, prm, G, state, t):
    """One controller step (``prm`` a :class:`ControllerParams`): returns (kl, dg) of the boost used;
    updates state in place."""
    Delta = prm.Delta
    M = prm.M
    if algo == SRL:
        d = prm.delta
        dg = _scalar.dg(d, G)
        return _scalar.kl_given_dg(d, G, dg), dg
    if algo == DUALGA:
        lam = state[S_LAM]
        dg = _scalar.dg(lam, G)
        kl = _scalar.kl_given_dg(lam, G, dg)
        eta = prm.eta if prm.eta_mode == 0.0 else prm.eta / math.sqrt(t + 1.0)
        state[S_LAM] = _scalar.dualga_update(lam, dg, Delta, eta, M)
        return kl, dg
    # backpressure (Neely & Yu): x chosen before G_t is seen, first-order update after
    x = state[S_LAM]
    Q = state[S_Q]
    V = prm.V
    alpha = prm.alpha
    dg = _scalar.dg(x, G)
    kl = _scalar.kl_given_dg(x, G, dg)
    slope = _scalar.dg_slope(x, G)
    f1 = x * slope  # d KL / d delta = delta * q (1 - q)
    g1 = -slope
    x_new = min(max(x - (V * f1 + Q * g1) / (2.0 * alpha), 0.0), M)
    state[S_Q] = max(Q + (Delta - dg) + g1 * (x_new - x), 0.0)
    state[S_LAM] = x_new
    return kl, dg


@njit(cache=True, parallel=True)
def run_chunk(algo, prm, kind, tables, step, gparams, seed, t0, t1, state, law_counts):
    """Advance every replication (rows of ``state``) from step t0 to t1 in parallel.

    ``law_counts[r, l]`` accumulates the steps replication r spent under law l.
    """
    R = state.shape[0]
    n_laws = tables.shape[0]
    for r in prange(R):
        key = rng.stream_key_nb(seed, r)
        # thread-local copies: rows of shared arrays written every step would false-share
        s = state[r].copy()
        counts = np.zeros(n_laws, dtype=np.int64)
        regime = int(s[S_REG])
        kl_sum = 0.0
        dg_sum = 0.0
        green = 0.0
        for t in range(t0, t1):
            regime = _regime_step(kind, gparams, key, t, regime, n_laws)
            law = _law(kind, gparams, t, regime, n_laws)
            counts[law] += 1
            G = _draw(tables[law], step, rng.uniform_nb(key, LANES * t))
            kl, dg = _step(algo, prm, G, s, t)
            kl_sum += kl
            dg_sum += dg
            if rng.uniform_nb(key, LANES * t + 2) < G + dg:
                green += 1.0
        s[S_REG] = regime
        s[S_KL] += kl_sum
        s[S_DG] += dg_sum
        s[S_GREEN] += green
        state[r] = s
        law_counts[r] += counts


@njit(cache=True)
def regenerate(kind, tables, step, gparams, seed, r, T):
    """The G_1..G_T replication r saw (same counters as :func:`run_chunk`)."""
    key = rng.stream_key_nb(seed, r)
    n_laws = tables.shape[0]
    out = np.empty(T)
    regime = 0
    for t in range(T):
        regime = _regime_step(kind, gparams, key, t, regime, n_laws)
        out[t] = _draw(tables[_law(kind, gparams, t, regime, n_laws)], step, rng.uniform_nb(key, LANES * t))
    return out


@njit(cache=True)
def stream_means(kind, tables, step, gparams, seed, r, T, lam, what):
    """Means over the G_1..G_T of replication r, regenerated on the fly (no T-sized array).

    ``what`` 0: (mean DG(lam), mean dDG/dlam); 1: (mean KL(lam), mean DG(lam));
    2: (mean (1 - G) 1{G > 0}, 0) -- the largest achievable average DG.
    """
    key = rng.stream_key_nb(seed, r)
    n_laws = tables.shape[0]
    regime = 0
    a = 0.0
    b = 0.0
    for t in range(T):
        regime = _regime_step(kind, gparams, key, t, regime, n_laws)
        G = _draw(tables[_law(kind, gparams, t, regime, n_laws)], step, rng.uniform_nb(key, LANES * t))
        if what == 0:
            a += _scalar.dg(lam, G)
            b += _scalar.dg_slope(lam, G)
        elif what == 1:
            d = _scalar.dg(lam, G)
            a += _scalar.kl_given_dg(lam, G, d)
            b += d
        elif G > 0.0:
            a += 1.0 - G
    return a / T, b / T


@njit(cache=True)
def hindsight_opt(kind, tables, step, gparams, seed, r, T, Delta, tol):
    r"""OPT(Delta) of replication r's own G sequence, streamed (opt:nofree, Lemma Lagrangian_dual).

    .. math:: \mathrm{OPT} = \frac1T\sum_t D_{kl,t}(\lambda^*),\quad
              \frac1T\sum_t \mathrm{DG}_t(\lambda^*) = \Delta

    lambda* by the same safeguarded Newton on a doubling bracket as
    ``theory.offline.offline_opt``; each evaluation regenerates the counter stream.
    Returns (OPT, lambda*), or (nan, nan) when Delta is infeasible for this sequence.
    """
    if stream_means(kind, tables, step, gparams, seed, r, T, 0.0, 2)[0] <= Delta:
        return np.nan, np.nan
    lo = 0.0
    hi = 1.0
    while True:
        m = stream_means(kind, tables, step, gparams, seed, r, T, hi, 0)[0]
        if m >= Delta or hi > 1e6:
            break
        lo = hi
        hi *= 2.0
    lam = 0.5 * (lo + hi)
    for _ in range(200):
        m, dm = stream_means(kind, tables, step, gparams, seed, r, T, lam, 0)
        lam, lo, hi, done = rtsafe_step(lam, lo, hi, m - Delta, dm, tol)
        if done:
            break
    return stream_means(kind, tables, step, gparams, seed, r, T, lam, 1)[0], lam


@njit(cache=True)
def trace(algo, prm, kind, tables, step, gparams, seed, r, T, every):
    """Per-step lambda_t (boost used), G_t, DG_t, KL_t of replication r, every ``every`` steps."""
    key = rng.stream_key_nb(seed, r)
    n_laws = tables.shape[0]
    n = (T + every - 1) // every
    out = np.empty((4, n))
    s = np.zeros(N_STATE)
    s[S_LAM] = prm.lam1
    regime = 0
    for t in range(T):
        regime = _regime_step(kind, gparams, key, t, regime, n_laws)
        G = _draw(tables[_law(kind, gparams, t, regime, n_laws)], step, rng.uniform_nb(key, LANES * t))
        boost = s[S_LAM] if algo != SRL else prm.delta
        kl, dg = _step(algo, prm, G, s, t)
        if t % every == 0:
            j = t // every
            out[0, j] = boost
            out[1, j] = G
            out[2, j] = dg
            out[3, j] = kl
    return out


def run_reference(algo: int, prm: ControllerParams, proc, seed: int, r: int, T: int) -> np.ndarray:
    """Pure-NumPy/Python reference of one replication: returns [lam, Q, regime, sum_kl, sum_dg, n_green].

    Uses the NumPy counter stream (:func:`sims.core.rng.uniforms`) and theory's public
    ufuncs; tests check it equals :func:`run_chunk` bit for bit.

    Parameters
    ----------
    algo : int
        Controller code (:data:`DUALGA`, :data:`SRL`, :data:`BACKPRESSURE`).
    prm : ControllerParams
        The controller's parameters.
    proc : GProcess
        The G_t process.
    seed : int
        The run's seed.
    r : int
        The replication (its counter stream is ``stream_key(seed, r)``).
    T : int
        Steps.

    Returns
    -------
    ndarray, shape (N_STATE,)
        The final state: boost (or backpressure's x), virtual queue Q, regime, summed KL, summed DG, green count.
    """
    import theory
    from sims.reduced.gprocess import draw_from_table

    Delta, eta, eta_mode, lam1, M, delta, V, alpha = prm
    key = rng.stream_key(seed, r)
    u = rng.uniforms(key, np.arange(LANES * T)).reshape(T, LANES)
    lam, Q, regime = lam1, 0.0, 0
    kl_sum = dg_sum = green = 0.0
    n_laws, p = len(proc.tables), proc.params[0]
    for t in range(T):
        if proc.kind == "markov" and t > 0 and u[t, 1] < p:
            regime = min(int((u[t, 1] / p) * n_laws), n_laws - 1)
        law = _law(proc.kind_code, proc.params, t, regime, n_laws)
        G = draw_from_table(proc.tables[law], proc.step, u[t, 0])
        boost = delta if algo == SRL else lam
        kl, dg = theory.kl_step(boost, G), theory.dg_step(boost, G)
        if algo == DUALGA:
            e = eta if eta_mode == 0.0 else eta / math.sqrt(t + 1.0)
            lam = theory.dualga_update(lam, dg, Delta, e, M)
        elif algo == BACKPRESSURE:
            slope = theory.dg_slope_step(lam, G)
            x_new = min(max(lam - (V * (lam * slope) + Q * (-slope)) / (2.0 * alpha), 0.0), M)
            Q = max(Q + (Delta - dg) - slope * (x_new - lam), 0.0)
            lam = x_new
        kl_sum += kl
        dg_sum += dg
        green += 1.0 if u[t, 2] < G + dg else 0.0
    return np.array([lam, Q, regime, kl_sum, dg_sum, green])
