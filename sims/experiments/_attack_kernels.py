"""The Numba kernel of the key-holding attacks: the most probable token outside a keyed set.

The entropy attack (:func:`sims.experiments.attacks.attack`) and the score oracle
(:func:`paper_figs._oracle.score_oracle`) replace a token by the LM's most probable token that the
detector does not count: a red token for red-green (under any seeding scheme of
:mod:`sims.core.seeding`), a token with uniform below 1/2 for EMS.  Both read one PRF word per
vocabulary entry; this kernel does that and the argmax in one pass instead of building the
(V,) mask in NumPy (about 5x less time per replaced token at V = 32000).  :func:`most_probable_red`
reads a red-green generation's own green lists: its seeding scheme, or DiPmark's partition.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from sims.core import prf, seeding

HALF = 1 << 52
"""EMS: a token's uniform ``((u >> 11) + 0.5) / 2**53`` is >= 1/2 iff ``u >> 11 >= 2**52`` (exact)."""


@njit(cache=True)
def _argmax_excluding(p, seed, wa, base, threshold, exclude_low):
    lim = np.uint64(threshold)
    best = -np.inf
    arg = 0
    for k in range(p.shape[0]):
        s = seed if wa.shape[0] == 0 else seeding.self_seed_nb(wa, seeding.token_hash_nb(base, k))
        low = (prf.mix64_nb(s ^ prf.mix64_nb(np.uint64(k) + np.uint64(prf.C_TOKEN))) >> np.uint64(11)) < lim
        v = -1.0 if low == exclude_low else p[k]
        if v > best:  # strict: the first maximum, as np.argmax
            best = v
            arg = k
    return arg


def most_probable_outside(p: np.ndarray, key: int, window: np.ndarray, *, gamma: float | None = None, scheme: str = seeding.DEFAULT,
                          stream: int = prf.GREEN) -> int:
    """``argmax`` of ``p`` with the keyed tokens set to -1 (the first maximum, as :func:`numpy.argmax`).

    Parameters
    ----------
    p : ndarray, shape (V,)
        Next-token probabilities (non-negative).
    key : int
        The watermark key.
    window : ndarray of int
        The ``h`` tokens before the position, oldest first.
    gamma : float, optional
        Red-green: the keyed tokens are the green ones, Bernoulli(gamma) under seeding ``scheme``.
        ``None``: EMS, the keyed tokens are those with uniform >= 1/2 (context hash of ``stream``).
    scheme : str
        The seeding scheme of the green lists (:data:`sims.core.seeding.SEEDINGS`).
    stream : int
        EMS's PRF stream (:data:`sims.core.prf.EMS`); red-green reads ``GREEN``.

    Returns
    -------
    int
        The token; 0 if every token is keyed (as ``np.argmax`` of a constant array).
    """
    p = np.ascontiguousarray(p, dtype=np.float64)
    w = np.ascontiguousarray(window, dtype=np.int64)
    none = np.empty(0, dtype=np.uint64)
    if gamma is None:
        return int(_argmax_excluding(p, np.uint64(prf.context_hash(key, w, stream)), none, np.uint64(0), HALF, False))
    thr = prf.green_threshold(gamma)
    if seeding.code(scheme) == seeding.SELFHASH:
        wa = np.empty(w.size, dtype=np.uint64)
        seeding.window_hashes_into(np.uint64(key), w, wa)
        return int(_argmax_excluding(p, np.uint64(0), wa, np.uint64(seeding.base_nb(np.uint64(key))), thr, True))
    return int(_argmax_excluding(p, np.uint64(seeding.seeds(key, w, scheme)), none, np.uint64(0), thr, True))


def partition_green(meta: dict, window, vocab_size: int) -> np.ndarray:
    """(V,) bool: a partition generation's green list after ``window`` (DiPmark: the ``floor(gamma V)`` keyed words of
    :func:`sims.core.prf.green_mask` under the record's key and gamma).

    Parameters
    ----------
    meta : dict
        The generation's record (``key``, ``gamma``).
    window : array_like of int
        The ``h`` tokens before the position (:func:`sims.core.windows.last`).
    vocab_size : int
        V.

    Returns
    -------
    ndarray of bool, shape (V,)
    """
    return prf.green_mask(prf.context_hash(meta["key"], window, prf.GREEN), vocab_size, meta["gamma"], "partition")


def most_probable_red(p: np.ndarray, meta: dict, context) -> int:
    """The most probable red token after ``context`` under a red-green generation's key, gamma, context width and
    green lists: Bernoulli under its seeding scheme (:func:`most_probable_outside`), or the partition of
    ``floor(gamma V)`` green words (DiPmark, :func:`partition_green`).

    Parameters
    ----------
    p : ndarray, shape (V,)
        Next-token probabilities.
    meta : dict
        The generation's record (``key``, ``gamma``, ``h``, optional ``green_kind`` and ``seeding``).
    context : array_like of int
        The tokens so far, prompt included; its last ``h`` are the window (none for h = 0).

    Returns
    -------
    int
        The first maximum of ``p`` over the red tokens (0 if every token is green).
    """
    from sims.core.windows import last

    w = last(context, meta["h"])
    if meta.get("green_kind") == "partition":
        return int(np.argmax(np.where(partition_green(meta, w, len(p)), -1.0, p)))
    return most_probable_outside(p, meta["key"], w, gamma=meta["gamma"], scheme=seeding.seeding_of(meta))
