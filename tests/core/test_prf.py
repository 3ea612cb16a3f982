"""The one keyed PRF: NumPy reference == Numba, green fraction is gamma, keys independent."""

import numpy as np
import pytest
from numba import njit
from scipy.stats import binomtest, chi2_contingency

from sims.core import prf

ALPHA = 1e-3  # significance level of the statistical checks below (fixed seeds)


@njit(cache=True)
def _nb_bits(key, contexts, tokens, stream):
    out = np.empty((contexts.shape[0], tokens.shape[0]), dtype=np.uint64)
    for i in range(contexts.shape[0]):
        c = prf.context_hash_nb(key, contexts[i], stream)
        for j in range(tokens.shape[0]):
            out[i, j] = prf.token_bits_nb(c, tokens[j])
    return out


@pytest.mark.parametrize("h", [1, 2, 4])
@pytest.mark.parametrize("stream", [prf.GREEN, prf.EMS, prf.STEP])
def test_numpy_and_numba_are_bit_identical(h, stream):
    rng = np.random.default_rng(h)
    key = int(rng.integers(0, 2**63)) * 2 + 1
    ctx = rng.integers(0, 128000, size=(50, h))
    toks = rng.integers(0, 128000, size=300)
    ref = prf.token_bits(prf.context_hash(key, ctx, stream)[:, None], toks[None, :])
    assert np.array_equal(ref, _nb_bits(np.uint64(key), ctx, toks, stream))


def test_green_fraction_is_gamma_within_binomial_ci():
    """Seed 0: 2e6 (context, token) pairs; two-sided exact binomial test at alpha = 1e-3."""
    rng = np.random.default_rng(0)
    ctx = prf.context_hash(123, rng.integers(0, 50000, size=(2000, 1)))
    for gamma in (0.1, 0.25, 0.5):
        g = prf.is_green(ctx[:, None], rng.integers(0, 50000, size=(2000, 1000)), gamma)
        assert binomtest(int(g.sum()), g.size, gamma).pvalue > ALPHA


def test_partition_green_lists_are_exact():
    ctx = prf.context_hash(5, np.arange(20)[:, None])
    m = prf.green_mask(ctx, 1000, 0.3, kind="partition")
    assert np.all(m.sum(axis=1) == 300)


def test_keys_do_not_correlate():
    """Green indicators of one key vs another on the same 1e6 pairs: chi-square independence, alpha 1e-3."""
    rng = np.random.default_rng(1)
    ctx_tokens = rng.integers(0, 50000, size=(1000, 1))
    toks = rng.integers(0, 50000, size=(1000, 1000))
    a = prf.is_green(prf.context_hash(1, ctx_tokens)[:, None], toks, 0.25).ravel()
    b = prf.is_green(prf.context_hash(2, ctx_tokens)[:, None], toks, 0.25).ravel()
    table = np.array([[np.sum(a & b), np.sum(a & ~b)], [np.sum(~a & b), np.sum(~a & ~b)]])
    assert chi2_contingency(table).pvalue > ALPHA


def test_bad_key_and_gamma():
    with pytest.raises(ValueError, match=r"key must be in \[0, 2\*\*64\); got -1"):
        prf.context_hash(-1, np.zeros((1, 1)))
    with pytest.raises(ValueError, match=r"gamma must be in \(0, 1\); got 1.0"):
        prf.green_threshold(1.0)
