"""The package's red-green colours of raw texts (token id rows of any lengths, the first ``h`` ids
of each its context): what ``sims detect --text`` scores with ``--scheme wmstats``."""

from __future__ import annotations

import numpy as np

from sims.detect.stats import scores
from sims.detect.stats.marks import null_green_probability


def padded_texts(rows: list[np.ndarray], start: int) -> np.ndarray:
    """(n, T) int64: each row's ids from ``start`` on, padded with -1 at the end (T: the longest).

    Parameters
    ----------
    rows : list of ndarray of int
        Token ids of each text.
    start : int
        First id kept of each row (the context before it is dropped).

    Returns
    -------
    ndarray of int64, shape (n, T)
        The texts, -1 after each one's end.
    """
    T = max([0, *(len(r) - start for r in rows)])
    out = np.full((len(rows), T), -1, dtype=np.int64)
    for i, r in enumerate(rows):
        out[i, : max(0, len(r) - start)] = r[start:]
    return out


def redgreen_text_marks(rows: list[np.ndarray], key: int, *, gamma: float, h: int, vocab_size: int, dedup: bool = False, seeding: str = "lefthash"):
    """Green and scored marks of token id rows under the package's Bernoulli green lists.

    Parameters
    ----------
    rows : list of 1-d int arrays
        The texts' ids; the first ``h`` of each are its context (a text of at most ``h`` ids has nothing to score).
    key : int
        Detection key in [0, 2**64).
    gamma, h, vocab_size : float, int, int
        Green-list ratio in (0, 1), context width >= 1, vocabulary (every id below it).
    dedup : bool
        Score each (context, token) pair once (the repeated ones are not ``scored``; under a ``seeding``
        scheme other than ``"lefthash"`` each (seed, token) pair).
    seeding : {"lefthash", "selfhash", "minhash", "skipgram"}
        The green lists' seeding scheme (:mod:`sims.core.seeding`).

    Returns
    -------
    green, scored : (n, T) bool
        Each token's colour and whether it counts.
    lengths : (n,) int64
        Tokens after the context.
    g_eff : float
        The exact null probability of green (:func:`sims.detect.stats.marks.null_green_probability`).
    """
    if not 0.0 < float(gamma) < 1.0:
        raise ValueError(f"gamma must be in (0, 1); got {gamma!r}")
    if int(h) < 0:
        raise ValueError(f"h must be an integer in [0, inf); got {h!r}")
    lengths = np.array([max(0, len(r) - h) for r in rows], dtype=np.int64)
    tokens = padded_texts(rows, h)
    prompts = np.stack([np.pad(r[:h], (h - min(h, len(r)), 0)) for r in rows])
    g_all, scored, _ = scores.token_marks(tokens, prompts, key, stat="green", gamma=gamma, h=h, vocab_size=vocab_size, lengths=lengths, seeding=seeding,
                                          dedup=dedup)  # one hashing pass: every token's colour and the scored mask
    return g_all > 0.5, scored, lengths, null_green_probability(gamma, "bernoulli", vocab_size)
