"""Anytime-valid detection of text that transformers' SynthID processor wrote (``sims detect --text ...
--scheme transformers-synthid --sequential``).

The g-values and the repeated-context mask are transformers' (:mod:`sims.torch_backend.synthid_transformers`:
its hash, its sampling table, its context history).  On text that does not depend on the keys,
each scored n-gram's m g-values are i.i.d. Bernoulli(r), r = the table's share of ones, so the
per-token sum :math:`X_t = \\sum_l g_{t,l}` is i.i.d. Binomial(m, r) and the tilt e-process of that
law (:func:`sims.detect.anytime.sequential_laws.weighted_bernoulli_law` at rate r,
:func:`sims.detect.anytime.sequential_laws.tilt_mixture`) is a test martingale: the first token at which
it reaches 1/alpha is flagged, and by Ville's inequality a key-independent text is ever flagged
with probability at most alpha, however it is read or stopped.  The caveat of the fixed-length
test carries over: two n-grams whose hashes agree modulo the table size share their g-values,
which the repeated-context mask does not remove (measured valid on random text in the tests).
"""

from __future__ import annotations

import numpy as np

from sims.detect.anytime import e_mixtures
from sims.detect.anytime.sequential_laws import sequential_values, weighted_bernoulli_law
from sims.torch_backend.synthid_transformers import HISTORY, TABLE_SIZE, _check, g_values, repetition_mask, sampling_table, text_ids


def sequential_ids(ids, keys, ngram_len: int, *, alpha: float, table_seed: int = 0, table_size: int = TABLE_SIZE, history: int = HISTORY,
                   zero_context: bool = False, lengths=None, grid=None) -> e_mixtures.SequentialResult:
    """The tilt e-process (module docstring) of transformers' SynthID g-values, per text.

    Parameters
    ----------
    ids : (B, L) int array
        Token ids, -1 padding after each row's ``lengths``.
    keys, ngram_len, table_seed, table_size, history, zero_context
        As :func:`sims.torch_backend.synthid_transformers.score_ids` (the mean score, with the mask).
    alpha : float in (0, 1)
        Level: under the null P(some prefix is flagged) <= alpha.
    lengths : array_like of int, optional
        (B,) tokens per row, in [0, L] (default: up to the row's first -1).
    grid : optional
        The bets' fractions (:data:`sims.detect.anytime.e_mixtures.GRID`).

    Returns
    -------
    SequentialResult
        Positions count the n-grams of each row (the first scores the row's ``ngram_len``-th token,
        or its first with ``zero_context``); ``score`` is the g-value sum over scored n-grams.

    Raises
    ------
    ValueError
        If ``alpha`` is outside (0, 1), ``ids`` or ``keys`` are malformed, ``ngram_len`` < 2, or ``lengths`` has
        the wrong shape or values.
    """
    alpha = e_mixtures.check_alpha(alpha)
    ids, keys, n = _check(ids, keys, ngram_len)
    table = sampling_table(table_seed, table_size)
    if lengths is None:
        pad = ids < 0
        lengths = np.where(pad.any(axis=1), pad.argmax(axis=1), ids.shape[1])
    lengths = np.asarray(lengths, dtype=np.int64)
    if lengths.shape != (ids.shape[0],) or (lengths.size and (lengths.min() < 0 or lengths.max() > ids.shape[1])):
        raise ValueError(f"lengths must be ({ids.shape[0]},) ints in [0, {ids.shape[1]}]; got {lengths!r}")
    grams = np.maximum(lengths if zero_context else lengths - n + 1, 0)
    values = np.zeros((ids.shape[0], max(int(grams.max(initial=0)), 1)))
    scored = np.zeros(values.shape, dtype=np.bool_)
    for b in range(ids.shape[0]):
        if grams[b] == 0:
            continue
        row = ids[b : b + 1, : lengths[b]]
        values[b, : grams[b]] = g_values(row, keys, n, table, zero_context=zero_context)[0].sum(axis=1)
        scored[b, : grams[b]] = repetition_mask(row, n, history=history, zero_context=zero_context)[0]
    law = weighted_bernoulli_law(np.ones(keys.size, dtype=np.int64), float(table.mean()))
    return sequential_values(np.where(scored, values, 0.0), scored, law, alpha=alpha, lengths=grams, grid=grid)


def sequential_text_document(args, alpha: float, ids_rows: list[np.ndarray]) -> dict:
    """The ``python -m sims detect --text ... --scheme transformers-synthid --sequential`` document.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed options of ``sims detect`` (``key``: comma-separated SynthID keys; ``h`` = ngram_len - 1, default 4;
        ``table_seed``, ``table_size``, ``text``, ``scheme``, ``lm``).
    alpha : float
        The level.
    ids_rows : list of numpy.ndarray
        Token ids of each text as the tokenizer gives them.

    Returns
    -------
    dict
        The sequential document (:func:`sims.detect.documents.decision.sequential_document_from`);
        ``first_flagged`` counts the tokens after the first ``ngram_len - 1``.
    """
    from sims.detect.documents import decision

    keys, n, ids, n_tokens = text_ids(args, ids_rows)
    res = sequential_ids(ids, keys, n, alpha=alpha, table_seed=args.table_seed, table_size=args.table_size)
    return decision.sequential_document_from(res, n_tokens, key=args.key, dedup=False, input=args.text, algo="synthid", family="tournament",
                                             scheme=args.scheme, h=n - 1, ngram_len=n, sampling_table_seed=args.table_seed,
                                             sampling_table_size=args.table_size, null_rate=float(sampling_table(args.table_seed, args.table_size).mean()),
                                             lm=args.lm)
