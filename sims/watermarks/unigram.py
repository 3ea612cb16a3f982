r"""Unigram (Zhao et al. 2023): one fixed keyed green list, context width 0.

Zhao, Ananth, Li, Wang, "Provable Robust Watermarking for AI-Generated Text" (ICLR 2024), Algorithm 1
("GPTWatermark"): a green list :math:`G \subset V` drawn once from the key, and at every step

.. math::  \tilde\ell_t[v] = \ell_t[v] + \delta\, 1\{v \in G\}, \qquad q_t = \mathrm{softmax}(\tilde\ell_t),

which is Algorithm kirchen (SRL) with a context of width :math:`h = 0`: the green list is the PRF's
list of the empty context, ``prf.green_mask(prf.context_hash(key, []), V, gamma)``, the same for every
position and every text.  Its exact :math:`D_{kl}(q_t\|p_t)` and :math:`\mathrm{DG}_t` are SRL's closed
forms (:mod:`theory`); the Numba generator runs SRL's step at width 0.

Detection (their Algorithm 2) is the z-score :math:`z = (|s|_G - \gamma n)/\sqrt{n\gamma(1-\gamma)}` of
the green count; here the red-green family returns that z and the exact binomial tail.  With
``dedup`` a (context, token) pair is scored once, and with the empty context that means *each
distinct token once*.  Null: a text that does not depend on the key, Bernoulli(gamma) green
lists, so the colours of n distinct tokens are i.i.d. Bernoulli(gamma) and the green count is
exactly Binomial(n, gamma).  Without dedup the null is wrong for any text that repeats a token
(every repeat repeats its colour: much worse than at h >= 1, since frequent tokens repeat).

Choices the paper leaves open, and ours:

- the green list is a per-token Bernoulli(gamma) list of the package's PRF (:mod:`sims.core.prf`),
  not an exact :math:`\gamma|V|` subset: this keeps the exact binomial null above (an exact subset
  makes distinct tokens' colours hypergeometric; :func:`sims.watermarks.generate.generate_synthetic` refuses
  ``green_kind="partition"`` at h = 0);
- gamma defaults to 0.5 and delta to 2, the paper's experimental setting (Section 6, "fraction 0.5,
  strength 2.0");
- the p-value is the exact binomial tail, not the paper's normal threshold z > 6 (or its Theorem 3.4
  bound).
"""

from __future__ import annotations

import numpy as np

from sims.core import prf

GAMMA = 0.5
"""Zhao et al.'s green-list fraction (Section 6)."""


def green_list(key: int, vocab_size: int, gamma: float) -> np.ndarray:
    """The one green list of ``key``: the PRF's Bernoulli(gamma) list of the empty context (bool (V,)).

    Parameters
    ----------
    key : int
        The watermark key.
    vocab_size : int
        The vocabulary size V.
    gamma : float in (0, 1)
        The green-list ratio: each token is green with probability gamma (rounded down to a multiple of 2**-53).

    Returns
    -------
    (V,) bool array
        ``prf.green_mask(prf.context_hash(key, []), V, gamma)``, the same at every position of every text.
    """
    return prf.green_mask(prf.context_hash(key, np.zeros(0, dtype=np.int64)), vocab_size, gamma)


def ref_unigram(p, window, t, key, state, prm):
    r"""Unigram's reference step: :math:`q \propto p\, e^{\delta 1\{v \in G\}}`, G the key's fixed list (the window is not read).

    The registry's reference-step signature (:mod:`sims.watermarks.registry`).

    Parameters
    ----------
    p : (V,) float array
        The next-token distribution p_t.
    window : (h,) int array
        The last ``h`` tokens (not read: the context width is 0).
    t : int
        The 0-based position (not read).
    key : int
        The watermark key.
    state : tuple
        The carried state (lambda, colour of the previous token), passed through unchanged.
    prm : dict
        The resolved parameters (``delta``, ``gamma``).

    Returns
    -------
    q : (V,) float array
        The watermarked distribution (Zhao et al.'s Algorithm 1).
    states : list
        ``state`` for every next token (the step carries no state).
    """
    q = p * np.exp(prm["delta"] * green_list(key, p.shape[0], prm["gamma"]))
    return q / q.sum(), [state] * p.shape[0]
