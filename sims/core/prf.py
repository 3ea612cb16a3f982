"""The one keyed pseudo-random function behind every green list and key stream.

Everything random that a watermark derives from the key is

    u(key, context, k, stream) = mix(ctx_hash(key, context, stream) ^ mix(k + C_TOKEN))

a 64-bit word, where ``mix`` is the SplitMix64 finaliser (a bijective avalanche
mixer on 64-bit words), ``context`` is the last ``h`` token ids before the
position and ``k`` a candidate token id.  ``stream`` separates independent uses
(green lists, EMS uniforms, ...) of one key.

Green lists (``stream = GREEN``) come in two kinds:

* ``"bernoulli"`` (default): token k is green iff the top 53 bits of u are below
  ``floor(gamma * 2**53)``.  Each (context, token) pair is green independently
  with probability gamma (rounded down to a multiple of 2**-53), so on text that
  does not depend on the key the green count of n distinct (context, token)
  pairs is exactly Binomial(n, gamma).  The green-list size per context is itself
  Binomial(``|V|``, gamma), not exactly gamma ``|V|``.  Membership costs O(1) per token,
  which is what makes detection fast.
* ``"partition"``: the exact ``floor(gamma |V|)`` tokens with the smallest u are
  green (the paper's Algorithm kirchen).  The null is the same Bernoulli per
  distinct pair when the key is random, but checking one token costs O(``|V|``).

What it promises, and what not.  SplitMix64's finaliser is a bijection of 64-bit words
with full avalanche: outputs are uniform and pairwise decorrelated to the precision any
simulation here can see (``tests/core/test_prf.py``), and one (context, token) pair costs
one mixing round.  It is *not* a cryptographic PRF: the mixer is public and invertible, the
secret is one 64-bit word, and nothing bounds what an adversary who sees many (context,
token, colour) triples can learn about other ones -- beyond the statistical stealing of
:mod:`sims.steal`, which needs no weakness of the PRF at all.  For deployment,
:mod:`sims.core.prf_crypto` offers the same green lists keyed by SipHash-2-4 with a 128-bit
key (same threshold, same null); ``bench/bench_prf.py`` measures its cost.

The NumPy functions here are the reference; :mod:`sims` Numba kernels call the
scalar ``*_nb`` versions, and the torch backend reimplements the same bit
operations on int64 tensors -- tests prove all three identical.
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: 2**64 - 1: reduces a Python int to a 64-bit word.
MASK64 = (1 << 64) - 1
#: SplitMix64's increment (2**64 / golden ratio): spaces the keys of streams and of the context hash's start.
GOLDEN = 0x9E3779B97F4A7C15
#: SplitMix64 finaliser's first multiplier (``mix``: xor-shift 30, times M1).
M1 = 0xBF58476D1CE4E5B9
#: SplitMix64 finaliser's second multiplier (xor-shift 27, times M2, xor-shift 31).
M2 = 0x94D049BB133111EB
#: Salt of a candidate token: ``mix(k + C_TOKEN)`` is the context-free half of u (module docstring).
C_TOKEN = 0x632BE59BD9B4E019
#: Multiplier of a context token in the context hash (``mix(c ^ (x * C_CONTEXT + 1))`` per token).
C_CONTEXT = 0xD6E8FEB86659FD93

#: Stream of the green lists.
GREEN = 0
#: Stream of the EMS (Gumbel-max) uniforms.
EMS = 1
#: Stream of the per-step sampling uniforms keyed by the watermark.
STEP = 2

#: 2**53: a PRF word's top 53 bits, read as an integer, are uniform on 0..TOP53-1 (green threshold, uniforms).
TOP53 = 1 << 53


def green_threshold(gamma: float) -> int:
    """Integer threshold on the top 53 bits: green iff (u >> 11) < threshold.

    Parameters
    ----------
    gamma : float
        Green-list fraction, in (0, 1).

    Returns
    -------
    int
        ``floor(gamma * 2**53)``.

    Raises
    ------
    ValueError
        If ``gamma`` is outside (0, 1).
    """
    if not (0.0 < gamma < 1.0):
        raise ValueError(f"gamma must be in (0, 1); got {gamma!r}")
    return int(gamma * TOP53)


# ---------------------------------------------------------------- numba scalars
@njit(cache=True, inline="always")
def mix64_nb(z):
    z = np.uint64(z)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(M1)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(M2)
    return z ^ (z >> np.uint64(31))


@njit(cache=True)
def context_hash_nb(key, context, stream):
    """Hash of (key, stream, context tokens oldest-first)."""
    c = mix64_nb(np.uint64(key) + np.uint64(GOLDEN) * np.uint64(stream + 1))
    for tok in context:
        c = mix64_nb(c ^ (np.uint64(tok) * np.uint64(C_CONTEXT) + np.uint64(1)))
    return c


@njit(cache=True, inline="always")
def token_bits_nb(ctx, k):
    return mix64_nb(ctx ^ mix64_nb(np.uint64(k) + np.uint64(C_TOKEN)))


@njit(cache=True, inline="always")
def is_green_nb(ctx, k, threshold):
    return (token_bits_nb(ctx, k) >> np.uint64(11)) < np.uint64(threshold)


@njit(cache=True, inline="always")
def uniform_nb(ctx, k):
    """A uniform in the open interval (0, 1) from the top 53 bits."""
    return ((token_bits_nb(ctx, k) >> np.uint64(11)) + 0.5) * (1.0 / 9007199254740992.0)


# ------------------------------------------------------------ numpy reference
def _mix64(z: np.ndarray) -> np.ndarray:
    z = np.asarray(z, dtype=np.uint64)
    with np.errstate(over="ignore"):
        z = (z ^ (z >> np.uint64(30))) * np.uint64(M1)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(M2)
    return z ^ (z >> np.uint64(31))


def context_hash(key: int, context, stream: int = GREEN) -> np.ndarray:
    """Vectorised context hash.

    Parameters
    ----------
    key : int
        The secret key, 0 <= key < 2**64.
    context : array_like of int, shape (..., h)
        The h previous token ids of each position, oldest first.
    stream : int
        Domain separation (``GREEN``, ``EMS``, ``STEP``).

    Returns
    -------
    ndarray of uint64, shape (...)
    """
    if not (0 <= int(key) <= MASK64):
        raise ValueError(f"key must be in [0, 2**64); got {key!r}")
    ctx = np.asarray(context, dtype=np.int64)
    with np.errstate(over="ignore"):
        seed = (np.uint64(int(key)) + np.array([GOLDEN * (stream + 1) & MASK64], dtype=np.uint64))[0]
        c = _mix64(np.full(ctx.shape[:-1], seed, dtype=np.uint64))
        for j in range(ctx.shape[-1]):
            c = _mix64(c ^ (ctx[..., j].astype(np.uint64) * np.uint64(C_CONTEXT) + np.uint64(1)))
    return c


def token_bits(ctx_hash, tokens) -> np.ndarray:
    """64-bit PRF output for each (context hash, token) pair (broadcast).

    Parameters
    ----------
    ctx_hash : int or array_like of uint64
        Context hashes.
    tokens : int or array_like of int
        Token ids, broadcast with ``ctx_hash``.

    Returns
    -------
    ndarray of uint64
        ``u = mix(ctx_hash ^ mix(k + C_TOKEN))`` per pair.
    """
    t = np.asarray(tokens, dtype=np.int64).astype(np.uint64)
    with np.errstate(over="ignore"):
        return _mix64(np.asarray(ctx_hash, dtype=np.uint64) ^ _mix64(t + np.uint64(C_TOKEN)))


def token_mix(vocab_size: int) -> np.ndarray:
    """``mix64(k + C_TOKEN)`` for every token id k: the context-free half of :func:`token_bits`,
    precomputed by the kernels so that each (context, token) pair costs one mixing round.

    Parameters
    ----------
    vocab_size : int
        Vocabulary size V.

    Returns
    -------
    ndarray of uint64, shape (V,)
        The mixed token words.
    """
    return _mix64(np.arange(vocab_size, dtype=np.uint64) + np.uint64(C_TOKEN))


def is_green(ctx_hash, tokens, gamma: float) -> np.ndarray:
    """Bernoulli(gamma) green-list membership (see module docstring).

    Parameters
    ----------
    ctx_hash : int or array_like of uint64
        Context hashes.
    tokens : int or array_like of int
        Candidate token ids, broadcast with ``ctx_hash``.
    gamma : float
        Green-list fraction, in (0, 1).

    Returns
    -------
    ndarray of bool
        Whether each (context, token) pair is green.
    """
    thr = np.uint64(green_threshold(gamma))
    return (token_bits(ctx_hash, tokens) >> np.uint64(11)) < thr


def green_mask(ctx_hash, vocab_size: int, gamma: float, kind: str = "bernoulli") -> np.ndarray:
    """Green mask over the whole vocabulary for one or more contexts.

    Parameters
    ----------
    ctx_hash : int or array_like of uint64
        Context hashes (:func:`context_hash`).
    vocab_size : int
        Vocabulary size V.
    gamma : float
        Green-list fraction, in (0, 1).
    kind : {"bernoulli", "partition"}
        Per-token Bernoulli(gamma) membership, or exactly ``floor(gamma V)`` green tokens (module docstring).

    Returns
    -------
    ndarray of bool, shape ``ctx_hash.shape + (vocab_size,)``
        True for green tokens.

    Raises
    ------
    ValueError
        If ``kind`` is neither.
    """
    ch = np.asarray(ctx_hash, dtype=np.uint64)[..., None]
    ks = np.arange(vocab_size, dtype=np.int64)
    if kind == "bernoulli":
        return is_green(ch, ks, gamma)
    if kind == "partition":
        bits = token_bits(ch, ks)
        n_green = int(np.floor(gamma * vocab_size))
        order = np.argsort(bits, axis=-1, kind="stable")
        mask = np.zeros(bits.shape, dtype=bool)
        np.put_along_axis(mask, order[..., :n_green], True, axis=-1)
        return mask
    raise ValueError(f"kind must be 'bernoulli' or 'partition'; got {kind!r}")


def uniforms(ctx_hash, tokens) -> np.ndarray:
    """Uniforms in (0, 1) for each (context hash, token) pair.

    Parameters
    ----------
    ctx_hash : int or array_like of uint64
        Context hashes.
    tokens : int or array_like of int
        Token ids, broadcast with ``ctx_hash``.

    Returns
    -------
    ndarray of float64
        ``((u >> 11) + 0.5) / 2**53``: the top 53 bits of the PRF word, centred in their cell.
    """
    return ((token_bits(ctx_hash, tokens) >> np.uint64(11)).astype(np.float64) + 0.5) / float(TOP53)
