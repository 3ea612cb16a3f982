"""Sweeps on Dask: scaling from 1 to 2 local workers, and the engine's overhead on 1-second tasks.

A grid of ``TASKS`` chunks of SRL texts on the ``news`` preset, sized so that one chunk takes
about 1 s in this process (calibrated first).  Timed, each in a fresh output folder:

* serial: every task in this process on one thread (``workers=0``), the work plus Parquet writes;
* 1 and 2 workers: a warm ``LocalCluster`` (processes, one thread each; its start and the
  workers' first task are not timed) driven by :func:`sims.sweep.run_sweep`.

Overhead per task = wall(1 worker) / serial - 1 (scheduling, pickling, transfer, the client's
writes); goal < 5 %.  Scaling = wall(1 worker) / wall(2 workers); goal >= 1.7 on 2 cores.  The
machine's load average is recorded beside (the cores are shared).
"""

from __future__ import annotations

import os
import pathlib
import tempfile
import time

TASKS = 12
GOAL_SCALING = 1.7
GOAL_OVERHEAD = 0.05
GRID = """lm = "news"
n = {n}
T = 200
chunk = {chunk}
seeds = [{seed}]
metrics = ["kl", "dg", "log10_p", "n_scored"]

[[algo]]
name = "srl"
delta = 2.0
"""


def _grid(folder: pathlib.Path, chunk: int, seed: int) -> pathlib.Path:
    p = folder / f"grid-{chunk}-{seed}.toml"
    p.write_text(GRID.format(n=chunk * TASKS, chunk=chunk, seed=seed))
    return p


def main(argv=None) -> dict:
    import numba
    from distributed import Client, LocalCluster

    from sims.sweep import run_sweep, tasks
    from sims.sweep.chunk import run_chunk
    from sims.sweep.grid import load_grid

    quiet = dict(log=lambda s: None)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        probe = next(iter(tasks(load_grid(_grid(tmp, 16, 0))).values()))
        numba.set_num_threads(1)  # the baseline gets one core, like a worker
        run_chunk(probe)  # compile / load the kernels
        t0 = time.perf_counter()
        run_chunk(probe)
        chunk = max(1, round(16 / (time.perf_counter() - t0)))  # ~1 s of work per task
        t0 = time.perf_counter()
        run_sweep(_grid(tmp, chunk, 1), tmp / "serial", workers=0, **quiet)
        serial = time.perf_counter() - t0
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        walls = {}
        for w in (1, 2):
            with LocalCluster(n_workers=w, threads_per_worker=1, processes=True, dashboard_address=None,
                              env={"NUMBA_NUM_THREADS": "1"}) as cluster, Client(cluster) as client:
                client.run(run_chunk, dict(probe, chunk_size=2, n=2))  # warm every worker (imports, kernels)
                t0 = time.perf_counter()
                run_sweep(_grid(tmp, chunk, 1), tmp / f"w{w}", scheduler=cluster.scheduler_address, **quiet)
                walls[w] = time.perf_counter() - t0
    scaling = walls[1] / walls[2]
    overhead = walls[1] / serial - 1
    res = dict(tasks=TASKS, texts_per_task=chunk, tokens_per_task=chunk * 200, serial_s=serial, task_s=serial / TASKS,
               wall_1_worker_s=walls[1], wall_2_workers_s=walls[2], scaling_1_to_2=scaling, goal_scaling=GOAL_SCALING,
               overhead_per_task=overhead, goal_overhead=GOAL_OVERHEAD, cores=os.cpu_count(), load_average=os.getloadavg())
    print(f"{TASKS} tasks of {serial / TASKS:.2f} s: serial {serial:.1f} s, 1 worker {walls[1]:.1f} s (overhead {overhead:+.1%}, goal "
          f"< {GOAL_OVERHEAD:.0%}), 2 workers {walls[2]:.1f} s: scaling {scaling:.2f}x (goal >= {GOAL_SCALING}); load {os.getloadavg()}")
    return res


if __name__ == "__main__":
    main()
