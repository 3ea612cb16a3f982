"""Scalar kernels of the soft watermark, compiled once with Numba.

These are the single source of truth for the closed forms: ``theory`` exposes
them as NumPy ufuncs and ``sims`` calls them from inside its Numba loops.
Every function takes the logit boost ``delta`` in [0, inf] and the green mass
``G`` of the unwatermarked next-token distribution in [0, 1].
"""

from __future__ import annotations

import math

from numba import njit

# Below this |x| the function f(x) = (1+x) log1p(x) - x is summed as a series;
# above it the direct form loses at most ~20 ulp (condition number <= 20).
_SERIES_CUTOFF = 0.1
_SERIES_TERMS = 20


@njit(cache=True, inline="always")
def xlog1px_minus_x(x: float) -> float:
    r"""f(x) = (1+x) log(1+x) - x >= 0 for x >= -1, accurate near 0.

    .. math:: f(x) = \sum_{n \ge 2} (-1)^n x^n / (n (n-1)),\quad |x| < 0.1
    """
    if x == -1.0:
        return 1.0
    if abs(x) < _SERIES_CUTOFF:
        acc = 0.0
        for n in range(_SERIES_TERMS + 1, 1, -1):
            acc = acc * (-x) + 1.0 / (n * (n - 1.0))
        return acc * x * x
    return (1.0 + x) * math.log1p(x) - x


@njit(cache=True)
def dg(delta: float, G: float) -> float:
    r"""DG_t(delta) = q_G - G, paper eq. (define_DG) for the constant boost.

    .. math:: \mathrm{DG} = \frac{G(1-G)(1-e^{-\delta})}{G + (1-G) e^{-\delta}}
    """
    if G <= 0.0 or G >= 1.0 or delta == 0.0:
        return 0.0
    if math.isinf(delta):
        return 1.0 - G
    e = math.exp(-delta)
    return G * (1.0 - G) * (-math.expm1(-delta)) / (G + (1.0 - G) * e)


@njit(cache=True)
def green_mass(delta: float, G: float) -> float:
    r"""Tilted green mass q_G = sigmoid(delta + logit G)."""
    return G + dg(delta, G)


@njit(cache=True)
def kl(delta: float, G: float) -> float:
    r"""Per-token KL(q_t || p_t) of the soft watermark (paper, proof of Prop. free_t).

    Written as a sum of two non-negative terms so that no cancellation occurs:

    .. math:: D_{kl} = G f(\mathrm{DG}/G) + (1-G) f(-\mathrm{DG}/(1-G)),
              \quad f(x) = (1+x)\log(1+x) - x.

    delta = inf gives the hard watermark's -log G.
    """
    return kl_given_dg(delta, G, dg(delta, G))


@njit(cache=True, inline="always")
def kl_given_dg(delta: float, G: float, d: float) -> float:
    """:func:`kl` when DG = ``d`` is already known (saves recomputing it in hot loops)."""
    if G <= 0.0 or G >= 1.0 or delta == 0.0:
        return 0.0
    if math.isinf(delta):
        return -math.log(G)
    a = d / G
    b = max(-d / (1.0 - G), -1.0)  # 1 + b = (1 - q_G) / (1 - G) >= 0
    if a > 1e300:  # G subnormal: G f(a) = q log(q / G) - DG without overflow
        q = G + d
        green = q * (math.log(q) - math.log(G)) - d
    else:
        green = G * xlog1px_minus_x(a)
    return green + (1.0 - G) * xlog1px_minus_x(b)


@njit(cache=True)
def dual(lam: float, G: float, Delta: float) -> float:
    r"""Token-wise dual g_t(lambda) = L_t(lambda, lambda) (Lemma Lagrangian_dual (b)).

    .. math:: g_t(\lambda) = (G + \Delta)\lambda - \log(G e^\lambda - G + 1)
    """
    if math.isinf(lam):
        if G <= 0.0:
            return math.inf if Delta < 0.0 else (-math.inf if Delta > 0.0 else 0.0)
        slope = G + Delta - 1.0
        if slope > 0.0:
            return math.inf
        if slope < 0.0:
            return -math.inf
        return -math.log(G)
    if lam > 1.0:
        # (G + Delta - 1) lam - log(G + (1 - G) e^{-lam}): no large cancellation
        return (G + Delta - 1.0) * lam - math.log(G + (1.0 - G) * math.exp(-lam))
    return (G + Delta) * lam - math.log1p(G * math.expm1(lam))


@njit(cache=True)
def dg_slope(delta: float, G: float) -> float:
    r"""d DG / d delta = q_G (1 - q_G) (>= 0: DG is increasing)."""
    if G <= 0.0 or G >= 1.0 or math.isinf(delta):
        return 0.0
    e = math.exp(-delta)
    den = G + (1.0 - G) * e
    return G * (1.0 - G) * e / (den * den)


@njit(cache=True, inline="always")
def dualga_update(lam: float, dg: float, Delta: float, eta: float, M: float) -> float:
    r"""One dual step of Algorithm DualGA (alg:DualGA, steps 7-8) with the projection on [0, M].

    .. math:: \lambda_{t+1} = \Pi_{[0,M]}\bigl(\lambda_t + \eta\,(\Delta - \mathrm{DG}_t(\delta_t))\bigr)

    The one scalar every Numba kernel inlines; :func:`theory.dualga_update` vectorises it.
    """
    return min(max(lam + eta * (Delta - dg), 0.0), M)


@njit(cache=True, inline="always")
def autocov_decrease(dg: float, prev_green: bool, gamma: float) -> float:
    r""":math:`-\mathrm{DA}_t \ge 0`, the decrease of the lag-one autocovariance (appendix, Possibility for
    Other Variants): :math:`\gamma\,\mathrm{DG}_t` after a red token (green list boosted),
    :math:`(1-\gamma)(-\mathrm{DG}_t)` after a green one (red list boosted, so DG_t <= 0)."""
    if prev_green:
        return (1.0 - gamma) * (-dg)
    return gamma * dg


@njit(cache=True, inline="always")
def autocov_update(lam: float, dg: float, prev_green: bool, gamma: float, Delta: float, eta: float, M: float) -> float:
    r"""One dual step of Algorithm DualGA_autocov (alg:DualGA_autocov, steps 12-13) with the projection.

    .. math:: \lambda_{t+1} = \Pi_{[0,M]}\bigl(\lambda_t + \eta\,(\Delta + \mathrm{DA}_t(\delta_t))\bigr)

    ``dg`` is the signed :math:`\mathrm{DG}_t = q_{G,t} - G_t` of the boost used and
    ``prev_green`` the colour of :math:`y_{t-1}` (:func:`autocov_decrease`).
    """
    return dualga_update(lam, autocov_decrease(dg, prev_green, gamma), Delta, eta, M)
