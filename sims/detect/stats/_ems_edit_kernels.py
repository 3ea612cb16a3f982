"""Numba kernels of the edit-tolerant EMS score (:mod:`sims.detect.stats.ems_edit`); NumPy references live there."""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from sims.core import prf

BLOCKS = 64  #: blocks of fresh keys scored in parallel


@njit(cache=True)
def window_hashes(seq, h, key, out):
    """``out[s]`` <- the EMS context hash (stream ``prf.EMS``) of the window of ``h`` ids ending at text
    token s, ``seq[s : s + h]``, for s = 0..L-1 (s = 0: the prompt's last ``h`` ids); ``seq`` is the
    prompt's last ``h`` ids followed by the L text ids."""
    for s in range(out.shape[0]):
        out[s] = prf.context_hash_nb(key, seq[s : s + h], prf.EMS)


@njit(cache=True)
def align_prefix_max(y, ctx, band, gap, D, out):
    """Best insertion alignment score of every prefix of the text ``y`` (module docstring of
    :mod:`sims.detect.stats.ems_edit`).

    D[0] = 0, D[t] = max over s in [t - 1 - band, t - 1] of D[s] - gap (t - 1 - s) - ln(1 - r(ctx[s], y_t));
    ``out[t-1]`` = max over s in [t - band, t] of D[s] - gap (t - s).  ``D`` has L + 1 cells.
    """
    L = y.shape[0]
    D[0] = 0.0
    for t in range(1, L + 1):
        best = -np.inf
        for s in range(max(0, t - 1 - band), t):
            v = D[s] - gap * (t - 1 - s) - math.log1p(-prf.uniform_nb(ctx[s], y[t - 1]))
            if v > best:
                best = v
        D[t] = best
        m = -np.inf
        for s in range(max(0, t - band), t + 1):
            v = D[s] - gap * (t - s)
            if v > m:
                m = v
        out[t - 1] = m


@njit(cache=True, parallel=True)
def exceedances(seq, h, key, fresh, band, gap, obs, counts):
    """``obs`` <- the prefix maxima under ``key``; ``counts[t]`` += the keys of ``fresh`` whose prefix-t
    maximum reaches ``obs[t]`` (ties count: the p-value stays conservative).  The fresh keys are split
    into blocks scored in parallel; the counts are integers, so they do not depend on the thread count."""
    L = seq.shape[0] - h
    y = seq[h:]
    ctx = np.empty(L, dtype=np.uint64)
    window_hashes(seq, h, key, ctx)
    align_prefix_max(y, ctx, band, gap, np.empty(L + 1), obs)
    N = fresh.shape[0]
    nb = min(N, BLOCKS)
    part = np.zeros((nb, L), dtype=np.int64)
    for b in prange(nb):
        c, D, s = np.empty(L, dtype=np.uint64), np.empty(L + 1), np.empty(L)
        for r in range(b * N // nb, (b + 1) * N // nb):
            window_hashes(seq, h, fresh[r], c)
            align_prefix_max(y, c, band, gap, D, s)
            for t in range(L):
                if s[t] >= obs[t]:
                    part[b, t] += 1
    for b in range(nb):
        for t in range(L):
            counts[t] += part[b, t]
