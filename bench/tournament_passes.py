"""Issue 32: what one tournament (SynthID) step costs, pass by pass, against DualGA's one pass.

``python -m bench.tournament_passes [ROUNDS]`` times, on one step of the news LM (V = 32000) with the
factors a real solve gives, each whole-vocabulary pass of :mod:`sims.watermarks.tournament`'s kernel and
DualGA's fused green-mass pass (:func:`sims.watermarks._kernels.rotated_masses`), interleaved, best of
``ROUNDS`` rounds of 10 calls, in CPU time, and prints each pass over DualGA's.  At ``m = 30`` a step runs
the first pass, three scatters (one per block of 10 layers; the second and third also apply the block
before) and the records pass; the first pass and three bare scatters are the floor printed last, and beside it the floor of two wider blocks of 15
layers (two scatters into 2^15 classes).
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

from sims.core import prf
from sims.lm.synthetic import open_synthetic
from sims.watermarks import _kernels as kern
from sims.watermarks import tournament as tn


def pass_ratios(rounds: int = 40) -> dict:
    """CPU time of each pass over DualGA's pass (module docstring)."""
    lm = open_synthetic("news")
    V = lm.vocab_size
    tokmix = prf.token_mix(V)
    row = lm.table[3]
    a = 1.0 / row.sum()
    w, words, logf = np.empty(V), np.empty(V, dtype=np.uint64), np.zeros(V)
    low = np.uint64((1 << 30) - 1)
    ctx = np.uint64(987654321)
    tn._words_run(ctx, tokmix, row, a, w, words, low)
    p = w.copy()
    nc = 1 << tn.BLOCK_MAX
    M = np.uint64(nc - 1)
    bins, marg, tab, run_mass = np.empty(nc), np.empty(nc), np.empty(8 * nc), np.empty(8)
    M15, bins15 = np.uint64((1 << 15) - 1), np.empty(1 << 15)  # the wider blocks' bins (256 KiB: out of L1)
    fac, lfac = np.empty((3, nc)), np.empty((3, nc))
    for b in range(3):  # each block's factors from its own bins of p (a real solve's values)
        tn._bin(p, words, np.uint64(10 * b), M, bins)
        tn._solve_block(bins, 10, 2, fac[b], lfac[b], marg)
    u0, u10, u20 = np.uint64(0), np.uint64(10), np.uint64(20)
    blk_g, blk_r = np.empty(kern.n_blocks(V)), np.empty(kern.n_blocks(V))
    passes = {
        "dualga": lambda: kern.rotated_masses(ctx, tokmix, row, 77, prf.green_threshold(0.25), blk_g, blk_r),
        "first": lambda: tn._words_run(ctx, tokmix, row, a, w, words, low),
        "scatter": lambda: tn._bin(w, words, u0, M, bins),
        "scatter_2to15": lambda: tn._bin(w, words, u0, M15, bins15),
        "scatter_by_ids": lambda: tn._bin_by_ids(w, words, u0, M, tab),
        "apply_and_scatter": lambda: tn._apply_and_bin(w, words, logf, False, u0, M, fac[0], lfac[0], u10, M, bins),
        "records": lambda: tn._q_sums(w, words, logf, u20, M, fac[2], lfac[2], low, run_mass),
        "solve": lambda: tn._solve_block(bins, 10, 2, fac[1], lfac[1], marg),
    }
    best = dict.fromkeys(passes, np.inf)
    for f in passes.values():
        f()  # compile
    for _ in range(rounds):
        for k, f in passes.items():
            w[:] = p
            c0 = time.process_time()
            for _ in range(10):
                f()
            best[k] = min(best[k], (time.process_time() - c0) / 10)
    res = {f"{k}_over_dualga": best[k] / best["dualga"] for k in passes if k != "dualga"}
    res["dualga_pass_us"] = best["dualga"] * 1e6
    res["floor_m30_over_dualga"] = res["first_over_dualga"] + 3 * res["scatter_over_dualga"]
    res["floor_m30_two_blocks_of_15_over_dualga"] = res["first_over_dualga"] + 2 * res["scatter_2to15_over_dualga"]
    return res


if __name__ == "__main__":
    for k, v in pass_ratios(int(sys.argv[1]) if len(sys.argv) > 1 else 40).items():
        print(f"{k:28s} {v:8.3g}")
    print("load", os.getloadavg())
