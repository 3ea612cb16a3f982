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
    r"""The context's keyed permutation: token ids by descending PRF word (stream GREEN).

    Parameters
    ----------
    key : int
        The watermark key.
    window : sequence of int
        The context: the last ``h`` tokens, oldest first.
    vocab_size : int
        The vocabulary size V.

    Returns
    -------
    (V,) int array
        :math:`\pi`: token ids, largest PRF word first; its last floor(gamma V) entries are the partition green list.
    """
    bits = prf.token_bits(prf.context_hash(key, np.asarray(window, dtype=np.int64)), np.arange(vocab_size))
    return np.argsort(bits, kind="stable")[::-1]


def reweight(p: np.ndarray, perm: np.ndarray, alpha: float) -> np.ndarray:
    r"""The DiP-reweight of ``p`` along ``perm`` (module docstring, their eq. (3)), normalised.

    Parameters
    ----------
    p : (V,) float array
        The next-token distribution.
    perm : (V,) int array
        The keyed permutation :math:`\pi` (:func:`permutation`).
    alpha : float in [0, 1/2]
        The reweight's alpha: the mass below alpha in :math:`\pi`'s order moves to above 1 - alpha.

    Returns
    -------
    (V,) float array
        :math:`q(\pi_i) = g(F_i) - g(F_{i-1})`, :math:`g(x) = (x - \alpha)^+ + (x - (1 - \alpha))^+`, divided by its sum.
    """
    F = np.cumsum(p[perm])
    prev = np.concatenate([[0.0], F[:-1]])

    def g(x):
        return np.maximum(x - alpha, 0.0) + np.maximum(x - (1.0 - alpha), 0.0)

    q = np.zeros(p.shape[0])
    q[perm] = g(F) - g(prev)
    return q / q.sum()


def ref_dipmark(p, window, t, key, state, prm):
    """DiPmark's reference step: the DiP-reweight of p along the context's keyed permutation.

    The registry's reference-step signature (:mod:`sims.watermarks.registry`).

    Parameters
    ----------
    p : (V,) float array
        The next-token distribution p_t.
    window : (h,) int array
        The last ``h`` tokens (the context).
    t : int
        The 0-based position (not read).
    key : int
        The watermark key.
    state : tuple
        The carried state (lambda, colour of the previous token), passed through unchanged.
    prm : dict
        The resolved parameters (``dip_alpha``).

    Returns
    -------
    q : (V,) float array
        The watermarked distribution :func:`reweight` ``(p, permutation(key, window, V), dip_alpha)``.
    states : list
        ``state`` for every next token (the step carries no state).
    """
    return reweight(p, permutation(key, window, p.shape[0]), prm["dip_alpha"]), [state] * p.shape[0]


@njit(cache=True, inline="always")
def _g(x, alpha):
    return max(x - alpha, 0.0) + max(x - (1.0 - alpha), 0.0)


BUCKET_BITS = 12
"""The Numba step buckets the tokens by the top 12 bits of their words (4096 buckets in descending word order)."""


@njit(cache=True)
def dip_step(alpha, e, inv, bits, green, u, G, q):
    """The Numba step: ``e * inv`` is p_t, ``bits`` the context's PRF words (the partition green list's),
    ``green`` that list as 0.0/1.0, ``u`` the sampling uniform, ``q`` a work array (V,).

    O(V) without sorting the vocabulary: the mass of each bucket of words (top ``BUCKET_BITS`` bits) gives
    every bucket's range [lo, hi] of the cumulative F in descending word order; g is linear there unless a
    knee (alpha, 1 - alpha) lies strictly inside, so q = slope * p for the tokens of every other bucket, and
    only the tokens of the (at most two) buckets holding a knee are sorted, each from its bucket's lo.
    Then the exact KL(q || p) and DG = q(green) - G, and the inverse-CDF draw of u in vocabulary order.
    Returns ``(y, kl, dg)``."""
    V = e.shape[0]
    nb = 1 << BUCKET_BITS
    shift = np.uint64(64 - BUCKET_BITS)
    mass = np.zeros(nb)
    count = np.zeros(nb, dtype=np.int64)
    total = 0.0
    for k in range(V):
        b = int(bits[k] >> shift)
        pk = e[k] * inv
        mass[b] += pk
        count[b] += 1
        total += pk
    lo = np.empty(nb)
    slope = np.empty(nb)  # -1: a knee inside, its tokens done one by one
    C = 0.0
    n_crit = 0
    for b in range(nb - 1, -1, -1):
        hi = C + mass[b]
        lo[b] = C
        if (C < alpha < hi) or (C < 1.0 - alpha < hi):
            slope[b] = -1.0
            n_crit += count[b]
        elif hi <= alpha:
            slope[b] = 0.0
        elif C >= 1.0 - alpha:
            slope[b] = 2.0
        else:
            slope[b] = 1.0
        C = hi
    Z = _g(total, alpha)
    crit = np.empty(n_crit, dtype=np.int64)
    words = np.empty(n_crit, dtype=np.uint64)
    j = 0
    for k in range(V):
        b = int(bits[k] >> shift)
        if slope[b] < 0.0:
            crit[j] = k
            words[j] = bits[k]
            j += 1
        else:
            q[k] = slope[b] * e[k] * inv / Z
    order = np.argsort(words)
    prev_b = -1
    F = 0.0
    for i in range(n_crit - 1, -1, -1):  # descending words: bucket by bucket, each from its lo
        k = crit[order[i]]
        b = int(bits[k] >> shift)
        if b != prev_b:
            F = lo[b]
            prev_b = b
        g0 = _g(F, alpha)
        F += e[k] * inv
        q[k] = (_g(F, alpha) - g0) / Z
    target = u  # q sums to 1 (divided by Z)
    acc = 0.0
    y = -1
    kl = 0.0
    qg = 0.0
    for k in range(V):
        qk = q[k]
        if qk > 0.0:
            kl += qk * math.log(qk / (e[k] * inv))
            qg += qk * green[k]
            acc += qk
            if y < 0 and acc >= target:
                y = k
    if y < 0:  # rounding left the target above the last cumulative value: the last token with q > 0
        for k in range(V - 1, -1, -1):
            if q[k] > 0.0:
                y = k
                break
    return y, kl, qg - G
