"""The Numba scan of :mod:`sims.detect.scores` for green lists seeded by a scheme other than ``lefthash``
(:mod:`sims.core.seeding`): per token its colour and, with dedup, whether its (seed, token) pair is new.

The pair ``s ^ mix(y + C_TOKEN)`` names what decides the colour, so dedup counts each distinct
(seed, token) once -- under ``minhash``, ``skipgram`` and ``selfhash`` different windows share a seed,
and their repeats must not count twice (the null is Binomial over distinct pairs).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from sims.core import prf, seeding
from sims.core.wordset import seen_before, set_size


@njit(cache=True, parallel=True)
def scan_seeded(tokens, prompts, lengths, key, h, dedup, scheme, thr, values, scored):
    """``values[i, t]`` = 1.0 if token t of text i is green after its ``h``-token window under seeding
    ``scheme`` (0.0 red or unscored), ``scored[i, t]`` whether it is scored."""
    n, T = tokens.shape
    P = prompts.shape[1]
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
            for j in range(h):
                w = t - h + j
                window[j] = prompts[i, P + w] if w < 0 else tokens[i, w]
            pair = seeding.pair_nb(key, window, tokens[i, t], scheme, wa)
            if dedup and seen_before(table, pair, has_zero):
                continue
            scored[i, t] = True
            values[i, t] = 1.0 if (prf.mix64_nb(pair) >> np.uint64(11)) < np.uint64(thr) else 0.0
