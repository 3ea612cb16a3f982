"""Detection as a library call: the decision document of a generation or of coloured tokens.

``python -m sims detect`` parses its arguments, scores (the real-LM scorer lives in the
torch backend, above this room), and prints; everything in between is here: which detector
family, the prefix p-values and tokens-to-detect, the null green probability behind the
"too short for this fpr" verdict, the colours of the HTML report, and the rows of the
anytime-valid (``--sequential``) and many-keys (``--key K1,K2,...``) answers.
"""

from __future__ import annotations

import math

import numpy as np

from sims.core import defaults
from sims.detect import families
from sims.detect.anytime import sequential
from sims.detect.documents import detect_json
from sims.detect.documents.html import MarkedText, id_pieces
from sims.detect.families import detectors
from sims.detect.stats import scores
from sims.detect.stats.marks import null_green_probability


def generation_document(gen, res: scores.DetectResult, *, key: int, fpr: float, dedup: bool, input: str, gamma: float | None = None,
                        algo: str | None = None, want_marks: bool = False, pieces=None, statistic: str | None = None, prefix=None, marks=None):
    """The ``wmstats.detect`` document (:mod:`sims.detect.documents.detect_json`) of a generation scored as ``res``,
    and with ``want_marks`` the :class:`~sims.detect.documents.html.MarkedText` of each text
    (red-green detectors only).

    Parameters
    ----------
    gen : Generation
        The scored generation.
    res : DetectResult
        Its fixed-length detection (:func:`sims.detect.families.detectors.score`, or the real-LM scorer).
    key, fpr, dedup, input :
        The key, the decision's false-positive rate, dedup, and the name of the input shown.
    gamma, algo : optional
        Detection's gamma and detector (default the generation's).
    want_marks : bool, default False
        Also return the marked texts (for the HTML page, :func:`~sims.detect.documents.html.render`).
    pieces : callable, optional
        Token ids to the display pieces of the marked texts (default :func:`~sims.detect.documents.html.id_pieces`;
        a real LM's words: :func:`sims.torch_backend.detect_text.id_text_pieces`).
    statistic : str, optional
        The score family ``res`` used when it is not the algorithm's default
        (:mod:`sims.detect.families.score_families`); then no prefix p-values (they are the default score's).
    prefix, marks : optional
        The prefix curve and the :class:`~sims.detect.families.Marks` that gave ``res``
        (:meth:`sims.detect.families.DetectorFamily.answer`); computed here where not given.

    Returns
    -------
    doc : dict
        The detection document.
    marked : list of MarkedText or None
        One per text with ``want_marks``, else None.

    Raises
    ------
    ValueError
        With ``want_marks``, if ``statistic`` is given or the detector does not colour tokens red and green.
    """
    pieces = id_pieces if pieces is None else pieces
    m = gen.meta
    algo = algo or m["algo"]
    gamma = m.get("gamma") if gamma is None else gamma
    kind = m.get("green_kind", defaults.GREEN_KIND)
    family = families.of(algo)  # the detector family of :func:`sims.detect.families.detectors.score`
    if statistic is None and prefix is None:
        prefix = family.prefix_curve(gen, key, gamma=gamma, dedup=dedup)
    g_eff = null_green_probability(gamma, kind, m["vocab_size"]) if family.colours else None
    rows = detect_json.text_rows(res, fpr, n_tokens=gen.scored_lengths(), prefix_log10p=prefix, gamma=g_eff)
    doc = detect_json.document(rows, input=input, scheme="wmstats", algo=algo, statistic=statistic or family.statistic, key=key, gamma=gamma, h=m["h"],
                          dedup=dedup, vocab_size=m["vocab_size"], fpr=fpr)
    if not want_marks:
        return doc, None
    if statistic is not None:
        raise ValueError(f"--html colours the default green-count detection; got --score {statistic!r} (drop one of them)")
    if not family.colours:
        raise ValueError(f"--html colours red-green detections (algo one of {scores.REDGREEN_ALGOS}); got algo {algo!r}")
    marks = family.marks(gen, key, gamma=gamma, dedup=dedup) if marks is None else marks
    green, scored = marks.values > 0.5, marks.scored
    marked = []
    for i, r in enumerate(rows):
        L = r["n_tokens"]
        marked.append(MarkedText(r, pieces(gen.prompt(i)), pieces(gen.tokens[i, :L]), green[i, :L], scored[i, :L], prefix[i, :L],
                                 None if marks.gate is None else marks.gate[i, :L]))
    return doc, marked


def marks_document(green, scored, lengths, *, g_eff: float, fpr: float, context_pieces, text_pieces, input: str, scheme: str, key: int, gamma: float,
                   h: int, dedup: bool, vocab_size: int, lm: str, **fields):
    """Document and marked texts of red-green colours computed elsewhere (raw text: any green-list rule).

    Parameters
    ----------
    green, scored : ndarray of bool, shape (n, T)
        Colour of each token and whether it is scored, as :func:`sims.detect.stats.marks.redgreen_from_marks`.
    lengths : ndarray of int, shape (n,)
        Tokens of each text.
    g_eff : float
        The exact null probability of green.
    fpr : float
        Level of the decision.
    context_pieces, text_pieces : sequence of list of str
        ``context_pieces[i]`` / ``text_pieces[i]``: the shown pieces of text i's context and tokens.
    input, scheme, key, gamma, h, dedup, vocab_size, lm :
        Fields of the document.
    **fields
        Further fields of the document.

    Returns
    -------
    doc : dict
        The ``wmstats.detect`` document.
    marked : list of MarkedText
        One per text, for :func:`~sims.detect.documents.html.render`.
    """
    res, prefix = families.get("redgreen").from_marks(families.Marks(green, scored, lengths, g_eff))  # the .npz's path from marks
    rows = detect_json.text_rows(res, fpr, n_tokens=lengths, prefix_log10p=prefix, gamma=g_eff)
    doc = detect_json.document(rows, input=input, scheme=scheme, algo="redgreen", statistic=families.get("redgreen").statistic, key=key, gamma=gamma, h=h,
                          dedup=dedup, vocab_size=vocab_size, fpr=fpr, lm=lm, **fields)
    marked = [MarkedText(rows[i], context_pieces[i], text_pieces[i], green[i, : lengths[i]], scored[i, : lengths[i]], prefix[i, : lengths[i]])
              for i in range(len(rows))]
    return doc, marked


SEQUENTIAL_SCHEMA = "wmstats.detect-sequential"  #: schema name of the ``--sequential`` document


def sequential_document(gen, res: sequential.SequentialResult, *, key: int, dedup: bool, input: str, algo: str | None = None) -> dict:
    """The ``--sequential`` answer: per text the first token at which the anytime-valid e-process of
    :mod:`sims.detect.anytime.sequential` reached 1/alpha (null if never), its final log10 e-value and the
    decision (``"watermarked"`` once flagged: P(a null text is ever flagged) <= alpha).

    Parameters
    ----------
    gen : Generation
        The generation the result scored.
    res : SequentialResult
        The sequential test's result.
    key : int
        The key, shown in the document.
    dedup : bool
        Whether repeats were scored once, shown in the document.
    input : str
        Name of the input.
    algo : str, optional
        Detector (default the generation's algorithm).

    Returns
    -------
    dict
        The ``wmstats.detect-sequential`` document.
    """
    algo = algo or gen.meta["algo"]
    return sequential_document_from(res, gen.scored_lengths(), key=key, dedup=dedup, input=input, algo=algo, family=families.of(algo).name)


def sequential_document_from(res: sequential.SequentialResult, n_tok, *, key: int, dedup: bool, input: str, algo: str, family: str, **fields) -> dict:
    """:func:`sequential_document` from a result and the texts' token counts (any input: raw text too).

    Parameters
    ----------
    res : SequentialResult
        The sequential test's result.
    n_tok : sequence of int
        Candidate tokens of each text.
    key, dedup, input, algo, family :
        Fields of the document (``family``: the detector family's name).
    **fields
        Further fields of the document.

    Returns
    -------
    dict
        The ``wmstats.detect-sequential`` document.
    """
    rows = [dict(index=i, n_tokens=int(nt), n_scored=int(n), log10_e=float(le / math.log(10.0)), first_flagged=int(s) if s > 0 else None,
                 watermarked=bool(s > 0), decision="watermarked" if s > 0 else "not watermarked")
            for i, (nt, n, le, s) in enumerate(zip(n_tok, res.n_scored, res.log_e, res.stop))]
    return {"schema": SEQUENTIAL_SCHEMA, "version": 1, "input": input, "algo": algo, "family": family, "key": key,
            "dedup": dedup, "alpha": res.alpha, "texts": rows, **fields}


KEYS_SCHEMA = "wmstats.detect-keys"  #: schema name of the many-keys (``--keys``) document


def keys_document(gen, keys, *, fpr: float, dedup: bool, input: str, gamma: float | None = None, lm=None, algo: str | None = None) -> dict:
    """The many-keys answer for a generation of any detector family: every key's exact log10 p-value per
    text, the Holm-adjusted ones, and the keys that marked each text with family-wise error <= ``fpr``
    under any dependence between keys (:func:`sims.detect.multiple.holm`); ``lm`` for keyed orders.

    Parameters
    ----------
    gen : Generation
        The generation to score.
    keys : sequence of int
        The candidate keys.
    fpr : float
        Family-wise error rate over the keys, per text.
    dedup : bool
        Score each (context, token) pair once.
    input : str
        Name of the input, shown in the document.
    gamma : float, optional
        Detection's gamma (default the generation's).
    lm : LM, optional
        The LM, for the keyed-order family (which needs its next-token laws).
    algo : str, optional
        Detector (default the generation's algorithm).

    Returns
    -------
    dict
        The ``wmstats.detect-keys`` document (:func:`keys_document_from`).
    """

    m = gen.meta
    gamma = m.get("gamma") if gamma is None else gamma
    lp, n = detectors.score_keys(gen, keys, lm, dedup=dedup, gamma=gamma, algo=algo)
    return keys_document_from(lp, n, gen.scored_lengths(), keys, fpr=fpr, input=input, algo=algo or m["algo"], gamma=gamma, dedup=dedup)


def keys_document_from(lp, n, n_tok, keys, *, fpr: float, input: str, algo: str, gamma, dedup: bool, **fields) -> dict:
    """:func:`keys_document` from the (K, n) log10 p-values ``lp`` and scored counts ``n`` (any input: raw text too).

    Parameters
    ----------
    lp : ndarray, shape (K, n)
        log10 p-value of each text under each key.
    n : ndarray, shape (K, n)
        Scored tokens of each text under each key.
    n_tok : sequence of int
        Candidate tokens of each text.
    keys : sequence of int
        The keys, in the order of ``lp``'s rows.
    fpr : float
        Family-wise error rate (Holm's level).
    input, algo, gamma, dedup :
        Shown in the document.
    **fields
        Further top-level fields of the document.

    Returns
    -------
    dict
        The document: per text the best key, its log10 p and Holm-adjusted log10 p, every key's log10 p, and the keys
        that mark it (``marked_by``, comma-separated, or None).
    """
    from sims.detect import multiple

    adj = multiple.holm_adjusted_log10p(lp)
    marked = adj <= math.log10(fpr)
    rows = []
    for i, nt in enumerate(n_tok):
        b = int(np.argmin(lp[:, i]))
        rows.append(dict(index=i, n_tokens=int(nt), n_scored=int(n[b, i]), best_key=int(keys[b]), log10_p=float(lp[b, i]), holm_log10_p=float(adj[b, i]),
                         marked_by=",".join(str(keys[k]) for k in np.flatnonzero(marked[:, i])) or None,
                         log10_p_per_key=[float(x) for x in lp[:, i]]))
    return {"schema": KEYS_SCHEMA, "version": 1, "input": input, "algo": algo, "gamma": gamma, "dedup": dedup, "fwer": fpr,
            "keys": [int(k) for k in keys], "texts": rows, **fields}
