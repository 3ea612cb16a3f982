"""Certainty-equivalent boost and green-list ratio (paper, appendix
"Discussions on Choosing Green List Ratio", problem opt:certainty_equivalent)."""

from __future__ import annotations

import math

from scipy.optimize import brentq

from theory import _scalar, _validate


def delta_star(Delta: float, gamma: float) -> float:
    r"""Boost that meets the certainty-equivalent constraint with equality.

    .. math:: \delta^*(\Delta, \gamma) = \log\Bigl(1 + \frac{\Delta}{\gamma}\Bigr)
              + \log\Bigl(1 + \frac{\Delta}{1 - \gamma - \Delta}\Bigr)

    Valid for :math:`0 < \Delta < 1 - \gamma`.

    Parameters
    ----------
    Delta : float
        DG target, in (0, 1 - gamma).
    gamma : float
        Green-list ratio in (0, 1).

    Returns
    -------
    float
        The boost delta* >= 0.

    References
    ----------
    Towards Better Statistical Understanding of Watermarking LLMs, App. C, problem (12) (opt:certainty_equivalent).

    Examples
    --------
    >>> from theory import delta_star
    >>> round(delta_star(0.2, 0.25), 4)
    0.8979
    """
    g = _validate.gamma(gamma)
    D = _validate.Delta_for_gamma(Delta, g)
    return math.log1p(D / g) + math.log1p(D / (1.0 - g - D))


def kl_certainty_equivalent(Delta: float, gamma: float) -> float:
    r"""Optimal value :math:`\mathrm{OPT}_{CE}(\Delta, \gamma)` = KL(Ber(gamma+Delta) || Ber(gamma)).

    .. math:: (\Delta+\gamma)\log\frac{\gamma+\Delta}{\gamma}
              + (1-\Delta-\gamma)\log\frac{1-\gamma-\Delta}{1-\gamma}

    Parameters
    ----------
    Delta : float
        DG target, in (0, 1 - gamma).
    gamma : float
        Green-list ratio in (0, 1).

    Returns
    -------
    float
        The certainty-equivalent KL in nats.

    References
    ----------
    Towards Better Statistical Understanding of Watermarking LLMs, App. C, problem (12) (opt:certainty_equivalent).

    Examples
    --------
    >>> from theory import kl_certainty_equivalent
    >>> round(kl_certainty_equivalent(0.2, 0.25), 4)
    0.0939
    """
    g = _validate.gamma(gamma)
    D = _validate.Delta_for_gamma(Delta, g)
    f = _scalar.xlog1px_minus_x
    return g * f(D / g) + (1.0 - g) * f(-D / (1.0 - g))


_SERIES_CUTOFF = 0.1
_SERIES_TERMS = 30  # |x| < 0.1: the first term left out is < 0.1^29 / 31 of the sum


def _log1p_minus_x(x: float) -> float:
    """log(1 + x) - x without cancellation: the series -x^2/2 + x^3/3 - ... for small |x|."""
    if abs(x) < _SERIES_CUTOFF:
        acc = 0.0
        for n in range(_SERIES_TERMS, 1, -1):
            acc = acc * (-x) + 1.0 / n
        return -acc * x * x
    return math.log1p(x) - x


def _foc(gamma: float, Delta: float, hi: float) -> float:
    # eq. (certainty_equivalent): d OPT_CE / d gamma = g(Delta / gamma) - g(-Delta / (1 - gamma)),
    # g(x) = log(1 + x) - x; both terms are O(Delta^2) and cancel at the root, so each is summed
    # without cancellation; near gamma = 1 - Delta, log(1 - Delta/(1-gamma)) = log(hi - gamma) - log(1 - gamma)
    v = -Delta / (1.0 - gamma)
    red = _log1p_minus_x(v) if abs(v) < _SERIES_CUTOFF else math.log(hi - gamma) - math.log1p(-gamma) - v
    return _log1p_minus_x(Delta / gamma) - red


def gamma_star(Delta: float) -> float:
    r"""Green-list ratio minimising the certainty-equivalent KL, eq. (certainty_equivalent).

    Solves

    .. math:: -\frac{\Delta}{\gamma} - \frac{\Delta}{1-\gamma} + \log(\gamma+\Delta)
              - \log\gamma - \log(1-\gamma-\Delta) + \log(1-\gamma) = 0

    on :math:`(0, 1 - \Delta)`; the left side is increasing there (the second
    derivative is positive), so the root is unique.  Solved to 1e-14 absolute.
    For Delta above about 0.97 the root lies within :math:`10^{-15}(1-\Delta)` of
    :math:`1 - \Delta` (it is :math:`1 - \Delta - e^{-\Delta/(1-\Delta) + O(1)}`) and that
    bound, :math:`(1-\Delta)(1 - 10^{-15})`, is returned.

    Parameters
    ----------
    Delta : float
        DG target, in (0, 1).

    Returns
    -------
    float
        The minimising green-list ratio, in (0, 1 - Delta).

    References
    ----------
    Towards Better Statistical Understanding of Watermarking LLMs, App. C, eq. (13) (eq:certainty_equivalent).

    Examples
    --------
    >>> from theory import gamma_star
    >>> round(gamma_star(0.2), 4)
    0.4328
    """
    D = float(Delta)
    if not (0.0 < D < 1.0):
        raise ValueError(f"Delta must be in (0, 1); got {Delta!r}")
    hi = 1.0 - D
    # the derivative tends to -inf at 0 and to +inf at 1 - Delta
    a, b = hi * 1e-12, hi * (1.0 - 1e-15)
    if _foc(b, D, hi) <= 0.0:  # Delta >~ 0.97: the root is within 1e-15 (1 - Delta) of 1 - Delta
        return b
    return brentq(_foc, a, b, args=(D, hi), xtol=1e-15, rtol=8.9e-16, maxiter=500)
