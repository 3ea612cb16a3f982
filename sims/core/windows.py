"""Context windows of texts, as public 64-bit names: what an attacker or an auditor can count.

The context of generated token t is the ``h`` tokens before it, prompt tokens included,
oldest first (:mod:`sims.core.prf`).  :func:`window_names` names every window with the PRF's
context hash under the public key ``PUBLIC_KEY`` on stream ``WINDOW_STREAM`` -- a key
everybody knows, so the names carry no secret: they only let windows be sorted, counted and
looked up as single integers (two distinct windows share a name with probability 2**-64).
"""

from __future__ import annotations

import numpy as np

from sims.core import prf

PUBLIC_KEY = 0  #: the public key of window names: everybody knows it, so a name carries no secret
WINDOW_STREAM = 13  #: watermarks use streams 0..2, the synthetic LMs 7, ITS 99


def last(context, h: int) -> np.ndarray:
    """The window of the next token: the last ``h`` tokens of ``context``, oldest first; empty for ``h = 0``
    (Unigram), where ``context[-0:]`` would be the whole context.

    Parameters
    ----------
    context : array_like of int
        The tokens so far, prompt included.
    h : int
        Context width, >= 0.

    Returns
    -------
    ndarray of int64, shape (min(h, len(context)),)
    """
    c = np.asarray(context, dtype=np.int64)
    return c[max(c.size - int(h), 0):]


def windows(tokens: np.ndarray, prompts: np.ndarray, h: int) -> np.ndarray:
    """(n, T, h) array: the ``h`` tokens before each generated token, oldest first.

    Parameters
    ----------
    tokens : ndarray of int, shape (n, T)
        Generated tokens.
    prompts : ndarray of int, shape (n, P)
        Prompts (left-padded), at least ``h`` tokens each.
    h : int
        Context width, >= 0.

    Returns
    -------
    ndarray of int64, shape (n, T, h)
        The windows, prompt tokens included.

    Raises
    ------
    ValueError
        If ``h`` is not a nonnegative integer or a prompt is shorter than ``h``.
    """
    tokens = np.asarray(tokens, dtype=np.int64)
    prompts = np.asarray(prompts, dtype=np.int64)
    if int(h) != h or h < 0:
        raise ValueError(f"h must be an integer in [0, inf); got {h!r}")
    if prompts.shape[1] < h:
        raise ValueError(f"prompts must hold at least h={h} tokens per text; got {prompts.shape[1]}")
    seq = np.concatenate([prompts[:, prompts.shape[1] - h :], tokens], axis=1)
    T = tokens.shape[1]
    if h == 0:  # no context (Unigram): every window is the empty one
        return np.zeros(tokens.shape + (0,), dtype=np.int64)
    return np.stack([seq[:, j : j + T] for j in range(h)], axis=2)


def window_names(tokens: np.ndarray, prompts: np.ndarray, h: int) -> np.ndarray:
    """(n, T) uint64: the public name of each generated token's context window.

    Parameters
    ----------
    tokens : ndarray of int, shape (n, T)
        Generated tokens.
    prompts : ndarray of int, shape (n, P)
        Prompts (left-padded), at least ``h`` tokens each.
    h : int
        Context width.

    Returns
    -------
    ndarray of uint64, shape (n, T)
        The context hash of each window under :data:`PUBLIC_KEY`, stream :data:`WINDOW_STREAM`.
    """
    return prf.context_hash(PUBLIC_KEY, windows(tokens, prompts, h), WINDOW_STREAM)


def pair_names(names: np.ndarray, tokens) -> np.ndarray:
    """Public 64-bit names of (window, token) pairs (broadcast).

    Parameters
    ----------
    names : ndarray of uint64
        Window names (:func:`window_names`).
    tokens : int or array_like of int
        Token ids, broadcast with ``names``.

    Returns
    -------
    ndarray of uint64
        The PRF word of each (window name, token) pair under the public key.
    """
    return prf.token_bits(names, tokens)
