"""The Numba scans for green lists seeded by a scheme other than ``lefthash`` (:mod:`sims.core.seeding`):
per token its colour and, with dedup, whether its (seed, token) pair is new (:mod:`sims.detect.stats.scores`,
:mod:`sims.detect.anytime.sequential`); every key's counts (:mod:`sims.detect.multiple`); the green masses and
the shared-coin corrections of the LR score (:mod:`sims.detect.stats.lr_scores`).  Each has a NumPy
reference (``*_reference`` here, or :func:`sims.detect.stats.scores.token_scores_reference`) that the tests
hold equal.

The pair ``s ^ mix(y + C_TOKEN)`` names what decides the colour, so dedup counts each distinct
(seed, token) once -- under ``minhash``, ``skipgram`` and ``selfhash`` different windows share a seed,
and their repeats must not count twice (the null is Binomial over distinct pairs).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from sims.core import prf, seeding
from sims.core.wordset import seen_before, set_size


@njit(cache=True, inline="always")
def _pair_at(tokens, prompts, i, t, key, h, scheme, window, wa, cluster_of):
    """The (seed, token) pair of token t of text i after its ``h``-token window (``window``, ``wa``: scratch;
    ``cluster_of``: ``semantic``'s cluster table, :func:`sims.core.seeding.cluster_table`)."""
    P = prompts.shape[1]
    for j in range(h):
        w = t - h + j
        window[j] = prompts[i, P + w] if w < 0 else tokens[i, w]
    return seeding.pair_nb(key, window, tokens[i, t], scheme, wa, cluster_of)


@njit(cache=True, parallel=True)
def scan_seeded(tokens, prompts, lengths, key, h, dedup, scheme, cluster_of, thr, values, scored):
    """``values[i, t]`` = 1.0 if token t of text i is green after its ``h``-token window under seeding
    ``scheme`` (0.0 red or unscored), ``scored[i, t]`` whether it is scored."""
    n, T = tokens.shape
    size = set_size(T) if dedup else 1
    for i in prange(n):
        table = np.zeros(size, dtype=np.uint64)
        has_zero = np.zeros(1, dtype=np.bool_)
        window = np.empty(h, dtype=np.int64)
        wa = np.empty(h, dtype=np.uint64)
        for t in range(T):
            values[i, t] = 0.0
            scored[i, t] = False
        for t in range(lengths[i]):
            pair = _pair_at(tokens, prompts, i, t, key, h, scheme, window, wa, cluster_of)
            if dedup and seen_before(table, pair, has_zero):
                continue
            scored[i, t] = True
            values[i, t] = 1.0 if (prf.mix64_nb(pair) >> np.uint64(11)) < np.uint64(thr) else 0.0


@njit(cache=True, parallel=True)
def multi_key_seeded_sums(tokens, prompts, lengths, keys, h, dedup, scheme, cluster_of, thr):
    """``green[k, i]``, ``scored[k, i]``: green and scored tokens of text i under ``keys[k]`` (as
    :func:`scan_seeded` key by key).  Unlike left-hash, the dedup pattern depends on the key (which
    window token holds the minimum hash, under ``minhash`` and ``selfhash``), so each key dedups anew."""
    n, T = tokens.shape
    nk = keys.shape[0]
    size = set_size(T) if dedup else 1
    green = np.zeros((nk, n))
    scored = np.zeros((nk, n), dtype=np.int64)
    for i in prange(n):
        table = np.zeros(size, dtype=np.uint64)
        has_zero = np.zeros(1, dtype=np.bool_)
        window = np.empty(h, dtype=np.int64)
        wa = np.empty(h, dtype=np.uint64)
        for k in range(nk):
            table[:] = 0
            has_zero[0] = False
            g, c = 0.0, 0
            for t in range(lengths[i]):
                pair = _pair_at(tokens, prompts, i, t, keys[k], h, scheme, window, wa, cluster_of)
                if dedup and seen_before(table, pair, has_zero):
                    continue
                c += 1
                if (prf.mix64_nb(pair) >> np.uint64(11)) < np.uint64(thr):
                    g += 1.0
            green[k, i], scored[k, i] = g, c
    return green, scored


@njit(cache=True)
def seeded_green_masses(probs, seq, P, h, key, scheme, cluster_of, thr, anchors, tokmix, G):
    """``G[t]`` = green mass of ``probs[t]`` under seeding ``scheme`` after the ``h`` tokens before position
    ``P + t`` of ``seq`` (``anchors[v] = a(v)`` for ``selfhash``, ``tokmix[v] = mix(v + C_TOKEN)``)."""
    V = probs.shape[1]
    green = np.empty(V)
    wa = np.empty(h, dtype=np.uint64)
    for t in range(probs.shape[0]):
        window = seq[P + t - h : P + t]
        if scheme == seeding.SELFHASH:
            seeding.window_hashes_into(key, window, wa)
            seeding.self_green_into(wa, anchors, tokmix, thr, green)
        else:
            s = seeding.seed_hash_nb(key, window, scheme, cluster_of)
            for v in range(V):
                green[v] = 1.0 if (prf.mix64_nb(s ^ tokmix[v]) >> np.uint64(11)) < np.uint64(thr) else 0.0
        g = 0.0
        for v in range(V):
            if green[v] > 0.5:
                g += probs[t, v]
        G[t] = g


def seeded_green_masses_reference(probs, seq, P, h, key, gamma, scheme, cluster_of=None) -> np.ndarray:
    """NumPy twin of :func:`seeded_green_masses`."""
    T, V = probs.shape
    windows = np.stack([seq[P + t - h : P + t] for t in range(T)])
    return np.sum(np.where(seeding.green_mask(key, windows, V, gamma, scheme, cluster_of), probs, 0.0), axis=1)


@njit(cache=True)
def shared_coin_mass(probs, seq, P, h, key, scheme, cluster_of, kept, X, g, out):
    """``out[u]`` = sum over the tokens y = y_t of the other ``kept`` positions t whose coin after window u is
    t's own coin (the pair (seed(w_u, y), y) equals (seed(w_t, y_t), y_t)) of ``probs[u, y] * (X[t] - g)``.

    Subtracted from position u's green mass it replaces those coins by their null mean ``g``, so that u's LR
    weight reads no colour it is scored on (:mod:`sims.detect.stats.lr_scores`).  A shared coin needs a shared
    seed: under ``minhash`` and ``skipgram`` two windows with the same seed; under ``selfhash`` a token whose
    own term is the minimum after both windows (the candidate salts the seed)."""
    L = probs.shape[0]
    seeds = np.empty(L, dtype=np.uint64)
    wa = np.empty((L, h), dtype=np.uint64)
    ay = np.empty(L, dtype=np.uint64)
    base = seeding.base_nb(key)
    for t in range(L):
        window = seq[P + t - h : P + t]
        if scheme == seeding.SELFHASH:
            seeding.window_hashes_into(key, window, wa[t])
            ay[t] = seeding.token_hash_nb(base, seq[P + t])
            seeds[t] = seeding.self_seed_nb(wa[t], ay[t])
        else:
            seeds[t] = seeding.seed_hash_nb(key, window, scheme, cluster_of)
    for u in range(L):
        acc = 0.0
        if kept[u]:
            for t in range(L):
                if not kept[t] or seq[P + t] == seq[P + u]:
                    continue
                s = seeding.self_seed_nb(wa[u], ay[t]) if scheme == seeding.SELFHASH else seeds[u]
                if s == seeds[t]:
                    acc += probs[u, seq[P + t]] * (X[t] - g)
        out[u] = acc


def shared_coin_mass_reference(probs, seq, P, h, key, scheme: str, kept, X, g, cluster_of=None) -> np.ndarray:
    """Plain-Python twin of :func:`shared_coin_mass`, from the PRF words of the (window, token) pairs."""
    L = probs.shape[0]
    seq = np.asarray(seq, dtype=np.int64)
    ys = seq[P : P + L]
    windows = np.stack([seq[P + t - h : P + t] for t in range(L)])
    word = seeding.words(key, windows[:, None, :], ys[None, :], scheme, cluster_of)  # word[u, t]: the coin of y_t after window u
    out = np.zeros(L)
    for u in np.flatnonzero(kept):
        for t in np.flatnonzero(kept):
            if ys[t] != ys[u] and word[u, t] == word[t, t]:
                out[u] += probs[u, ys[t]] * (X[t] - g)
    return out
