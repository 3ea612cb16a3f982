"""Reduced DualGA simulator: steps/s of the Numba kernel vs a plain NumPy per-step
reference of the same algorithm and vs a minimal Numba loop (the floor).

Goal (issue 3): >= 2e7 steps/s on this 2-core machine, within 1.5x of the floor.
"""

from __future__ import annotations

import math
import time

import numpy as np
from numba import njit, prange

from sims.core import rng
from sims.reduced import gprocess, online
from sims.reduced import runner as reduced
from theory import _scalar


@njit(cache=True, parallel=True)
def _floor(R, T, seed, Delta, eta):
    """Minimal DualGA loop: uniform G, DG only (no KL, no colour, no process machinery)."""
    out = np.zeros(R)
    for r in prange(R):
        key = rng.stream_key_nb(seed, r)
        lam = 1.0
        acc = 0.0
        for t in range(T):
            G = rng.uniform_nb(key, t)
            e = math.exp(-lam)
            dg = G * (1.0 - G) * (1.0 - e) / (G + (1.0 - G) * e)
            acc += dg
            lam = _scalar.dualga_update(lam, dg, Delta, eta, 15.0)
        out[r] = acc
    return out


@njit(cache=True, parallel=True)
def _floor_same_math(R, T, seed, Delta, eta):
    """The same per-step math as ours (uniform G, exact KL and DG, colour draw), nothing else."""
    out = np.zeros(R)
    for r in prange(R):
        key = rng.stream_key_nb(seed, r)
        lam = 1.0
        acc = 0.0
        for t in range(T):
            G = rng.uniform_nb(key, 4 * t)
            dg = _scalar.dg(lam, G)
            kl = _scalar.kl_given_dg(lam, G, dg)
            acc += kl + (rng.uniform_nb(key, 4 * t + 2) < G + dg)
            lam = _scalar.dualga_update(lam, dg, Delta, eta, 15.0)
        out[r] = acc
    return out


def main(argv=None) -> dict:
    T, R = 10**7, 8
    res = {}
    for spec in ("uniform", "beta:2,2"):
        reduced.simulate("dualga", spec, T=1000, reps=2, with_opt=False)  # compile
        t0 = time.perf_counter()
        reduced.simulate("dualga", spec, T=T, reps=R, with_opt=False)
        res[f"ours_{spec}_steps_per_s"] = T * R / (time.perf_counter() - t0)
    _floor(2, 100, 0, 0.2, 0.001)
    t0 = time.perf_counter()
    _floor(R, T, 0, 0.2, 1 / math.sqrt(T))
    res["floor_steps_per_s"] = T * R / (time.perf_counter() - t0)
    _floor_same_math(2, 100, 0, 0.2, 0.001)
    t0 = time.perf_counter()
    _floor_same_math(R, T, 0, 0.2, 1 / math.sqrt(T))
    res["floor_same_math_steps_per_s"] = T * R / (time.perf_counter() - t0)
    proc = gprocess.parse_spec("uniform")
    ap, _ = reduced.controller_params("dualga", proc, 20000, Delta=0.2, gamma=None, eta=None, eta_mode="const", lam1=None, delta=None, M=15.0)
    t0 = time.perf_counter()
    online.run_reference(0, ap, proc, 0, 0, 20000)
    res["numpy_reference_steps_per_s"] = 20000 / (time.perf_counter() - t0)
    ours = res["ours_uniform_steps_per_s"]
    res["ratio_ours_over_numpy"] = ours / res["numpy_reference_steps_per_s"]
    res["ratio_floor_over_ours"] = res["floor_steps_per_s"] / ours
    res["ratio_same_math_floor_over_ours"] = res["floor_same_math_steps_per_s"] / ours
    print(f"ours, uniform G : {ours:.3e} steps/s  (goal >= 2e7)")
    print(f"ours, Beta(2,2) : {res['ours_beta:2,2_steps_per_s']:.3e} steps/s")
    print(f"floor, DG only  : {res['floor_steps_per_s']:.3e} steps/s  -> floor/ours = {res['ratio_floor_over_ours']:.2f}")
    print(f"floor, same math: {res['floor_same_math_steps_per_s']:.3e} steps/s  -> floor/ours = {res['ratio_same_math_floor_over_ours']:.2f} (goal <= 1.5)")
    print(f"numpy reference : {res['numpy_reference_steps_per_s']:.3e} steps/s  -> ours/numpy = {res['ratio_ours_over_numpy']:.0f}x")
    return res
