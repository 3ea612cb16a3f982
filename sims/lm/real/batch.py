"""Left-padded batches of prompts of any mix of lengths, and buckets of similar lengths.

A batch is an int64 array (B, P) whose row b holds its prompt right-aligned and ``-1``
(:attr:`sims.core.record.Generation.PAD`) in the ``P - len_b`` columns before it, the layout
of ``Generation.prompts``.  The model never sees a -1: :func:`model_inputs` replaces pads by
token 0 (any id would do) behind an attention mask of zeros, and numbers each row's real
tokens 0, 1, ... (position ids), so a row's logits do not depend on its padding.  Generated
tokens are appended on the right, so a row's last ``h`` tokens -- the context of the keyed
PRF -- are always its own real tokens (every prompt holds at least ``h``).
"""

from __future__ import annotations

import numpy as np
import torch

PAD = -1  #: the id of a left pad in a batch of prompts (never a token; 0 is fed to the model in its place)


def pad_left(prompts) -> tuple[np.ndarray, np.ndarray]:
    """(ids (B, P) left-padded with -1, lengths (B,)) from a list of 1-d id sequences, or from
    an array / tensor (B, P) already in that layout (pads only before a row's first token).

    Parameters
    ----------
    prompts : sequence of array_like, or ndarray / torch.Tensor of shape (B, P)
        The prompts.

    Returns
    -------
    ids : ndarray of int64, shape (B, P)
        Left-padded ids.
    lengths : ndarray of int64, shape (B,)
        Tokens of each prompt.

    Raises
    ------
    ValueError
        If an id is negative, or an array is not left-padded.
    """
    if torch.is_tensor(prompts) or isinstance(prompts, np.ndarray):
        ids = np.asarray(prompts.cpu() if torch.is_tensor(prompts) else prompts)
        if ids.ndim != 2 or ids.dtype.kind not in "iu":
            raise ValueError(f"prompts must be an integer array (batch, length); got {ids.dtype} {ids.shape}")
        ids = ids.astype(np.int64)
        real = ids >= 0
        lens = real.sum(1)
        if np.any(ids < PAD) or np.any(real != (np.arange(ids.shape[1])[None, :] >= ids.shape[1] - lens[:, None])):
            raise ValueError("prompts must hold token ids >= 0 right-aligned after -1 pads (left padding)")
        return ids, lens
    rows = [np.asarray(p.cpu() if torch.is_tensor(p) else p, dtype=np.int64).reshape(-1) for p in prompts]
    lens = np.array([len(r) for r in rows], dtype=np.int64)
    ids = np.full((len(rows), max(1, int(lens.max(initial=0)))), PAD, dtype=np.int64)
    for i, r in enumerate(rows):
        if np.any(r < 0):
            raise ValueError(f"prompt of row {i} holds a negative token id {int(r.min())}")
        if len(r):
            ids[i, -len(r):] = r
    return ids, lens


def context_window(config) -> int | None:
    """The model's context window: ``max_position_embeddings`` (GPT-2's ``n_positions``), or None.

    Parameters
    ----------
    config : transformers.PretrainedConfig
        The model's config.

    Returns
    -------
    int or None
        The window in tokens.
    """
    return getattr(config, "max_position_embeddings", None) or getattr(config, "n_positions", None)


def check_prompts(lens: np.ndarray, T: int, *, h: int, window: int | None, rows=None) -> None:
    """Clear errors, naming the row: empty prompt, fewer than ``h`` tokens, prompt + T past the window.

    Parameters
    ----------
    lens : ndarray of int
        Prompt length of each row.
    T : int
        Tokens to generate, >= 1.
    h : int
        Context width of the watermark (a prompt needs at least h tokens).
    window : int or None
        The model's context window (:func:`context_window`), None for no limit.
    rows : array_like of int, optional
        The rows' indices in the caller's numbering, for the messages.

    Raises
    ------
    ValueError
        On the first offending row.
    """
    if int(T) < 1:
        raise ValueError(f"T must be in [1, inf); got {T!r}")
    rows = np.arange(len(lens)) if rows is None else np.asarray(rows)
    for b, n in enumerate(lens):
        if n == 0:
            raise ValueError(f"prompt of row {int(rows[b])} is empty: a prompt needs at least h={h} token(s)")
        if n < h:
            raise ValueError(f"prompt of row {int(rows[b])} has {int(n)} token(s), fewer than h={h} (the PRF's context)")
        if window is not None and n + T > window:
            raise ValueError(f"prompt of row {int(rows[b])} has {int(n)} tokens: + T={T} is {int(n) + T}, past the model's "
                             f"context window {window}; shorten the prompt or lower T to at most {window - int(n)}")


def model_inputs(ids: np.ndarray, device) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(input_ids with pads -> 0, attention_mask, position_ids) of a left-padded batch.

    Parameters
    ----------
    ids : ndarray of int64, shape (B, P)
        Left-padded ids (:data:`PAD` before each row).
    device : torch.device or str
        Where the tensors go.

    Returns
    -------
    tuple of torch.Tensor
        ``(input_ids, attention_mask, position_ids)``, each (B, P); positions count from each row's first token.
    """
    x = torch.as_tensor(ids, device=device)
    mask = x >= 0
    pos = (mask.long().cumsum(1) - 1).clamp(min=0)
    return x.clamp(min=0), mask.long(), pos


def buckets(lens, batch: int) -> list[np.ndarray]:
    """Row indices in batches of at most ``batch`` rows of similar prompt lengths (sorted by
    length, stable), so that little of a batch is padding.

    Parameters
    ----------
    lens : array_like of int
        Prompt length of each row.
    batch : int
        Largest batch, >= 1.

    Returns
    -------
    list of ndarray of int
        The row indices of each batch.
    """
    if int(batch) < 1:
        raise ValueError(f"batch must be in [1, inf); got {batch!r}")
    order = np.argsort(np.asarray(lens), kind="stable")
    return [order[i : i + int(batch)] for i in range(0, len(order), int(batch))]
