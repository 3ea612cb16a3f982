"""Numba kernels of :mod:`sims.detect.anytime.sequential` (the public functions there validate and document).

Every e-process here is a uniform mixture over J constant bets; the kernels return, per text,
the first token at which the mixture's log e-value reaches ``bound = log(1/alpha)`` (1-based
position in the text, -1 if never) and the final statistics.  For the linear families
(red-green counts, EMS scores) the log-wealth of bet j is ``a[j] * s + b[j] * n`` (s the summed
statistic, n the scored tokens), so the crossing is ``s >= thresholds[n]``, a table computed
once (``linear_thresholds`` in :mod:`sims.detect.anytime.sequential`): the scan costs one comparison
per token more than the fixed-length detector's.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from sims.core import prf, rng
from sims.core.wordset import seen_before
from sims.detect.stats import _kernels as K


@njit(cache=True, inline="always")
def _scan_text_crossing(i, tokens, prompts, lengths, seed_c, h, dedup, code, thr, tokmix, size, thresholds):
    """Text i as in :func:`sims.detect.stats._kernels.scan_sums`, plus the first position where the
    running sum of scored statistics reaches ``thresholds[scored so far]``."""
    P = prompts.shape[1]
    table = np.zeros(size, dtype=np.uint64)
    has_zero = np.zeros(1, dtype=np.bool_)
    acc = 0.0
    cnt = 0
    stop = -1
    for t in range(lengths[i]):
        y = tokens[i, t]
        ctx = K._ctx(seed_c, prompts, tokens, i, t, P, h)
        pair = ctx ^ prf.mix64_nb(np.uint64(y) + np.uint64(prf.C_TOKEN))
        if dedup and seen_before(table, pair, has_zero):
            continue
        acc += K._value(code, ctx, prf.mix64_nb(pair), thr, tokmix)
        cnt += 1
        if stop < 0 and acc >= thresholds[cnt]:
            stop = t + 1
    return acc, cnt, stop


@njit(cache=True, parallel=True)
def scan_crossings(tokens, prompts, lengths, key, h, dedup, stream, code, thr, tokmix, thresholds):
    """Per text: summed statistic, scored tokens and first crossing position (texts in parallel)."""
    n = tokens.shape[0]
    sums, counts, stops = np.zeros(n), np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
    seed_c, size = K._scan_setup(tokens.shape[1], key, dedup, stream)
    for i in prange(n):
        sums[i], counts[i], stops[i] = _scan_text_crossing(i, tokens, prompts, lengths, seed_c, h, dedup, code, thr, tokmix, size, thresholds)
    return sums, counts, stops


@njit(cache=True)
def scan_crossings_serial(tokens, prompts, lengths, key, h, dedup, stream, code, thr, tokmix, thresholds):
    """:func:`scan_crossings` on one thread (small inputs: no parallel-region barrier)."""
    n = tokens.shape[0]
    sums, counts, stops = np.zeros(n), np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
    seed_c, size = K._scan_setup(tokens.shape[1], key, dedup, stream)
    for i in range(n):
        sums[i], counts[i], stops[i] = _scan_text_crossing(i, tokens, prompts, lengths, seed_c, h, dedup, code, thr, tokmix, size, thresholds)
    return sums, counts, stops


@njit(cache=True)
def value_crossings(values, scored, lengths, thresholds):
    """:func:`scan_crossings` from per-token statistics already computed (``values``, ``scored``)."""
    n, T = values.shape
    sums, counts, stops = np.zeros(n), np.zeros(n, dtype=np.int64), np.full(n, -1, dtype=np.int64)
    for i in range(n):
        acc = 0.0
        cnt = 0
        for t in range(min(lengths[i], T)):
            if scored[i, t]:
                acc += values[i, t]
                cnt += 1
                if stops[i] < 0 and acc >= thresholds[cnt]:
                    stops[i] = t + 1
        sums[i], counts[i] = acc, cnt
    return sums, counts, stops


@njit(cache=True, inline="always")
def _logmeanexp(x):
    m = x.max()
    acc = 0.0
    for j in range(x.shape[0]):
        acc += math.exp(x[j] - m)
    return m + math.log(acc / x.shape[0])


@njit(cache=True, inline="always")
def _colour_log_e(n, k, up, dn, memo):
    """Log e-value of one colour's mixture after n of its tokens, k of them green: bet j's
    log-wealth is ``k up[j] + (n - k) dn[j]``, so it depends on (n, k) only and is read from
    ``memo`` (NaN = not yet computed) when ``memo`` is large enough."""
    if n < memo.shape[0]:
        v = memo[n, k]
        if v == v:
            return v
    J = up.shape[0]
    top = -math.inf
    for j in range(J):
        top = max(top, k * up[j] + (n - k) * dn[j])
    acc = 0.0
    for j in range(J):
        acc += math.exp(k * up[j] + (n - k) * dn[j] - top)
    v = top + math.log(acc / J)
    if n < memo.shape[0]:
        memo[n, k] = v
    return v


@njit(cache=True)
def markov_crossings(values, scored, lengths, gamma, q_red, q_green, bound):
    """AutoCov e-process: a mixture over bets on each colour given the previous one.

    After a red token (the first token counts as after red, as Algorithm DualGA_autocov colours
    y_0 red) bet j's factor is the likelihood ratio of Bernoulli(``q_red[j]``) to Bernoulli(gamma);
    after a green one, of Bernoulli(``q_green[j]``).  The two mixtures multiply (each updates on
    its own tokens).  Returns per text the final log e-value, its running maximum and the first
    crossing position (-1 if never).  Each mixture's log e-value is a function of its token and
    green counts, memoised per call when there are more texts than tokens per text (the table,
    (T+1)^2 per colour, is then smaller than the input)."""
    n, T = values.shape
    up_r, dn_r = np.log(q_red / gamma), np.log((1.0 - q_red) / (1.0 - gamma))
    up_g, dn_g = np.log(q_green / gamma), np.log((1.0 - q_green) / (1.0 - gamma))
    M = T + 1 if n > T else 0
    memo_r, memo_g = np.full((M, M), np.nan), np.full((M, M), np.nan)
    final, peak, stops = np.zeros(n), np.zeros(n), np.full(n, -1, dtype=np.int64)
    for i in range(n):
        nr, kr, ng, kg = 0, 0, 0, 0
        er, eg, best = 0.0, 0.0, 0.0
        prev_green = False
        for t in range(min(lengths[i], T)):
            if not scored[i, t]:
                continue
            x = values[i, t] > 0.5
            if prev_green:
                ng += 1
                kg += x
                eg = _colour_log_e(ng, kg, up_g, dn_g, memo_g)
            else:
                nr += 1
                kr += x
                er = _colour_log_e(nr, kr, up_r, dn_r, memo_r)
            prev_green = x
            best = max(best, er + eg)
            if stops[i] < 0 and er + eg >= bound:
                stops[i] = t + 1
        final[i], peak[i] = er + eg, best
    return final, peak, stops


@njit(cache=True)
def hit_crossings(hits, probs_hit, length, c, bound):
    """Keyed-order (ITS / UW) e-process of one text: bet j's factor on step t is
    ``1 + c[j] (H_t - pi_t) / pi_t`` (the likelihood ratio of "the key forces a hit with
    probability c[j]" to the null hit probability pi_t).  Returns the final log e-value, its
    running maximum and the first crossing position (-1 if never)."""
    J = c.shape[0]
    w = np.zeros(J)
    e, best, stop = 0.0, 0.0, -1
    for t in range(length):
        p = max(probs_hit[t], 1e-300)  # a hit of null probability 0 is infinite evidence
        for j in range(J):
            w[j] += math.log1p(c[j] * (1.0 - p) / p) if hits[t] else math.log1p(-c[j])
        e = _logmeanexp(w)
        best = max(best, e)
        if stop < 0 and e >= bound:
            stop = t + 1
    return e, best, stop


@njit(cache=True, parallel=True)
def null_prefix_crossings(n_texts, T, gamma, seed, anytime_k, naive_k, final_k):
    """Simulated null texts (i.i.d. Bernoulli(gamma) colours of T distinct pairs; text i uses
    the counter stream (seed, i)): per text, the first prefix length whose green count reaches
    ``anytime_k[n]`` (the e-process crosses), ``naive_k[n]`` (the prefix p-value is below the
    level), and whether the full text reaches ``final_k`` (the fixed-length test rejects).
    Tables are indexed by the prefix length n (entries > n mean unreachable)."""
    stop_any = np.full(n_texts, -1, dtype=np.int64)
    stop_naive = np.full(n_texts, -1, dtype=np.int64)
    fixed = np.zeros(n_texts, dtype=np.bool_)
    for i in prange(n_texts):
        key = rng.stream_key_nb(seed, i)
        k = 0
        for t in range(T):
            if rng.uniform_nb(key, t) < gamma:
                k += 1
            if stop_any[i] < 0 and k >= anytime_k[t + 1]:
                stop_any[i] = t + 1
            if stop_naive[i] < 0 and k >= naive_k[t + 1]:
                stop_naive[i] = t + 1
        fixed[i] = k >= final_k
    return stop_any, stop_naive, fixed


@njit(cache=True)
def prefix_extremes(values, scored, lengths, naive_table, anytime_table):
    """Per text, over its scored prefixes: the smallest ``naive_table[n, k]`` (log10 fixed-length
    p-value of k greens in n scored tokens) and the largest ``anytime_table[n, k]`` (log10 e-value),
    n and k counted up to each scored token (0 and -inf / 0 when nothing is scored)."""
    n_texts, T = values.shape
    low, high = np.zeros(n_texts), np.zeros(n_texts)
    for i in range(n_texts):
        k, n = 0, 0
        lo, hi = 0.0, 0.0
        for t in range(min(lengths[i], T)):
            if not scored[i, t]:
                continue
            n += 1
            if values[i, t] > 0.5:
                k += 1
            lo = min(lo, naive_table[n, k])
            hi = max(hi, anytime_table[n, k])
        low[i], high[i] = lo, hi
    return low, high
