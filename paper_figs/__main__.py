"""Run the figure/table scripts and the reproduction report.

``python -m paper_figs [--quick] [--only NAME] [--lm LM ...] [--out DIR] [--workers N | --scheduler ADDRESS]
[--report [--report-path FILE]]``

``--lm`` (repeatable) picks the LM(s) of every script that draws texts (its first one, or its
first two for the two-LM figures); default each script's own presets.  ``--report`` runs the
scripts whose JSON is missing from ``--out``, then writes the reproduction report (:mod:`paper_figs.report`).
The tables' grids run through the sweep engine (:mod:`paper_figs._sweep`): ``--workers`` / ``--scheduler``
say where (default: in this process with ``--quick``, else a local Dask cluster, one worker per core).
"""

from __future__ import annotations

import argparse
import importlib
import pathlib
import pkgutil
import sys
import time

import paper_figs
from paper_figs import _data, _sweep


def scripts() -> list[str]:
    """Names of the figure and table modules, sorted."""
    return sorted(m.name for m in pkgutil.iter_modules(paper_figs.__path__) if m.name.startswith(("fig_", "tab_")))


def run(names, out: pathlib.Path, quick: bool, lms=None) -> None:
    """Run scripts ``names`` into ``out``, printing each one's time and files."""
    out.mkdir(parents=True, exist_ok=True)
    for name in names:
        mod = importlib.import_module(f"paper_figs.{name}")
        t0 = time.perf_counter()
        files = mod.main(out, quick, lms)
        print(f"{name:32s} {time.perf_counter() - t0:7.1f} s  " + ", ".join(str(f) for f in files), flush=True)


def report_columns() -> dict[str, pathlib.Path]:
    """The report's LM columns beside the synthetic presets' and where their outputs are committed."""
    return {"smollm2-fit": pathlib.Path("docs/results-smollm2-fit"), "smollm2": pathlib.Path("docs/results-smollm2")}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m paper_figs", description=__doc__)
    ap.add_argument("--out", type=pathlib.Path, default=None, help="output folder (default out/figs, out/figs-quick with --quick)")
    ap.add_argument("--quick", action="store_true", help="small sizes (seconds, for tests and make demo)")
    ap.add_argument("--full", action="store_true", help="full paper sizes (the default; e.g. tab_performance: 20 configurations x 500 texts x 200 tokens)")
    ap.add_argument("--only", action="append", choices=scripts(), help="run only this script (repeatable)")
    ap.add_argument("--lm", action="append", help="LM of the scripts: a synthetic preset or a real LM (smollm2, a folder); repeatable")
    ap.add_argument("--workers", type=int, default=None, help="sweep workers of a local Dask cluster (0: in this process)")
    ap.add_argument("--scheduler", default=None, help="run the sweeps on a running Dask cluster, e.g. tcp://HOST:8786")
    ap.add_argument("--real-n", type=int, default=_data.REAL_SIZE["n"], help="most texts a script draws from a real LM")
    ap.add_argument("--real-T", type=int, default=_data.REAL_SIZE["T"], help="most tokens per text a script draws from a real LM")
    ap.add_argument("--column", action="append", default=[], metavar="LM=DIR",
                    help="a column of the report: the JSON outputs in DIR of the scripts run with --lm LM (repeatable; default "
                         + ", ".join(f"{k}={v}" for k, v in report_columns().items()) + ")")
    ap.add_argument("--report", action="store_true", help="write the reproduction report from the JSON outputs in --out")
    ap.add_argument("--no-run", action="store_true", help="with --report: run no script; rows whose JSON is missing say so")
    ap.add_argument("--report-path", type=pathlib.Path, default=None,
                    help="where the report goes (default docs/reproduction.md; with --quick OUT/reproduction.md, so that a quick run never "
                         "overwrites the committed report)")
    args = ap.parse_args(argv)
    if args.workers is not None and args.workers < 0:
        ap.error(f"--workers must be in [0, inf); got {args.workers}")
    for k in ("n", "T"):
        if getattr(args, f"real_{k}") < 1:
            ap.error(f"--real-{k} must be in [1, inf); got {getattr(args, f'real_{k}')}")
        _data.REAL_SIZE[k] = getattr(args, f"real_{k}")
    _sweep.WHERE.update(workers=args.workers, scheduler=args.scheduler)
    out = args.out or pathlib.Path("out/figs-quick" if args.quick else "out/figs")
    if args.report:
        from paper_figs import report

        missing = [s for s in report.needed_scripts() if not (out / f"{s}.json").exists()]
        if not args.no_run:
            run(args.only or missing, out, args.quick, args.lm)
        if args.report_path is None:
            args.report_path = out / "reproduction.md" if args.quick else pathlib.Path("docs/reproduction.md")
        args.report_path.parent.mkdir(parents=True, exist_ok=True)
        columns = report_columns()
        for c in args.column:
            lm, sep, folder = c.partition("=")
            if not sep or not lm or not folder:
                ap.error(f"--column must be LM=DIR; got {c!r}")
            columns[lm] = pathlib.Path(folder)
        args.report_path.write_text(report.render(out, quick=args.quick, columns=columns))
        print(f"report: {args.report_path}")
        return 0
    run(args.only or scripts(), out, args.quick, args.lm)
    return 0


if __name__ == "__main__":
    sys.exit(main())
