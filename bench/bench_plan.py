"""Planner query time (issue 31's goal: under 50 ms per query on this machine), one process.

Each query kind of :func:`sims.plan.plan` is asked once at fpr 1e-6 to build what the
process keeps (the LM sample, the per-position laws), then timed at three levels drawn afresh each run, so never asked
before in memory or on disk (no cached critical value): the fastest of the three is printed with its ratio to the 50 ms goal.
The brute-force alternative, simulating texts until the power is known, is
``proofs_check --only check_power_plan`` (minutes per setting), so the goal is stated in milliseconds.

The cold rows time a fresh process: ``python -m sims plan`` (``COLD_ARGS``, and with ``--score lr``) from start to exit, with
its bytecode written and the planner's on-disk cache (:mod:`sims.plan.cache`) filled by
one untimed run, best of ``COLD_RUNS``; beside it, timed interleaved, the floor ``python -c pass``
(the interpreter's start) and ``python -c "import numpy"`` (the planner is NumPy arithmetic).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import numpy as np

GOAL_MS = 50.0
QUERIES = {  # name -> plan() keywords; smollm2-fit for the LM-weighted scores, news elsewhere
    "dualga green": dict(algo="dualga", lm="smollm2-fit", Delta=0.2),
    "dualga green + sub 0.1": dict(algo="dualga", lm="smollm2-fit", Delta=0.2, attack="substitution:0.1"),
    "srl green": dict(algo="srl", lm="news"),
    "dualga lr": dict(algo="dualga", lm="smollm2-fit", Delta=0.2, score="lr"),
    "srl lr": dict(algo="srl", lm="news", score="lr"),
    "ems ems-ars": dict(algo="ems", lm="news", score="ems-ars"),
    "ems ems-opt": dict(algo="ems", lm="smollm2-fit", score="ems-opt"),
    "ems ems-hc": dict(algo="ems", lm="news", score="ems-hc"),
    "ems ems-trgof": dict(algo="ems", lm="news", score="ems-trgof"),
}
FRESH_DECADES = (-6.1, -5.9)  # the timed levels: three drawn afresh each run in 10^[-6.1, -5.9], so that no critical value
# of theirs is in the planner's disk cache from an earlier run (fixed levels were fresh only the first time)
COLD_ARGS = ("-m", "sims", "plan", "--algo", "dualga", "--Delta", "0.2", "--lm", "smollm2-fit", "--fpr", "1e-6", "--power", "0.9")
COLD_ARGS_LR = (*COLD_ARGS, "--score", "lr")  # its laws and critical sums from the disk cache (sims.plan.lr)
COLD_FLOORS = {"python -c pass": ("-c", "pass"), "python -c 'import numpy'": ("-c", "import numpy")}
COLD_RUNS = 7


def cold_start(runs: int = COLD_RUNS) -> dict:
    """Seconds from start to exit of a fresh ``python -m sims plan`` and of the floors, best of ``runs`` (interleaved)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # bytecode cached, as installed
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    cmds = {"sims plan (cold process)": COLD_ARGS, "sims plan --score lr (cold process)": COLD_ARGS_LR, **COLD_FLOORS}
    for args in cmds.values():  # writes bytecode and the planner's cache
        subprocess.run([sys.executable, *args], env=env, check=True, capture_output=True)
    best = dict.fromkeys(cmds, float("inf"))
    for _ in range(runs):
        for name, args in cmds.items():
            t0 = time.perf_counter()
            subprocess.run([sys.executable, *args], env=env, check=True, capture_output=True)
            best[name] = min(best[name], time.perf_counter() - t0)
    return best


def main(argv=None) -> dict:
    from sims.plan import plan

    res = {}
    fresh = tuple(10.0 ** np.random.default_rng().uniform(*FRESH_DECADES, size=3))
    res["fresh_levels"] = list(fresh)
    for name, kw in QUERIES.items():
        kw = dict(kw)
        algo = kw.pop("algo")
        t0 = time.perf_counter()
        plan(algo, fpr=1e-6, power=0.9, **kw)
        first = time.perf_counter() - t0
        best = float("inf")
        for fpr in fresh:
            t0 = time.perf_counter()
            plan(algo, fpr=fpr, power=0.9, **kw)
            best = min(best, time.perf_counter() - t0)
        res[name] = dict(first_s=first, fresh_level_ms=1e3 * best, ratio_to_goal=1e3 * best / GOAL_MS)
        print(f"   {name:24s} first {first:8.2f} s   fresh level {1e3 * best:8.1f} ms   / goal {1e3 * best / GOAL_MS:6.2f}", flush=True)
    cold = cold_start()
    floor = cold["python -c pass"]
    res["cold process"] = {name: dict(best_ms=1e3 * t, over_floor_ms=1e3 * (t - floor)) for name, t in cold.items()}
    for name, t in cold.items():
        print(f"   cold: {name:26s} best of {COLD_RUNS} {1e3 * t:8.1f} ms   above python -c pass {1e3 * (t - floor):8.1f} ms", flush=True)
    try:
        res["load_average"] = os.getloadavg()[0]
    except OSError:
        pass
    return res


if __name__ == "__main__":
    main()
