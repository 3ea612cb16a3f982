r"""DiPmark (Wu et al. 2023): alpha-reweighting of a keyed permutation, distribution-preserving over keys.

Wu, Hu, Chen, Huang, Huang, "A Resilient and Accessible Distribution-Preserving Watermark for Large
Language Models" (ICML 2024), Section 4.  A permutation :math:`\pi` of the vocabulary keyed by the
context; :math:`F_i = \sum_{j \le i} p(\pi_j)` the cumulative mass in its order; the DiP-reweight
(their eq. (3)) moves the mass below :math:`\alpha` to above :math:`1 - \alpha`:

.. math::  q(\pi_i) = g(F_i) - g(F_{i-1}), \qquad g(x) = (x - \alpha)^+ + (x - (1 - \alpha))^+,
           \qquad \alpha \in [0, \tfrac12].

So a token wholly below :math:`\alpha` gets :math:`q = 0`, one between gets :math:`q = p`, one wholly
above :math:`1-\alpha` gets :math:`q = 2p`, and the two straddling tokens the pieces between.  It is
distribution-preserving over a permutation whose law is invariant under reversal (their Theorem 4.2):
:math:`g(x) - g(1 - x) = 2x - 1`, so the reversed permutation gives :math:`q_\pi + q_{\bar\pi} = 2p`
(tested exactly).  ``alpha = 1/2`` is Hu et al.'s gamma-reweight.

Here the permutation is the context's PRF words in *descending* order: :math:`\pi_1` has the largest
word :math:`u(\mathrm{key}, \mathrm{ctx}, k)` (:mod:`sims.core.prf`, stream GREEN).  Its last
:math:`\lfloor \gamma V \rfloor` tokens, the smallest words, are then exactly the package's
``green_kind="partition"`` green list of ratio :math:`\gamma`: DiPmark's detector (their Section 5,
the "green" tokens in the second part of the permutation, :math:`\gamma` the part's share) is the
red-green family's partition count, and the records' G and DG refer to that list.  The record fixes
``green_kind="partition"`` (:func:`sims.watermarks.registry.fixed_green_kind`).

Exact per-key KL: :math:`D_{kl}(q_t\|p_t) = \sum_k q_k \log(q_k/p_k)` over the full vocabulary, at every
step; the key-averaged law is :math:`p_t` (distribution-preserving), so its KL is 0 (as for EMS, ITS, UW).

Detection (their Section 5): the green count :math:`|s|_G` of n scored tokens; their score is
:math:`\Phi = (|s|_G - \gamma n)/\sqrt{n}` with a Hoeffding threshold.  Here: the exact binomial tail
:math:`P(\mathrm{Bin}(n, \lfloor\gamma V\rfloor / V) \ge |s|_G)` with z :math:`= \Phi/\sqrt{\gamma(1-\gamma)}`.
Null: text that does not depend on the key, each distinct (context, token) pair scored once (dedup): the
colour of a pair is Bernoulli(floor(gamma V)/V) and pairs of distinct contexts are independent; two distinct
tokens after the *same* context are slightly negatively dependent (one partition), which the binomial
treats as independent (the package's partition null, :mod:`sims.core.prf`).

Choices the paper leaves open, and ours: the permutation is the PRF's word order (one keyed hash per
(context, token), the package's one PRF) rather than a seeded ``torch.randperm``; the context is the last
``h`` tokens (the paper's "previous tokens"); ``gamma`` (the detector's share) defaults to 0.5 and
``dip_alpha`` to 0.45, settings of the paper's experiments (Section 6: alpha in [0.3, 0.5]).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from sims.core import prf

GAMMA = 0.5
"""The detector's green share (the second half of the permutation), the paper's setting."""
ALPHA = 0.45
"""The reweight's alpha (the paper's experiments use 0.3 .. 0.5; 0.5 is the gamma-reweight)."""


def permutation(key: int, window, vocab_size: int) -> np.ndarray:
    """The context's keyed permutation: token ids by descending PRF word (stream GREEN)."""
    bits = prf.token_bits(prf.context_hash(key, np.asarray(window, dtype=np.int64)), np.arange(vocab_size))
    return np.argsort(bits, kind="stable")[::-1]


def reweight(p: np.ndarray, perm: np.ndarray, alpha: float) -> np.ndarray:
    r"""The DiP-reweight of ``p`` along ``perm`` (module docstring, their eq. (3)), normalised."""
    F = np.cumsum(p[perm])
    prev = np.concatenate([[0.0], F[:-1]])

    def g(x):
        return np.maximum(x - alpha, 0.0) + np.maximum(x - (1.0 - alpha), 0.0)

    q = np.zeros(p.shape[0])
    q[perm] = g(F) - g(prev)
    return q / q.sum()


def ref_dipmark(p, window, t, key, state, prm):
    """DiPmark's reference step: the DiP-reweight of p along the context's keyed permutation."""
    return reweight(p, permutation(key, window, p.shape[0]), prm["dip_alpha"]), [state] * p.shape[0]


@njit(cache=True, inline="always")
def _g(x, alpha):
    return max(x - alpha, 0.0) + max(x - (1.0 - alpha), 0.0)


@njit(cache=True)
def dip_step(alpha, e, inv, bits, green, u, G):
    """The Numba step: ``e * inv`` is p_t, ``bits`` the context's PRF words (the partition green list's),
    ``green`` that list as 0.0/1.0, ``u`` the sampling uniform.  Walks the descending word order once:
    the token where the cumulative q passes ``u``, the exact KL(q || p) and DG = q(green) - G.
    Returns ``(y, kl, dg)``."""
    order = np.argsort(bits)
    V = order.shape[0]
    total = 0.0
    for k in range(V):
        total += e[k]
    Z = _g(total * inv, alpha)
    target = u * Z
    F = 0.0
    g_prev = 0.0
    y = -1
    kl = 0.0
    qg = 0.0
    for j in range(V - 1, -1, -1):
        k = order[j]
        pk = e[k] * inv
        F += pk
        g_now = _g(F, alpha)
        qk = (g_now - g_prev) / Z
        if qk > 0.0:
            kl += qk * math.log(qk / pk)
            qg += qk * green[k]
            if y < 0 and g_now >= target:
                y = k
        g_prev = g_now
    if y < 0:  # rounding left the target above the last cumulative value: the last token with q > 0
        for j in range(V):
            k = order[j]
            if e[k] > 0.0:
                y = k
                break
    return y, kl, qg - G
