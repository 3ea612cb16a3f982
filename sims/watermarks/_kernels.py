"""Whole-vocabulary loops of one generation step, written so that LLVM vectorises them.

A step of :func:`sims.watermarks.generate.generate_synthetic` that builds :math:`p_t` touches every token id
three times: the softmax needs :math:`e_k = \\exp(\\ell_k - c)`, the green list needs one
PRF round per id, and :math:`G_t`, the entropy and the sampler need masked sums of
:math:`e`.  Scalar code (a libm ``exp`` per id, a branch per green test) costs ~0.5 ms per
step at V = 32k; these loops are branch-free maps and reductions over contiguous arrays,
about five times faster on AVX2.  A boosting step on a synthetic LM needs only
:func:`rotated_masses` (one fused loop, ~30 us at V = 32k; ``python -m bench --only
bench_generate``).

* :func:`exp_shifted_into` -- :math:`\\exp(\\ell_k - c)` to 1 ulp (measured over
  [-708, 0] in ``tests/watermarks/test_step_kernels.py``): Cody-Waite reduction
  :math:`z = n \\ln 2 + r`, :math:`|r| \\le \\ln 2 / 2`, the degree-13 Taylor polynomial
  of :math:`e^r` (truncation error :math:`r^{14}/14! < 5 \\cdot 10^{-18}`), and
  :math:`2^n` added to the exponent bits (an integer add on the float's bits).  Arguments below
  -708 are clamped there (:math:`e^{-708} \\approx 3 \\cdot 10^{-308}`, far below the
  :math:`2^{-53}` resolution of a sum that contains :math:`e^0 = 1`).
* :func:`ems_draw` -- EMS's exponential minimum sampling from the key's uniforms
  (:func:`uniforms_into`) and a vectorised log (:func:`log_into`, 3 ulp).
* :func:`green_into` -- the Bernoulli(gamma) green mask of :mod:`sims.core.prf` as 0.0/1.0,
  bit-identical to :func:`sims.core.prf.is_green`.
* :func:`block_masses` -- green and red masses of :math:`e` per block of ``BLOCK`` ids and
  :math:`\\sum_k e_k (\\ell_k - c)`, so :func:`sample_colour` inverts the CDF in
  O(V / BLOCK + BLOCK) instead of O(V).
* :func:`rotated_masses` -- the same block masses straight from a synthetic LM's
  tabulated weights, hashing the green list on the fly: the fast path of the boosting
  watermarks, where nothing of size V is written.

Sums run in a vectorised order (``fastmath`` reassociation), so they may differ from a
left-to-right sum in the last bits; a run is still reproducible on one machine.
"""

from __future__ import annotations

import math

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

from sims.core import prf

BLOCK = 512
_SHIFT = 6755399441055744.0  # 1.5 * 2**52: adding it rounds to an integer held in the low mantissa bits
_LOG2E = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01  # ln 2 to 32 bits: n * _LN2_HI is exact for |n| < 2**21
_LN2_LO = 1.90821492927058770002e-10
_EXP_MIN = -708.0
_W_SKIP = math.exp(-700.0)  # EMS ignores tokens whose tempered weight is below this
_C = tuple(1.0 / math.factorial(i) for i in range(14))
_ATANH = tuple(1.0 / (2 * i + 1) for i in range(12))
_LOG_BIAS = (1 << 62) - 0x3FE6A09E667F3BCD  # 2**62 minus the bits of sqrt(1/2)
_REDUCE = {"reassoc", "contract", "nsz"}


@intrinsic
def _as_int(typingctx, x):
    """The bits of a float64 as an int64 (an LLVM bitcast: free, and vectorisable)."""
    if x != types.float64:
        return None
    return types.int64(types.float64), lambda ctx, builder, sig, args: builder.bitcast(args[0], ir.IntType(64))


@intrinsic
def _as_float(typingctx, x):
    """The int64 ``x`` read as the bits of a float64."""
    if x != types.int64:
        return None
    return types.float64(types.int64), lambda ctx, builder, sig, args: builder.bitcast(args[0], ir.DoubleType())


@njit(cache=True, fastmath={"contract"})
def exp_shifted_into(logits, c, e):
    """``e[k] = exp(max(logits[k] - c, -708))`` to 1 ulp (see module docstring)."""
    for k in range(logits.shape[0]):
        z = logits[k] - c
        z = z if z > _EXP_MIN else _EXP_MIN
        t = z * _LOG2E + _SHIFT
        n = t - _SHIFT
        r = (z - n * _LN2_HI) - n * _LN2_LO
        p = _C[13]
        for i in range(12, -1, -1):  # Horner; LLVM unrolls the fixed trip count
            p = p * r + _C[i]
        # the low bits of t hold n in two's complement; shifted into the exponent field they
        # multiply p by 2**n (the bits of _SHIFT itself shift out)
        e[k] = _as_float(_as_int(p) + (_as_int(t) << 52))


@njit(cache=True, fastmath={"contract"}, error_model="numpy")  # no zero-division branch: vectorises
def log_into(x, out):
    """``out[k] = log(x[k])`` for positive normal ``x`` to 3 ulp (``out`` may be ``x``).

    :math:`x = 2^n m` with :math:`m \\in [\\sqrt{1/2}, \\sqrt 2)` taken from the bits, then
    :math:`\\log m = 2\\,\\mathrm{atanh}\\, s = 2 \\sum_{i \\le 11} s^{2i+1}/(2i+1)`,
    :math:`s = (m-1)/(m+1)`, :math:`s^2 < 0.0295` (truncation below :math:`10^{-18}`).
    """
    for k in range(x.shape[0]):
        bits = _as_int(x[k])
        # the exponent of x / sqrt(1/2), by a logical shift of a biased difference (AVX2 has no
        # 64-bit arithmetic shift)
        n = np.int64((np.uint64(bits) + np.uint64(_LOG_BIAS)) >> np.uint64(52)) - 1024
        f = _as_float(bits - (n << 52)) - 1.0
        sr = f / (2.0 + f)
        s2 = sr * sr
        p = 1.0 / 23.0
        for i in range(10, -1, -1):
            p = p * s2 + _ATANH[i]
        nf = np.float64(np.int32(n))  # |n| < 1100; an int32 converts in SIMD, an int64 does not on AVX2
        out[k] = nf * _LN2_HI + (2.0 * sr * p + nf * _LN2_LO)


@njit(cache=True)
def uniforms_into(ctx_hash, tokmix, out):
    """``out[k]`` = the uniform of :func:`sims.core.prf.uniform_nb` for token k after ``ctx_hash``."""
    for k in range(tokmix.shape[0]):
        top = prf.mix64_nb(ctx_hash ^ tokmix[k]) >> np.uint64(11)  # 53 bits, converted as two int32 halves
        hi = np.float64(np.int32(top >> np.uint64(22))) * 4194304.0
        out[k] = (hi + np.float64(np.int32(top & np.uint64(4194303))) + 0.5) * (1.0 / 9007199254740992.0)


@njit(cache=True, error_model="numpy")
def _ems_scores(logr, w):
    for k in range(w.shape[0]):
        logr[k] = logr[k] / w[k] if w[k] >= _W_SKIP else -np.inf


@njit(cache=True)
def ems_draw(ctx_hash, tokmix, w, scratch):
    """EMS's token :math:`\\arg\\max_k \\log(r_k) / w_k` for the key's uniforms :math:`r_k` after
    ``ctx_hash`` and tempered weights :math:`w_k \\propto p_k^{1/\\tau}` (``w`` below
    :math:`e^{-700}` never wins); the first maximiser, as a left-to-right scan picks it."""
    uniforms_into(ctx_hash, tokmix, scratch)
    log_into(scratch, scratch)
    _ems_scores(scratch, w)
    best = -np.inf
    y = 0
    for k in range(w.shape[0]):
        if scratch[k] > best:
            best = scratch[k]
            y = k
    return y


@njit(cache=True, inline="always")
def _green(ctx_hash, tm, lim):
    """Token with precomputed half ``tm`` is green after ``ctx_hash`` (:func:`sims.core.prf.is_green_nb`)."""
    return (prf.mix64_nb(ctx_hash ^ tm) >> np.uint64(11)) < lim


@njit(cache=True)
def green_into(ctx_hash, tokmix, threshold, green):
    """``green[k] = 1.0`` iff token k is green after a context with hash ``ctx_hash``, else 0.0.

    ``tokmix[k] = mix64(k + C_TOKEN)``; same bits as :func:`sims.core.prf.token_bits_nb`.
    """
    lim = np.uint64(threshold)
    for k in range(tokmix.shape[0]):
        green[k] = 1.0 if _green(ctx_hash, tokmix[k], lim) else 0.0


@njit(cache=True, fastmath=_REDUCE)
def block_masses(e, logits, c, green, blk_green, blk_red):
    """Per-block green and red masses of ``e``; returns :math:`\\sum_k e_k (\\ell_k - c)`."""
    V = e.shape[0]
    acc = 0.0
    for b in range(blk_green.shape[0]):
        sg = 0.0
        sr = 0.0
        for k in range(b * BLOCK, min(V, (b + 1) * BLOCK)):
            eg = e[k] * green[k]
            sg += eg
            sr += e[k] - eg
            acc += e[k] * (logits[k] - c)
        blk_green[b] = sg
        blk_red[b] = sr
    return acc


@njit(cache=True)
def n_blocks(V):
    return (V + BLOCK - 1) // BLOCK


@njit(cache=True, fastmath=_REDUCE)
def _masses_run(ctx_hash, tokmix, weights, lim):
    """Green and red sums of ``weights`` over one contiguous run of token ids."""
    g = 0.0
    r = 0.0
    for i in range(tokmix.shape[0]):
        w = weights[i] if _green(ctx_hash, tokmix[i], lim) else 0.0
        g += w
        r += weights[i] - w
    return g, r


@njit(cache=True)
def rotated_masses(ctx_hash, tokmix, row, off, threshold, blk_green, blk_red):
    """Per-block green and red sums of ``w_k = row[(k + off) mod V]`` in one fused pass.

    The green list (hash ``ctx_hash``) is never stored: each id costs one PRF round and
    two adds.  This is the only whole-vocabulary loop of a boosting step on a
    synthetic LM (its normaliser and entropy are tabulated, :mod:`sims.lm.synthetic`).
    """
    V = tokmix.shape[0]
    lim = np.uint64(threshold)
    wrap = V - off  # ids >= wrap read the table from its start
    for b in range(blk_green.shape[0]):
        k0 = b * BLOCK
        k1 = min(V, k0 + BLOCK)
        g = 0.0
        r = 0.0
        if k0 < wrap:
            k = min(k1, wrap)
            g, r = _masses_run(ctx_hash, tokmix[k0:k], row[k0 + off : k + off], lim)
        if k1 > wrap:
            k = max(k0, wrap)
            g2, r2 = _masses_run(ctx_hash, tokmix[k:k1], row[k + off - V : k1 + off - V], lim)
            g += g2
            r += r2
        blk_green[b] = g
        blk_red[b] = r


@njit(cache=True)
def pick_block(blk_mass, u):
    """First block where the cumulative mass reaches ``u`` times the total, and the mass
    still to walk inside it: ``(b, rest)``; ``(-1, 0.0)`` if there is no mass.  The last
    block with mass is taken if rounding leaves the target unreached."""
    total = 0.0
    final = -1
    for b in range(blk_mass.shape[0]):
        total += blk_mass[b]
        if blk_mass[b] > 0.0:
            final = b
    target = u * total
    acc = 0.0
    for b in range(final + 1):
        if blk_mass[b] > 0.0 and (b == final or acc + blk_mass[b] >= target):
            return b, target - acc
        acc += blk_mass[b]
    return -1, 0.0


@njit(cache=True)
def scan_block(e, green, want, rest):
    """Index of the first token of colour ``want`` (1.0 green, 0.0 red, -1.0 either) in one
    block at which the cumulative mass of ``e`` reaches ``rest``; the last eligible token if
    rounding leaves it unreached."""
    acc = 0.0
    last = -1
    for i in range(e.shape[0]):
        if e[i] > 0.0 and (want < 0.0 or green[i] == want):
            acc += e[i]
            last = i
            if acc >= rest:
                return i
    return last


@njit(cache=True)
def sample_colour(e, green, want, blk_mass, u):
    """Token of colour ``want`` drawn proportionally to ``e`` by inverse CDF in id order
    (``blk_mass``: that colour's mass per block); -1 if the colour has no mass."""
    b, rest = pick_block(blk_mass, u)
    if b < 0:
        return -1
    k0 = b * BLOCK
    k1 = min(e.shape[0], k0 + BLOCK)
    return k0 + scan_block(e[k0:k1], green[k0:k1], want, rest)
