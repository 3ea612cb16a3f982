"""Triton kernels for the single-token decoding step of :class:`.static_decode.StaticLlama`.

Each replaces a chain of small PyTorch kernels (the step is launch-bound at batch 64) and
rounds where transformers' Llama rounds, so the outputs equal the eager PyTorch step:

* :func:`add_rmsnorm`: residual add ``x += y`` and ``h = w * rmsnorm(x)`` (float32 statistics);
* :func:`rope_cache`: rotary embedding of q and k at each row's own position (left padding
  shifts it), k and v written into the static cache at the shared slot ``pos``;
* :func:`silu_mul`: ``silu(gate) * up`` of the fused gate/up projection.

Run on CUDA, or on the CPU under ``TRITON_INTERPRET=1`` (how the tests check them).
"""

from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def add_rmsnorm(x_ptr, y_ptr, w_ptr, h_ptr, N, eps, HAS_Y: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    ok = cols < N
    x = tl.load(x_ptr + row * N + cols, mask=ok, other=0.0)
    if HAS_Y:
        x = (x.to(tl.float32) + tl.load(y_ptr + row * N + cols, mask=ok, other=0.0).to(tl.float32)).to(x_ptr.dtype.element_ty)
        tl.store(x_ptr + row * N + cols, x, mask=ok)
    xf = x.to(tl.float32)
    inv = 1.0 / tl.sqrt(tl.sum(xf * xf, 0) / N + eps)
    normed = (xf * inv).to(h_ptr.dtype.element_ty).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=ok, other=0.0).to(tl.float32)
    tl.store(h_ptr + row * N + cols, (w * normed).to(h_ptr.dtype.element_ty), mask=ok)


@triton.jit
def _rotate(x_ptr, heads, cos, sin, D: tl.constexpr, HEADS: tl.constexpr):
    j = tl.arange(0, D)
    half: tl.constexpr = D // 2
    ok = heads[:, None] < HEADS
    x = tl.load(x_ptr + heads[:, None] * D + j[None, :], mask=ok, other=0.0).to(tl.float32)
    partner = tl.load(x_ptr + heads[:, None] * D + ((j + half) % D)[None, :], mask=ok, other=0.0).to(tl.float32)
    rot = tl.where(j[None, :] < half, -partner, partner)
    dt = x_ptr.dtype.element_ty
    a = (x * cos[None, :]).to(dt).to(tl.float32)
    b = (rot * sin[None, :]).to(dt).to(tl.float32)
    return (a + b).to(dt), ok


@triton.jit
def rope_cache(qkv_ptr, cos_ptr, sin_ptr, pos_ptr, rot_ptr, q_ptr, k_ptr, v_ptr, kv_row_stride, kv_head_stride,
               NH: tl.constexpr, NKV: tl.constexpr, NH_P2: tl.constexpr, NKV_P2: tl.constexpr, D: tl.constexpr):
    """Program per row: q (NH, D) rotated at the row's position ``rot[row]`` into q_ptr; k rotated
    and v copied into the caches at slot ``pos``."""
    row = tl.program_id(0)
    pos = tl.load(pos_ptr)
    rot = tl.load(rot_ptr + row)
    j = tl.arange(0, D)
    cos = tl.load(cos_ptr + rot * D + j).to(tl.float32)
    sin = tl.load(sin_ptr + rot * D + j).to(tl.float32)
    base = qkv_ptr + row * (NH + 2 * NKV) * D
    hq = tl.arange(0, NH_P2)
    q, okq = _rotate(base, hq, cos, sin, D, NH)
    tl.store(q_ptr + row * NH * D + hq[:, None] * D + j[None, :], q, mask=okq)
    hk = tl.arange(0, NKV_P2)
    k, okk = _rotate(base + NH * D, hk, cos, sin, D, NKV)
    slot = row * kv_row_stride + hk[:, None] * kv_head_stride + pos * D + j[None, :]
    tl.store(k_ptr + slot, k, mask=okk)
    v = tl.load(base + (NH + NKV) * D + hk[:, None] * D + j[None, :], mask=okk, other=0.0)
    tl.store(v_ptr + slot, v, mask=okk)


@triton.jit
def silu_mul(gu_ptr, out_ptr, N, BLOCK: tl.constexpr):
    """Program (row, block): out = silu(gate) * up, gate and up the two halves of a row of 2N."""
    row = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    ok = cols < N
    dt = out_ptr.dtype.element_ty
    g = tl.load(gu_ptr + row * 2 * N + cols, mask=ok, other=0.0).to(tl.float32)
    u = tl.load(gu_ptr + row * 2 * N + N + cols, mask=ok, other=0.0).to(tl.float32)
    s = (g / (1.0 + tl.exp(-g))).to(dt).to(tl.float32)
    tl.store(out_ptr + row * N + cols, (s * u).to(dt), mask=ok)
