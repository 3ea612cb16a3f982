"""Numba kernels of :mod:`sims.detect.stats.scores` (the public functions there validate and document).

Token layout: text i is ``prompts[i]`` followed by ``tokens[i, :lengths[i]]``; the context of
generated position t is the ``h`` tokens before it, oldest first (prompt tokens included), as
in :mod:`sims.core.prf`.  Statistic codes: ``GREEN_BERNOULLI`` (1 if green), ``GREEN_PARTITION``
(1 if among the ``n_green`` smallest PRF words of the context), ``EMS`` (-log(1 - r)).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from sims.core import prf, prf_crypto, rng
from sims.core.wordset import seen_before, set_size

GREEN_BERNOULLI = 0
GREEN_PARTITION = 1
EMS_SCORE = 2


@njit(cache=True, inline="always")
def _ctx(seed_c, prompts, tokens, i, t, P, h):
    """Context hash of position t of text i (same words as :func:`sims.core.prf.context_hash_nb`)."""
    c = seed_c
    for j in range(t - h, t):
        tok = prompts[i, P + j] if j < 0 else tokens[i, j]
        c = prf.mix64_nb(c ^ (np.uint64(tok) * np.uint64(prf.C_CONTEXT) + np.uint64(1)))
    return c


@njit(cache=True, inline="always")
def _value(code, ctx, w, thr, tokmix):
    """Statistic of a token whose PRF word is ``w = mix64(ctx ^ mix64(y + C_TOKEN))``."""
    if code == GREEN_BERNOULLI:
        return 1.0 if (w >> np.uint64(11)) < np.uint64(thr) else 0.0
    if code == GREEN_PARTITION:
        # green iff fewer than n_green (= thr) tokens have a strictly smaller word: same as
        # "w <= the n_green-th smallest word" used by generation
        below = 0
        for k in range(tokmix.shape[0]):
            if prf.mix64_nb(ctx ^ tokmix[k]) < w:
                below += 1
        return 1.0 if below < thr else 0.0
    return -math.log1p(-((w >> np.uint64(11)) + 0.5) * (1.0 / 9007199254740992.0))


@njit(cache=True, inline="always")
def _scan_text(i, tokens, prompts, lengths, seed_c, h, dedup, code, thr, tokmix, size, values, scored):
    """Text i: the statistic summed over its scored tokens (in the text, and the first occurrence
    of their (context, token) pair when ``dedup``) and their number; when the rows ``values`` and
    ``scored`` are not empty, also each scored token's statistic and mark (left untouched elsewhere)."""
    P = prompts.shape[1]
    per_token = values.shape[0] > 0
    table = np.zeros(size, dtype=np.uint64)
    has_zero = np.zeros(1, dtype=np.bool_)
    acc = 0.0
    cnt = 0
    for t in range(lengths[i]):
        y = tokens[i, t]
        ctx = _ctx(seed_c, prompts, tokens, i, t, P, h)
        pair = ctx ^ prf.mix64_nb(np.uint64(y) + np.uint64(prf.C_TOKEN))
        if dedup and seen_before(table, pair, has_zero):
            continue
        v = _value(code, ctx, prf.mix64_nb(pair), thr, tokmix)
        acc += v
        cnt += 1
        if per_token:
            values[t] = v
            scored[t] = True
    return acc, cnt


@njit(cache=True, inline="always")
def _scan_setup(T, key, dedup, stream):
    """The stream's context seed and the dedup table size of a scan of texts of width ``T``."""
    seed_c = prf.mix64_nb(np.uint64(key) + np.uint64(prf.GOLDEN) * np.uint64(stream + 1))
    return seed_c, set_size(T) if dedup else 1


@njit(cache=True, parallel=True)
def scan_sums(tokens, prompts, lengths, key, h, dedup, stream, code, thr, tokmix):
    """Per text: the statistic summed over scored tokens, and the number of scored tokens
    (texts in parallel; :func:`scan_sums_serial` for small inputs)."""
    n = tokens.shape[0]
    sums, counts = np.zeros(n), np.zeros(n, dtype=np.int64)
    seed_c, size = _scan_setup(tokens.shape[1], key, dedup, stream)
    no_values, no_marks = np.empty(0), np.empty(0, dtype=np.bool_)
    for i in prange(n):
        sums[i], counts[i] = _scan_text(i, tokens, prompts, lengths, seed_c, h, dedup, code, thr, tokmix, size, no_values, no_marks)
    return sums, counts


@njit(cache=True)
def scan_sums_serial(tokens, prompts, lengths, key, h, dedup, stream, code, thr, tokmix):
    """:func:`scan_sums` on one thread: no parallel-region barrier, which on a loaded 2-core
    machine can cost milliseconds when another process holds a core."""
    n = tokens.shape[0]
    sums, counts = np.zeros(n), np.zeros(n, dtype=np.int64)
    seed_c, size = _scan_setup(tokens.shape[1], key, dedup, stream)
    no_values, no_marks = np.empty(0), np.empty(0, dtype=np.bool_)
    for i in range(n):
        sums[i], counts[i] = _scan_text(i, tokens, prompts, lengths, seed_c, h, dedup, code, thr, tokmix, size, no_values, no_marks)
    return sums, counts


@njit(cache=True, parallel=True)
def scan_tokens(tokens, prompts, lengths, key, h, dedup, stream, code, thr, tokmix, values, scored):
    """Per token: its statistic (``values``) and whether it is scored (in the text, and the
    first occurrence of its (context, token) pair when ``dedup``).  Unscored cells get 0."""
    seed_c, size = _scan_setup(tokens.shape[1], key, dedup, stream)
    for i in prange(tokens.shape[0]):
        values[i, :] = 0.0
        scored[i, :] = False
        _scan_text(i, tokens, prompts, lengths, seed_c, h, dedup, code, thr, tokmix, size, values[i], scored[i])


@njit(cache=True, parallel=True)
def scan_marks(tokens, prompts, lengths, key, h, dedup, stream, code, thr, tokmix, values, scored):
    """Per token of each text: its statistic (``values``, for repeated (context, token) pairs too) and
    whether it is scored (the first occurrence of its pair when ``dedup``); 0 and False past the text's
    end.  One hash per token: what :func:`scan_tokens` (values of scored tokens) and the colours of the
    repeated ones would take two scans for."""
    seed_c, size = _scan_setup(tokens.shape[1], key, dedup, stream)
    P = prompts.shape[1]
    for i in prange(tokens.shape[0]):
        values[i, :] = 0.0
        scored[i, :] = False
        table = np.zeros(size, dtype=np.uint64)
        has_zero = np.zeros(1, dtype=np.bool_)
        for t in range(lengths[i]):
            ctx = _ctx(seed_c, prompts, tokens, i, t, P, h)
            pair = ctx ^ prf.mix64_nb(np.uint64(tokens[i, t]) + np.uint64(prf.C_TOKEN))
            values[i, t] = _value(code, ctx, prf.mix64_nb(pair), thr, tokmix)
            scored[i, t] = not (dedup and seen_before(table, pair, has_zero))


@njit(cache=True, parallel=True)
def scan_tokens_siphash(tokens, prompts, lengths, k0, k1, h, dedup, thr, values, scored):
    """:func:`scan_tokens` for Bernoulli green lists keyed by SipHash-2-4 (:mod:`sims.core.prf_crypto`):
    the 64-bit SipHash word of (stream, window, token) is both the colour and, with ``dedup``,
    the pair's name."""
    n, T = tokens.shape
    P = prompts.shape[1]
    size = set_size(T) if dedup else 1
    for i in prange(n):
        table = np.zeros(size, dtype=np.uint64)
        has_zero = np.zeros(1, dtype=np.bool_)
        window = np.empty(h, dtype=np.int64)
        st = np.empty(prf_crypto.STATE_WORDS, dtype=np.uint64)
        for t in range(T):
            values[i, t] = 0.0
            scored[i, t] = False
        for t in range(lengths[i]):
            for j in range(h):
                w = t - h + j
                window[j] = prompts[i, P + w] if w < 0 else tokens[i, w]
            prf_crypto.context_state_nb(k0, k1, window, prf.GREEN, st)
            word = prf_crypto.token_bits_nb(st, tokens[i, t])
            if dedup and seen_before(table, word, has_zero):
                continue
            scored[i, t] = True
            values[i, t] = 1.0 if (word >> np.uint64(11)) < np.uint64(thr) else 0.0


@njit(cache=True)
def layout(tokens):
    """One pass over the ids: per-text length up to the first -1, and per-text min and max id."""
    n, T = tokens.shape
    lengths = np.full(n, T, dtype=np.int64)
    lo = np.zeros(n, dtype=np.int64)
    hi = np.zeros(n, dtype=np.int64)
    for i in range(n):
        a = tokens[i, 0] if T else 0
        b = a
        for t in range(T):
            y = tokens[i, t]
            a = min(a, y)
            b = max(b, y)
            if y < 0 and lengths[i] == T:
                lengths[i] = t
        lo[i] = a
        hi[i] = b
    return lengths, lo, hi


ITS_MODE = 0
UW_DELTA_MODE = 1
UW_GAMMA_MODE = 2


@njit(cache=True)
def keyed_order_hits(probs, seq, P, h, key, perm, pos, its_key, mode, probs_hit, hit_marks):
    """Hits of one text under ITS / UW-delta / UW-gamma (``mode``) and each step's null hit probability.

    ``probs`` (T, V): the next-token distributions along the text; ``seq``: its prompt (``P``
    ids) then its T tokens; ``perm`` / ``pos``: the keyed vocabulary order and its inverse;
    ``its_key``: ITS's uniform stream.  Writes ``probs_hit[t]`` (and, when ``hit_marks`` is not
    empty, whether step t is a hit) and returns the hit count (tests/detect/stats/test_detect.py holds a
    step-by-step NumPy reference).
    """
    T, V = probs.shape
    cum = np.empty(V)
    hits = 0
    for t in range(T):
        sctx = prf.context_hash_nb(key, seq[P + t - h : P + t], prf.STEP)
        y = seq[P + t]
        reverse = mode == UW_GAMMA_MODE and prf.uniform_nb(sctx, V + 1) < 0.5
        acc = 0.0
        for r in range(V):
            acc += probs[t, perm[V - 1 - r] if reverse else perm[r]]
            cum[r] = acc
        r = V - 1 - pos[y] if reverse else pos[y]
        lo = cum[r - 1] if r > 0 else 0.0
        hi = cum[r]
        if mode == UW_GAMMA_MODE:  # hit: y's interval reaches past 1/2; null mass of such tokens
            straddle = np.searchsorted(cum, 0.5)
            probs_hit[t] = 1.0 - (cum[straddle - 1] if straddle > 0 else 0.0)
            hit = hi > 0.5
        else:
            u = rng.uniform_nb(its_key, t) if mode == ITS_MODE else prf.uniform_nb(sctx, V)
            probs_hit[t] = probs[t, y]
            hit = lo < u <= hi
        hits += hit
        if hit_marks.shape[0] > 0:
            hit_marks[t] = hit
    return hits
