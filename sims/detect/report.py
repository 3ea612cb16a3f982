"""A detection decision per text, and the one JSON document ``python -m sims detect --json`` prints.

The document (schema ``wmstats.detect``, version 1; fields are only ever added, never
renamed or removed, within a version)::

    {
      "schema": "wmstats.detect", "version": 1,
      "input": "texts.npz" | "story.txt" | "-",   # what was read
      "scheme": "wmstats" | "transformers-lefthash",
      "algo": "dualga",                # the detector (red-green algorithms share one)
      "statistic": "green count",      # what "score" counts: green count | EMS sum | AutoCov S_T | keyed-order hits
      "key": 15485863, "gamma": 0.25, "h": 1, "dedup": false, "vocab_size": 49152,
      "fpr": 0.0001,                   # the level of the decision
      "texts": [
        {"index": 0,
         "n_tokens": 200,              # tokens after the h context tokens (candidates for scoring)
         "n_scored": 187,              # tokens scored (fewer than n_tokens with dedup)
         "score": 96.0,                # the statistic (green count for red-green schemes)
         "z": 6.9,                     # z-score (null where undefined)
         "log10_p": -11.2,             # log10 of the exact p-value (0 when too short to score)
         "tokens_to_detect": 64,       # first prefix length from which p <= fpr for every longer prefix; null if never
         "watermarked": true,          # p <= fpr
         "decision": "watermarked"}    # one of DECISIONS
      ]
    }

Decisions (:data:`DECISIONS`): ``"watermarked"`` (p <= fpr); ``"not watermarked"``;
``"too short to score"`` (at most one token scored: no test, p = 1); ``"too short for this
fpr"`` (a red-green text of n scored tokens reaches at best :math:`p = \\gamma^n`, all green;
when that is above fpr the test could not have said yes, so "no" carries no information).
"""

from __future__ import annotations

import math

import numpy as np

from sims.detect import scores
from sims.detect.nulls import LN10, binom_logsf, gamma_logsf
from sims.detect.scores import DetectResult, tokens_to_detect

SCHEMA = "wmstats.detect"
SCHEMA_VERSION = 1
DECISIONS = ("watermarked", "not watermarked", "too short to score", "too short for this fpr")


def check_fpr(fpr, name: str = "fpr") -> float:
    """``fpr`` (a false-positive rate, or a level called ``name``) as a float in (0, 1), else a ValueError naming it."""
    try:
        a = float(fpr)
    except (TypeError, ValueError):
        a = math.nan
    if not 0.0 < a < 1.0:
        raise ValueError(f"{name} must be in (0, 1); got {fpr!r}")
    return a


def decide(res: DetectResult, fpr: float, gamma: float | None = None) -> list[str]:
    """One of :data:`DECISIONS` per text of ``res`` at level ``fpr``.

    ``gamma`` (the exact probability that one token is green under the null) enables the
    ``"too short for this fpr"`` verdict of red-green scores; leave it None for other statistics.
    """
    lvl = math.log10(check_fpr(fpr))
    out = []
    for n, lp, short in zip(res.n_scored, res.log10_p, res.too_short):
        if short:
            out.append("too short to score")
        elif lp <= lvl:
            out.append("watermarked")
        elif gamma is not None and int(n) * math.log10(gamma) > lvl:
            out.append("too short for this fpr")
        else:
            out.append("not watermarked")
    return out


def text_rows(res: DetectResult, fpr: float, *, n_tokens, prefix_log10p=None, gamma: float | None = None) -> list[dict]:
    """The ``"texts"`` entries of the document (module docstring).

    Parameters
    ----------
    res : DetectResult
    fpr : float in (0, 1)
    n_tokens : (n,) int array
        Candidate tokens of each text (after its context).
    prefix_log10p : (n, T) array, optional
        log10 p of every prefix (:func:`sims.detect.scores.prefix_log10p`); without it
        ``tokens_to_detect`` is null.
    gamma : float, optional
        Null green probability of one token (red-green statistics; see :func:`decide`).
    """
    decisions = decide(res, fpr, gamma)
    if prefix_log10p is None:
        ttd = np.full(len(decisions), np.nan)
    else:
        ttd = tokens_to_detect(prefix_log10p, math.log10(fpr))
    return [
        dict(index=i, n_tokens=int(nt), n_scored=int(n), score=float(s), z=float(z) if np.isfinite(z) else None, log10_p=float(lp),
             tokens_to_detect=int(t) if np.isfinite(t) else None, watermarked=d == "watermarked", decision=d)
        for i, (nt, n, s, z, lp, t, d) in enumerate(zip(n_tokens, res.n_scored, res.score, res.z, res.log10_p, ttd, decisions))
    ]


def document(texts: list[dict], **fields) -> dict:
    """The whole JSON document: schema and version first, then ``fields``, then ``texts``."""
    return {"schema": SCHEMA, "version": SCHEMA_VERSION, **fields, "texts": texts}


def null_green_probability(gamma: float, kind: str, vocab_size: int | None) -> float:
    """The exact probability that one token is green under the null: gamma rounded down to a
    multiple of 2**-53 (``"bernoulli"``) or floor(gamma V) / V (``"partition"``); see
    :func:`sims.detect.scores.score_redgreen`."""
    return scores._stat_code("green", gamma, kind, vocab_size)[3]


def redgreen_from_marks(green, scored, lengths, gamma: float) -> tuple[DetectResult, np.ndarray]:
    r"""Red-green result and prefix curve from per-token marks (any green-list rule).

    ``green[i, t]`` is the colour of token t of text i (tokens after its context),
    ``scored[i, t]`` whether it counts (False for deduplicated tokens and padding),
    ``lengths[i]`` the text's token count; ``gamma`` is the exact null probability that a token
    is green.  Returns the :class:`DetectResult` (green count, z, exact binomial log10 p,
    eq. three_brick_p) and the log10 p of every prefix (0 while at most one token is scored,
    nan past the text's end), as :func:`sims.detect.scores.prefix_log10p` does for the
    package's own green lists.
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
    :func:`sims.detect.scores.score_ems` (sum, z, exact Gamma(n, 1) log10 p, eq. ems_pval) and the
    log10 p of every prefix (:func:`sims.detect.scores.prefix_log10p` with ``stat="ems"``), the sums
    taken token by token in text order as the scan does.
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
