"""Closed forms of the soft (red-green) watermark as NumPy ufuncs.

A soft watermark adds ``delta`` to the logits of the green tokens (paper,
Algorithm kirchen).  Every per-token quantity then depends on the next-token
distribution only through its green mass ``G``; these functions broadcast over
arrays of ``delta`` and ``G`` and are exact for ``G`` in {0, 1},
``delta = inf`` (hard red list) and very large ``delta``.
"""

from __future__ import annotations

import numpy as np
from numba import vectorize

from theory import _scalar, _validate

_SIG2 = ["float64(float64, float64)"]
_SIG3 = ["float64(float64, float64, float64)"]

_kl_u = vectorize(_SIG2, cache=True)(_scalar.kl.py_func)
_dg_u = vectorize(_SIG2, cache=True)(_scalar.dg.py_func)
_q_u = vectorize(_SIG2, cache=True)(_scalar.green_mass.py_func)
_slope_u = vectorize(_SIG2, cache=True)(_scalar.dg_slope.py_func)
_dual_u = vectorize(_SIG3, cache=True)(_scalar.dual.py_func)


def _out(x):
    return x.item() if isinstance(x, np.ndarray) and x.ndim == 0 else x


def _args(delta, G, delta_name="delta"):
    return _validate.boost(delta_name, delta), _validate.in_unit_interval("G", G)


def kl_step(delta, G):
    r"""Per-token distortion :math:`D_{kl}(q_t \| p_t)` of a soft watermark.

    .. math::
        D_{kl,t}(\delta) = \frac{G\,\delta\,e^{\delta}}{G e^{\delta} - G + 1}
                           - \log(G e^{\delta} - G + 1)

    (paper, proof of Prop. free_t), computed as :math:`G f(a) + (1-G) f(b)`
    with :math:`f(x) = (1+x)\log(1+x) - x`, which has no cancellation.

    Parameters
    ----------
    delta : array_like
        Logit boost of the green tokens, in [0, inf]; inf is the hard red list.
    G : array_like
        Green mass of the unwatermarked next-token distribution, in [0, 1].

    Returns
    -------
    float or ndarray
        KL in nats, broadcast over the inputs.

    References
    ----------
    Towards Better Statistical Understanding of Watermarking LLMs, Def. 2.2 (def:conditional_KL) and the proof of Prop. 2.5 (prop:free_t).

    Examples
    --------
    >>> from theory import kl_step
    >>> round(float(kl_step(2.0, 0.25)), 4)
    0.468
    """
    d, g = _args(delta, G)
    return _out(_kl_u(d, g))


def dg_step(delta, G):
    r"""Difference of green probability :math:`\mathrm{DG}_t = q_G - G` (eq. define_DG).

    .. math:: \mathrm{DG}_t(\delta) = \frac{G(1-G)(e^{\delta}-1)}{G e^{\delta} - G + 1}

    Parameters
    ----------
    delta : array_like
        Logit boost of the green tokens, in [0, inf].
    G : array_like
        Green mass of the unwatermarked next-token distribution, in [0, 1].

    Returns
    -------
    float or ndarray
        DG in [0, 1], broadcast over the inputs.

    References
    ----------
    Towards Better Statistical Understanding of Watermarking LLMs, eq. (1) (eq:define_DG).

    Examples
    --------
    >>> from theory import dg_step
    >>> round(float(dg_step(2.0, 0.25)), 4)
    0.4612
    """
    d, g = _args(delta, G)
    return _out(_dg_u(d, g))


def green_mass_step(delta, G):
    r"""Green mass after the boost, :math:`q_G = \sigma(\delta + \mathrm{logit}\,G)`.

    Parameters
    ----------
    delta : array_like
        Logit boost of the green tokens, in [0, inf].
    G : array_like
        Green mass of the unwatermarked next-token distribution, in [0, 1].

    Returns
    -------
    float or ndarray
        Green mass of the watermarked distribution, in [0, 1].

    References
    ----------
    Towards Better Statistical Understanding of Watermarking LLMs, Algorithm 1 (alg:kirchen), the soft red list.

    Examples
    --------
    >>> from theory import green_mass_step
    >>> round(float(green_mass_step(2.0, 0.25)), 4)
    0.7112
    """
    d, g = _args(delta, G)
    return _out(_q_u(d, g))


def dg_slope_step(delta, G):
    r""":math:`\partial \mathrm{DG}_t/\partial\delta = q_G(1-q_G) \ge 0`.

    Parameters
    ----------
    delta : array_like
        Logit boost of the green tokens, in [0, inf].
    G : array_like
        Green mass of the unwatermarked next-token distribution, in [0, 1].

    Returns
    -------
    float or ndarray
        The derivative of DG in delta, in [0, 1/4].

    References
    ----------
    Towards Better Statistical Understanding of Watermarking LLMs, eq. (1) (eq:define_DG); the slope used in Lemma 2.6 (lemma:Lagrangian_dual).

    Examples
    --------
    >>> from theory import dg_slope_step
    >>> round(float(dg_slope_step(2.0, 0.25)), 4)
    0.2054
    """
    d, g = _args(delta, G)
    return _out(_slope_u(d, g))


def dual_step(lam, G, Delta):
    r"""Token-wise Lagrangian dual :math:`g_t(\lambda) = L_t(\lambda, \lambda)`.

    .. math:: g_t(\lambda) = (G_t + \Delta)\lambda - \log(G_t e^{\lambda} - G_t + 1)

    (Lemma Lagrangian_dual, parts (a)-(b) and proof of part (c)); concave in
    :math:`\lambda` with derivative :func:`dual_step_grad`.

    Parameters
    ----------
    lam : array_like
        Dual variable, >= 0.
    G : array_like
        Green mass of the unwatermarked next-token distribution, in [0, 1].
    Delta : array_like
        DG target.

    Returns
    -------
    float or ndarray
        The token-wise dual value, broadcast over the inputs.

    References
    ----------
    Towards Better Statistical Understanding of Watermarking LLMs, eq. (5) (eq:Lagrangian) and Lemma 2.6 (lemma:Lagrangian_dual).

    Examples
    --------
    >>> from theory import dual_step
    >>> round(float(dual_step(1.0, 0.25, 0.2)), 4)
    0.0926
    """
    lam_, g = _args(lam, G, "lam")
    D = _validate.finite_or_inf_array("Delta", Delta)
    return _out(_dual_u(lam_, g, D))


def dual_step_grad(lam, G, Delta):
    r""":math:`g_t'(\lambda) = \Delta - \mathrm{DG}_t(\lambda)` (Lemma Lagrangian_dual (b)).

    Parameters
    ----------
    lam : array_like
        Dual variable, >= 0.
    G : array_like
        Green mass of the unwatermarked next-token distribution, in [0, 1].
    Delta : array_like
        DG target.

    Returns
    -------
    float or ndarray
        The derivative of :func:`dual_step` in lam.

    References
    ----------
    Towards Better Statistical Understanding of Watermarking LLMs, Lemma 2.6 (lemma:Lagrangian_dual) (b); the gradient step of Algorithm 2 (alg:DualGA).

    Examples
    --------
    >>> from theory import dual_step_grad
    >>> round(float(dual_step_grad(1.0, 0.25, 0.2)), 4)
    -0.0254
    """
    lam_, g = _args(lam, G, "lam")
    D = _validate.finite_or_inf_array("Delta", Delta)
    return _out(D - _dg_u(lam_, g))


def lagrangian_step(delta, lam, G, Delta):
    r""":math:`L_t(\delta, \lambda) = D_{kl,t}(\delta) - \lambda(\mathrm{DG}_t(\delta) - \Delta)` (eq. Lagrangian).

    Parameters
    ----------
    delta : array_like
        Logit boost of the green tokens, in [0, inf].
    lam : array_like
        Dual variable, >= 0.
    G : array_like
        Green mass of the unwatermarked next-token distribution, in [0, 1].
    Delta : array_like
        DG target.

    Returns
    -------
    float or ndarray
        The token-wise Lagrangian, broadcast over the inputs.

    References
    ----------
    Towards Better Statistical Understanding of Watermarking LLMs, eq. (5) (eq:Lagrangian).

    Examples
    --------
    >>> from theory import lagrangian_step, dual_step
    >>> round(float(lagrangian_step(1.0, 1.0, 0.25, 0.2)), 4)
    0.0926
    >>> bool(abs(lagrangian_step(1.0, 1.0, 0.25, 0.2) - dual_step(1.0, 0.25, 0.2)) < 1e-12)
    True
    """
    d, g = _args(delta, G)
    lam_ = _validate.boost("lam", lam)
    D = _validate.finite_or_inf_array("Delta", Delta)
    return _out(_kl_u(d, g) - lam_ * (_dg_u(d, g) - D))
