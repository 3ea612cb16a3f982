"""``sims detect --sequential`` and several keys on raw text (``--text``) and as an HTML report (``--html``).

Raw text of the SynthID scheme (``transformers-synthid``) gets the tournament e-process of its g-values
(:mod:`sims.torch_backend.synthid_sequential`); raw text of the red-green schemes (``wmstats``,
``transformers-lefthash``, ``transformers-selfhash``) gives red-green colours per key
(:func:`sims.cli.text_input.marks_under_key`); from them

* ``--sequential``: the ``redgreen`` e-process (Bernoulli(g) null, :mod:`sims.detect.anytime.sequential_laws`),
  first token at which it reached 1/alpha; valid however the text was read or stopped;
* several keys: each key's exact binomial log10 p-value and Holm's step-down over the keys
  (family-wise error <= ``--fpr`` under any dependence, :func:`sims.detect.multiple.holm`).

``--html`` draws the coloured tokens of the key tested (sequential) or of each text's best key (many
keys) with a running curve: the anytime-valid log10 p-value :math:`-\\log_{10} \\max_{s \\le t} E_s`
(sequential), or the best key's prefix log10 p-value plus :math:`\\log_{10} K` (Bonferroni, an upper
bound on Holm's adjustment) for many keys; red-green detectors only.
"""

from __future__ import annotations

import math

import numpy as np


def _render_row(i: int, doc_row: dict, n_scored: int, greens: float, log10_p: float, first: int | None) -> dict:
    return dict(index=i, decision=doc_row["decision"], watermarked=doc_row["watermarked"], log10_p=float(log10_p), score=float(greens), n_scored=int(n_scored),
                n_tokens=int(doc_row["n_tokens"]), z=None, tokens_to_detect=first)


def _marked(green, scored, lengths, running, rows, context_pieces, text_pieces, gate=None):
    from sims.detect.documents.html import MarkedText

    return [MarkedText(rows[i], context_pieces[i], text_pieces[i], green[i, : lengths[i]], scored[i, : lengths[i]], running[i, : lengths[i]],
                       None if gate is None else gate[i, : lengths[i]])
            for i in range(len(rows))]


def sequential_from_marks(green, scored, lengths, g_eff: float, alpha: float, *, input: str, key: int, algo: str, dedup: bool, pieces=None,
                          gate=None, **fields):
    """The ``--sequential`` document of red-green marks, and the marked texts of its HTML report.

    The e-process of the Bernoulli(``g_eff``) null (:mod:`sims.detect.anytime.sequential_laws`); a text is
    flagged at the first token where it reaches 1/alpha.

    Parameters
    ----------
    green, scored : array_like
        (n, T) marks per token.
    lengths : array_like of int
        Tokens per text.
    g_eff : float
        The null green probability.
    alpha : float
        The level, in (0, 1).
    input : str
        What the texts were read from, for the document.
    key : int
        The key tested.
    algo : str
        The algorithm named in the document.
    dedup : bool
        Whether repeated (context, token) pairs were scored once.
    pieces : tuple of (list, list) or None, optional
        (context pieces, text pieces) per text, for the HTML report; None: no report.
    gate : (n, T) bool array or None, optional
        The positions past the detector's entropy gate (:attr:`sims.detect.families.Marks.gate`), greyed in the report
        outside it; None: no gate.
    **fields
        Further fields of the document (scheme, gamma, h, ...).

    Returns
    -------
    doc : dict
        The sequential document (:func:`sims.detect.documents.decision.sequential_document_from`).
    marked : list of sims.detect.documents.html.MarkedText or None
        The marked texts with their running anytime-valid log10 p-value, or None without ``pieces``.
    """
    from sims.detect.anytime import sequential
    from sims.detect.anytime.sequential_laws import bernoulli_law, sequential_values
    from sims.detect.documents import decision

    green = np.asarray(green, dtype=np.float64)
    res = sequential_values(np.where(scored, green, 0.0), scored, bernoulli_law(g_eff), alpha=alpha, lengths=lengths)
    doc = decision.sequential_document_from(res, lengths, key=key, dedup=dedup, input=input, algo=algo, family="redgreen", **fields)
    if pieces is None:
        return doc, None
    path = sequential.log_e_path(green, scored & (np.arange(green.shape[1])[None, :] < np.asarray(lengths)[:, None]), sequential.bernoulli_mixture(g_eff))
    running = sequential.anytime_log10p(path)
    rows = [_render_row(i, r, res.n_scored[i], res.score[i], running[i, lengths[i] - 1] if lengths[i] else 0.0, r["first_flagged"])
            for i, r in enumerate(doc["texts"])]
    return doc, _marked(green > 0.5, scored, lengths, running, rows, *pieces, gate=gate)


def keys_from_marks(marks, lengths, keys, g_eff: float, fpr: float, *, input: str, algo: str, gamma, dedup: bool, pieces=None, gate=None,
                    **fields):
    """The many-keys document from red-green ``marks``, and the marked texts of its HTML report.

    Each key's exact binomial log10 p-value and Holm's step-down over the keys
    (:func:`sims.detect.documents.decision.keys_document_from`).

    Parameters
    ----------
    marks : list of (numpy.ndarray, numpy.ndarray)
        One (green, scored) pair of (n, T) boolean marks per key.
    lengths : array_like of int
        Tokens per text.
    keys : list of int
        The keys tested.
    g_eff : float
        The null green probability.
    fpr : float
        The family-wise error rate of the decision, in (0, 1).
    input : str
        What the texts were read from.
    algo : str
        The algorithm named in the document.
    gamma : float or None
        The green-list ratio, for the document.
    dedup : bool
        Whether repeated (context, token) pairs were scored once.
    pieces : tuple of (list, list) or None, optional
        (context pieces, text pieces) per text; None: no report.
    gate : (n, T) bool array or None, optional
        The positions past the detector's entropy gate (key-independent), greyed in the report outside it; None: no gate.
    **fields
        Further fields of the document.

    Returns
    -------
    doc : dict
        The many-keys document.
    marked : list of sims.detect.documents.html.MarkedText or None
        Each text marked under its best key, with the running prefix log10 p-value plus log10 K
        (Bonferroni), or None without ``pieces``.
    """
    from sims.detect.documents import decision
    from sims.detect.stats.nulls import LN10, binom_logsf

    k = np.stack([(g & s).sum(axis=1) for g, s in marks])
    n = np.stack([s.sum(axis=1) for _, s in marks])
    lp = np.where(n <= 1, 0.0, binom_logsf(k, n, g_eff) / LN10)
    doc = decision.keys_document_from(lp, n, lengths, keys, fpr=fpr, input=input, algo=algo, gamma=gamma, dedup=dedup, **fields)
    if pieces is None:
        return doc, None
    best = np.argmin(lp, axis=0)
    green = np.stack([marks[b][0][i] for i, b in enumerate(best)])
    scored = np.stack([marks[b][1][i] for i, b in enumerate(best)])
    res, prefix = _prefix(green, scored, lengths, g_eff)
    running = np.minimum(prefix + math.log10(len(keys)), 0.0)
    rows = [_render_row(i, dict(r, decision="watermarked" if r["marked_by"] else "not watermarked", watermarked=bool(r["marked_by"])),
                        n[best[i], i], k[best[i], i], r["holm_log10_p"], None) for i, r in enumerate(doc["texts"])]
    return doc, _marked(green, scored, lengths, running, rows, *pieces, gate=gate)


def _prefix(green, scored, lengths, g_eff):
    from sims.detect import families

    return families.get("redgreen").from_marks(families.Marks(green, scored, lengths, g_eff))


def text_anytime(args, keys: list[int], fpr: float):
    """``--text`` with ``--sequential`` or several keys.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed options of ``sims detect``.
    keys : list of int
        The keys (one with ``--sequential``).
    fpr : float
        The level (sequential) or family-wise error (several keys).

    Returns
    -------
    tuple
        (document, marked texts or None): :func:`sequential_from_marks` or :func:`keys_from_marks` of the
        texts' marks; the SynthID scheme's tournament e-process document with None.
    """
    from sims.cli.text_input import marks_under_key, text_fields, text_input

    if args.scheme == "transformers-synthid":  # its keys are one argument: only --sequential leads here
        from sims.torch_backend.synthid_sequential import sequential_text_document

        return sequential_text_document(args, fpr, text_input(args).rows), None
    t = text_input(args)
    pieces = ([p[: t.c] for p in t.pieces], [p[t.c :] for p in t.pieces]) if args.html is not None else None
    fields = dict(scheme=args.scheme, h=t.h, lm=args.lm, vocab_size=t.V, **text_fields(args))
    if args.sequential:
        green, scored, g_eff = marks_under_key(args, t, keys[0])
        return sequential_from_marks(green, scored, t.lengths, g_eff, fpr, input=args.text, key=keys[0], algo="redgreen", dedup=args.dedup,
                                     pieces=pieces, gamma=t.gamma, **fields)
    marks = []
    for key in keys:
        green, scored, g_eff = marks_under_key(args, t, key)
        marks.append((green, scored))
    return keys_from_marks(marks, t.lengths, keys, g_eff, fpr, input=args.text, algo="redgreen", gamma=t.gamma, dedup=args.dedup, pieces=pieces,
                           **fields)


def npz_html(args, gen, algo: str, keys: list[int], fpr: float):
    """Marked texts of ``FILE.npz --html`` with ``--sequential`` or several keys (red-green detectors).

    Parameters
    ----------
    args : argparse.Namespace
        Parsed options of ``sims detect`` (``file``, ``dedup``, ``gamma``, ``sequential``).
    gen : sims.core.record.Generation
        The generation.
    algo : str
        The detector's algorithm.
    keys : list of int
        The keys tested.
    fpr : float
        The level or family-wise error.

    Returns
    -------
    marked : list of sims.detect.documents.html.MarkedText
        The marked texts of the report.
    ids : bool
        Whether the display pieces are token ids (:func:`sims.cli.text_input.piece_maker`).

    Raises
    ------
    ValueError
        If the algorithm's detector family does not colour red-green tokens.
    """
    from sims.cli.text_input import piece_maker
    from sims.detect import families

    family = families.of(algo)
    if not family.colours:
        raise ValueError(f"--html with --sequential or several keys colours red-green tokens; got algo {algo!r} (family {family.name!r})")
    from sims.lm.door import lm_of

    fn, ids = piece_maker(gen.meta)
    h = gen.meta["h"]
    lm = lm_of(gen.meta) if family.needs_lm else None
    gamma = gen.meta["gamma"] if args.gamma is None else args.gamma
    # the family's own marks (SWEET: scored only past its entropy gate, as its sequential and many-keys documents count)
    fam = [family.marks(gen, k, gamma=gamma, dedup=args.dedup, lm=lm) for k in keys]
    marks = [(mk.values > 0.5, mk.scored, mk.lengths, mk.g_eff) for mk in fam]
    lengths, g_eff, gate = marks[0][2], marks[0][3], fam[0].gate
    pieces = ([fn(gen.prompts[i, -h:]) for i in range(len(lengths))], [fn(gen.tokens[i, : lengths[i]]) for i in range(len(lengths))])
    kw = dict(input=str(args.file), algo=algo, dedup=args.dedup, pieces=pieces, gate=gate)
    if args.sequential:
        return sequential_from_marks(marks[0][0], marks[0][1], lengths, g_eff, fpr, key=keys[0], **kw)[1], ids
    return keys_from_marks([(g, s) for g, s, _, _ in marks], lengths, keys, g_eff, fpr, gamma=args.gamma, **kw)[1], ids
