r"""SWEET's detector: the green count over the positions where the LM's entropy exceeds a threshold, exact.

SWEET (Lee et al. 2023, "Who Wrote this Code? Watermarking for Code Generation", Sec. 3) boosts the
green list by :math:`\delta` only at positions whose next-token distribution has Shannon entropy
:math:`H(p_t) > \tau` (the generator's ATW step, :mod:`sims.watermarks.generate`), and detects by
recomputing :math:`H(p_t)` with the LM and counting green tokens at those positions only: the
low-entropy positions, which the watermark could not move, would only dilute the count.  The paper
tunes :math:`\tau` on held-out data per task (small values, about 0.3 to 1.2 nats, for code); here it is
the record's ``alpha`` (nats), read from the generation, the same at generation and detection.

**Exact null.**  The gate :math:`g_t = 1\{H(p_t) > \tau\}` is a function of the text and the LM
(:func:`sims.detect.stats.entropies.shannon_entropies`), not of the key.  Given the text, the colours
of distinct (context, token) pairs are i.i.d. Bernoulli(:math:`\gamma`) under the null
(:mod:`sims.detect.stats.scores`), so with ``dedup`` the gated green count :math:`k` of :math:`n` gated,
kept tokens is exactly Binomial(:math:`n, \gamma`) and the p-value is the binomial tail
:math:`P(\mathrm{Bin}(n, \gamma) \ge k)` (:func:`sims.detect.stats.marks.redgreen_from_marks`); the
e-process of the red-green family runs on the same tokens.  Dedup keeps the first occurrence of each
pair in the whole text, then the gate keeps the gated ones (both key-independent choices).  Without
``dedup`` a repeated pair repeats its colour, as for the green count.  The z-score is SWEET's,
:math:`(k - \gamma n) / \sqrt{n \gamma (1-\gamma)}`.
"""

from __future__ import annotations

import math

import numpy as np

from sims.core import defaults
from sims.detect.stats.entropies import shannon_entropies
from sims.detect.stats.marks import null_green_probability, redgreen_from_marks
from sims.detect.stats.scores import DetectResult, token_marks


def check_threshold(threshold) -> float:
    """The entropy threshold ``threshold`` (nats) as a float in [0, inf), else a ValueError naming it.

    Parameters
    ----------
    threshold : float or convertible to float
        SWEET's entropy threshold :math:`\\tau` in nats.

    Returns
    -------
    float
        ``threshold`` as a float in [0, inf).
    """
    try:
        x = float(threshold)
    except (TypeError, ValueError):
        x = math.nan
    if not 0.0 <= x < math.inf:
        raise ValueError(f"threshold must be in [0, inf); got {threshold!r}")
    return x


def entropy_gate(entropies, threshold: float) -> np.ndarray:
    r"""(n, T) bool: :math:`H(p_t) > \tau` (strictly, as the generator's boost), False where the entropy is nan (past a text's end).

    Parameters
    ----------
    entropies : array_like of float, shape (n, T)
        Shannon entropies :math:`H(p_t)` in nats (:func:`sims.detect.stats.entropies.shannon_entropies`), nan past each
        text's length.
    threshold : float
        The threshold :math:`\tau` in nats, in [0, inf) (:func:`check_threshold`).

    Returns
    -------
    ndarray of bool, shape (n, T)
        The gate :math:`g_t = 1\{H(p_t) > \tau\}`.
    """
    with np.errstate(invalid="ignore"):
        return np.asarray(entropies, dtype=np.float64) > check_threshold(threshold)


def gated_marks(gen, lm, key: int, *, gamma: float, threshold: float, dedup: bool, prompts, green_kind: str = defaults.GREEN_KIND,
                prf: str = defaults.PRF, seeding: str = "lefthash", gate=None):
    """The green marks of every token (:func:`sims.detect.stats.scores.token_marks`), the scored mask restricted to the
    gated positions, the lengths and the exact null probability of green.

    ``prompts`` are the last ``h`` prompt tokens of each text (the generation's layout); ``gate`` (n, T) bool may be given
    (the key-independent gate computed once for many keys), else it is :func:`entropy_gate` of the LM's entropies.

    Parameters
    ----------
    gen : Generation
        The texts; its ``meta`` gives ``h`` and ``vocab_size``, its ``tokens`` and ``lengths`` the layout.
    lm : LM or SyntheticLM
        The LM whose Shannon entropies make the gate (not read when ``gate`` is given).
    key : int
        The watermark key of the green lists.
    gamma : float
        Green-list ratio in (0, 1).
    threshold : float
        The entropy threshold :math:`\\tau` in nats (not read when ``gate`` is given).
    dedup : bool
        Score each (context, token) pair once, at its first occurrence in the whole text, before the gate.
    prompts : (n, h) int array
        The last ``h`` prompt tokens of each text.
    green_kind : {"bernoulli", "partition"}
        The green lists' kind.
    prf : {"splitmix64", "siphash"}
        The keyed PRF of the green lists.
    seeding : str
        The green lists' seeding scheme (:mod:`sims.core.seeding`).
    gate : (n, T) bool array, optional
        A precomputed gate; default :func:`entropy_gate` of :func:`sims.detect.stats.entropies.shannon_entropies`.

    Returns
    -------
    values : (n, T) float64
        Each token's colour as 0.0/1.0 (:func:`sims.detect.stats.scores.token_marks`).
    scored : (n, T) bool
        The scored mask (inside the text, first occurrence with ``dedup``) and the gate.
    lengths : (n,) int64
        Each text's length.
    g_eff : float
        The exact null probability of green (:func:`sims.detect.stats.marks.null_green_probability`).
    """
    m = gen.meta
    values, scored, lengths = token_marks(gen.tokens, prompts, key, stat="green", gamma=gamma, h=m["h"], green_kind=green_kind, dedup=dedup,
                                          vocab_size=m["vocab_size"], lengths=gen.lengths, prf=prf, seeding=seeding)
    if gate is None:
        gate = entropy_gate(shannon_entropies(gen, lm), threshold)
    return values, scored & gate, lengths, null_green_probability(gamma, green_kind, m["vocab_size"])


def score_gated(values, scored, lengths, g_eff: float) -> tuple[DetectResult, np.ndarray]:
    """The gated green count's :class:`~sims.detect.stats.scores.DetectResult` (exact binomial tail over the gated, kept
    tokens; module docstring) and its prefix curve, from the marks of :func:`gated_marks`.

    Parameters
    ----------
    values : (n, T) float array
        The tokens' colours as 0.0/1.0 (:func:`gated_marks`).
    scored : (n, T) bool array
        The gated, kept tokens (:func:`gated_marks`).
    lengths : (n,) int array
        Each text's length.
    g_eff : float
        The exact null probability of green.

    Returns
    -------
    res : DetectResult
        The gated green count, SWEET's z-score and the exact binomial log10 p of each text.
    prefix : (n, T) float array
        log10 p of every prefix (:func:`sims.detect.stats.marks.redgreen_from_marks`).
    """
    return redgreen_from_marks(values > 0.5, scored, lengths, g_eff)
