"""Numba kernels of the edit-tolerant ITS score (:mod:`sims.detect.stats.edit_scores`); NumPy references live there."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def its_interval_ends(probs, tokens, perm, pos, lo, hi):
    """(lo_t, hi_t] of each token: the keyed-order CDF before and at the token (module docstring of
    :mod:`sims.detect.stats.edit_scores`), summed left to right as the generator sums it."""
    L, V = probs.shape
    for t in range(L):
        r = pos[tokens[t]]
        acc = 0.0
        for k in range(r):
            acc += probs[t, perm[k]]
        lo[t] = acc
        hi[t] = acc + probs[t, perm[r]]


@njit(cache=True)
def align_prefix_max(lo, hi, w, u, W, gap, out):
    """Best alignment score of every prefix of the text against the key uniforms ``u``.

    D[t, j] = max(D[t-1, j-1] + w_t 1{lo_t < u_j <= hi_t}, D[t-1, j] - gap, D[t, j-1] - gap) on the
    band |t - j| <= W, D[0, j] = -gap j, D[t, 0] = -gap t; ``out[t-1]`` = max_j D[t, j] (t = 1..L).
    Rows are kept as two bands of 2 W + 1 cells (offset j - t + W).
    """
    L, J = lo.shape[0], u.shape[0]
    B = 2 * W + 1
    ninf = -np.inf
    prev = np.full(B, ninf)
    cur = np.full(B, ninf)
    for d in range(W, B):  # row 0: j = d - W in [0, W]
        j = d - W
        if j <= J:
            prev[d] = -gap * j
    for t in range(1, L + 1):
        best = ninf
        for d in range(B):
            j = t + d - W
            if j < 0 or j > J:
                cur[d] = ninf
                continue
            if j == 0:
                v = -gap * t
            else:
                v = ninf
                # diagonal: prev row, same offset d (j-1 at row t-1 has offset d)
                if prev[d] > ninf:
                    x = u[j - 1]
                    s = w[t - 1] if lo[t - 1] < x <= hi[t - 1] else 0.0
                    v = prev[d] + s
                if d + 1 < B and prev[d + 1] - gap > v:  # up: (t-1, j) has offset d + 1
                    v = prev[d + 1] - gap
                if d > 0 and cur[d - 1] - gap > v:  # left: (t, j-1) has offset d - 1
                    v = cur[d - 1] - gap
            cur[d] = v
            if v > best:
                best = v
        out[t - 1] = best
        prev, cur = cur, prev


@njit(cache=True)
def exceedances(lo, hi, w, u_obs, U, W, gap, obs, counts, scratch):
    """``obs`` <- prefix maxima with the key's uniforms ``u_obs``; ``counts[t]`` <- the resamples (rows of
    ``U``) whose prefix-t maximum reaches ``obs[t]``."""
    align_prefix_max(lo, hi, w, u_obs, W, gap, obs)
    for r in range(U.shape[0]):
        align_prefix_max(lo, hi, w, U[r], W, gap, scratch)
        for t in range(obs.shape[0]):
            if scratch[t] >= obs[t]:
                counts[t] += 1
