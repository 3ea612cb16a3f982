r"""How much of a text is watermarked: the share of watermarked tokens with an interval.

Red-green watermarks (:func:`share_interval`, :func:`share_of_texts`): DualGA, and every other
red-green algorithm through its mean green-probability increase on the LM (``Delta`` below: SRL's
and the hard watermark's mean DG, :func:`sims.plan.watermark_signal`).  EMS / Gumbel-max:
:func:`ems_share_interval`, the method of moments on the score :math:`-\ln(1 - Y)`.

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
watermarked and plain parts with known truth (``tests/detect/stats/test_proportion.py``).
"""

from __future__ import annotations

import numpy as np
from scipy.stats import beta

from sims.detect.stats.scores import score_redgreen


def share_interval(k, n, gamma: float, Delta: float, level: float = 0.95) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""(estimate, lower, upper) of the watermarked share from green counts ``k`` of ``n`` scored tokens.

    A text whose share :math:`\varepsilon` of tokens is DualGA-watermarked has green rate
    :math:`\gamma + \varepsilon\Delta`; the estimate maps :math:`k/n` and the Clopper-Pearson interval of the
    rate through :math:`r \mapsto (r - \gamma)/\Delta`, clipped to [0, 1].

    Parameters
    ----------
    k, n : array_like of int (broadcast), 0 <= k <= n, n >= 1
        Green counts and scored tokens.
    gamma : float in (0, 1), the green-list ratio
        Null green probability.
    Delta : float in (0, 1 - gamma], DualGA's target DG
        The watermarked tokens' excess green rate.
    level : float in (0, 1), the interval's confidence level
        Confidence level.

    Returns
    -------
    estimate, lower, upper : ndarray
        The share and its interval, shaped like the broadcast of ``k`` and ``n``.
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
    """:func:`share_interval` of each text's green count (token layout of :mod:`sims.detect.stats.scores`).

    Parameters
    ----------
    tokens, prompts : ndarray of int
        Texts and prompts.
    key : int
        The key.
    gamma : float
        Green-list fraction.
    Delta : float
        DualGA's target DG.
    level : float, default 0.95
        Confidence level.
    vocab_size : int, optional
        Vocabulary size.
    h : int, default 1
        Context width.
    lengths : array_like of int, optional
        Tokens of each text.

    Returns
    -------
    estimate, lower, upper : ndarray, shape (n,)
        Each text's watermarked share and its interval.
    """
    res = score_redgreen(tokens, prompts, key, gamma, vocab_size=vocab_size, h=h, lengths=lengths)
    return share_interval(res.green, np.maximum(res.n_scored, 1), gamma, Delta, level)


EULER_GAMMA = 0.5772156649015329  #: the Euler-Mascheroni constant (:func:`ems_signal`)


def ems_signal(pi) -> float:
    r"""Mean per-token EMS score :math:`E[-\ln(1 - Y)]` of watermarked tokens, :math:`Y = U^{\pi}`, over a sample
    ``pi`` of the LM's :math:`p_t(y_t)`: :math:`\int_0^1 -\ln(1 - u^\pi)\,du = \psi(1 + 1/\pi) + \gamma_E` (null: 1).

    Parameters
    ----------
    pi : array_like
        Probabilities in (0, 1] of the tokens drawn.

    Returns
    -------
    float
        The mean score :math:`\mu_1`, >= 1.

    Raises
    ------
    ValueError
        If ``pi`` is empty or holds a value outside (0, 1].
    """
    from scipy.special import digamma

    pi = np.asarray(pi, dtype=np.float64)
    if pi.size == 0 or np.any(~((pi > 0) & (pi <= 1))):
        raise ValueError("pi must be a nonempty sample of probabilities in (0, 1]")
    return float(np.mean(digamma(1.0 + 1.0 / pi)) + EULER_GAMMA)


def ems_share_interval(v, scored, mu1: float, level: float = 0.95) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""(estimate, lower, upper) of each text's EMS-watermarked share from its token scores.

    The method of moments of Li et al.'s proportion estimation for Gumbel-max watermarks with the
    score :math:`-\ln(1 - Y)`: a plain token scores 1 on average (Exp(1)), a watermarked one
    ``mu1`` (:func:`ems_signal` of the LM), so :math:`\hat\varepsilon = (\bar v - 1)/(\mu_1 - 1)`,
    clipped to [0, 1]; the interval is the central limit one, :math:`\bar v \pm z\, s/\sqrt n` with the
    text's own standard deviation s, mapped through the same line (asymptotic, not exact: checked on
    spliced texts with known truth in ``tests/detect/stats/test_proportion.py``).

    Parameters
    ----------
    v, scored : (n_texts, T) token scores :math:`-\ln(1 - Y_t)` and the scored mask
        (:func:`sims.detect.stats.scores.token_scores` with ``stat="ems"``)
    mu1 : float > 1, the watermarked tokens' mean score
        :func:`ems_signal` of the LM.
    level : float in (0, 1)
        Confidence level of the interval.

    Returns
    -------
    estimate, lower, upper : ndarray, shape (n_texts,)
        The watermarked share of each text and its interval, in [0, 1].

    Raises
    ------
    ValueError
        If ``mu1`` <= 1, ``level`` is outside (0, 1), or a text has fewer than 2 scored tokens.
    """
    from scipy.stats import norm

    if not mu1 > 1.0:
        raise ValueError(f"mu1 must be in (1, inf); got {mu1!r}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1); got {level!r}")
    v, scored = np.atleast_2d(np.asarray(v, dtype=np.float64)), np.atleast_2d(np.asarray(scored, dtype=bool))
    n = scored.sum(axis=1)
    if np.any(n < 2):
        raise ValueError("every text needs at least 2 scored tokens")
    x = np.where(scored, v, 0.0)
    mean = x.sum(axis=1) / n
    sd = np.sqrt(np.maximum((np.where(scored, v - mean[:, None], 0.0) ** 2).sum(axis=1) / (n - 1), 0.0))
    half = norm.ppf(0.5 + level / 2) * sd / np.sqrt(n)
    line = lambda m: np.clip((m - 1.0) / (mu1 - 1.0), 0.0, 1.0)  # noqa: E731
    return line(mean), line(mean - half), line(mean + half)
