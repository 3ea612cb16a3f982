"""The CPU backend of :class:`.fused.FusedBoost`: one Numba kernel per decoding step.

For each row (in parallel): the green list of :mod:`sims.core.prf` (one branch-free PRF round per
token id), :math:`G = \\sum_k p_k 1\\{k\\ \\mathrm{green}\\}` in float64 from a vectorised 1-ulp
exp (:mod:`sims.watermarks._kernels`; masked ``-inf`` logits weigh exactly 0), the closed-form KL
and DG of :mod:`theory._scalar`, the record of step t, the DualGA update of lambda (:func:`theory.dualga_update`), and the
boosted logits ``x + lambda * green`` written in the output's dtype -- the same numbers as the
tensor reference (``backend="torch"``), which hashes the vocabulary in int64 tensor
operations and is several times slower on a CPU (``python -m bench --only bench_torch``).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from sims.core import prf
from sims.watermarks import _kernels as kern
from theory import _scalar


@njit(cache=True, fastmath={"reassoc", "contract", "nsz"})
def _masses(e, green, x, mx):
    """(sum e, green sum e, sum e (x - mx)) over the vocabulary; masked ids (e = 0) add nothing."""
    s = 0.0
    g = 0.0
    a = 0.0
    for k in range(e.shape[0]):
        s += e[k]
        g += e[k] * green[k]
        a += e[k] * (x[k] - mx) if e[k] > 0.0 else 0.0
    return s, g, a


@njit(cache=True, parallel=True)
def boost_step(logits, out, window, V, key, threshold, tokmix, lam, Delta, eta, M, records, t, watermark):
    """Boost ``logits[:, :V]`` into ``out[:, :V]``; record step ``t`` (slot min(t, T - 1)) and
    update ``lam`` when ``eta != 0``.  Records: KL, G, DG, lambda, and the entropy of p_t,
    :math:`H = \\log s - \\sum_k e_k (x_k - m) / s` with :math:`e_k = e^{x_k - m}`, :math:`s = \\sum_k e_k`.
    Returns the number of NaN logits of each row."""
    B = logits.shape[0]
    slot = min(t, records.shape[2] - 1)
    nan = np.zeros(B, dtype=np.int64)
    for b in prange(B):
        x = np.empty(V)
        for k in range(V):
            x[k] = logits[b, k]
        mx = -np.inf
        for k in range(V):
            if x[k] > mx:
                mx = x[k]
            if x[k] != x[k]:
                nan[b] += 1
        if not watermark:
            for k in range(V):
                out[b, k] = x[k]
            continue
        green = np.empty(V)
        kern.green_into(prf.context_hash_nb(key, window[b], prf.GREEN), tokmix, threshold, green)
        G = 0.0
        ent = np.nan
        if mx > -np.inf:
            e = np.empty(V)
            kern.exp_shifted_into(x, mx, e)
            for k in range(V):
                e[k] = 0.0 if x[k] == -np.inf else e[k]
            s, gs, a = _masses(e, green, x, mx)
            G = min(max(gs / s, 0.0), 1.0)
            ent = math.log(s) - a / s
        records[4, b, slot] = ent
        d = lam[b]
        dg = _scalar.dg(d, G)
        records[0, b, slot] = _scalar.kl_given_dg(d, G, dg)
        records[1, b, slot] = G
        records[2, b, slot] = dg
        records[3, b, slot] = d
        if eta != 0.0:
            lam[b] = _scalar.dualga_update(d, dg, Delta, eta, M)
        for k in range(V):
            out[b, k] = x[k] + d * green[k]
    return nan
