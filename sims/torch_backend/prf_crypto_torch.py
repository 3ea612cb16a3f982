"""The SipHash-2-4 PRF of :mod:`sims.core.prf_crypto` on int64 tensors, bit for bit.

As in :mod:`sims.torch_backend.prf_torch`: int64 addition wraps modulo 2**64 like uint64, XOR
is the same, a logical right shift is an arithmetic shift masked to the low 64 - s bits, and
constants above 2**63 are passed as their two's-complement values.
"""

from __future__ import annotations

import torch

from sims.core import prf, prf_crypto
from sims.torch_backend.prf_torch import _s64, _srl


def _rotl(x: torch.Tensor, b: int) -> torch.Tensor:
    return (x << b) | _srl(x, 64 - b)


def _rounds(v0, v1, v2, v3, n: int):
    return prf_crypto.sip_rounds(v0, v1, v2, v3, n, rotl=_rotl)


def context_state(key, windows: torch.Tensor, stream: int = prf.GREEN) -> torch.Tensor:
    """:func:`sims.core.prf_crypto.context_state` for each row of ``windows``: SipHash-2-4 absorbed up to the token.

    Parameters
    ----------
    key : int
        The 128-bit SipHash key (:func:`sims.core.prf_crypto.key_words`).
    windows : torch.Tensor
        (..., h) token ids, oldest first.
    stream : int, optional
        The PRF stream (default :data:`sims.core.prf.GREEN`).

    Returns
    -------
    torch.Tensor
        (..., 5) int64: the four SipHash words and the final length word.
    """
    k0, k1 = prf_crypto.key_words(key)
    shape, dev = windows.shape[:-1], windows.device
    v0, v1, v2, v3 = (torch.full(shape, _s64(x), dtype=torch.int64, device=dev)
                      for x in (k0 ^ prf_crypto.C0, k1 ^ prf_crypto.C1, k0 ^ prf_crypto.C2, k1 ^ prf_crypto.C3))
    words = [torch.full(shape, int(stream), dtype=torch.int64, device=dev)] + [windows[..., j].to(torch.int64) for j in range(windows.shape[-1])]
    for m in words:
        v0, v1, v2, v3 = _rounds(v0, v1, v2, v3 ^ m, 2)
        v0 = v0 ^ m
    last = torch.full(shape, _s64(((8 * len(words) + 8) & 0xFF) << 56), dtype=torch.int64, device=dev)
    return torch.stack([v0, v1, v2, v3, last], dim=-1)


def token_bits(state: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
    """SipHash-2-4 of (stream, context, token) from :func:`context_state` (broadcast), as int64.

    Parameters
    ----------
    state : torch.Tensor
        (..., 5) context states.
    tokens : torch.Tensor
        Token ids, broadcast with ``state[..., 0]``.

    Returns
    -------
    torch.Tensor
        int64 words, bit for bit :mod:`sims.core.prf_crypto`'s.
    """
    m = tokens.to(torch.int64)
    v0, v1, v2, v3 = _rounds(state[..., 0], state[..., 1], state[..., 2], state[..., 3] ^ m, 2)
    v0 = v0 ^ m
    last = state[..., 4]
    v0, v1, v2, v3 = _rounds(v0, v1, v2, v3 ^ last, 2)
    v0 = v0 ^ last
    v0, v1, v2, v3 = _rounds(v0, v1, v2 ^ 0xFF, v3, 4)
    return v0 ^ v1 ^ v2 ^ v3


def green_mask(state: torch.Tensor, vocab_size: int, gamma: float) -> torch.Tensor:
    """Bernoulli(gamma) green lists for context states ``state`` under the SipHash PRF.

    Parameters
    ----------
    state : torch.Tensor
        (B, 5) context states (:func:`context_state`).
    vocab_size : int
        V.
    gamma : float
        Green-list ratio in (0, 1).

    Returns
    -------
    torch.Tensor
        (B, V) bool.
    """
    ks = torch.arange(vocab_size, device=state.device)
    return _srl(token_bits(state[:, None, :], ks[None, :]), 11) < prf.green_threshold(gamma)
