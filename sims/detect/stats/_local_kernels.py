"""Numba kernels of the red-green local score (:mod:`sims.detect.stats.local_scores`); NumPy references live there."""

from __future__ import annotations

import numpy as np
from numba import njit

from sims.detect.stats._score_kernels import _lae


@njit(cache=True)
def local_logsf(k, n, a, b, lg, lr, cur, nxt):
    """ln P(H_n >= k) of the local score of n i.i.d. steps +a (log-probability ``lg``) or -b (``lr``).

    The Lindley walk U_t = max(0, U_{t-1} + X_t), U_0 = 0, absorbed once it reaches k (then H_n >= k);
    log-mass of states 0..k-1 in ``cur`` / ``nxt`` (length >= k, overwritten); the absorbed log-mass
    is accumulated step by step (no 1 - survival, so no cancellation).
    """
    if k <= 0:
        return 0.0
    for u in range(k):
        cur[u] = -np.inf
    cur[0] = 0.0
    top = 0  # highest state with mass
    absorbed = -np.inf
    for _ in range(n):
        new_top = min(k - 1, top + a)
        for u in range(new_top + 1):
            nxt[u] = -np.inf
        for u in range(top + 1):
            v = cur[u]
            if v == -np.inf:
                continue
            g = u + a
            if g >= k:
                absorbed = _lae(absorbed, v + lg)
            else:
                nxt[g] = _lae(nxt[g], v + lg)
            r = u - b if u > b else 0
            nxt[r] = _lae(nxt[r], v + lr)
        top = new_top
        for u in range(top + 1):
            cur[u] = nxt[u]
    return absorbed


@njit(cache=True)
def local_logsf_many(k, n, a, b, lg, lr, out):
    """``out[i]`` = :func:`local_logsf` (k[i], n[i]) for every text."""
    m = 1
    for i in range(k.size):
        m = max(m, k[i])
    cur = np.empty(m)
    nxt = np.empty(m)
    for i in range(k.size):
        out[i] = local_logsf(k[i], n[i], a, b, lg, lr, cur, nxt)


@njit(cache=True)
def local_running(bits, scored, a, b, Hrun, start, stop):
    """Per text: ``Hrun[i, t]`` = the local score of the scored tokens among the first t + 1 (the largest
    sum of a x greens - b x reds over their segments), and the text positions [start, stop) of the
    first segment reaching the whole text's (start = stop = 0 when it is 0)."""
    n_txt, T = bits.shape
    for i in range(n_txt):
        u = 0
        s0 = 0
        best = 0
        bs = 0
        be = 0
        for t in range(T):
            if scored[i, t]:
                if u == 0:
                    s0 = t
                u = u + a if bits[i, t] > 0.5 else u - b
                if u <= 0:
                    u = 0
                elif u > best:
                    best = u
                    bs = s0
                    be = t + 1
            Hrun[i, t] = best
        start[i] = bs
        stop[i] = be
