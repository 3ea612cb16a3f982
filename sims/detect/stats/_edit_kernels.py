"""Numba kernels of the edit-tolerant ITS and EXP scores (:mod:`sims.detect.stats.edit_scores`,
:mod:`sims.detect.stats.exp_scores`): one banded alignment, :func:`align_band_max`, fed each one's match scores;
NumPy references live there."""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from sims.core import keys, prf

BLOCKS = 64  #: blocks of fresh keys scored in parallel (exp-edit)


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
def align_band_max(score, W, J, gap, out):
    """Best alignment score of every prefix of a text of L = ``score.shape[0]`` tokens against J key positions.

    D[t, j] = max(D[t-1, j-1] + score[t-1, j - t + W], D[t-1, j] - gap, D[t, j-1] - gap) on the band
    |t - j| <= W, D[0, j] = -gap j, D[t, 0] = -gap t; ``out[t-1]`` = max_j D[t, j] (t = 1..L).  ``score`` (L, 2 W + 1)
    holds the match score of text token t and key position j = t + d - W at column d (shared by ``its-edit``
    and ``exp-edit``).  Rows are kept as two bands of 2 W + 1 cells (offset j - t + W).
    """
    L = score.shape[0]
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
                    v = prev[d] + score[t - 1, d]
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
def its_band_scores(lo, hi, w, u, W, score):
    """``score[t-1, d]`` <- w_t 1{lo_t < u_j <= hi_t}, j = t + d - W (0 off the key), ITS's match scores."""
    L, J = lo.shape[0], u.shape[0]
    for t in range(1, L + 1):
        for d in range(2 * W + 1):
            j = t + d - W
            score[t - 1, d] = w[t - 1] if 1 <= j <= J and lo[t - 1] < u[j - 1] <= hi[t - 1] else 0.0


@njit(cache=True)
def align_prefix_max(lo, hi, w, u, W, gap, out):
    """Best ITS alignment score of every prefix of the text against the key uniforms ``u``: :func:`align_band_max`
    of the hit scores D[t-1, j-1] + w_t 1{lo_t < u_j <= hi_t} (:func:`its_band_scores`)."""
    score = np.empty((lo.shape[0], 2 * W + 1))
    its_band_scores(lo, hi, w, u, W, score)
    align_band_max(score, W, u.shape[0], gap, out)


@njit(cache=True)
def exp_band_scores(y, key, n, W, J, score):
    """``score[t-1, d]`` <- -ln(1 - xi_{(j-1) mod n, y_t}), j = t + d - W in [1, J] (0 elsewhere): EXP's match
    scores of text token t against key position j under ``key`` (:func:`sims.core.keys.position_hash_nb`)."""
    L = y.shape[0]
    for t in range(1, L + 1):
        for d in range(2 * W + 1):
            j = t + d - W
            if 1 <= j <= J:
                score[t - 1, d] = -math.log1p(-prf.uniform_nb(keys.position_hash_nb(key, j - 1, n), y[t - 1]))
            else:
                score[t - 1, d] = 0.0


@njit(cache=True, parallel=True)
def exp_exceedances(y, key, fresh, n, W, gap, obs, counts):
    """``obs`` <- EXP's prefix maxima under ``key`` (key positions 1..L + W); ``counts[t]`` += the keys of ``fresh``
    whose prefix-t maximum reaches ``obs[t]`` (ties count).  Blocks of fresh keys run in parallel; the counts are
    integers, so they do not depend on the thread count."""
    L = y.shape[0]
    J = L + W
    score = np.empty((L, 2 * W + 1))
    exp_band_scores(y, key, n, W, J, score)
    align_band_max(score, W, J, gap, obs)
    N = fresh.shape[0]
    nb = min(N, BLOCKS)
    part = np.zeros((nb, L), dtype=np.int64)
    for b in prange(nb):
        sc, s = np.empty((L, 2 * W + 1)), np.empty(L)
        for r in range(b * N // nb, (b + 1) * N // nb):
            exp_band_scores(y, fresh[r], n, W, J, sc)
            align_band_max(sc, W, J, gap, s)
            for t in range(L):
                if s[t] >= obs[t]:
                    part[b, t] += 1
    for b in range(nb):
        for t in range(L):
            counts[t] += part[b, t]


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
