r"""GumbelSoft (Fu, Zhao, Yang, Zhang, Chen, Xiao 2024): the Gumbel-max watermark with its argmax softened.

Fu et al., "GumbelSoft: Diversified Language Model Watermarking via the GumbelMax-trick" (ACL 2024,
arXiv:2402.12948).  The Gumbel-max (EMS) watermark picks :math:`\arg\max_k \log p_k + g_k` with the
key's Gumbel noise :math:`g_k = -\log(-\log r_k)` (:math:`r_k` the uniforms of stream EMS after the
context, :func:`sims.core.prf.uniforms`: the same as EMS's, so that
:math:`\arg\max_k \log(r_k)/p_k` is the same token).  GumbelSoft replaces the argmax by a draw from

.. math::  q_{t,k} = \mathrm{softmax}_k\bigl((\log p_{t,k} + g_k) / \tau_{\mathrm{gs}}\bigr),

the draw taken with the sampling stream's uniform (lane :math:`2t` of the text's counter stream,
:mod:`sims.core.rng`), so the same prompt and key give diverse texts.  As
:math:`\tau_{\mathrm{gs}} \to 0` it is EMS's point mass (tested); as :math:`\tau_{\mathrm{gs}} \to \infty`
the uniform law.

**Detection** is Gumbel-max's: the EMS family's sum of :math:`-\log(1 - r_{y_t})`
(:class:`sims.detect.families.EMS`).  Under H0 (text independent of the key) :math:`r_{y_t}` is
uniform whatever the sampling rule, so its exact Gamma(n, 1) tail holds.

**Records.**  :math:`q_t` is a full distribution for one key: the records hold its exact per-key
:math:`D_{kl}(q_t\|p_t) = \sum_k q_k (\log q_k - \log p_k)` over the vocabulary and
:math:`\mathrm{DG}_t = q_t(\mathrm{green}) - G_t`, as for EMS and UW.  The key-averaged law
:math:`E_g[q_t]` has no closed form and is not :math:`p_t` for :math:`\tau_{\mathrm{gs}} > 0`.
``gs_tau`` defaults to 0.5 (:data:`sims.core.defaults.GUMBELSOFT_TAU`), a choice of ours.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from sims.core import prf
from sims.watermarks import _kernels as kern


def gumbels(key: int, window, vocab_size: int) -> np.ndarray:
    """The key's Gumbel noise :math:`g_k = -\\log(-\\log r_k)` after ``window`` (stream EMS's uniforms).

    Parameters
    ----------
    key : int
        The watermark key.
    window : (h,) int array
        The last ``h`` tokens (the context hashed with the key).
    vocab_size : int
        V, the number of tokens.

    Returns
    -------
    (V,) float array
        :math:`g_k` for every token k.
    """
    r = prf.uniforms(prf.context_hash(key, np.asarray(window), prf.EMS), np.arange(vocab_size))
    return -np.log(-np.log(r))


def soft_law(p: np.ndarray, g: np.ndarray, tau: float) -> np.ndarray:
    r""":math:`\mathrm{softmax}((\log p + g)/\tau)`, zeros of ``p`` kept at 0.

    Parameters
    ----------
    p : (V,) float array
        The next-token distribution.
    g : (V,) float array
        The key's Gumbel noise (:func:`gumbels`).
    tau : float
        The softmax temperature :math:`\tau_{\mathrm{gs}}`, in (0, inf).

    Returns
    -------
    (V,) float array
        The per-key law :math:`q`, summing to 1.
    """
    with np.errstate(divide="ignore"):
        a = (np.log(p) + g) / tau
    w = np.exp(a - a.max())
    return w / w.sum()


def ref_gumbelsoft(p, window, t, key, state, prm):
    """The reference step: the per-key law softmax((log p + g) / gs_tau) (module docstring).

    The registry's reference-step signature (:mod:`sims.watermarks.registry`).

    Parameters
    ----------
    p : (V,) float array
        The next-token distribution p_t.
    window : (h,) int array
        The last ``h`` tokens (the Gumbel noise's context).
    t : int
        The 0-based position (not read).
    key : int
        The watermark key.
    state : tuple
        The carried state, passed through unchanged.
    prm : dict
        The resolved parameters (``gs_tau``).

    Returns
    -------
    q : (V,) float array
        The per-key law :func:`soft_law` ``(p, gumbels(key, window, V), gs_tau)``.
    states : list
        ``state`` for every next token (the step carries no state).
    """
    V = p.shape[0]
    return soft_law(p, gumbels(key, window, V), prm["gs_tau"]), [state] * V


@njit(cache=True)
def gumbelsoft_step(tau, ems_hash, logits, c, inv, green, G, u, tokmix, z, w):
    r"""The Numba step: ``logits`` :math:`\ell` of p_t over V (:math:`p_k = e^{\ell_k - c}` ``* inv``), ``green``
    the green list as 0.0/1.0 with mass ``G``, ``u`` the sampling uniform, ``z`` and ``w`` work arrays (V,).

    :math:`z_k = \log(-\log r_k) = -g_k` (two vectorised logs, :func:`sims.watermarks._kernels.log_into`),
    :math:`a_k = (\ell_k - c - z_k) \cdot (1/\tau)`, :math:`w_k = e^{a_k - \max a}` (the vectorised exp of
    :func:`sims.watermarks._kernels.exp_shifted_into`, 1 ulp), :math:`\log q_k = a_k - \max a - \log \sum_j w_j`;
    then the exact KL :math:`\sum_k q_k(\log q_k - \log p_k)`, DG :math:`= \sum_k q_k\,\mathrm{green}_k - G`
    and the inverse-CDF draw of ``u`` in vocabulary order.  Returns ``(y, kl, dg)``."""
    V = z.shape[0]
    kern.uniforms_into(ems_hash, tokmix, z)
    kern.log_into(z, z)
    for k in range(V):
        z[k] = -z[k]
    kern.log_into(z, z)
    inv_tau = 1.0 / tau  # products, not quotients: the loops vectorise
    top = -np.inf
    for k in range(V):
        z[k] = (logits[k] - c - z[k]) * inv_tau
        top = max(top, z[k])
    kern.exp_shifted_into(z, top, w)
    W = 0.0
    for k in range(V):
        W += w[k]
    log_norm = top + math.log(W)
    log_inv = math.log(inv)
    inv_W = 1.0 / W
    kl = 0.0
    qg = 0.0
    for k in range(V):
        qk = w[k] * inv_W
        kl += qk * ((z[k] - log_norm) - (logits[k] - c + log_inv))
        qg += qk * green[k]
    target = u * W
    acc = 0.0
    for k in range(V):
        acc += w[k]
        if acc > target:
            return k, kl, qg - G
    return V - 1, kl, qg - G  # u W above the rounded total (w > 0 everywhere: the exp is floored at e^-708)
