"""The grids of the paper's tables, run through the sweep engine (:mod:`sims.sweep`).

A script names its grid file in ``examples/`` (the same file ``python -m sims sweep`` takes) and
may shrink it (``--quick``) or put other LMs in it (``--lm``); the chunks land under
``OUT/sweeps/NAME-HASH`` and a rerun skips the chunks already there.  Where the tasks run is set
once for the whole run of ``python -m paper_figs`` (:data:`WHERE`): in this process for quick
runs, else a local Dask cluster of one worker per core, or ``--scheduler ADDRESS``.  A real LM
on a machine without a GPU runs in this process (the cluster's real-LM tasks ask for a GPU).
"""

from __future__ import annotations

import dataclasses
import pathlib

import numpy as np

from paper_figs._data import sized

EXAMPLES = pathlib.Path(__file__).resolve().parents[1] / "examples"
WHERE = dict(workers=None, scheduler=None)  # set by python -m paper_figs --workers / --scheduler


def sweep_grid(name: str, *, lms=None, algos=None, **settings):
    """The grid ``examples/sweep_<name>.toml`` with its LMs replaced by ``lms``, only the
    algorithms ``algos`` kept, and the sweep keys in ``settings`` (n, T, chunk, ...) replaced; a
    real LM caps n and T (:func:`paper_figs._data.sized`)."""
    from sims.sweep.grid import Config, load_grid

    grid = load_grid(EXAMPLES / f"sweep_{name}.toml")
    configs = grid.configs
    if lms:
        first = [c for c in configs if c.lm == configs[0].lm]
        configs = tuple(Config(lm, c.algo, c.params) for lm in lms for c in first)
    if algos is not None:
        configs = tuple(c for c in configs if algos(c))
    grid = dataclasses.replace(grid, configs=configs, **settings)
    if not configs:  # every configuration filtered out (e.g. SynthID's grid under a real LM's reduced set): callers skip it
        return grid
    n, T = min(sized(c.lm, grid.n, grid.T) for c in configs)
    return dataclasses.replace(grid, n=n, T=T, chunk=min(grid.chunk, n))


def run_grid(grid, out_dir: pathlib.Path, name: str, quick: bool) -> tuple[list[dict], pathlib.Path]:
    """Run ``grid`` into ``out_dir/sweeps/NAME-HASH`` (HASH: the grid's first 8 hex digits, so that
    grids of other sizes or LMs keep their own chunks; a rerun resumes); return its summary rows and
    that folder."""
    from sims.sweep import run_sweep

    real = any(c.real for c in grid.configs)
    workers, scheduler = WHERE["workers"], WHERE["scheduler"]
    if quick and workers is None and scheduler is None:
        workers = 0
    if real:
        import torch

        if scheduler is None and not torch.cuda.is_available():
            workers = 0
    folder = out_dir / "sweeps" / f"{name}-{grid.hash[:8]}"
    res = run_sweep(grid, folder, workers=workers, scheduler=scheduler, log=lambda s: print(s, flush=True))
    return res["summary"], folder


def text_values(folder: pathlib.Path, column: str) -> dict[str, np.ndarray]:
    """Per configuration id, ``column`` of its watermarked, unattacked texts in text order."""
    import pyarrow.parquet as pq

    parts: dict[str, list] = {}
    for f in sorted((folder / "chunks").glob("*.parquet")):
        t = pq.read_table(f, columns=["config", "null", "attack", "text", column]).to_pydict()
        keep = [i for i, (nl, a) in enumerate(zip(t["null"], t["attack"])) if not nl and a == "none"]
        parts.setdefault(t["config"][0], []).extend((t["text"][i], t[column][i]) for i in keep)
    return {c: np.array([v for _, v in sorted(rows)]) for c, rows in parts.items()}
