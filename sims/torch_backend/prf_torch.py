"""The keyed PRF of :mod:`sims.core.prf` on int64 tensors, bit for bit.

torch has no uint64 arithmetic; int64 multiplication wraps modulo 2**64 exactly like
uint64, XOR is the same, and a logical right shift is an arithmetic shift masked to the
low 64 - s bits.  Constants above 2**63 are passed as their two's-complement values.
"""

from __future__ import annotations

import torch

from sims.core import prf


def _s64(x: int) -> int:
    x &= prf.MASK64
    return x - (1 << 64) if x >= 1 << 63 else x


#: The constants of :mod:`sims.core.prf` (SplitMix64's multipliers ``M1``, ``M2`` and the golden-ratio increment
#: ``GOLDEN``) as signed int64, the two's complement of the unsigned words.
M1, M2, GOLDEN = _s64(prf.M1), _s64(prf.M2), _s64(prf.GOLDEN)
#: The token and context offsets ``C_TOKEN``, ``C_CONTEXT`` of :mod:`sims.core.prf` as signed int64.
C_TOKEN, C_CONTEXT = _s64(prf.C_TOKEN), _s64(prf.C_CONTEXT)


def _srl(z: torch.Tensor, s: int) -> torch.Tensor:
    return (z >> s) & ((1 << (64 - s)) - 1)


def mix64(z: torch.Tensor) -> torch.Tensor:
    """The SplitMix64 finaliser of :func:`sims.core.prf.mix64` on int64 tensors, bit for bit.

    Parameters
    ----------
    z : torch.Tensor
        int64 words (the uint64 words in two's complement).

    Returns
    -------
    torch.Tensor
        The mixed words, int64, of ``z``'s shape.
    """
    z = (z ^ _srl(z, 30)) * M1
    z = (z ^ _srl(z, 27)) * M2
    return z ^ _srl(z, 31)


def context_hash(key: int, windows: torch.Tensor, stream: int = prf.GREEN) -> torch.Tensor:
    """Hash of (key, stream, window tokens oldest first) for each row of ``windows``, as :func:`sims.core.prf.context_hash`.

    Parameters
    ----------
    key : int
        The watermark key, in [0, 2**64).
    windows : torch.Tensor
        (..., h) token ids, oldest first.
    stream : int, optional
        The PRF stream (default :data:`sims.core.prf.GREEN`, the green lists).

    Returns
    -------
    torch.Tensor
        (...,) int64 context hashes.
    """
    seed = _s64(int(key) + prf.GOLDEN * (stream + 1))
    c = mix64(torch.full(windows.shape[:-1], seed, dtype=torch.int64, device=windows.device))
    for j in range(windows.shape[-1]):
        c = mix64(c ^ (windows[..., j].to(torch.int64) * C_CONTEXT + 1))
    return c


def token_bits(ctx: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
    """The PRF word u of (context hash, token) pairs: ``mix64(ctx ^ mix64(token + C_TOKEN))``.

    As in the module docstring of :mod:`sims.core.prf`.

    Parameters
    ----------
    ctx : torch.Tensor
        int64 context hashes (:func:`context_hash`).
    tokens : torch.Tensor
        Token ids, broadcast with ``ctx``.

    Returns
    -------
    torch.Tensor
        int64 words; the top 53 bits decide green membership and the uniforms.
    """
    return mix64(ctx ^ mix64(tokens.to(torch.int64) + C_TOKEN))


def token_table(vocab_size: int, device=None) -> torch.Tensor:
    """``mix64(k + C_TOKEN)`` for every token id: the context-free half of :func:`token_bits`.

    Parameters
    ----------
    vocab_size : int
        V.
    device : torch.device or str, optional
        Where the table lives.

    Returns
    -------
    torch.Tensor
        (V,) int64.
    """
    return mix64(torch.arange(vocab_size, device=device, dtype=torch.int64) + C_TOKEN)


def green_mask(ctx: torch.Tensor, vocab_size: int, gamma: float, vocab_tokens: torch.Tensor | None = None,
               table: torch.Tensor | None = None) -> torch.Tensor:
    """Bernoulli(gamma) green lists for context hashes ``ctx`` (:mod:`sims.core.prf`, ``"bernoulli"`` kind).

    Parameters
    ----------
    ctx : torch.Tensor
        (B,) int64 context hashes.
    vocab_size : int
        V.
    gamma : float
        Green-list ratio in (0, 1).
    vocab_tokens : torch.Tensor, optional
        The token ids of the V columns (default ``arange(V)``).
    table : torch.Tensor, optional
        :func:`token_table` of those ids, which saves one mixing round per entry.

    Returns
    -------
    torch.Tensor
        (B, V) bool: token k is green after row b's context iff the top 53 bits of its word are below
        ``floor(gamma * 2**53)``.
    """
    if table is None:
        ks = torch.arange(vocab_size, device=ctx.device) if vocab_tokens is None else vocab_tokens
        table = mix64(ks.to(torch.int64) + C_TOKEN)
    top53 = _srl(mix64(ctx[:, None] ^ table[None, :]), 11)
    return top53 < prf.green_threshold(gamma)


def uniforms(ctx: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
    """Uniforms in (0, 1) for (context hash, token) pairs, as :func:`sims.core.prf.uniforms`.

    Parameters
    ----------
    ctx : torch.Tensor
        int64 context hashes.
    tokens : torch.Tensor
        Token ids, broadcast with ``ctx``.

    Returns
    -------
    torch.Tensor
        float64 ``(top53(u) + 0.5) / 2**53``.
    """
    return (_srl(token_bits(ctx, tokens), 11).to(torch.float64) + 0.5) / float(prf.TOP53)


def counter_uniform(stream_key, i: torch.Tensor) -> torch.Tensor:
    """:func:`sims.core.rng.uniform_nb` on tensors: uniform number ``i`` of a counter stream.

    Parameters
    ----------
    stream_key : int or torch.Tensor
        One key (int), or an int64 tensor of keys (two's complement) broadcast with ``i``.
    i : torch.Tensor
        The counters.

    Returns
    -------
    torch.Tensor
        float64 uniforms in (0, 1).
    """
    key = stream_key if torch.is_tensor(stream_key) else _s64(int(stream_key))
    z = mix64(i.to(torch.int64) * GOLDEN + key)
    return (_srl(z, 11).to(torch.float64) + 0.5) / float(prf.TOP53)
