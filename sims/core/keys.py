"""Keyed objects derived from the watermark key: the fixed vocabulary order of ITS / UW
and the key streams reserved for them (the PRF itself is :mod:`sims.core.prf`)."""

from __future__ import annotations

import numpy as np

from sims.core import prf

ITS_STREAM = 99  #: key stream of ITS's per-position uniforms


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
