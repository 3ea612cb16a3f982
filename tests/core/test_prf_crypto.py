"""The SipHash-2-4 PRF: published test vectors, NumPy == Numba == torch bit for bit, gamma, keys."""

import numpy as np
import pytest
from numba import njit
from scipy.stats import binomtest

from sims.core import prf, prf_crypto

KEY = bytes(range(16))
# SipHash-2-4 reference vectors (Aumasson & Bernstein, siphash24.c): key 00..0f, message
# 00 01 .. (L-1); the lengths that are whole 64-bit words, L = 0, 8, ..., 56
VECTORS = {0: 0x726FDB47DD0E0E31, 8: 0x93F5F5799A932462, 16: 0x3F2ACC7F57C29BDB, 24: 0xB8AD50C6F649AF94,
           32: 0x7127512F72F27CCE, 40: 0x0E3EA96B5304A7D0, 48: 0xE612A3CB9ECBA951, 56: 0xB78DBFAF3A8D83BD}


@pytest.mark.parametrize("length", sorted(VECTORS))
def test_published_vectors(length):
    words = np.frombuffer(bytes(range(length)), dtype="<u8").reshape(1, length // 8)
    assert int(prf_crypto.siphash_words(KEY, words)[0]) == VECTORS[length]


def test_green_bits_are_siphash_of_the_message():
    """token_bits(context_state(...)) is SipHash of (stream, context..., token) as 64-bit words."""
    rng = np.random.default_rng(1)
    ctx = rng.integers(0, 50000, size=(20, 3))
    toks = rng.integers(0, 50000, size=20)
    st = prf_crypto.context_state(KEY, ctx, stream=prf.EMS)
    msg = np.concatenate([np.full((20, 1), prf.EMS), ctx, toks[:, None]], axis=1)
    assert np.array_equal(prf_crypto.token_bits(st, toks), prf_crypto.siphash_words(KEY, msg))


@njit(cache=True)
def _nb_bits(k0, k1, contexts, tokens, stream):
    out = np.empty((contexts.shape[0], tokens.shape[0]), dtype=np.uint64)
    st = np.empty(prf_crypto.STATE_WORDS, dtype=np.uint64)
    for i in range(contexts.shape[0]):
        prf_crypto.context_state_nb(k0, k1, contexts[i], stream, st)
        for j in range(tokens.shape[0]):
            out[i, j] = prf_crypto.token_bits_nb(st, tokens[j])
    return out


@pytest.mark.parametrize("h", [1, 2, 4])
def test_numpy_numba_torch_bit_identical(h):
    rng = np.random.default_rng(h)
    key = int(rng.integers(0, 2**63)) << 64 | int(rng.integers(0, 2**63)) * 2 + 1
    ctx = rng.integers(0, 128000, size=(30, h))
    toks = rng.integers(0, 128000, size=200)
    ref = prf_crypto.token_bits(prf_crypto.context_state(key, ctx)[:, None, :], toks[None, :])
    k0, k1 = prf_crypto.key_words(key)
    assert np.array_equal(ref, _nb_bits(np.uint64(k0), np.uint64(k1), ctx, toks, prf.GREEN))
    torch = pytest.importorskip("torch")
    from sims.torch_backend import prf_crypto_torch as pt

    st = pt.context_state(key, torch.from_numpy(ctx))
    got = pt.token_bits(st[:, None, :], torch.from_numpy(toks)[None, :]).numpy().view(np.uint64)
    assert np.array_equal(ref, got)
    mask = pt.green_mask(st, 1000, 0.25).numpy()
    assert np.array_equal(mask, prf_crypto.is_green(prf_crypto.context_state(key, ctx)[:, None, :], np.arange(1000)[None, :], 0.25))


def test_green_fraction_is_gamma():
    """Seed 0: 2e5 (context, token) pairs; two-sided exact binomial test at alpha = 1e-3."""
    rng = np.random.default_rng(0)
    st = prf_crypto.context_state(KEY, rng.integers(0, 50000, size=(200, 1)))
    g = prf_crypto.is_green(st[:, None, :], rng.integers(0, 50000, size=(200, 1000)), 0.25)
    assert binomtest(int(g.sum()), g.size, 0.25).pvalue > 1e-3


@pytest.mark.parametrize("key, match", [(b"short", "16 bytes"), (2**128, r"2\*\*128"), (-1, r"2\*\*128"), (1.5, "float"),
                                        (True, "bool")])
def test_bad_key(key, match):
    with pytest.raises(ValueError, match=match):
        prf_crypto.key_words(key)


def test_siphash_generation_round_trip():
    """SRL delta 4 on news (V = 256), 20 texts of 64 tokens, keyed by SipHash: the generator's colours
    (Numba) are the NumPy reference's, every text is detected at p < 1e-4 with its key and none with
    a key differing in one bit, and a saved record keeps prf and key."""
    from sims.core import windows
    from sims.detect.families.detectors import score
    from sims.detect.stats.scores import token_scores
    from sims.lm.synthetic import open_synthetic
    from sims.watermarks.generate import generate_synthetic

    g = generate_synthetic(open_synthetic("news", vocab_size=256), "srl", n=20, T=64, seed=0, key=KEY, prf="siphash", gamma=0.25, delta=4.0)
    assert g.meta["prf"] == "siphash" and g.meta["key"] == int.from_bytes(KEY, "little")
    ref = prf_crypto.is_green(prf_crypto.context_state(KEY, windows.windows(g.tokens, g.prompts, 1)), g.tokens, 0.25)
    numba, scored = token_scores(g.tokens, g.prompts, KEY, gamma=0.25, prf="siphash")
    assert scored.all() and np.array_equal(numba > 0.5, ref)
    assert ref.mean() > 0.6  # the boost lands on the SipHash green lists
    assert np.all(score(g).log10_p < -4)
    assert np.all(score(g, key=g.meta["key"] ^ 1).log10_p > -4)


def test_siphash_key_bad_input():
    from sims.detect.stats.scores import score_redgreen
    from sims.lm.synthetic import open_synthetic
    from sims.torch_backend.processors import SRLProcessor
    from sims.watermarks.generate import generate_synthetic

    lm = open_synthetic("news", vocab_size=64)
    toks, prompts = np.zeros((1, 4), dtype=np.int64), np.zeros((1, 1), dtype=np.int64)
    for bad in (b"short", "a string", 2**128, -1, 1.5):
        with pytest.raises(ValueError, match="key must be"):
            generate_synthetic(lm, "srl", n=1, T=2, seed=0, key=bad, prf="siphash")
        with pytest.raises(ValueError, match="key must be"):
            score_redgreen(toks, prompts, bad, 0.25, prf="siphash")
        with pytest.raises(ValueError, match="key must be"):
            SRLProcessor(vocab_size=64, key=bad, prf="siphash")
    with pytest.raises(ValueError, match="key must be in \\[0, 2\\*\\*64\\)"):
        generate_synthetic(lm, "srl", n=1, T=2, seed=0, key=KEY)  # 16 bytes need prf="siphash"
    with pytest.raises(ValueError, match="prf must be"):
        score_redgreen(toks, prompts, 1, 0.25, prf="blake2b")
    with pytest.raises(ValueError, match="siphash"):
        generate_synthetic(lm, "ems", n=1, T=2, seed=0, key=KEY, prf="siphash")
