r"""A keyed cryptographic PRF for deployment: SipHash-2-4 of (stream, context, token).

:mod:`sims.core.prf` mixes with SplitMix64, which is fast and well distributed but not a
PRF in the cryptographic sense: its finaliser is an invertible public map, so the green
lists are only as secret as the 64-bit key word, and structure between related keys or
contexts is not ruled out by any security argument.  SipHash-2-4 (Aumasson and Bernstein,
2012) is a PRF with a 128-bit key designed for exactly this use: short inputs, secret key,
outputs an adversary may observe.  The green bit of (context :math:`c_1..c_h`, token k) is

.. math:: u = \mathrm{SipHash\text{-}2\text{-}4}_K(\mathrm{le64}(s)\,\|\,\mathrm{le64}(c_1)\,\|\cdots\|\,\mathrm{le64}(c_h)\,\|\,\mathrm{le64}(k)),
          \qquad k \in G(c) \iff \lfloor u / 2^{11} \rfloor < \lfloor \gamma\, 2^{53} \rfloor

with the same threshold as :func:`sims.core.prf.green_threshold`, so the null of every
detector is unchanged (each pair green with probability gamma, independently, as long as
SipHash is a PRF).  The message is whole 64-bit words, so SipHash's last block is the
length byte alone; the state after the words of (s, context) is shared by the V tokens of
one step (:func:`context_state`), leaving per token one compression (2 rounds), the length
block (2 rounds) and the finalisation (4 rounds).

Three implementations, tested bit-identical and against the published SipHash-2-4 test
vectors: the NumPy reference here, the Numba scalars ``*_nb``, and the torch version
(:mod:`sims.torch_backend.prf_crypto_torch`).  Their cost against SplitMix64 is measured in
``bench/bench_prf.py``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from sims.core.prf import GREEN, green_threshold

C0 = 0x736F6D6570736575  #: "somepseudorandomlygeneratedbytes"
C1 = 0x646F72616E646F6D  #: SipHash's initial constant of v1 ("dorandom")
C2 = 0x6C7967656E657261  #: SipHash's initial constant of v2 ("lygenera")
C3 = 0x7465646279746573  #: SipHash's initial constant of v3 ("tedbytes")
STATE_WORDS = 5  #: v0, v1, v2, v3 and the final (length) block


def key_words(key) -> tuple[int, int]:
    """The 128-bit key as SipHash's (k0, k1): 16 bytes, or an int in [0, 2**128) read little-endian.

    Parameters
    ----------
    key : bytes or int
        16 bytes, or an int in [0, 2**128).

    Returns
    -------
    tuple of int
        (k0, k1), the low and high 64-bit words.

    Raises
    ------
    ValueError
        If ``key`` is neither 16 bytes nor an int in range.
    """
    if isinstance(key, (bytes, bytearray)):
        if len(key) != 16:
            raise ValueError(f"key must be 16 bytes (128 bits) for SipHash-2-4; got {len(key)} bytes")
        b = bytes(key)
    elif isinstance(key, (int, np.integer)) and not isinstance(key, bool):
        if not (0 <= int(key) < 1 << 128):
            raise ValueError(f"key must be an int in [0, 2**128) or 16 bytes; got {key!r}")
        b = int(key).to_bytes(16, "little")
    else:
        raise ValueError(f"key must be 16 bytes or an int in [0, 2**128); got {type(key).__name__}")
    return int.from_bytes(b[:8], "little"), int.from_bytes(b[8:], "little")


# ------------------------------------------------------------ numpy reference
def _rotl(x: np.ndarray, b: int) -> np.ndarray:
    return (x << np.uint64(b)) | (x >> np.uint64(64 - b))


def sip_rounds(v0, v1, v2, v3, n: int, rotl=_rotl):
    """``n`` SipRounds on the state (v0, v1, v2, v3): arrays of uint64 (NumPy, the default
    ``rotl``) or of int64 with wrap-around (torch, with its own ``rotl``).

    Parameters
    ----------
    v0, v1, v2, v3 : array_like
        The four state words.
    n : int
        Number of rounds (2 per message word, 4 to finish, for SipHash-2-4).
    rotl : callable, optional
        ``rotl(x, b)``, left rotation of 64-bit words by b bits.

    Returns
    -------
    tuple of array_like
        The state (v0, v1, v2, v3) after the rounds.
    """
    for _ in range(n):
        v0 = v0 + v1
        v1 = rotl(v1, 13) ^ v0
        v0 = rotl(v0, 32)
        v2 = v2 + v3
        v3 = rotl(v3, 16) ^ v2
        v0 = v0 + v3
        v3 = rotl(v3, 21) ^ v0
        v2 = v2 + v1
        v1 = rotl(v1, 17) ^ v2
        v2 = rotl(v2, 32)
    return v0, v1, v2, v3


def _rounds(v: list, n: int) -> None:
    v[:] = sip_rounds(*v, n)


def _absorb(v: list, m: np.ndarray) -> None:
    v[3] = v[3] ^ m
    _rounds(v, 2)
    v[0] = v[0] ^ m


def siphash_words(key, words) -> np.ndarray:
    """SipHash-2-4 of the little-endian bytes of each row of 64-bit ``words`` (..., n).

    Parameters
    ----------
    key : bytes or int
        The 128-bit key (:func:`key_words`).
    words : array_like of int, shape (..., n)
        The messages, 8 bytes per word.

    Returns
    -------
    ndarray of uint64, shape ``words.shape[:-1]``
        One 64-bit hash per row.
    """
    k0, k1 = key_words(key)
    w = np.asarray(words).astype(np.uint64)
    shape = w.shape[:-1]
    with np.errstate(over="ignore"):
        v = [np.full(shape, x, dtype=np.uint64) for x in (k0 ^ C0, k1 ^ C1, k0 ^ C2, k1 ^ C3)]
        for j in range(w.shape[-1]):
            _absorb(v, w[..., j])
        return _finish(v, np.uint64(((8 * w.shape[-1]) & 0xFF) << 56))


def _finish(v: list, last) -> np.ndarray:
    _absorb(v, last)
    v[2] = v[2] ^ np.uint64(0xFF)
    _rounds(v, 4)
    return v[0] ^ v[1] ^ v[2] ^ v[3]


def context_state(key, context, stream: int = GREEN) -> np.ndarray:
    """SipHash state after the words (stream, context...), shape ``context.shape[:-1] + (5,)``:
    v0..v3 and the length block of the full message (one more word, the token, follows).

    Parameters
    ----------
    key : bytes or int
        The 128-bit key (:func:`key_words`).
    context : array_like of int, shape (..., h)
        Context windows, oldest token first.
    stream : int, default GREEN
        Stream word absorbed first (separates the uses of one key).

    Returns
    -------
    ndarray of uint64, shape ``context.shape[:-1] + (5,)``
        The states, one per window, to finish with :func:`token_bits`.
    """
    k0, k1 = key_words(key)
    ctx = np.asarray(context, dtype=np.int64)
    shape = ctx.shape[:-1]
    with np.errstate(over="ignore"):
        v = [np.full(shape, x, dtype=np.uint64) for x in (k0 ^ C0, k1 ^ C1, k0 ^ C2, k1 ^ C3)]
        _absorb(v, np.full(shape, stream, dtype=np.uint64))
        for j in range(ctx.shape[-1]):
            _absorb(v, ctx[..., j].astype(np.uint64))
    last = np.full(shape, ((8 * (ctx.shape[-1] + 2)) & 0xFF) << 56, dtype=np.uint64)
    return np.stack(v + [last], axis=-1)


def token_bits(state, tokens) -> np.ndarray:
    """SipHash-2-4 of (stream, context, token) from the context's :func:`context_state` (broadcast).

    Parameters
    ----------
    state : array_like of uint64, shape (..., 5)
        Context states.
    tokens : int or array_like of int
        Token ids, broadcast with ``state.shape[:-1]``.

    Returns
    -------
    ndarray of uint64
        The 64-bit PRF word of each (context, token) pair.
    """
    s = np.asarray(state, dtype=np.uint64)
    t = np.asarray(tokens, dtype=np.int64).astype(np.uint64)
    shape = np.broadcast_shapes(s.shape[:-1], t.shape)
    with np.errstate(over="ignore"):
        v = [np.broadcast_to(s[..., i], shape).copy() for i in range(4)]
        _absorb(v, np.broadcast_to(t, shape))
        return _finish(v, np.broadcast_to(s[..., 4], shape))


def is_green(state, tokens, gamma: float) -> np.ndarray:
    """Bernoulli(gamma) green-list membership with the threshold of :mod:`sims.core.prf`.

    Parameters
    ----------
    state : array_like of uint64, shape (..., 5)
        Context states (:func:`context_state`).
    tokens : int or array_like of int
        Token ids, broadcast with ``state.shape[:-1]``.
    gamma : float
        Green-list fraction, in (0, 1).

    Returns
    -------
    ndarray of bool
        Whether each (context, token) pair is green.
    """
    return (token_bits(state, tokens) >> np.uint64(11)) < np.uint64(green_threshold(gamma))


# ---------------------------------------------------------------- numba scalars
@njit(cache=True, inline="always")
def _rotl_nb(x, b):
    return (x << np.uint64(b)) | (x >> np.uint64(64 - b))


@njit(cache=True, inline="always")
def _rounds_nb(v0, v1, v2, v3, n):
    for _ in range(n):
        v0 = v0 + v1
        v1 = _rotl_nb(v1, 13) ^ v0
        v0 = _rotl_nb(v0, 32)
        v2 = v2 + v3
        v3 = _rotl_nb(v3, 16) ^ v2
        v0 = v0 + v3
        v3 = _rotl_nb(v3, 21) ^ v0
        v2 = v2 + v1
        v1 = _rotl_nb(v1, 17) ^ v2
        v2 = _rotl_nb(v2, 32)
    return v0, v1, v2, v3


@njit(cache=True)
def context_state_nb(k0, k1, context, stream, out):
    """:func:`context_state` of one window into ``out`` (5 uint64)."""
    v0 = np.uint64(k0) ^ np.uint64(C0)
    v1 = np.uint64(k1) ^ np.uint64(C1)
    v2 = np.uint64(k0) ^ np.uint64(C2)
    v3 = np.uint64(k1) ^ np.uint64(C3)
    m = np.uint64(stream)
    v3 ^= m
    v0, v1, v2, v3 = _rounds_nb(v0, v1, v2, v3, 2)
    v0 ^= m
    for tok in context:
        m = np.uint64(tok)
        v3 ^= m
        v0, v1, v2, v3 = _rounds_nb(v0, v1, v2, v3, 2)
        v0 ^= m
    out[0], out[1], out[2], out[3] = v0, v1, v2, v3
    out[4] = np.uint64(((8 * (context.shape[0] + 2)) & 0xFF) << 56)


@njit(cache=True, inline="always")
def token_bits_nb(state, k):
    """:func:`token_bits` of one token."""
    m = np.uint64(k)
    v0, v1, v2, v3 = state[0], state[1], state[2], state[3] ^ m
    v0, v1, v2, v3 = _rounds_nb(v0, v1, v2, v3, 2)
    v0 ^= m
    last = state[4]
    v3 ^= last
    v0, v1, v2, v3 = _rounds_nb(v0, v1, v2, v3, 2)
    v0 ^= last
    v2 ^= np.uint64(0xFF)
    v0, v1, v2, v3 = _rounds_nb(v0, v1, v2, v3, 4)
    return v0 ^ v1 ^ v2 ^ v3


@njit(cache=True, inline="always")
def is_green_nb(state, k, threshold):
    return (token_bits_nb(state, k) >> np.uint64(11)) < np.uint64(threshold)

