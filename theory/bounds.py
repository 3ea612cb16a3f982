"""Error and robustness bounds of the paper (Props. type_I&II, adv_robust,
info_lower_bound) and the per-key distortion of EMS / inverse-transform
sampling (Example ems)."""

from __future__ import annotations

import math

import numpy as np

from theory import _validate


def type1_bound(z0: float, gamma: float) -> float:
    r"""Hoeffding bound on the false-positive rate of the test :math:`z \ge z_0` (Prop. type_I&II).

    .. math:: \alpha \le \exp\bigl(-2\gamma(1-\gamma) z_0^2\bigr)

    Parameters
    ----------
    z0 : float
        Threshold of the z-score test (eq. (7)), >= 0.
    gamma : float
        Green-list ratio in (0, 1).

    Returns
    -------
    float
        Upper bound on the type-I error, in (0, 1].

    References
    ----------
    Towards Better Statistical Understanding of Watermarking LLMs, Prop. B.1 (prop:type_I&II) and the z-score eq. (7) (eq:z_score).

    Examples
    --------
    >>> from theory import type1_bound
    >>> round(type1_bound(4.0, 0.25), 6)
    0.002479
    """
    g = _validate.gamma(gamma)
    z = float(z0)
    if z < 0:
        raise ValueError(f"z0 must be in [0, inf); got {z0!r}")
    return math.exp(-2.0 * g * (1.0 - g) * z * z)


def type2_bound(z0: float, gamma: float, Delta: float, T: int) -> float:
    r"""Hoeffding bound on the miss rate when the realised DG is at least Delta (Prop. type_I&II).

    .. math:: \beta \le \exp\Bigl(-2\bigl(\Delta\sqrt{T-1} - \sqrt{\gamma(1-\gamma)}\,z_0\bigr)^2\Bigr)

    Valid when :math:`\Delta\sqrt{T-1} \ge \sqrt{\gamma(1-\gamma)} z_0`; otherwise
    the bound is vacuous and 1 is returned.

    Parameters
    ----------
    z0 : float
        Threshold of the z-score test (eq. (7)).
    gamma : float
        Green-list ratio in (0, 1).
    Delta : float
        Realised average DG, in (0, 1].
    T : int
        Number of tokens, >= 2.

    Returns
    -------
    float
        Upper bound on the type-II error, in (0, 1].

    References
    ----------
    Towards Better Statistical Understanding of Watermarking LLMs, Prop. B.1 (prop:type_I&II).

    Examples
    --------
    >>> from theory import type2_bound
    >>> round(type2_bound(4.0, 0.25, 0.2, 200), 6)
    0.093188
    """
    g = _validate.gamma(gamma)
    if int(T) < 2:
        raise ValueError(f"T must be in [2, inf); got {T!r}")
    D = float(Delta)
    if not (0.0 < D <= 1.0):
        raise ValueError(f"Delta must be in (0, 1]; got {Delta!r}")
    m = D * math.sqrt(T - 1) - math.sqrt(g * (1.0 - g)) * float(z0)
    if m <= 0.0:
        return 1.0
    return math.exp(-2.0 * m * m)


def robust_delta(kind: str, Delta: float, gamma: float, rate: float, T: int, rehash: str | None = None) -> float:
    r"""Worst-case DG after an attack on a fraction ``rate`` = l of the T tokens (Prop. adv_robust).

    .. math::
        \Delta'_{\mathrm{del}} = \frac{\Delta - l + l\gamma}{1-l},\quad
        \Delta'_{\mathrm{ins}} = \frac{\Delta - l\gamma - 1/T}{1+l},\quad
        \Delta'_{\mathrm{edit}} = \Delta - l - 1/T

    (The proof's insertion case writes ``+1/T`` in the green ratio; the
    proposition's ``-1/T``, one more token turned red, is the worst case and is
    what is returned.)

    ``rehash`` accounts for what the stated bounds omit or assume: with green lists hashed
    from the previous token (h = 1), a changed token re-colours the token after it, which can
    turn red.  ``None``: the proposition as stated.  ``"contiguous"``: one attacked span, one
    re-coloured successor (the proof's construction):
    deletion :math:`(\Delta - l + l\gamma - 1/T)/(1-l)` (the statement omits this
    :math:`-1/T`), insertion and edit as stated.  ``"scattered"``: :math:`lT` attacks at
    separate places, each may re-colour its successor; these bounds hold for every attack of
    that size (contiguous or not) and are attained:

    .. math::
        \Delta'_{\mathrm{del}} = \frac{\Delta - 2l + l\gamma}{1-l},\quad
        \Delta'_{\mathrm{ins}} = \frac{\Delta - l - l\gamma}{1+l},\quad
        \Delta'_{\mathrm{edit}} = \Delta - 2l

    (an inserted red token turns its successor red: :math:`lT` greens lost over
    :math:`(1+l)T` tokens; an edit turns its own token and its successor red).  For
    :math:`l > 1/T` these are below the stated :math:`\Delta'_{\mathrm{ins}}` and
    :math:`\Delta'_{\mathrm{edit}}` (``proofs_check.check_adv_robust`` exhibits texts there).

    Parameters
    ----------
    kind : {"deletion", "insertion", "edit"}
        The attack.
    Delta : float
        DG of the text before the attack.
    gamma : float
        Green-list ratio in (0, 1).
    rate : float
        Fraction l of the T tokens attacked, in [0, 1].
    T : int
        Number of tokens.
    rehash : {None, "contiguous", "scattered"}
        Which accounting of re-coloured successors to use (see above).

    Returns
    -------
    float
        The worst-case DG after the attack.

    References
    ----------
    Towards Better Statistical Understanding of Watermarking LLMs, Prop. B.2 (prop:adv_robust).

    Examples
    --------
    >>> from theory import robust_delta
    >>> round(robust_delta("edit", 0.3, 0.25, 0.1, 200), 4)
    0.195
    """
    g = _validate.gamma(gamma)
    l = float(rate)
    if not (0.0 <= l <= 1.0):
        raise ValueError(f"rate must be in [0, 1]; got {rate!r}")
    if int(T) < 1:
        raise ValueError(f"T must be in [1, inf); got {T!r}")
    D = float(Delta)
    if rehash not in (None, "contiguous", "scattered"):
        raise ValueError(f"rehash must be None, 'contiguous' or 'scattered'; got {rehash!r}")
    # greens the re-coloured successors can cost, as a share of T
    successors = l if rehash == "scattered" else 1.0 / T
    if kind == "deletion":
        if l >= 1.0:
            raise ValueError("rate must be in [0, 1) for deletion; got 1.0")
        return (D - l + l * g - (0.0 if rehash is None else successors)) / (1.0 - l)
    if kind == "insertion":
        return (D - l * g - successors) / (1.0 + l)
    if kind == "edit":
        return D - l - successors
    raise ValueError(f"kind must be one of 'deletion', 'insertion', 'edit'; got {kind!r}")


def bretagnolle_huber(kl) -> float:
    r"""Lower bound on :math:`\inf_D \alpha + \beta` (Prop. info_lower_bound).

    .. math:: 1 - \sqrt{1 - e^{-D_{kl}}} = \frac{e^{-D_{kl}}}{1 + \sqrt{1 - e^{-D_{kl}}}}

    The right-hand form is used: it is exact for large KL, where the left one
    cancels to 0.

    Parameters
    ----------
    kl : float or array_like
        KL divergence in nats, in [0, inf].

    Returns
    -------
    float or ndarray
        The lower bound on the sum of the two error rates of any test, in (0, 1].

    References
    ----------
    Towards Better Statistical Understanding of Watermarking LLMs, Prop. 3.1 (prop:info_lower_bound) and Lemma D.3 (lemma:BH_ineq).

    Examples
    --------
    >>> from theory import bretagnolle_huber
    >>> round(bretagnolle_huber(1.0), 4)
    0.2049
    """
    k = _validate.boost("kl", kl)
    e = np.exp(-k)
    out = e / (1.0 + np.sqrt(-np.expm1(-k)))
    return out.item() if out.ndim == 0 else out


def optimal_test_error(q, p) -> float:
    r"""Le Cam: :math:`\inf_D \alpha + \beta = 1 - \mathrm{TV}(q, p)` for two distributions on one finite space.

    Parameters
    ----------
    q, p : array_like
        Two probability vectors of one shape, entries in [0, 1].

    Returns
    -------
    float
        The smallest achievable sum of type-I and type-II errors, in [0, 1].

    References
    ----------
    Towards Better Statistical Understanding of Watermarking LLMs, Lemma D.2 (lemma:le_cam), used in the proof of Prop. 3.1 (prop:info_lower_bound).

    Examples
    --------
    >>> from theory import optimal_test_error
    >>> round(optimal_test_error([0.5, 0.5], [0.9, 0.1]), 4)
    0.6
    """
    q = _validate.in_unit_interval("q", q)
    p = _validate.in_unit_interval("p", p)
    if q.shape != p.shape:
        raise ValueError(f"q and p must have one shape; got {q.shape} and {p.shape}")
    return float(1.0 - 0.5 * np.abs(q - p).sum())


def entropy(p, axis: int = -1):
    r"""Shannon entropy in nats, :math:`-\sum_k p_k \log p_k` (0 log 0 = 0).

    By Example ems this is the expected per-key KL of exponential-minimum and
    inverse-transform sampling.

    ``ems_expected_kl`` is the same function.

    Parameters
    ----------
    p : array_like
        Probability vector(s), entries in [0, 1].
    axis : int
        Axis summed over.

    Returns
    -------
    float or ndarray
        Entropy in nats.

    References
    ----------
    Towards Better Statistical Understanding of Watermarking LLMs, Example 3.6 (eg:ems).

    Examples
    --------
    >>> from theory import entropy, ems_expected_kl
    >>> round(entropy([0.5, 0.25, 0.25]), 4)
    1.0397
    >>> round(ems_expected_kl([0.5, 0.5]), 4)
    0.6931
    """
    p = _validate.in_unit_interval("p", p)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(p > 0.0, -p * np.log(p), 0.0)
    out = t.sum(axis=axis)
    return out.item() if np.ndim(out) == 0 else out


ems_expected_kl = entropy
