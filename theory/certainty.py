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


def _foc(gamma: float, Delta: float) -> float:
    # eq. (certainty_equivalent): d OPT_CE / d gamma
    return (
        -Delta / gamma
        - Delta / (1.0 - gamma)
        + math.log1p(Delta / gamma)
        - math.log1p(-Delta / (1.0 - gamma))
    )


def gamma_star(Delta: float) -> float:
    r"""Green-list ratio minimising the certainty-equivalent KL, eq. (certainty_equivalent).

    Solves

    .. math:: -\frac{\Delta}{\gamma} - \frac{\Delta}{1-\gamma} + \log(\gamma+\Delta)
              - \log\gamma - \log(1-\gamma-\Delta) + \log(1-\gamma) = 0

    on :math:`(0, 1 - \Delta)`; the left side is increasing there (the second
    derivative is positive), so the root is unique.  Solved to 1e-14 absolute.

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
    return brentq(_foc, a, b, args=(D,), xtol=1e-15, rtol=8.9e-16, maxiter=500)
