"""Sweeps: a grid of experiments (:mod:`sims.sweep.grid`) run as Dask tasks, one per
(configuration, seed, chunk of texts) (:func:`sims.sweep.chunk.run_chunk`).

Layout of the output folder ``DIR``::

    grid.json        the canonical grid and its SHA-256 (another grid is refused unless force)
    chunks/          one Parquet file per finished task, CONFIG-sSEED-cCHUNK.parquet, written
                     to a temporary name and renamed (a file there is complete)
    summary.parquet  per (configuration, attack) aggregates (:mod:`sims.sweep.summary`)
    summary.md

Resumable and lossless: a task whose file exists is not submitted again; the client writes
each result as it arrives, so a client that dies loses only what is in flight.  A worker that
dies has its tasks rerun elsewhere by the scheduler (``distributed.scheduler.allowed-failures``,
set to :data:`ALLOWED_FAILURES` on a local cluster); a task that still fails is reported and the
rest of the sweep completes, to be resumed by running again.  Since a chunk's rows are a pure
function of (configuration, seed, chunk index), a rerun chunk is identical to the lost one: the
same tokens, scores and p-values bit for bit; the per-text means of the float records (kl, dg,
entropy) agree to about 1e-15 relative, because Numba's fastmath block sums can be compiled into a
different summation order in a process that compiled the kernel than in one that loaded it from
the cache (checked to 1e-12 in ``tests/sweep/test_sweep.py``).

Where: ``workers=0`` runs every task in this process (no Dask; for debugging and small checks);
``scheduler=None`` starts a ``distributed.LocalCluster`` of ``workers`` processes (default: one per
core) with one thread each; ``scheduler="tcp://HOST:8786"`` uses a running cluster.  Tasks of a
real LM ask for the resource ``GPU`` (``dask worker --resources GPU=1``), so they run only there.
"""

from __future__ import annotations

import contextlib
import json
import os
import pathlib
import shutil
import signal
import sys
import threading
import time

from sims.core.progress import progress
from sims.sweep import summary as sweep_summary
from sims.sweep.chunk import run_chunk
from sims.sweep.grid import Grid, load_grid

ALLOWED_FAILURES = 3  #: worker deaths a task may cause before it is reported as failed (a task that kills 4 workers is bad)
#: Seconds to wait for a running scheduler (``scheduler="tcp://HOST:8786"``) to answer before the sweep is refused.
CONNECT_TIMEOUT_S = 10


def tasks(grid: Grid) -> dict[str, dict]:
    """Every task of the grid by its chunk file's stem, in grid order.

    Parameters
    ----------
    grid : sims.sweep.grid.Grid
        The validated grid.

    Returns
    -------
    dict of str to dict
        ``CONFIG-sSEED-cCHUNK`` -> the task :func:`sims.sweep.chunk.run_chunk` runs: the grid's shared
        settings (``n``, ``T``, ``chunk_size``, ``key``, ``dedup``, ``controls``, ``prompt_len``, ``ttd_level``,
        ``metrics``, ``attacks``, ``score``, ``sampler``), the ``config`` (with its ``id``), ``seed``, ``chunk``
        and ``real`` (the configuration's LM runs on the torch backend, :func:`sims.lm.kind.is_real`).
    """
    shared = dict(n=grid.n, T=grid.T, chunk_size=grid.chunk, key=grid.key, dedup=grid.dedup, controls=grid.controls,
                  prompt_len=grid.prompt_len, ttd_level=grid.ttd_level, metrics=list(grid.metrics), attacks=list(grid.attacks), score=grid.score,
                  sampler=grid.sampler)
    out = {}
    for cfg in grid.configs:
        for seed in grid.seeds:
            for k in range(grid.n_chunks):
                out[f"{cfg.id}-s{seed}-c{k:06d}"] = dict(shared, config=dict(cfg.as_dict(), id=cfg.id), real=cfg.real, seed=seed, chunk=k)
    return out


def prepare_dir(out: pathlib.Path, grid: Grid, force: bool) -> None:
    """Create ``out`` for ``grid``; refuse one that holds another grid's results unless ``force`` (then clear them).

    Writes ``grid.json`` (the grid's hash, file, canonical form and dedup rules) and removes temporary files
    a client that died left in ``chunks/``.

    Parameters
    ----------
    out : pathlib.Path
        The results folder.
    grid : sims.sweep.grid.Grid
        The grid to run.
    force : bool
        Replace the results of another grid (its chunks and summary are deleted).

    Raises
    ------
    ValueError
        If ``out`` holds results of a grid with another hash, or chunk files without ``grid.json``, and
        ``force`` is False.
    """
    chunks = out / "chunks"
    meta = out / "grid.json"
    if meta.exists():
        old = json.loads(meta.read_text())
        if old.get("hash") != grid.hash:
            if not force:
                raise ValueError(f"out {str(out)!r} holds results of another grid ({old.get('file')}, hash {str(old.get('hash'))[:12]}); "
                                 "choose another folder or pass --force to replace them")
            shutil.rmtree(chunks, ignore_errors=True)
            for f in ("summary.parquet", "summary.md"):
                (out / f).unlink(missing_ok=True)
    elif chunks.exists() and any(chunks.iterdir()) and not force:
        raise ValueError(f"out {str(out)!r} holds chunk files but no grid.json; pass --force to replace them")
    chunks.mkdir(parents=True, exist_ok=True)
    for tmp in chunks.glob(".*.tmp-*"):  # left by a client that died while writing
        tmp.unlink()
    _atomic_write_text(meta, json.dumps(dict(hash=grid.hash, file=grid.path, grid=grid.canonical(), dedup_rules=grid.dedup_rules()), indent=1))


def _atomic_write_text(path: pathlib.Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_text(text)
    os.replace(tmp, path)


def write_chunk(out: pathlib.Path, name: str, cols: dict) -> pathlib.Path:
    """Write one task's rows to ``out/chunks/NAME.parquet`` atomically (temporary file, then rename).

    Parameters
    ----------
    out : pathlib.Path
        The results folder (its ``chunks/`` exists, :func:`prepare_dir`).
    name : str
        The task's name (:func:`tasks`).
    cols : dict of str to numpy.ndarray
        The rows as columns of equal length (:func:`sims.sweep.chunk.run_chunk`).

    Returns
    -------
    pathlib.Path
        The chunk file written.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    final = out / "chunks" / f"{name}.parquet"
    tmp = final.with_name(f".{final.name}.tmp-{os.getpid()}")
    pq.write_table(pa.table(cols), tmp)
    os.replace(tmp, final)
    return final


def _local_gpus() -> int:
    try:
        import torch
    except ImportError:
        return 0
    return torch.cuda.device_count()


def _connect(scheduler: str | None, workers: int | None, real: bool):
    """A ``distributed.Client`` and the cluster it started (None for an existing scheduler)."""
    import dask
    from distributed import Client, LocalCluster

    if scheduler is not None:
        try:
            client = Client(scheduler, timeout=f"{CONNECT_TIMEOUT_S}s")
        except (OSError, TimeoutError) as exc:
            raise ValueError(f"scheduler {scheduler!r} unreachable within {CONNECT_TIMEOUT_S} s ({type(exc).__name__}: {exc})") from None
        if real and not any(w.get("resources", {}).get("GPU") for w in client.scheduler_info()["workers"].values()):
            client.close()
            raise ValueError(f"the grid has real-LM configurations but no worker of {scheduler} has a GPU resource "
                             "(start them with `dask worker ADDRESS --resources GPU=1`)")
        return client, None
    n = (os.cpu_count() or 1) if workers is None else workers
    if n < 1:
        raise ValueError(f"workers must be in [0, inf); got {workers!r}")
    resources = None
    if real:
        gpus = _local_gpus()
        if gpus == 0:
            raise ValueError("the grid has real-LM configurations, which run only on GPU workers, and this machine has no CUDA "
                             "device: run it on a cluster (--scheduler) whose workers have --resources GPU=1, or in this "
                             "process on the CPU (--workers 0)")
        n, resources = min(n, gpus), {"GPU": 1}
    with dask.config.set({"distributed.scheduler.allowed-failures": ALLOWED_FAILURES}):
        cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=":0", resources=resources,
                               preload=["sims.sweep.worker"],
                               env={"NUMBA_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"})
    return Client(cluster), cluster


def _silence_distributed():
    """Raise the ``distributed`` loggers of this process to ERROR (run on the workers and nannies on Ctrl-C)."""
    import logging

    logging.getLogger("distributed").setLevel(logging.ERROR)


def _running(pid: int) -> bool:
    """Whether process ``pid`` still runs (a zombie has exited); False where ``/proc`` cannot tell."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def _stop_quietly(client) -> None:
    """On Ctrl-C: silence the local cluster's loggers (a worker inside a compiled loop cannot stop gracefully, and its
    nanny warns before killing it), kill its worker processes, whose finished chunks are already on disk, and wait
    (at most 2 s) until they are gone, so that none outlives the sweep."""
    _silence_distributed()
    with contextlib.suppress(Exception):
        client.run(_silence_distributed, nanny=True)
        client.run(_silence_distributed)
        pids = list(client.run(os.getpid).values())
        for pid in pids:
            os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 2.0
        while any(_running(pid) for pid in pids) and time.monotonic() < deadline:
            time.sleep(0.02)


def _dashboard(client) -> str | None:
    return client.dashboard_link if client.scheduler_info().get("services", {}).get("dashboard") else None


def run_sweep(grid: Grid | str | os.PathLike, out, *, scheduler: str | None = None, workers: int | None = None, force: bool = False,
              on_chunk=None, log=print) -> dict:
    """Run the tasks of ``grid`` not yet on disk under ``out``, then write the summary.

    Parameters
    ----------
    grid : Grid or path of a grid file
    out : folder (see module docstring)
    scheduler : address of a running scheduler, or None for a local cluster
    workers : processes of the local cluster (default one per core); 0 runs the tasks in this process
    force : replace the results of another grid in ``out``
    on_chunk : callable(name, client) called after each chunk file is written (client None in-process)
    log : where the lines about the run go

    Returns
    -------
    dict: tasks, skipped (already on disk), done, failed (name -> error), summary rows.
    """
    grid = load_grid(grid) if not isinstance(grid, Grid) else grid
    out = pathlib.Path(out)
    prepare_dir(out, grid, force)
    todo = {k: v for k, v in tasks(grid).items() if not (out / "chunks" / f"{k}.parquet").exists()}
    total = grid.n_chunks * len(grid.seeds) * len(grid.configs)
    log(f"sweep {grid.path}: {len(grid.configs)} configurations x {len(grid.seeds)} seeds x {grid.n_chunks} chunks = {total} tasks, "
        f"{total - len(todo)} already in {out}")
    failed: dict[str, str] = {}
    if todo and workers == 0 and scheduler is None:
        with progress(len(todo), "sweep", unit="task") as bar:
            for name, task in todo.items():
                write_chunk(out, name, run_chunk(task))
                if on_chunk:
                    on_chunk(name, None)
                bar.update()
    elif todo:
        real = any(t["real"] for t in todo.values())
        client, cluster = _connect(scheduler, workers, real)
        try:
            failed = _run_on(client, todo, out, on_chunk, log)
        except KeyboardInterrupt:
            if cluster is not None:  # our own processes: stop them now, without their shutdown warnings
                _stop_quietly(client)
            raise
        finally:
            client.close()
            if cluster is not None:
                cluster.close()
    files = [out / "chunks" / f"{k}.parquet" for k in tasks(grid)]
    present = [f for f in files if f.exists()]
    rows = sweep_summary.summarize(grid, present)
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.Table.from_pylist(rows), out / "summary.parquet")
    _atomic_write_text(out / "summary.md", sweep_summary.markdown(grid, rows))
    log(f"{len(present)}/{total} chunks in {out / 'chunks'}; summary in {out / 'summary.md'}")
    if failed:
        first = next(iter(failed.items()))
        raise RuntimeError(f"{len(failed)} tasks failed (first: {first[0]}: {first[1]}); the {len(present)} finished chunks are on disk: "
                           "run the same command again to resume")
    return dict(tasks=total, skipped=total - len(todo), done=len(todo), failed=failed, summary=rows)


def _run_on(client, todo: dict, out: pathlib.Path, on_chunk, log) -> dict[str, str]:
    """Submit ``todo`` to ``client``; write each result as it arrives; return the failed tasks."""
    from distributed import as_completed
    from distributed.diagnostics.progressbar import TextProgressBar

    link = _dashboard(client)
    if link:
        log(f"dashboard: {link}")
    names, futures = {}, []
    for name, task in todo.items():
        res = {"GPU": 1} if task["real"] else None
        futures.append(client.submit(run_chunk, task, key=f"run_chunk-{name}", pure=False, resources=res))
        names[futures[-1].key] = name
    if sys.stdout.isatty():
        threading.Thread(target=TextProgressBar, args=(list(names),), kwargs=dict(scheduler=client.scheduler.address), daemon=True).start()
    failed = {}
    for fut in as_completed(futures):
        name = names[fut.key]
        if fut.status != "finished":
            failed[name] = repr(fut.exception())
            continue
        write_chunk(out, name, fut.result())
        fut.release()
        if on_chunk:
            on_chunk(name, client)
    return failed
