r"""The dual updates of the online watermarks: Algorithm DualGA and Algorithm DualGA_autocov.

Both are projected online gradient ascent on the token-wise Lagrangian dual
(Lemma Lagrangian_dual): the boost of step t is :math:`\delta_t = \lambda_t` and

.. math:: \lambda_{t+1} = \Pi_{[0,M]}\bigl(\lambda_t + \eta\, \mathrm{gd}_t\bigr),\qquad
          \mathrm{gd}_t = \Delta - \mathrm{DG}_t(\delta_t)\ \text{(DualGA)},\quad
          \Delta + \mathrm{DA}_t(\delta_t)\ \text{(AutoCov)}.

The paper's Algorithm DualGA has no projection; its code truncates lambda at 15 (appendix,
"Text Repetition": "values of lambda_t that exceed 15 are truncated to 15"), and lambda >= 0 is
the dual's domain.  These are the ONE written form of the updates: every Numba kernel of
``sims`` inlines the scalars of :mod:`theory._scalar`, and the torch and Triton kernels of
``sims.torch_backend`` (which cannot call Numba) cite :func:`dualga_update` at the line.
"""

from __future__ import annotations

import numpy as np
from numba import vectorize

from theory import _scalar, _validate
from theory.constants import LAMBDA_MAX

_dualga_u = vectorize(["float64(float64, float64, float64, float64, float64)"], cache=True)(_scalar.dualga_update.py_func)
_autocov_u = vectorize(["float64(float64, float64, boolean, float64, float64, float64, float64)"], cache=True)(
    _scalar.autocov_update.py_func
)


def _out(x):
    return x.item() if isinstance(x, np.ndarray) and x.ndim == 0 else x


def _common(lam, Delta, eta, M):
    M = _validate.positive("M", M)
    lam = _validate.finite_or_inf_array("lam", lam)
    if ((lam < 0.0) | (lam > M)).any():
        raise ValueError(f"lam must be in [0, M] = [0, {M!r}]; got {float(lam[(lam < 0.0) | (lam > M)].flat[0])!r}")
    Delta = _validate.in_unit_interval("Delta", Delta)
    eta = _validate.finite_or_inf_array("eta", eta)
    if (eta < 0.0).any():
        raise ValueError(f"eta must be in [0, inf); got {float(eta[eta < 0.0].flat[0])!r}")
    return lam, Delta, eta, M


def _signed_dg(dg) -> np.ndarray:
    """DG in [-1, 1] (AutoCov's is negative after a green token; DualGA's may round a hair below 0)."""
    dg = _validate.finite_or_inf_array("dg", dg)
    if ((dg < -1.0) | (dg > 1.0)).any():
        raise ValueError(f"dg must be in [-1, 1]; got {float(dg[(dg < -1.0) | (dg > 1.0)].flat[0])!r}")
    return dg


def dualga_update(lam, dg, Delta, eta, M=LAMBDA_MAX):
    r"""The dual update of Algorithm DualGA (alg:DualGA, steps 7-8), projected on [0, M].

    .. math:: \lambda_{t+1} = \Pi_{[0,M]}\bigl(\lambda_t + \eta\,(\Delta - \mathrm{DG}_t(\lambda_t))\bigr)

    Parameters
    ----------
    lam : array_like
        :math:`\lambda_t` in [0, M] (the boost :math:`\delta_t = \lambda_t` of step t).
    dg : array_like
        :math:`\mathrm{DG}_t(\delta_t) = q_{G,t} - G_t` (eq. define_DG; :func:`theory.dg_step`), in [-1, 1].
    Delta : array_like
        Target green-probability increase :math:`\Delta` in [0, 1].
    eta : array_like
        Step size :math:`\eta \ge 0` (0 keeps lambda: the soft red list).
    M : float
        Projection bound, > 0.

    Returns
    -------
    float or ndarray
        :math:`\lambda_{t+1}`, broadcast over the inputs; bit for bit what every Numba kernel computes.

    References
    ----------
    Towards Better Statistical Understanding of Watermarking LLMs, Algorithm 2 (alg:DualGA), steps 7-8.

    Examples
    --------
    >>> from theory import dualga_update
    >>> round(float(dualga_update(1.0, 0.1, 0.2, 0.5)), 4)
    1.05
    """
    lam, Delta, eta, M = _common(lam, Delta, eta, M)
    return _out(_dualga_u(lam, _signed_dg(dg), Delta, eta, M))


def autocov_update(lam, dg, prev_green, gamma, Delta, eta, M=LAMBDA_MAX):
    r"""The dual update of Algorithm DualGA_autocov (alg:DualGA_autocov, steps 12-13), projected on [0, M].

    .. math:: \lambda_{t+1} = \Pi_{[0,M]}\bigl(\lambda_t + \eta\,(\Delta + \mathrm{DA}_t(\lambda_t))\bigr),\qquad
              -\mathrm{DA}_t = \gamma\,1\{y_{t-1}\ \mathrm{red}\}\,\mathrm{DG}_t
                               + (1-\gamma)\,1\{y_{t-1}\ \mathrm{green}\}\,(-\mathrm{DG}_t)

    (after a green token the red list is boosted, so the green mass falls: :math:`\mathrm{DG}_t \le 0`).

    Parameters
    ----------
    lam : array_like
        :math:`\lambda_t` in [0, M].
    dg : array_like
        Signed :math:`\mathrm{DG}_t = q_{G,t} - G_t` of the boost used, in [-1, 1].
    prev_green : array_like of bool
        Whether :math:`y_{t-1}` is green (Algorithm DualGA_autocov colours :math:`y_0` red).
    gamma : float
        Green-list ratio in (0, 1).
    Delta, eta, M :
        As :func:`dualga_update`.

    Returns
    -------
    float or ndarray
        lambda_{t+1}, broadcast over the inputs.

    References
    ----------
    Towards Better Statistical Understanding of Watermarking LLMs, Algorithm 3 (alg:DualGA_autocov), steps 12-13.

    Examples
    --------
    >>> from theory import autocov_update
    >>> round(float(autocov_update(1.0, 0.1, True, 0.25, 0.2, 0.5)), 4)
    1.1375
    >>> round(float(autocov_update(1.0, 0.1, False, 0.25, 0.2, 0.5)), 4)
    1.0875
    """
    lam, Delta, eta, M = _common(lam, Delta, eta, M)
    dg = _signed_dg(dg)
    gamma = _validate.gamma(gamma)
    return _out(_autocov_u(lam, dg, np.asarray(prev_green, dtype=np.bool_), gamma, Delta, eta, M))
