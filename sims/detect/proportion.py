r"""How much of a text is watermarked: the share of DualGA-watermarked tokens with an interval.

DualGA steers the green probability of its tokens to :math:`\gamma + \Delta` on average (its
dual ascent meets the target DG, the paper's constraint), while a token it did not write is green
with probability :math:`\gamma` (a fresh coin: text independent of the key, or a token whose
context was not the watermark's).  In a text of n scored tokens of which a share
:math:`\varepsilon` are watermarked, the green count K has mean :math:`n(\gamma + \varepsilon\Delta)`, so

.. math:: \hat\varepsilon = \frac{K/n - \gamma}{\Delta},

clipped to [0, 1].  The interval maps the exact Clopper-Pearson interval of the green rate at the
same level through the same line.  K is a sum of independent Bernoullis with unequal rates (a
Poisson-binomial), whose tails are no heavier than the binomial's of the same mean away from the
centre (Hoeffding 1956), so the interval is conservative; it is checked on texts spliced from
watermarked and plain parts with known truth (``tests/sims/test_proportion.py``).
"""

from __future__ import annotations

import numpy as np
from scipy.stats import beta

from sims.detect.scores import score_redgreen


def share_interval(k, n, gamma: float, Delta: float, level: float = 0.95) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""(estimate, lower, upper) of the watermarked share from green counts ``k`` of ``n`` scored tokens.

    Parameters
    ----------
    k, n : array_like of int (broadcast), 0 <= k <= n, n >= 1
    gamma : float in (0, 1), the green-list ratio
    Delta : float in (0, 1 - gamma], DualGA's target DG
    level : float in (0, 1), the interval's confidence level
    """
    if not 0.0 < gamma < 1.0:
        raise ValueError(f"gamma must be in (0, 1); got {gamma!r}")
    if not 0.0 < Delta <= 1.0 - gamma:
        raise ValueError(f"Delta must be in (0, 1 - gamma] = (0, {1 - gamma}]; got {Delta!r}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1); got {level!r}")
    k, n = np.broadcast_arrays(np.asarray(k, dtype=np.float64), np.asarray(n, dtype=np.float64))
    if np.any(n < 1) or np.any((k < 0) | (k > n)):
        raise ValueError("k and n must satisfy 0 <= k <= n and n >= 1")
    a = (1.0 - level) / 2
    lo = np.where(k > 0, beta.ppf(a, np.maximum(k, 1e-300), n - k + 1), 0.0)
    hi = np.where(k < n, beta.ppf(1 - a, k + 1, np.maximum(n - k, 1e-300)), 1.0)
    line = lambda r: np.clip((r - gamma) / Delta, 0.0, 1.0)  # noqa: E731
    return line(k / n), line(lo), line(hi)


def share_of_texts(tokens, prompts, key: int, gamma: float, Delta: float, *, level: float = 0.95, vocab_size: int | None = None, h: int = 1,
                   lengths=None):
    """:func:`share_interval` of each text's green count (token layout of :mod:`sims.detect.scores`)."""
    res = score_redgreen(tokens, prompts, key, gamma, vocab_size=vocab_size, h=h, lengths=lengths)
    return share_interval(res.green, np.maximum(res.n_scored, 1), gamma, Delta, level)
