"""Known-answer tests for the rest of sims/core: the counter RNG's stream keys, the keyed order of
ITS / UW, the exact-partition green list, the token mix, and SipHash-2-4 on whole messages.

Where the values come from (complements :mod:`tests.test_known_answers`):

* **independent computation**: plain-Python reimplementations written here from the formulas in
  the modules' docstrings (64-bit integers, no NumPy, no Numba) for the RNG stream keys, the keyed
  order, the partition list and the token mix; a plain-Python SipHash-2-4 written from Aumasson
  and Bernstein's paper (2012), itself checked first against the paper's own example (key
  00..0f, the 15-byte message 00..0e: a129ca6149be45e5) and the first entries of the reference
  ``vectors.h`` (messages of 0, 1, 2 bytes), then against :mod:`sims.core.prf_crypto` for the
  message layout the PRF uses;
* **literals** (written down once from the plain-Python reimplementations above, not from the
  package): a few stream keys, one keyed order and SipHash green-bit outputs, so that a changed
  constant fails here by name.
"""

from __future__ import annotations

import numpy as np
import pytest

from sims.core import keys, prf, prf_crypto, rng

MASK = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15


def _mix(z: int) -> int:
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def _stream_key(seed: int, stream: int) -> int:
    return _mix(seed ^ ((stream * GOLDEN) & MASK))


def _uniform(key: int, i: int) -> float:
    return ((_mix((key + i * GOLDEN) & MASK) >> 11) + 0.5) / 2.0**53


def _context_hash(key: int, context: list[int], stream: int) -> int:
    c = _mix((key + GOLDEN * (stream + 1)) & MASK)
    for t in context:
        c = _mix(c ^ ((t * 0xD6E8FEB86659FD93 + 1) & MASK))
    return c


def _bits(c: int, k: int) -> int:
    return _mix(c ^ _mix((k + 0x632BE59BD9B4E019) & MASK))


# ------------------------------------------------------------------ counter RNG


SEEDS_STREAMS = [(0, 0), (1, 0), (0, 1), (12345, 7), (MASK, 3), (2**40 + 5, 2**20)]


@pytest.mark.parametrize("seed, stream", SEEDS_STREAMS)
def test_stream_keys_and_uniforms_follow_the_formula(seed, stream):
    """stream_key(seed, s) = mix(seed ^ s * GOLDEN); uniform i = top 53 bits of mix(key + i GOLDEN), centred."""
    k = _stream_key(seed, stream)
    assert int(rng.stream_key(seed, stream)) == k
    assert int(rng.stream_key_nb(np.uint64(seed), np.uint64(stream))) == k
    i = np.array([0, 1, 2, 1000, 2**33 + 1])
    want = [_uniform(k, int(j)) for j in i]
    assert rng.uniforms(np.uint64(k), i).tolist() == want
    assert [rng.uniform_nb(np.uint64(k), int(j)) for j in i] == want


def test_stream_key_literals():
    """Written down once from the plain-Python formula above; (0, 1) is SplitMix64's first output from
    state 0 (splitmix64.c), an independent value."""
    assert [hex(_stream_key(s, t)) for s, t in SEEDS_STREAMS[:4]] == [
        "0x0", "0x5692161d100b05e5", "0xe220a8397b1dcdaf", "0x9378b9d8ea31f81d"]
    assert [hex(int(rng.stream_key(s, t))) for s, t in SEEDS_STREAMS[:4]] == [
        "0x0", "0x5692161d100b05e5", "0xe220a8397b1dcdaf", "0x9378b9d8ea31f81d"]


# ------------------------------------------------------------------ keyed order, partition, token mix


@pytest.mark.parametrize("key, V", [(42, 8), (15485863, 50), (0, 1)])
def test_keyed_order_is_the_argsort_of_the_step_stream(key, V):
    c = _context_hash(key, [], prf.STEP)
    want = sorted(range(V), key=lambda k: (_bits(c, k), k))
    assert keys.keyed_order(key, V).tolist() == want


def test_keyed_order_literal():
    assert keys.keyed_order(42, 8).tolist() == [0, 4, 1, 5, 2, 7, 3, 6]


@pytest.mark.parametrize("gamma, V", [(0.25, 40), (0.5, 7), (0.1, 9)])
def test_partition_green_list_is_the_floor_gamma_v_smallest_words(gamma, V):
    key, ctx = 99, [3, 17]
    c = _context_hash(key, ctx, prf.GREEN)
    n_green = int(gamma * V)  # floor for positive values
    smallest = sorted(range(V), key=lambda k: (_bits(c, k), k))[:n_green]
    mask = prf.green_mask(prf.context_hash(key, np.array(ctx)), V, gamma, kind="partition")
    assert np.flatnonzero(mask).tolist() == sorted(smallest) and mask.sum() == n_green
    bern = prf.green_mask(prf.context_hash(key, np.array(ctx)), V, gamma)
    assert np.flatnonzero(bern).tolist() == [k for k in range(V) if (_bits(c, k) >> 11) < int(gamma * 2**53)]


def test_token_mix_is_the_context_free_half():
    assert [int(x) for x in prf.token_mix(5)] == [_mix((k + 0x632BE59BD9B4E019) & MASK) for k in range(5)]


def test_green_threshold_is_floor_gamma_2_53():
    for g in (0.25, 0.1, 1 / 3, 0.5 - 2**-50):
        assert prf.green_threshold(g) == int(g * 2**53) and prf.green_threshold(g) <= g * 2**53 < prf.green_threshold(g) + 1


# ------------------------------------------------------------------ SipHash-2-4


def _rotl(x: int, b: int) -> int:
    return ((x << b) | (x >> (64 - b))) & MASK


def _sipround(v):
    v0, v1, v2, v3 = v
    v0 = (v0 + v1) & MASK
    v1 = _rotl(v1, 13) ^ v0
    v0 = _rotl(v0, 32)
    v2 = (v2 + v3) & MASK
    v3 = _rotl(v3, 16) ^ v2
    v0 = (v0 + v3) & MASK
    v3 = _rotl(v3, 21) ^ v0
    v2 = (v2 + v1) & MASK
    v1 = _rotl(v1, 17) ^ v2
    v2 = _rotl(v2, 32)
    return [v0, v1, v2, v3]


def siphash24(key: bytes, msg: bytes) -> int:
    """SipHash-2-4 as the paper specifies it (any message length)."""
    k0, k1 = int.from_bytes(key[:8], "little"), int.from_bytes(key[8:], "little")
    v = [k0 ^ 0x736F6D6570736575, k1 ^ 0x646F72616E646F6D, k0 ^ 0x6C7967656E657261, k1 ^ 0x7465646279746573]
    full = len(msg) // 8 * 8
    blocks = [int.from_bytes(msg[i:i + 8], "little") for i in range(0, full, 8)]
    blocks.append(int.from_bytes(msg[full:], "little") | ((len(msg) & 0xFF) << 56))
    for m in blocks:
        v[3] ^= m
        v = _sipround(_sipround(v))
        v[0] ^= m
    v[2] ^= 0xFF
    for _ in range(4):
        v = _sipround(v)
    return v[0] ^ v[1] ^ v[2] ^ v[3]


KEY = bytes(range(16))


def test_plain_siphash_reproduces_the_papers_vectors():
    """The paper's worked example (Appendix A) and vectors.h entries for 0, 1, 2 bytes."""
    assert siphash24(KEY, bytes(range(15))) == 0xA129CA6149BE45E5
    assert siphash24(KEY, b"") == 0x726FDB47DD0E0E31
    assert siphash24(KEY, bytes(range(1))) == 0x74F839C593DC67FD
    assert siphash24(KEY, bytes(range(2))) == 0x0D6C8009D9A94F5A
    from tests.core.test_prf_crypto import VECTORS  # the whole-word lengths 0, 8, ..., 56

    assert all(siphash24(KEY, bytes(range(n))) == v for n, v in VECTORS.items())


def _words(ws) -> bytes:
    return b"".join(int(w).to_bytes(8, "little") for w in ws)


@pytest.mark.parametrize("h", [0, 1, 3])
def test_siphash_prf_is_siphash_of_stream_context_token_words(h):
    r = np.random.default_rng(h + 10)
    key = int(r.integers(0, 2**62)) << 64 | int(r.integers(0, 2**62))
    kb = key.to_bytes(16, "little")
    ctx = r.integers(0, 200000, size=(6, h))
    toks = r.integers(0, 200000, size=6)
    for stream in (prf.GREEN, prf.EMS):
        st = prf_crypto.context_state(key, ctx, stream=stream)
        got = [int(b) for b in prf_crypto.token_bits(st, toks)]
        assert got == [siphash24(kb, _words([stream, *ctx[i], toks[i]])) for i in range(6)]
    assert [int(x) for x in prf_crypto.siphash_words(kb, ctx[:, :h])] == [siphash24(kb, _words(c)) for c in ctx[:, :h]]
    green = prf_crypto.is_green(prf_crypto.context_state(kb, ctx), toks, 0.25)
    assert green.tolist() == [(siphash24(kb, _words([0, *ctx[i], toks[i]])) >> 11) < int(0.25 * 2**53) for i in range(6)]


def test_siphash_green_bits_literals():
    """SipHash of (GREEN, 17, 4093, k) under key 00..0f: written down once from :func:`siphash24`."""
    st = prf_crypto.context_state(KEY, np.array([17, 4093]))
    got = [int(b) for b in prf_crypto.token_bits(st, np.array([0, 1, 31999]))]
    assert got == [siphash24(KEY, _words([0, 17, 4093, k])) for k in (0, 1, 31999)]
    assert [hex(b) for b in got] == SIP_LITERALS


SIP_LITERALS = ["0x9eedf5fede7034c5", "0x1b1eda5d97c0c1f1", "0x604ad4330fa18b05"]
