"""Offline optimum OPT(Delta): exact dual solver vs the CVXPY (CLARABEL) program.

Goal (issue 2): ``offline_opt(method="dual")`` at T = 1e6 under 1 s; print its
speed ratio to the CVXPY solve at T = 1e4.
"""

from __future__ import annotations

import time

import numpy as np

import theory


def _best_of(f, repeat: int) -> float:
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t0)
    return best


def main(argv=None) -> dict:
    rng = np.random.default_rng(0)
    Delta = 0.2
    G6 = rng.beta(2.0, 2.0, size=1_000_000)
    G4 = G6[:10_000]
    theory.offline_opt(G4[:10], Delta)  # compile
    t_dual_6 = _best_of(lambda: theory.offline_opt(G6, Delta), 5)
    t_dual_4 = _best_of(lambda: theory.offline_opt(G4, Delta), 20)
    t_cvx_4 = _best_of(lambda: theory.offline_opt(G4, Delta, method="cvxpy"), 2)
    d, c = theory.offline_opt(G4, Delta), theory.offline_opt(G4, Delta, method="cvxpy")
    res = {
        "dual_T1e6_s": t_dual_6,
        "dual_T1e4_s": t_dual_4,
        "cvxpy_T1e4_s": t_cvx_4,
        "ratio_cvxpy_over_dual_T1e4": t_cvx_4 / t_dual_4,
        "value_rel_diff_T1e4": abs(c.value / d.value - 1.0),
        "goal_dual_T1e6_under_1s": t_dual_6 < 1.0,
    }
    print(f"offline_opt dual, T=1e6 : {t_dual_6 * 1e3:8.1f} ms  (goal < 1000 ms)")
    print(f"offline_opt dual, T=1e4 : {t_dual_4 * 1e3:8.2f} ms")
    print(f"offline_opt cvxpy, T=1e4: {t_cvx_4 * 1e3:8.1f} ms  -> dual is {res['ratio_cvxpy_over_dual_T1e4']:.0f}x faster")
    print(f"same optimum: relative difference {res['value_rel_diff_T1e4']:.1e}")
    return res
