"""The SipHash-2-4 Numba scalars (``context_state_nb``, ``token_bits_nb``, ``is_green_nb``) against the
published test vectors, without torch (the cross-backend test needs it), and the key's reading into
(k0, k1) at the ends of its range.

The kernels hash the message (stream, context..., token) of whole 64-bit words, so the reference
vectors of Aumasson and Bernstein's ``vectors.h`` (key 00..0f, message 00 01 .. (L-1)) for L = 16, 24,
..., 56 bytes are exactly a call with stream = word 0, context = the middle words, token = the last.
"""

from __future__ import annotations

import numpy as np
import pytest

from sims.core import prf, prf_crypto
from tests.core.test_prf_crypto import KEY, VECTORS

MASK = (1 << 64) - 1
K0, K1 = 0x0706050403020100, 0x0F0E0D0C0B0A0908  # KEY = bytes 00..0f, read little-endian


def _message_words(length: int) -> list[int]:
    b = bytes(range(length))
    return [int.from_bytes(b[i:i + 8], "little") for i in range(0, length, 8)]


def _numba_bits(words: list[int]) -> int:
    st = np.empty(prf_crypto.STATE_WORDS, dtype=np.uint64)
    prf_crypto.context_state_nb(np.uint64(K0), np.uint64(K1), np.array(words[1:-1], dtype=np.int64), words[0], st)
    return int(prf_crypto.token_bits_nb(st, words[-1]))


@pytest.mark.parametrize("length", [L for L in sorted(VECTORS) if L >= 16])
def test_numba_scalars_reproduce_the_published_vectors(length):
    assert _numba_bits(_message_words(length)) == VECTORS[length]


def test_numba_state_is_the_numpy_state_word_for_word():
    """v0..v3 and the length block of (stream, context) for h = 0, 1, 3, each stream: as context_state."""
    r = np.random.default_rng(4)
    for h in (0, 1, 3):
        ctx = r.integers(0, 2**40, size=h)
        for stream in (prf.GREEN, prf.EMS, prf.STEP):
            st = np.empty(prf_crypto.STATE_WORDS, dtype=np.uint64)
            prf_crypto.context_state_nb(np.uint64(K0), np.uint64(K1), ctx, stream, st)
            ref = prf_crypto.context_state(KEY, ctx[None, :], stream)[0]
            assert st.tolist() == ref.tolist(), (h, stream)
    assert prf_crypto.context_state(KEY, np.zeros((2, 3), dtype=np.int64)).shape == (2, prf_crypto.STATE_WORDS)


def test_numba_green_bit_is_strictly_below_the_threshold():
    """The threshold equal to a token's top 53 bits makes it red; one more makes it green (as the NumPy one)."""
    words = _message_words(24)
    st = np.empty(prf_crypto.STATE_WORDS, dtype=np.uint64)
    prf_crypto.context_state_nb(np.uint64(K0), np.uint64(K1), np.array(words[1:2], dtype=np.int64), words[0], st)
    top = VECTORS[24] >> 11
    assert not prf_crypto.is_green_nb(st, words[2], np.uint64(top))
    assert prf_crypto.is_green_nb(st, words[2], np.uint64(top + 1))
    gamma = top / 2.0**53  # exact: top < 2**53
    ref = prf_crypto.context_state(KEY, np.array([words[1:2]]), stream=words[0])
    assert prf_crypto.is_green(ref, np.array([words[2]]), gamma).tolist() == [False]
    assert prf_crypto.is_green(ref, np.array([words[2]]), (top + 1) / 2.0**53).tolist() == [True]


def test_key_words_read_the_key_little_endian_over_its_whole_range():
    assert prf_crypto.key_words(KEY) == (K0, K1)
    assert prf_crypto.key_words(bytearray(KEY)) == (K0, K1)
    assert prf_crypto.key_words(int.from_bytes(KEY, "little")) == (K0, K1)
    assert prf_crypto.key_words(np.uint64(5)) == (5, 0)
    assert prf_crypto.key_words(0) == (0, 0)
    assert prf_crypto.key_words((1 << 128) - 1) == (MASK, MASK)
    for n in (15, 17):
        with pytest.raises(ValueError, match=f"key must be 16 bytes \\(128 bits\\) for SipHash-2-4; got {n} bytes"):
            prf_crypto.key_words(bytes(n))
    for bad in (1 << 128, -1):
        with pytest.raises(ValueError, match="key must be an int in \\[0, 2\\*\\*128\\) or 16 bytes"):
            prf_crypto.key_words(bad)
    with pytest.raises(ValueError, match="key must be 16 bytes or an int in \\[0, 2\\*\\*128\\); got bool"):
        prf_crypto.key_words(False)
