r"""A detection's answer from per-token marks: the red-green and EMS results and prefix curves from any
marks array (the package's own green lists or another rule's), the exact null probability of green, and the
check of the false-positive rate a decision is taken at.  The detector families
(:mod:`sims.detect.families`) and the colours of raw texts (:mod:`sims.detect.documents.text_marks`) read it;
:mod:`sims.detect.documents.detect_json` turns its results into the printed decision.
"""

from __future__ import annotations

import math

import numpy as np

from sims.detect.stats import scores
from sims.detect.stats.nulls import LN10, binom_logsf, gamma_logsf
from sims.detect.stats.scores import DetectResult


def check_fpr(fpr, name: str = "fpr") -> float:
    """``fpr`` (a false-positive rate, or a level called ``name``) as a float in (0, 1), else a ValueError naming it.

    Parameters
    ----------
    fpr : float
        The rate.
    name : str, default "fpr"
        Its name in the error message.

    Returns
    -------
    float
        ``fpr``.
    """
    try:
        a = float(fpr)
    except (TypeError, ValueError):
        a = math.nan
    if not 0.0 < a < 1.0:
        raise ValueError(f"{name} must be in (0, 1); got {fpr!r}")
    return a

def null_green_probability(gamma: float, kind: str, vocab_size: int | None) -> float:
    """The exact probability that one token is green under the null: gamma rounded down to a
    multiple of 2**-53 (``"bernoulli"``) or floor(gamma V) / V (``"partition"``); see
    :func:`sims.detect.stats.scores.score_redgreen`.

    Parameters
    ----------
    gamma : float
        Green-list fraction.
    kind : {"bernoulli", "partition"}
        Green-list kind.
    vocab_size : int or None
        Vocabulary size (needed by ``"partition"``).

    Returns
    -------
    float
        The null green probability.
    """
    return scores._stat_code("green", gamma, kind, vocab_size)[3]

def redgreen_from_marks(green, scored, lengths, gamma: float) -> tuple[DetectResult, np.ndarray]:
    """Red-green result and prefix curve from per-token marks (any green-list rule).

    ``green[i, t]`` is the colour of token t of text i (tokens after its context),
    ``scored[i, t]`` whether it counts (False for deduplicated tokens and padding),
    ``lengths[i]`` the text's token count; ``gamma`` is the exact null probability that a token
    is green.  Returns the :class:`DetectResult` (green count, z, exact binomial log10 p,
    eq. three_brick_p) and the log10 p of every prefix (0 while at most one token is scored,
    nan past the text's end), as :func:`sims.detect.stats.scores.prefix_log10p` does for the
    package's own green lists.

    Parameters
    ----------
    green, scored : array_like of bool, shape (n, T)
        Colours and scored mask.
    lengths : array_like of int, shape (n,)
        Tokens of each text.
    gamma : float
        Exact null green probability.

    Returns
    -------
    res : DetectResult
        The red-green detection of each text.
    prefix : ndarray, shape (n, T)
        log10 p of every prefix.
    """
    green, scored = np.asarray(green, dtype=bool), np.asarray(scored, dtype=bool)
    lengths = np.asarray(lengths, dtype=np.int64)
    k = np.cumsum(green & scored, axis=1)
    n = np.cumsum(scored, axis=1)
    kk, nn = (green & scored).sum(axis=1), scored.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        z = (kk - gamma * nn) / np.sqrt(nn * gamma * (1 - gamma))
    z[nn == 0] = np.nan
    short = nn <= 1
    lp = np.where(short, 0.0, binom_logsf(kk, nn, gamma) / LN10)
    prefix = np.where(n <= 1, 0.0, binom_logsf(k, n, gamma) / LN10)
    prefix = np.where(np.arange(green.shape[1])[None, :] < lengths[:, None], prefix, np.nan)
    return DetectResult(nn, kk.astype(np.float64), z, lp, short), prefix

def ems_from_marks(values, scored, lengths) -> tuple[DetectResult, np.ndarray]:
    r"""EMS result and prefix curve from per-token marks, as :func:`redgreen_from_marks` for the green count.

    ``values[i, t]`` is token t's EMS score :math:`-\ln(1 - r_{t,y_t})` (any value where not ``scored``),
    ``scored`` and ``lengths`` as there.  Returns the :class:`DetectResult` of
    :func:`sims.detect.stats.scores.score_ems` (sum, z, exact Gamma(n, 1) log10 p, eq. ems_pval) and the
    log10 p of every prefix (:func:`sims.detect.stats.scores.prefix_log10p` with ``stat="ems"``), the sums
    taken token by token in text order as the scan does.

    Parameters
    ----------
    values : array_like, shape (n, T)
        EMS token scores.
    scored : array_like of bool, shape (n, T)
        Which tokens count.
    lengths : array_like of int, shape (n,)
        Tokens of each text.

    Returns
    -------
    res : DetectResult
        The EMS detection of each text.
    prefix : ndarray, shape (n, T)
        log10 p of every prefix, nan past a text's end.
    """
    scored = np.asarray(scored, dtype=bool)
    lengths = np.asarray(lengths, dtype=np.int64)
    s = np.cumsum(np.where(scored, values, 0.0), axis=1)
    n = np.cumsum(scored, axis=1)
    ss = s[:, -1] if s.shape[1] else np.zeros(s.shape[0])
    nn = n[:, -1] if n.shape[1] else np.zeros(n.shape[0], dtype=np.int64)
    short = nn <= 1
    with np.errstate(invalid="ignore", divide="ignore"):
        z = (ss - nn) / np.sqrt(nn)
    z[nn == 0] = np.nan
    res = DetectResult(nn, ss, z, np.where(short, 0.0, gamma_logsf(ss, nn) / LN10), short)
    prefix = np.where(n <= 1, 0.0, gamma_logsf(s, n) / LN10)
    return res, np.where(np.arange(s.shape[1])[None, :] < lengths[:, None], prefix, np.nan)

