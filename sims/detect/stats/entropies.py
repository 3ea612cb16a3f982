r"""Next-token entropies along texts, from the LM that scores them: what the entropy-aware detectors read.

The detector recomputes, at every position :math:`t` of a text, the LM's next-token distribution
:math:`p_t` given the prompt and the tokens before :math:`t` (:meth:`sims.lm.door.LM.step_probs`: a
synthetic LM's exact tables, a real LM's teacher-forced softmax), and reduces it to one number:

- the **Shannon entropy** :math:`H(p_t) = -\sum_k p_t(k) \ln p_t(k)` in nats, SWEET's gate (Lee et al.
  2023, "Who Wrote this Code? Watermarking for Code Generation", Sec. 3: the entropy of the model's
  next-token distribution, compared with a threshold; :mod:`sims.detect.stats.gated_scores`);
- the **spike entropy** :math:`S(p_t, z) = \sum_k p_t(k) / (1 + z\,p_t(k))` of modulus :math:`z`
  (Kirchenbauer et al. 2023, "A Watermark for Large Language Models", Definition 4.1), EWD's weight
  (Lu et al. 2024, "An Entropy-based Text Watermarking Detection Method"; :mod:`sims.detect.stats.ewd_scores`).

Both are functions of the text and the LM only, never of the watermark key: given the text, the
detectors' gates and weights are fixed numbers, so the colours' null law (i.i.d. Bernoulli over distinct
(context, token) pairs, :mod:`sims.detect.stats.scores`) is untouched by them.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import entr

from sims.lm.synthetic import step_probs_of


def _along(gen, lm, reduce) -> np.ndarray:
    """(n, T): ``reduce(probs)`` of each text's (L_i, V) next-token distributions, nan past its scored length
    (:meth:`sims.core.record.Generation.scored_lengths`); the distributions come from
    :func:`sims.lm.synthetic.step_probs_of` (batched on a real LM)."""
    n, T = gen.tokens.shape
    out = np.full((n, T), np.nan)
    probs = step_probs_of(lm, gen)
    for i, L in enumerate(gen.scored_lengths()):
        if L:
            out[i, :L] = reduce(np.asarray(probs(i)[:L], dtype=np.float64))
    return out


def shannon_entropies(gen, lm) -> np.ndarray:
    r"""(n, T) Shannon entropy :math:`H(p_t)` (nats) of the LM's next-token distribution at every position of
    every text of ``gen`` (module docstring), nan past each text's length.

    Parameters
    ----------
    gen : Generation
    lm : LM or SyntheticLM
        The LM the detector holds (:func:`sims.get_lm`'s object, batched on a real LM, or a bare synthetic LM: :func:`sims.lm.synthetic.step_probs_of`).

    Returns
    -------
    ndarray (n, T) of float64

    Examples
    --------
    >>> import sims
    >>> from sims.detect.stats.entropies import shannon_entropies
    >>> lm = sims.get_lm("tiny")
    >>> gen = sims.generate(lm, "none", n=1, T=3, seed=0, key=1, prompt_len=4)
    >>> bool(abs(shannon_entropies(gen, lm) - gen.entropy).max() < 1e-12)  # the generator's record of H(p_t)
    True
    """
    return _along(gen, lm, lambda p: entr(p).sum(axis=1))


def spike_modulus(gamma: float, delta: float) -> float:
    r"""The spike entropy's modulus :math:`z = (1-\gamma)(e^\delta - 1) / (1 + (e^\delta - 1)\gamma)` of a soft red list
    (Kirchenbauer et al. 2023, Theorem 4.2), :math:`(1-\gamma)/\gamma` for the hard one (:math:`\delta = \infty`).

    Raises ValueError naming ``gamma`` or ``delta`` outside (0, 1) and (0, inf].

    Parameters
    ----------
    gamma : float
        Green-list ratio in (0, 1).
    delta : float
        The boost of the green logits in (0, inf]; inf for the hard red list.

    Returns
    -------
    float
        The modulus :math:`z > 0`.
    """
    if not 0.0 < float(gamma) < 1.0:
        raise ValueError(f"gamma must be in (0, 1); got {gamma!r}")
    if not float(delta) > 0.0:
        raise ValueError(f"delta must be in (0, inf]; got {delta!r}")
    if math.isinf(delta):
        return (1.0 - gamma) / gamma
    e = math.expm1(delta)
    return (1.0 - gamma) * e / (1.0 + e * gamma)


def spike_entropies(gen, lm, modulus: float) -> np.ndarray:
    r"""(n, T) spike entropy :math:`S(p_t, z) = \sum_k p_t(k) / (1 + z\,p_t(k))` of modulus ``modulus`` = :math:`z \ge 0`
    at every position of every text (module docstring), nan past each text's length; in
    :math:`[1/(1+z), 1]`, the upper end for a flat distribution over a large vocabulary.

    Parameters
    ----------
    gen : Generation
        The texts with their prompts.
    lm : LM or SyntheticLM
        The LM the detector holds (:func:`sims.get_lm`'s object, batched on a real LM, or a bare synthetic LM: :func:`sims.lm.synthetic.step_probs_of`).
    modulus : float
        The modulus :math:`z` in [0, inf) (:func:`spike_modulus`).

    Returns
    -------
    ndarray of float64, shape (n, T)
        :math:`S(p_t, z)` at every position, nan past each text's length.
    """
    z = float(modulus)
    if not z >= 0.0:
        raise ValueError(f"modulus must be in [0, inf); got {modulus!r}")
    return _along(gen, lm, lambda p: (p / (1.0 + z * p)).sum(axis=1))
