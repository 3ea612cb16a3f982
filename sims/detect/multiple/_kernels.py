"""Numba kernel of :func:`sims.detect.multiple.score_redgreen_keys`: green counts of every text
under every key in one pass over the tokens (the public function validates and documents)."""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from sims.core import prf
from sims.detect.stats import _kernels as K


@njit(cache=True, parallel=True)
def multi_key_sums(tokens, prompts, lengths, scored, keys, h, stream, code, thr, tokmix):
    """``out[k, i]``: the statistic of text i summed over its ``scored`` tokens under ``keys[k]``.

    ``scored`` (n, T) is the dedup pattern, which does not depend on the key (a (context,
    token) pair repeats or not whatever the key; the keyed 64-bit pair words of one key collide
    with probability ~T^2 / 2^64), so it is computed once and every key only hashes."""
    n = tokens.shape[0]
    nk = keys.shape[0]
    P = prompts.shape[1]
    seeds = np.empty(nk, dtype=np.uint64)
    for k in range(nk):
        seeds[k] = prf.mix64_nb(keys[k] + np.uint64(prf.GOLDEN) * np.uint64(stream + 1))
    out = np.zeros((nk, n))
    for i in prange(n):
        acc = np.zeros(nk)  # one text's sums, contiguous (out[:, i] is strided by n)
        for t in range(lengths[i]):
            if not scored[i, t]:
                continue
            ym = prf.mix64_nb(np.uint64(tokens[i, t]) + np.uint64(prf.C_TOKEN))
            for k in range(nk):
                ctx = K._ctx(seeds[k], prompts, tokens, i, t, P, h)
                acc[k] += K._value(code, ctx, prf.mix64_nb(ctx ^ ym), thr, tokmix)
        out[:, i] = acc
    return out
