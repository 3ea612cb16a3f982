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

from sims.detect.stats.marks import check_fpr
from sims.detect.stats.scores import DetectResult, tokens_to_detect

SCHEMA = "wmstats.detect"  #: the document's schema name (its first field)
SCHEMA_VERSION = 1  #: its version: fields are only added within a version
#: The verdicts of a text, in the order the module docstring explains them.
DECISIONS = ("watermarked", "not watermarked", "too short to score", "too short for this fpr")




def decide(res: DetectResult, fpr: float, gamma: float | None = None) -> list[str]:
    """One of :data:`DECISIONS` per text of ``res`` at level ``fpr``.

    ``gamma`` (the exact probability that one token is green under the null) enables the
    ``"too short for this fpr"`` verdict of red-green scores; leave it None for other statistics.

    Parameters
    ----------
    res : DetectResult
        Fixed-length detection of the texts.
    fpr : float
        Level of the decision, in (0, 1).
    gamma : float, optional
        Null green probability of one token.

    Returns
    -------
    list of str
        The decision of each text.
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
        Fixed-length detection of the texts.
    fpr : float in (0, 1)
        Level of the decision.
    n_tokens : (n,) int array
        Candidate tokens of each text (after its context).
    prefix_log10p : (n, T) array, optional
        log10 p of every prefix (:func:`sims.detect.stats.scores.prefix_log10p`); without it
        ``tokens_to_detect`` is null.
    gamma : float, optional
        Null green probability of one token (red-green statistics; see :func:`decide`).

    Returns
    -------
    list of dict
        One entry per text: index, n_tokens, n_scored, score, z, log10_p, tokens_to_detect, watermarked, decision.
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
    """The whole JSON document: schema and version first, then ``fields``, then ``texts``.

    Parameters
    ----------
    texts : list of dict
        The per-text entries (:func:`text_rows`).
    **fields
        Top-level fields (input, scheme, algo, statistic, key, gamma, h, dedup, vocab_size, fpr, ...).

    Returns
    -------
    dict
        The document.
    """
    return {"schema": SCHEMA, "version": SCHEMA_VERSION, **fields, "texts": texts}
