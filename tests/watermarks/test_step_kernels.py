"""The vectorised step kernels: exp to 1 ulp, log to 3 ulp, EMS uniforms and green masks and masses equal to the PRF reference,
block sampling equal to a plain inverse CDF, and the tabulated step equal to the materialised one."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sims.core import prf
from sims.lm.synthetic import LM_PRESETS, N_BUMPS, context_into, logits_into, open_synthetic
from sims.watermarks import _kernels as kern
from sims.watermarks.generate import _tabulated_block, _tabulated_masses

MAX_EXP_ULP = 1  # measured over [-708, 0]; the polynomial's truncation error is below 5e-18
MAX_LOG_ULP = 3  # measured; the worst case is just above 1, where log x is small
TABLE_RTOL = 4e-15  # exp(-c) * exp(beta b) against exp(beta b - c): a few roundings apart
EPS = np.finfo(float).eps
UNDERFLOW = 1e-300  # weights this small may underflow to 0 in the tabulated product


def _ulps(a, b):
    return np.abs(a.view(np.int64) - b.view(np.int64))


def test_exp_is_within_one_ulp_over_its_range():
    x = np.concatenate([np.linspace(-708.0, 0.0, 400_001), -np.geomspace(1e-300, 1.0, 10_001), [0.0, -0.0]])
    e = np.empty_like(x)
    kern.exp_shifted_into(x, 0.0, e)
    assert _ulps(e, np.exp(x)).max() <= MAX_EXP_ULP


@given(st.floats(-700.0, 700.0), st.floats(-1e3, 1e3))
def test_exp_shift_and_clamp(c, x):
    e = np.empty(1)
    kern.exp_shifted_into(np.array([x]), c, e)
    z = x - c
    if z >= -708.0 and z <= 0.0:
        assert _ulps(e, np.exp(np.array([z]))).max() <= MAX_EXP_ULP
    elif z < -708.0:
        assert e[0] == pytest.approx(np.exp(-708.0), rel=1e-15)


def test_log_is_within_three_ulp():
    x = np.concatenate([np.geomspace(2.3e-308, 1.7e308, 400_001), np.linspace(0.5, 2.0, 400_001),
                        np.random.default_rng(0).random(100_000)])
    out = np.empty_like(x)
    kern.log_into(x, out)
    assert _ulps(out, np.log(x)).max() <= MAX_LOG_ULP


def test_uniforms_into_equals_prf_reference():
    V = 4099
    tokmix = prf.token_mix(V)
    ctx = np.uint64(prf.context_hash(3, np.array([5, 8]), prf.EMS))
    out = np.empty(V)
    kern.uniforms_into(ctx, tokmix, out)
    assert np.array_equal(out, prf.uniforms(ctx, np.arange(V)))


@pytest.mark.parametrize("gamma", [0.1, 0.25, 0.5, 0.9])
def test_green_into_equals_prf_reference(gamma):
    V = 5003
    tokmix = prf.token_mix(V)
    ctx = prf.context_hash(7, np.array([[3, 11]]))[0]
    g = np.empty(V)
    kern.green_into(ctx, tokmix, prf.green_threshold(gamma), g)
    assert np.array_equal(g > 0, prf.is_green(ctx, np.arange(V), gamma))


def _plain_inverse_cdf(e, green, want, u):
    ok = (e > 0) & ((want < 0) | (green == want))
    w = np.where(ok, e, 0.0)
    cdf = np.cumsum(w)
    return int(np.searchsorted(cdf, u * cdf[-1], side="left"))


@st.composite
def _weights(draw):
    V = draw(st.integers(1, 3 * kern.BLOCK + 7))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    e = rng.exponential(size=V) * (rng.random(V) < 0.9)
    green = (rng.random(V) < draw(st.sampled_from([0.05, 0.5, 0.95]))).astype(np.float64)
    return e, green


@given(_weights(), st.sampled_from([1.0, 0.0, -1.0]), st.floats(1e-9, 1 - 1e-9))
def test_block_sampler_equals_plain_inverse_cdf(eg, want, u):
    e, green = eg
    nb = kern.n_blocks(e.size)
    bg, br = np.empty(nb), np.empty(nb)
    kern.block_masses(e, np.zeros_like(e), 0.0, green, bg, br)
    blk = {1.0: bg, 0.0: br, -1.0: bg + br}[want]
    y = kern.sample_colour(e, green, want, blk, u)
    ok = (e > 0) & ((want < 0) | (green == want))
    if not ok.any():
        assert y == -1
        return
    assert ok[y]
    ref = _plain_inverse_cdf(e, green, want, u)
    if ref != y:  # only a tie of the target with a cumulative sum, up to rounding, may move the draw
        w = np.cumsum(np.where(ok, e, 0.0))
        assert abs(w[min(y, ref)] - u * w[-1]) <= 1e-12 * w[-1]


@pytest.mark.parametrize("name", LM_PRESETS)
def test_tabulated_step_equals_materialised_step(name):
    """Block masses, entropy accumulator and each block's e and green list from the LM's tables
    equal those computed from the full logits, for random contexts."""
    lm = open_synthetic(name, vocab_size=None if name != "news" else 3001)
    V = lm.vocab_size
    tokmix = prf.token_mix(V)
    thr = prf.green_threshold(0.3)
    nb = kern.n_blocks(V)
    rng = np.random.default_rng(1)
    for _ in range(20):
        ctx = rng.integers(0, V, size=3)
        wctx = np.uint64(prf.context_hash(5, ctx[-1:]))
        logits, e, green = np.empty(V), np.empty(V), np.empty(V)
        c = logits_into(V, lm.order, lm.seed, lm.params, lm.levels, lm.base, ctx, logits)
        kern.exp_shifted_into(logits, c, e)
        kern.green_into(wctx, tokmix, thr, green)
        bg, br = np.empty(nb), np.empty(nb)
        acc = kern.block_masses(e, logits, c, green, bg, br)
        mt, ml = np.empty(N_BUMPS, dtype=np.int64), np.empty(N_BUMPS)
        state = context_into(V, lm.order, lm.seed, lm.params, lm.levels, lm.base, ctx, mt, ml)
        assert state[3] == c
        tg, tr = np.empty(nb), np.empty(nb)
        tacc = _tabulated_masses(wctx, thr, tokmix, lm.table, lm.level_sums, lm.levels, lm.base, state, mt, ml, tg, tr)
        s = e.sum()
        assert np.allclose(tg, bg, rtol=1e-13, atol=1e-15 * s) and np.allclose(tr, br, rtol=1e-13, atol=1e-15 * s)
        assert tacc == pytest.approx(acc, rel=1e-12, abs=1e-14 * s)
        eb, gb = np.empty(kern.BLOCK), np.empty(kern.BLOCK)
        for b in range(nb):
            m = _tabulated_block(b, wctx, thr, tokmix, lm.table[state[0]], state, mt, ml, eb, gb)
            sl = slice(b * kern.BLOCK, b * kern.BLOCK + m)
            assert np.array_equal(gb[:m], green[sl])
            ref = e[sl]
            # exp(beta b - c) carries the rounding of its argument times |beta b - c| ~ |log e_k|
            tol = (TABLE_RTOL + 2 * EPS * np.abs(np.log(np.maximum(ref, UNDERFLOW)))) * ref + UNDERFLOW
            assert np.all(np.abs(eb[:m] - ref) <= tol)
