r"""Expected tokens to detection of the anytime-valid red-green test (issue 30).

The e-process of ``sims.detect.anytime.sequential`` (family ``redgreen``) is the uniform mixture over J
constant bets :math:`\lambda_j = f_j / \gamma` on the green indicators :math:`X_t`:

.. math:: E_t = \frac1J \sum_{j=1}^J W_{j,t}, \qquad W_{j,t} = \prod_{s \le t} \bigl(1 + \lambda_j (X_s - \gamma)\bigr),
          \qquad \tau = \min\{t : E_t \ge 1/\alpha\}.

**Proposition (upper bound).**  Suppose that, given the past, every scored token is green with
probability at least :math:`\gamma + \Delta` (i.i.d. Bernoulli(:math:`\gamma+\Delta`) colours
are one case; the watermark's per-token DG need only stay above Delta at every step).  Let

.. math:: r_j(\Delta) = (\gamma+\Delta)\ln\bigl(1+\lambda_j(1-\gamma)\bigr) + (1-\gamma-\Delta)\ln(1-\lambda_j\gamma),\qquad
          u_j = \ln\bigl(1+\lambda_j(1-\gamma)\bigr).

Then for every j with :math:`r_j > 0`,

.. math:: E[\tau] \le \frac{\ln(1/\alpha) + \ln J + u_j}{r_j(\Delta)} .

*Proof.*  :math:`E_t \ge W_{j,t}/J`, so :math:`\tau \le \tau_j = \min\{t : \ln W_{j,t} \ge
b\}` with :math:`b = \ln(1/\alpha) + \ln J`.  The increments of :math:`\ln W_{j,t}` are at most
:math:`u_j` and their conditional mean is increasing in the green probability, hence at
least :math:`r_j`: :math:`\ln W_{j,t} - r_j t` is a submartingale with bounded increments.
Optional stopping at the bounded time :math:`\tau_j \wedge t` gives
:math:`r_j E[\tau_j \wedge t] \le E[\ln W_{j, \tau_j \wedge t}] < b + u_j` (the walk is below
b before :math:`\tau_j` and overshoots by at most :math:`u_j`); let :math:`t \to \infty`
(monotone convergence).  This is Wald's argument (Wald 1947, Sequential Analysis, ch. 3).

The best constant bet :math:`\lambda^* = \Delta / (\gamma(1-\gamma))` has
:math:`r = \mathrm{KL}(\mathrm{Ber}(\gamma+\Delta) \| \mathrm{Ber}(\gamma))` (Kelly); the grid
loses the factor :math:`r_j / \mathrm{KL}` and the additive :math:`\ln J` (the mixture's regret).

**Lower bound (cited).**  Any test that stops at :math:`\tau`, has false-positive rate at most
alpha and detects i.i.d. Bernoulli(:math:`\gamma+\Delta`) colours with probability
:math:`1-\beta` has (Wald 1945; by the data-processing inequality for the KL divergence of the
stopped laws, :math:`E_1[\tau]\,\mathrm{KL} = \mathrm{KL}(P_1^\tau \| P_0^\tau) \ge
\mathrm{kl}(1-\beta, \alpha)`)

.. math:: E[\tau] \ge \frac{(1-\beta)\ln\frac{1-\beta}{\alpha} + \beta\ln\frac{\beta}{1-\alpha}}
          {\mathrm{KL}(\mathrm{Ber}(\gamma+\Delta)\|\mathrm{Ber}(\gamma))} .

So :math:`E[\tau] \sim \ln(1/\alpha) / \mathrm{KL}` as :math:`\alpha \to 0`, within the grid's
factor and the :math:`\ln J + u_j` overhead.  ``proofs_check/check_sequential.py`` compares both
bounds with simulated stopping times.
"""

from __future__ import annotations

import math

import numpy as np

DEFAULT_GRID = np.geomspace(0.01, 0.95, 20)  #: the bet fractions f_j of sims.detect.anytime.sequential.GRID


def _check(gamma: float, Delta: float, alpha: float) -> None:
    if not 0.0 < float(gamma) < 1.0:
        raise ValueError(f"gamma must be in (0, 1); got {gamma!r}")
    if not 0.0 < float(Delta) < 1.0 - float(gamma):
        raise ValueError(f"Delta must be in (0, 1 - gamma) = (0, {1 - gamma:g}); got {Delta!r}")
    if not 0.0 < float(alpha) < 1.0:
        raise ValueError(f"alpha must be in (0, 1); got {alpha!r}")


def kl_bernoulli(p: float, q: float) -> float:
    r""":math:`\mathrm{KL}(\mathrm{Ber}(p) \| \mathrm{Ber}(q))` in nats (0 log 0 = 0).

    Parameters
    ----------
    p : float
        Success probability of the first law, in [0, 1].
    q : float
        Success probability of the reference law, in (0, 1).

    Returns
    -------
    float
        The divergence, >= 0.

    Raises
    ------
    ValueError
        If ``p`` or ``q`` is out of range.

    Examples
    --------
    >>> round(kl_bernoulli(0.55, 0.25), 4)
    0.2038
    """
    if not (0.0 <= p <= 1.0 and 0.0 < q < 1.0):
        raise ValueError(f"p must be in [0, 1] and q in (0, 1); got p={p!r}, q={q!r}")
    out = 0.0
    if p > 0:
        out += p * math.log(p / q)
    if p < 1:
        out += (1 - p) * math.log((1 - p) / (1 - q))
    return out


def bet_growth(lam, gamma: float, p: float) -> np.ndarray:
    r"""Growth rate :math:`E \ln(1 + \lambda (X - \gamma))` of a constant bet, X ~ Bernoulli(p).

    :math:`r(\lambda) = p \ln(1 + \lambda(1-\gamma)) + (1-p)\ln(1 - \lambda\gamma)`, the :math:`r_j` of the module's
    proposition at :math:`p = \gamma + \Delta`.

    Parameters
    ----------
    lam : float or array_like
        Bets :math:`\lambda`, in [0, 1/gamma).
    gamma : float
        Green-list fraction (the null's green probability).
    p : float
        Green probability of the scored tokens.

    Returns
    -------
    ndarray
        The growth rates, shaped like ``lam``.

    Raises
    ------
    ValueError
        If a bet is outside [0, 1/gamma).
    """
    lam = np.asarray(lam, dtype=np.float64)
    if np.any(lam < 0) or np.any(lam >= 1.0 / gamma):
        raise ValueError(f"lam must be in [0, 1/gamma) = [0, {1 / gamma:g}); got {lam!r}")
    return p * np.log1p(lam * (1 - gamma)) + (1 - p) * np.log1p(-lam * gamma)


def stopping_time_bounds(Delta: float, gamma: float, alpha: float, grid=None) -> dict:
    r"""Upper and lower bounds on the expected tokens to detection (module docstring).

    Parameters
    ----------
    Delta : float in (0, 1 - gamma)
        Green-probability lift per token (DG).
    gamma : float in (0, 1)
    alpha : float in (0, 1)
        Level of the anytime test.
    grid : array of bet fractions in (0, 1), optional
        Default :data:`DEFAULT_GRID` (the detector's).

    Returns
    -------
    dict with ``upper`` (the proposition, best grid bet), ``lower`` (Wald's bound at power 1:
    ln(1/alpha) / kl, also the asymptote as alpha -> 0) and ``kl``.

    Examples
    --------
    >>> b = stopping_time_bounds(0.3, 0.25, 1e-4)
    >>> b["lower"] < b["upper"] < 1.5 * b["lower"]
    True
    """
    _check(gamma, Delta, alpha)
    f = DEFAULT_GRID if grid is None else np.asarray(grid, dtype=np.float64)
    if f.size == 0 or np.any((f <= 0) | (f >= 1)):
        raise ValueError(f"grid must be fractions in (0, 1); got {grid!r}")
    lam = f / gamma
    r = bet_growth(lam, gamma, gamma + Delta)
    u = np.log1p(lam * (1 - gamma))
    b = math.log(1 / alpha) + math.log(f.size)
    ok = r > 0
    upper = float(np.min((b + u[ok]) / r[ok])) if ok.any() else math.inf
    kl = kl_bernoulli(gamma + Delta, gamma)
    return dict(upper=upper, lower=math.log(1 / alpha) / kl, kl=kl)
