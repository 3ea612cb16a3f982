"""``python -m sims sweep GRID.toml --out DIR [--scheduler ADDRESS] [--workers N] [--force]``: a grid of experiments on Dask."""

from __future__ import annotations

import argparse
import pathlib
import sys

from sims.cli.checks import integer, writable_folder

#: The subcommand's one-line summary (``python -m sims --help`` and this subcommand's description).
HELP = "run a grid of experiments (TOML) on a local Dask cluster or a running one; Parquet rows + summary"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add the options of ``python -m sims sweep`` to ``p``.

    The positional ``grid`` (a TOML file, see ``examples/sweep_quick.toml``), ``--out`` (the results
    folder, required), ``--scheduler`` (address of a running Dask scheduler; default a local cluster),
    ``--workers`` (processes of the local cluster; 0 runs in this process) and ``--force`` (replace the
    results of another grid in ``--out``).

    Parameters
    ----------
    p : argparse.ArgumentParser
        The subcommand's parser; modified in place.
    """
    p.add_argument("grid", type=pathlib.Path, help="grid file (see examples/sweep_quick.toml)")
    p.add_argument("--out", type=pathlib.Path, required=True, help="results folder (chunks/, summary.parquet, summary.md)")
    p.add_argument("--scheduler", default=None, help="address of a running scheduler, e.g. tcp://HOST:8786 (default: a local cluster)")
    p.add_argument("--workers", type=integer(0), default=None, help="processes of the local cluster (default: one per core; 0: run in this process)")
    p.add_argument("--force", action="store_true", help="replace the results of another grid in --out")


def run(args) -> int:
    """Run the grid of ``args.grid`` (:func:`sims.sweep.run_sweep`), writing its chunks and summary to ``args.out``.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed options of :func:`add_arguments`.

    Returns
    -------
    int
        The exit status: 0 when every task finished, 1 when some failed (their message on stderr; the
        finished chunks are kept).

    Raises
    ------
    ValueError
        If the grid is not an existing file or is invalid (:func:`sims.sweep.grid.load_grid`), or ``--out``
        cannot be made a writable folder.
    """
    from sims.sweep import run_sweep
    from sims.sweep.grid import load_grid

    if not args.grid.is_file():
        raise ValueError(f"grid must be an existing TOML file (see examples/sweep_quick.toml); got {str(args.grid)!r}")
    writable_folder("out", args.out, create=False)  # checked here; made by run_sweep once the grid is accepted
    grid = load_grid(args.grid)
    try:
        run_sweep(grid, args.out, scheduler=args.scheduler, workers=args.workers, force=args.force)
    except RuntimeError as exc:  # failed tasks: the finished chunks are kept
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0
