"""Triton kernels of the fused soft boost (SRL and DualGA): one read of the logits per step.

Kernel 1 (:func:`boost_partials`), grid (B, n_chunks): each program hashes its row's
context window with the PRF of :mod:`sims.core.prf` (int64 arithmetic, bit for bit), walks one
chunk of the vocabulary, writes ``logits + lambda * green`` (unless sampling) and reduces the
*unboosted* logits in float64 to (max m, sum e^{x-m}, green sum e^{x-m}, sum e^{x-m}(x-m)).

Kernel 2 (:func:`boost_epilogue`), one program for the whole batch: merges the chunks into
:math:`G_t = \\sum_{k\\in\\text{green}} p_{t,k}`, evaluates the closed forms
:math:`\\mathrm{DG}_t = G(1-G)(1-e^{-\\lambda})/(G + (1-G)e^{-\\lambda})` and
:math:`D_{kl} = G f(\\mathrm{DG}/G) + (1-G) f(-\\mathrm{DG}/(1-G))` (the series of
:mod:`theory._scalar` below |x| = 0.1), writes the records at step t, and applies the DualGA
update :math:`\\lambda \\leftarrow \\Pi_{[0,M]}(\\lambda + \\eta(\\Delta - \\mathrm{DG}_t))`; when sampling, it
also picks for each row the chunk where the row's uniform falls in the boosted cumulative mass.

Kernel 3 (:func:`pick`), one program per row: the token inside that chunk (inverse CDF over
token ids), written at step t and shifted into the context window.

Runs on CUDA, or on the CPU under ``TRITON_INTERPRET=1`` (how the tests check it).
"""

from __future__ import annotations

import triton
import triton.language as tl

from sims.core import prf
from sims.torch_backend.prf_torch import _s64

_M1 = tl.constexpr(_s64(prf.M1))
_M2 = tl.constexpr(_s64(prf.M2))
_C_CONTEXT = tl.constexpr(_s64(prf.C_CONTEXT))
_GOLDEN = tl.constexpr(_s64(prf.GOLDEN))


@triton.jit
def _srl(z, s: tl.constexpr):
    return (z >> s) & ((1 << (64 - s)) - 1)


@triton.jit
def _mix64(z):
    z = (z ^ _srl(z, 30)) * _M1
    z = (z ^ _srl(z, 27)) * _M2
    return z ^ _srl(z, 31)


@triton.jit
def _context(win_ptr, win_stride, row, seed_mixed, H: tl.constexpr):
    ctx = seed_mixed.to(tl.int64)
    for j in tl.static_range(H):
        tok = tl.load(win_ptr + row * win_stride + j).to(tl.int64)
        ctx = _mix64(ctx ^ (tok * _C_CONTEXT + 1))
    return ctx


@triton.jit
def _green(ctx, table_ptr, offs, inside, threshold):
    """Green flags of token ids ``offs``; ``table`` holds mix64(k + C_TOKEN), the context-free half."""
    return _srl(_mix64(ctx ^ tl.load(table_ptr + offs, mask=inside, other=0)), 11) < threshold


@triton.jit
def boost_partials(x_ptr, x_stride, out_ptr, out_stride, win_ptr, win_stride, lam_ptr, part_ptr, table_ptr,
                   seed_mixed, threshold, V, H: tl.constexpr, BLOCK: tl.constexpr, N_CHUNKS: tl.constexpr,
                   HASH: tl.constexpr, WRITE: tl.constexpr):
    """Program (row, chunk): BLOCK logits -> (max m, sum e^{x-m}, green sum of e^{x-m}, sum e^{x-m} (x-m))."""
    row = tl.program_id(0)
    chunk = tl.program_id(1)
    neg_inf = float("-inf")
    offs = chunk * BLOCK + tl.arange(0, BLOCK)
    inside = offs < V
    x = tl.load(x_ptr + row * x_stride + offs, mask=inside, other=neg_inf).to(tl.float64)
    if HASH:
        green = _green(_context(win_ptr, win_stride, row, seed_mixed, H), table_ptr, offs, inside, threshold)
    else:
        green = offs < 0
    if WRITE:
        lam = tl.load(lam_ptr + row)
        tl.store(out_ptr + row * out_stride + offs, (x + tl.where(green, lam, 0.0)).to(out_ptr.dtype.element_ty),
                 mask=inside)
    m = tl.max(x, 0)
    ref = tl.where(m == neg_inf, 0.0, m)  # finite, so no inf - inf below
    e = tl.where(x == neg_inf, 0.0, tl.exp(tl.where(x == neg_inf, ref, x) - ref))
    base = part_ptr + (row * N_CHUNKS + chunk) * 4
    tl.store(base, m)
    tl.store(base + 1, tl.sum(e, 0))  # NaN if any logit is NaN: the epilogue's NaN flag
    tl.store(base + 2, tl.sum(tl.where(green, e, 0.0), 0))
    tl.store(base + 3, tl.sum(e * (tl.where(x == neg_inf, ref, x) - ref), 0))  # for the entropy of p_t (masked: e = 0)


@triton.jit
def _f(x):
    """(1 + x) log(1 + x) - x: Horner series below |x| = 0.1 (as theory._scalar), else direct."""
    acc = tl.zeros_like(x)
    for i in tl.static_range(20):
        n = tl.zeros_like(x) + (21 - i)  # the coefficient 1/(n(n-1)) in float64, not a float32 literal
        acc = acc * (-x) + 1.0 / (n * (n - 1.0))
    one_x = 1.0 + x
    direct = tl.where(one_x > 0.0, one_x * tl.log(tl.where(one_x > 0.0, one_x, 1.0)), 0.0) - x
    return tl.where(tl.abs(x) < 0.1, acc * x * x, direct)


@triton.jit
def _one_minus_exp_neg(lam):
    """1 - e^{-lam} without cancellation (Taylor below 1e-2)."""
    series = lam * (1.0 - lam / 2.0 * (1.0 - lam / 3.0 * (1.0 - lam / 4.0 * (1.0 - lam / 5.0 * (1.0 - lam / 6.0)))))
    return tl.where(lam < 1e-2, series, 1.0 - tl.exp(-lam))


@triton.jit
def boost_epilogue(part_ptr, lam_ptr, param_ptr, rec_ptr, rec_field_stride, rec_row_stride, t_ptr, T_cap, nan_ptr,
                   pick_ptr, key_ptr, B, N_CHUNKS: tl.constexpr, NC_P2: tl.constexpr, BLOCK_B: tl.constexpr,
                   UPDATE: tl.constexpr, RECORD: tl.constexpr, SAMPLE: tl.constexpr, ADVANCE_T: tl.constexpr):
    """One program: merge chunks into G_t and the entropy of p_t, records at step t, DualGA
    update, the first NaN step of each row in ``nan_ptr``; with SAMPLE, choose for each row the
    chunk holding its inverse-CDF uniform (number t of the row's stream ``key_ptr[row]``, as
    :func:`sims.core.rng.uniform_nb`) for :func:`pick`.

    ``param_ptr`` holds (Delta, eta, M) in float64 (scalar kernel arguments would be float32).
    """
    rows = tl.arange(0, BLOCK_B)
    ok = rows < B
    cols = tl.arange(0, NC_P2)
    tile = ok[:, None] & (cols[None, :] < N_CHUNKS)
    base = part_ptr + (rows[:, None] * N_CHUNKS + cols[None, :]) * 4
    neg_inf = float("-inf")
    mc = tl.load(base, mask=tile, other=neg_inf)
    top = tl.max(mc, 1)
    top = tl.where(top == neg_inf, 0.0, top)
    w = tl.exp(mc - top[:, None])
    sc = tl.load(base + 1, mask=tile, other=0.0)
    sgc = tl.load(base + 2, mask=tile, other=0.0)
    S = tl.sum(w * sc, 1)
    SG = tl.sum(w * sgc, 1)
    ac = tl.load(base + 3, mask=tile, other=0.0)
    shift = tl.where(mc == neg_inf, 0.0, mc - top[:, None])  # chunk reference relative to the row's top
    S1 = tl.where(S > 0.0, S, 1.0)  # rows past B, or all logits masked: entropy nan
    ent = tl.where(S > 0.0, tl.log(S1) - tl.sum(w * (ac + shift * sc), 1) / S1, float("nan"))
    G = tl.minimum(tl.maximum(SG / tl.where(S > 0.0, S, 1.0), 0.0), 1.0)
    lam = tl.load(lam_ptr + rows, mask=ok, other=0.0).to(tl.float64)
    t = tl.load(t_ptr)
    first_nan = tl.load(nan_ptr + rows, mask=ok, other=0)
    tl.store(nan_ptr + rows, tl.where((S != S) & (first_nan < 0), rows * 0 + t, first_nan), mask=ok)
    if RECORD:
        edge = (G <= 0.0) | (G >= 1.0)
        dg = G * (1.0 - G) * _one_minus_exp_neg(lam) / (G + (1.0 - G) * tl.exp(-lam))
        dg = tl.where(edge, 0.0, dg)
        Gs = tl.where(edge, 1.0, G)
        Rs = tl.where(edge, 1.0, 1.0 - G)
        kl = G * _f(dg / Gs) + (1.0 - G) * _f(tl.maximum(-dg / Rs, -1.0))
        kl = tl.where(edge, 0.0, kl)
        rec = rec_ptr + rows * rec_row_stride + t
        ok_t = ok & ((rows * 0 + t) < T_cap)  # past the record capacity nothing is written (stacked() raises)
        tl.store(rec, kl, mask=ok_t)
        tl.store(rec + rec_field_stride, G, mask=ok_t)
        tl.store(rec + 2 * rec_field_stride, dg, mask=ok_t)
        tl.store(rec + 3 * rec_field_stride, lam, mask=ok_t)
        tl.store(rec + 4 * rec_field_stride, ent, mask=ok_t)
        if UPDATE:
            Delta = tl.load(param_ptr)
            eta = tl.load(param_ptr + 1)
            M = tl.load(param_ptr + 2)
            # theory.dualga_update (alg:DualGA): Pi_[0,M](lam + eta (Delta - dg)), the same float64 operations
            tl.store(lam_ptr + rows, tl.minimum(tl.maximum(lam + eta * (Delta - dg), 0.0), M), mask=ok)
    if SAMPLE:
        # boosted mass of each chunk relative to the row's top: red part + e^lam * green part
        mass = w * (sc - sgc + tl.exp(lam)[:, None] * sgc)
        cum = tl.cumsum(mass, 1)
        z = _mix64((rows * 0 + t).to(tl.int64) * _GOLDEN + tl.load(key_ptr + rows, mask=ok, other=0))
        u = (_srl(z, 11).to(tl.float64) + 0.5) / 9007199254740992.0
        target = u * tl.sum(mass, 1)
        last = tl.max(tl.where(mass > 0.0, cols[None, :], 0), 1)
        c = tl.minimum(tl.sum((cum <= target[:, None]).to(tl.int32), 1), last)
        before = tl.sum(tl.where(cols[None, :] < c[:, None], mass, 0.0), 1)
        wc = tl.sum(tl.where(cols[None, :] == c[:, None], w, 0.0), 1)
        out = pick_ptr + rows * 4
        tl.store(out, c.to(tl.float64), mask=ok)
        tl.store(out + 1, (target - before) / tl.where(wc > 0.0, wc, 1.0), mask=ok)  # in the chunk's own scale
        tl.store(out + 2, lam, mask=ok)
    if ADVANCE_T:
        tl.store(t_ptr, t + 1)


@triton.jit
def pick(x_ptr, x_stride, win_ptr, win_stride, part_ptr, pick_ptr, table_ptr, tok_ptr, tok_stride, t_ptr, seed_mixed,
         threshold, V,
         H: tl.constexpr, BLOCK: tl.constexpr, N_CHUNKS: tl.constexpr, HASH: tl.constexpr):
    """Program per row: the token where the boosted cumulative mass of the chosen chunk passes the
    residual target; writes it at tokens[row, t] and shifts it into the context window."""
    row = tl.program_id(0)
    c = tl.load(pick_ptr + row * 4).to(tl.int32)
    r = tl.load(pick_ptr + row * 4 + 1)
    lam = tl.load(pick_ptr + row * 4 + 2)
    m = tl.load(part_ptr + (row * N_CHUNKS + c) * 4)
    neg_inf = float("-inf")
    idx = tl.arange(0, BLOCK)
    offs = c * BLOCK + idx
    inside = offs < V
    x = tl.load(x_ptr + row * x_stride + offs, mask=inside, other=neg_inf).to(tl.float64)
    ref = tl.where(m == neg_inf, 0.0, m)
    e = tl.where(x == neg_inf, 0.0, tl.exp(tl.where(x == neg_inf, ref, x) - ref))
    if HASH:
        green = _green(_context(win_ptr, win_stride, row, seed_mixed, H), table_ptr, offs, inside, threshold)
        e = tl.where(green, e * tl.exp(lam), e)
    cum = tl.cumsum(e, 0)
    last = tl.max(tl.where(e > 0.0, idx, 0), 0)
    k = tl.minimum(tl.sum((cum <= r).to(tl.int32), 0), last)
    tok = (c * BLOCK + k).to(tl.int64)
    t = tl.load(t_ptr)
    tl.store(tok_ptr + row * tok_stride + t, tok)
    for j in tl.static_range(H - 1):
        tl.store(win_ptr + row * win_stride + j, tl.load(win_ptr + row * win_stride + j + 1))
    tl.store(win_ptr + row * win_stride + H - 1, tok)
