r"""Permute-and-Flip watermark (Zhao, Li, Wang 2024): report-noisy-max with keyed exponential noise.

Zhao, Li, Wang, "Permute-and-Flip: An optimally stable and watermarkable decoder for LLMs"
(ICLR 2025, arXiv:2402.05864).  The PF decoder samples from logits :math:`u` at temperature
:math:`T` by the permute-and-flip mechanism, which equals report-noisy-max with exponential noise:
:math:`y = \arg\max_k u_k / T + E_k`, :math:`E_k \sim \mathrm{Exp}(1)` i.i.d.  The PF watermark
replaces the noise by :math:`E_k = -\log r_k` with :math:`r_k` the key's pseudo-random uniforms
of the context, so that

.. math::  y_t = \arg\max_k \; \frac{\log p_{t,k}}{\tau} - \log r_k

(:math:`\log p = u - \log Z`: the normaliser does not move the argmax; ``tau`` is the registry's
temperature, the same :math:`p_\tau \propto p^{1/\tau}` as EMS's).  Detection sums
:math:`-\log r_{y_t}` over the scored tokens: under H0 (text independent of the key) each
:math:`r_{y_t}` is uniform, each term Exp(1), and the sum of n terms exactly Gamma(n, 1).

**Keyed uniforms.**  :math:`r_k = 1 - r^{\mathrm{EMS}}_k`, with :math:`r^{\mathrm{EMS}}_k` the
uniforms of stream EMS after the context (:func:`sims.core.prf.uniforms`; :math:`1 - r` is exact on
their lattice :math:`(m + 1/2) / 2^{53}`).  PF's score :math:`-\log r_{y_t} = -\log(1 - r^{\mathrm{EMS}}_{y_t})`
is then term by term the EMS family's mark (:class:`sims.detect.families.EMS`), whose exact Gamma
tail, prefix curve, e-process, many-key scan and streaming update detect PF texts unchanged.

**Records.**  For one key the step is deterministic: :math:`q_t` is a point mass at :math:`y_t`, its
per-key KL :math:`-\log p_t(y_t)` and DG :math:`1\{y_t\ \mathrm{green}\} - G_t`, as for EMS.  The
key-averaged law is not :math:`p_t` but the PF decoder's law at temperature :math:`\tau`
(:func:`pf_law`): the watermark is distribution-preserving with respect to PF decoding, not to sampling
from :math:`p_t`.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from sims.core import prf
from sims.watermarks import _kernels as kern

LAW_NODES = 24
"""Gauss-Legendre nodes per panel of :func:`pf_law`'s integral (its accuracy: :func:`pf_law`)."""


def pf_uniforms(key: int, window, vocab_size: int) -> np.ndarray:
    """PF's keyed uniforms :math:`r_k = 1 - r^{\\mathrm{EMS}}_k` after ``window`` (module docstring).

    Parameters
    ----------
    key : int
        The watermark key.
    window : (h,) int array
        The last ``h`` tokens (the context hashed with the key, stream EMS).
    vocab_size : int
        V, the number of tokens.

    Returns
    -------
    (V,) float array
        :math:`r_k` in (0, 1) for every token k.
    """
    return 1.0 - prf.uniforms(prf.context_hash(key, np.asarray(window), prf.EMS), np.arange(vocab_size))


def pf_token(p: np.ndarray, r: np.ndarray, tau: float) -> int:
    r"""The PF watermark's token :math:`\arg\max_k \log(p_k)/\tau - \log r_k` (the first maximiser).

    Parameters
    ----------
    p : (V,) float array
        The next-token distribution (a zero entry never wins).
    r : (V,) float array
        The keyed uniforms in (0, 1) (:func:`pf_uniforms`).
    tau : float
        The temperature, in (0, inf).

    Returns
    -------
    int
        The token id y.
    """
    with np.errstate(divide="ignore"):
        return int(np.argmax(np.log(p) / tau - np.log(r)))


def ref_pf(p, window, t, key, state, prm):
    """The reference step: a point mass at PF's token for the context's keyed uniforms (module docstring).

    The registry's reference-step signature (:mod:`sims.watermarks.registry`).

    Parameters
    ----------
    p : (V,) float array
        The next-token distribution p_t.
    window : (h,) int array
        The last ``h`` tokens (the uniforms' context).
    t : int
        The 0-based position (not read).
    key : int
        The watermark key.
    state : tuple
        The carried state, passed through unchanged.
    prm : dict
        The resolved parameters (``tau``).

    Returns
    -------
    q : (V,) float array
        The point mass at :func:`pf_token` ``(p, pf_uniforms(key, window, V), tau)``.
    states : list
        ``state`` for every next token (the step carries no state).
    """
    V = p.shape[0]
    q = np.zeros(V)
    q[pf_token(p, pf_uniforms(key, window, V), prm["tau"])] = 1.0
    return q, [state] * V


def pf_law(p: np.ndarray, tau: float = 1.0, nodes: int = LAW_NODES) -> np.ndarray:
    r"""The key-averaged law of the PF watermark: the PF decoder's law at temperature ``tau``.

    With :math:`a_k = \log(p_k)/\tau`, :math:`w_k = e^{a_k - \max_j a_j} \in (0, 1]` and
    :math:`s = e^{-(x - \max_j a_j)}` in :math:`P(\arg\max_k a_k + E_k = k) = \int f_k(x) \prod_{i \ne k} F_i(x)\,dx`
    (:math:`E_k` i.i.d. Exp(1)),

    .. math::  \bar q_k = w_k \int_0^1 \prod_{i \ne k} (1 - s w_i)\, ds
                        = w_k \int_0^1 \frac{P(s)}{1 - s w_k}\, ds, \qquad P(s) = \prod_i (1 - s w_i),

    the permute-and-flip mechanism's probabilities (a token is kept with probability :math:`w_k` in
    a uniformly random order).  The integrand is a polynomial in :math:`s` (no pole: the division only
    removes the factor :math:`i = k`), and :math:`P(s) \approx e^{-s W}`, :math:`W = \sum_i w_i \ge 1`,
    falls off at :math:`s \sim 1/W`: ``nodes``-point Gauss-Legendre on each panel of
    :math:`[0, 1/W], [1/W, 2/W], [2/W, 4/W], \dots, [2^{j-1}/W, 1]` (at most
    :math:`\lceil\log_2 V\rceil + 1` panels), :math:`P` from :math:`\sum_i \log(1 - s w_i)`.  Cost
    O(``nodes`` V log V).  Accuracy (tests/watermarks/test_pf.py): within 1e-12 of the exact polynomial integral at
    small V, 24 and 64 nodes per panel agree within 1e-12 at V = 50,000, and the Monte Carlo over keys agrees
    within its 99.9 % band.

    Parameters
    ----------
    p : (V,) array
        The next-token distribution (positive entries; zeros never win).
    tau : float
        The temperature, in (0, inf).
    nodes : int
        Gauss-Legendre nodes per panel, in [2, inf).

    Returns
    -------
    (V,) array
        :math:`\bar q`, normalised (its sum before normalising is 1 to the quadrature's accuracy).
    """
    if not (float(tau) > 0.0 and math.isfinite(tau)):
        raise ValueError(f"tau must be in (0, inf); got {tau!r}")
    if int(nodes) < 2:
        raise ValueError(f"nodes must be in [2, inf); got {nodes!r}")
    with np.errstate(divide="ignore"):
        a = np.log(np.asarray(p, dtype=np.float64)) / tau
    w = np.exp(a - a.max())
    W = float(w.sum())
    x, gw = np.polynomial.legendre.leggauss(int(nodes))
    edges = [0.0]
    while edges[-1] < 1.0:
        edges.append(min(1.0, 2.0 ** (len(edges) - 1) / W))
    q = np.zeros_like(w)
    for lo, hi in zip(edges[:-1], edges[1:]):
        s = lo + 0.5 * (hi - lo) * (x + 1.0)
        one_minus = 1.0 - np.outer(s, w)  # (nodes, V): 1 - s w_i
        P = np.exp(np.log(one_minus).sum(axis=1))
        q += ((0.5 * (hi - lo) * gw * P)[:, None] / one_minus).sum(axis=0)
    q *= w
    return q / q.sum()


@njit(cache=True)
def pf_step(tau, ems_hash, logits, c, tokmix, scratch):
    r"""The Numba step: PF's token :math:`\arg\max_k (\ell_k - c)/\tau - \log r_k` (the first maximiser),
    ``logits`` :math:`\ell` of p_t over V with shift ``c``, :math:`r_k = 1 - r^{\mathrm{EMS}}_k` after the
    context hash ``ems_hash`` (stream EMS), ``scratch`` a work array (V,).  Returns y."""
    kern.uniforms_into(ems_hash, tokmix, scratch)
    for k in range(scratch.shape[0]):
        scratch[k] = 1.0 - scratch[k]
    kern.log_into(scratch, scratch)
    best = -np.inf
    y = 0
    for k in range(scratch.shape[0]):
        v = (logits[k] - c) / tau - scratch[k]
        if v > best:
            best = v
            y = k
    return y
