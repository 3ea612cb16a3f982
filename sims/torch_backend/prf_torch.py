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


M1, M2, GOLDEN = _s64(prf.M1), _s64(prf.M2), _s64(prf.GOLDEN)
C_TOKEN, C_CONTEXT = _s64(prf.C_TOKEN), _s64(prf.C_CONTEXT)


def _srl(z: torch.Tensor, s: int) -> torch.Tensor:
    return (z >> s) & ((1 << (64 - s)) - 1)


def mix64(z: torch.Tensor) -> torch.Tensor:
    z = (z ^ _srl(z, 30)) * M1
    z = (z ^ _srl(z, 27)) * M2
    return z ^ _srl(z, 31)


def context_hash(key: int, windows: torch.Tensor, stream: int = prf.GREEN) -> torch.Tensor:
    """Hash of (key, stream, window tokens oldest first) for each row of ``windows`` (B, h)."""
    seed = _s64(int(key) + prf.GOLDEN * (stream + 1))
    c = mix64(torch.full(windows.shape[:-1], seed, dtype=torch.int64, device=windows.device))
    for j in range(windows.shape[-1]):
        c = mix64(c ^ (windows[..., j].to(torch.int64) * C_CONTEXT + 1))
    return c


def token_bits(ctx: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
    return mix64(ctx ^ mix64(tokens.to(torch.int64) + C_TOKEN))


def token_table(vocab_size: int, device=None) -> torch.Tensor:
    """mix64(k + C_TOKEN) for every token id: the context-free half of :func:`token_bits`."""
    return mix64(torch.arange(vocab_size, device=device, dtype=torch.int64) + C_TOKEN)


def green_mask(ctx: torch.Tensor, vocab_size: int, gamma: float, vocab_tokens: torch.Tensor | None = None,
               table: torch.Tensor | None = None) -> torch.Tensor:
    """Bernoulli(gamma) green lists (B, V) for context hashes ``ctx`` (B,).

    ``table`` (from :func:`token_table`) saves one mixing round per entry.
    """
    if table is None:
        ks = torch.arange(vocab_size, device=ctx.device) if vocab_tokens is None else vocab_tokens
        table = mix64(ks.to(torch.int64) + C_TOKEN)
    top53 = _srl(mix64(ctx[:, None] ^ table[None, :]), 11)
    return top53 < prf.green_threshold(gamma)


def uniforms(ctx: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
    """Uniforms in (0, 1) for (context hash, token) pairs, as :func:`sims.core.prf.uniforms`."""
    return (_srl(token_bits(ctx, tokens), 11).to(torch.float64) + 0.5) / float(prf.TOP53)


def counter_uniform(stream_key, i: torch.Tensor) -> torch.Tensor:
    """:func:`sims.core.rng.uniform_nb` on tensors: uniform number ``i`` of a counter stream.

    ``stream_key``: one key (int), or an int64 tensor of keys (two's complement) broadcast with ``i``."""
    key = stream_key if torch.is_tensor(stream_key) else _s64(int(stream_key))
    z = mix64(i.to(torch.int64) * GOLDEN + key)
    return (_srl(z, 11).to(torch.float64) + 0.5) / float(prf.TOP53)
