"""Keyed objects derived from the watermark key: the fixed vocabulary order of ITS / UW
and the key streams reserved for them (the PRF itself is :mod:`sims.core.prf`)."""

from __future__ import annotations

import numpy as np
from numba import njit

from sims.core import prf

ITS_STREAM = 99  #: key stream of ITS's per-position uniforms
EXP_STREAM = 23  #: PRF stream of EXP's key sequence xi_j (the position hashes of :func:`position_hashes`)


def position_hashes(key: int, t, n: int) -> np.ndarray:
    r"""The hash of EXP's key vector :math:`\xi_{t \bmod n}` for each position ``t``: the PRF context hash
    (:func:`sims.core.prf.context_hash`, stream :data:`EXP_STREAM`) of the one-token window ``[t mod n]``;
    ``prf.uniforms(hash, k)`` is :math:`\xi_{t \bmod n, k}`.

    Parameters
    ----------
    key : int
        Watermark key, in [0, 2**64).
    t : int or array_like of int
        Positions (0 for the first generated token), >= 0.
    n : int
        Length of the key sequence, >= 1.

    Returns
    -------
    ndarray of uint64, shape of ``t``
        The hashes.
    """
    j = np.asarray(t, dtype=np.int64) % int(n)
    return prf.context_hash(key, j.reshape(-1, 1), EXP_STREAM).reshape(j.shape)


@njit(cache=True, inline="always")
def position_hash_nb(key, t, n):
    """Numba twin of :func:`position_hashes` for one position ``t``."""
    c = prf.mix64_nb(np.uint64(key) + np.uint64(prf.GOLDEN) * np.uint64(EXP_STREAM + 1))
    return prf.mix64_nb(c ^ (np.uint64(t % n) * np.uint64(prf.C_CONTEXT) + np.uint64(1)))


def keyed_order(key: int, V: int) -> np.ndarray:
    """The key's fixed vocabulary order for ITS / UW (argsort of the PRF on stream STEP).

    Parameters
    ----------
    key : int
        Watermark key.
    V : int
        Vocabulary size, >= 1.

    Returns
    -------
    ndarray (V,) of int
        A permutation of range(V).

    References
    ----------
    Towards Better Statistical Understanding of Watermarking LLMs, Example 3.6 (eg:ems) (inverse-transform sampling) and App. F (subapx:algs_implement).

    Examples
    --------
    >>> from sims import keyed_order
    >>> keyed_order(42, 8).tolist()
    [0, 4, 1, 5, 2, 7, 3, 6]
    """
    ctx = prf.context_hash(key, np.zeros((0,), dtype=np.int64), prf.STEP)
    return np.argsort(prf.token_bits(ctx, np.arange(V)), kind="stable").astype(np.int64)
