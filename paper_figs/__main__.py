"""Run the figure/table scripts and the reproduction report.

``python -m paper_figs [--quick] [--only NAME] [--lm LM ...] [--out DIR] [--workers N | --scheduler ADDRESS]
[--report [--report-path FILE]]``

Quick runs and reports write under ``out/`` unless ``--out`` names another folder; the committed
report (``docs/reproduction.md``) is rewritten only from the committed folder
(``--report --out docs/results``) or when ``--report-path`` names it.  ``--threads`` / ``--quiet``
as for ``python -m sims``.

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

COMMITTED_RESULTS = pathlib.Path("docs/results")  # the synthetic presets' committed outputs
COMMITTED_REPORT = pathlib.Path("docs/reproduction.md")


def scripts() -> list[str]:
    """Names of the figure and table modules, sorted.

    Returns
    -------
    list of str
        The modules of :mod:`paper_figs` whose name starts with ``fig_`` or ``tab_``.
    """
    return sorted(m.name for m in pkgutil.iter_modules(paper_figs.__path__) if m.name.startswith(("fig_", "tab_")))


def run(names, out: pathlib.Path, quick: bool, lms=None) -> None:
    """Run scripts ``names`` into ``out``, printing each one's time and files.

    Parameters
    ----------
    names : iterable of str
        Script modules (:func:`scripts`).
    out : pathlib.Path
        The output folder (created if missing).
    quick : bool
        Small sizes.
    lms : list of str, optional
        The LMs of ``--lm``, passed to every script's ``main``.
    """
    out.mkdir(parents=True, exist_ok=True)
    for name in names:
        mod = importlib.import_module(f"paper_figs.{name}")
        t0 = time.perf_counter()
        files = mod.main(out, quick, lms)
        print(f"{name:32s} {time.perf_counter() - t0:7.1f} s  " + ", ".join(str(f) for f in files), flush=True)


def report_columns() -> dict[str, pathlib.Path]:
    """The report's LM columns beside the synthetic presets' and where their outputs are committed.

    Returns
    -------
    dict of str to pathlib.Path
        LM name -> the committed folder of the scripts' JSON run with ``--lm`` that LM.
    """
    return {"smollm2-fit": pathlib.Path("docs/results-smollm2-fit"), "smollm2": pathlib.Path("docs/results-smollm2")}


def main(argv=None) -> int:
    """Run ``python -m paper_figs``: the figure and table scripts, or the reproduction report (module docstring).

    Parameters
    ----------
    argv : list of str, optional
        The arguments; None reads the command line.

    Returns
    -------
    int
        The exit status, 0; bad arguments (an unknown ``--lm``, negative ``--workers``, ``--real-n`` or
        ``--real-T`` below 1, an unwritable ``--out`` or ``--report-path``, a malformed ``--column``) exit 2 from
        the parser.
    """
    from sims.cli.checks import writable_file, writable_folder
    from sims.cli.main import Parser, add_common_arguments
    from sims.cli.threads import apply as apply_threads
    from sims.core.progress import shown
    from sims.lm.kind import lm_kind

    ap = Parser(prog="python -m paper_figs", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=pathlib.Path, default=None, help="output folder (default out/figs, out/figs-quick with --quick)")
    ap.add_argument("--quick", action="store_true", help="small sizes (seconds, for tests and make demo)")
    ap.add_argument("--full", action="store_true", help="full paper sizes (the default; e.g. tab_performance: 20 configurations x 500 texts x 200 tokens)")
    ap.add_argument("--only", action="append", choices=scripts(), help="run only this script (repeatable)")
    ap.add_argument("--lm", action="append", help="LM of the scripts: any of sims.get_lm (a synthetic preset, a fitted .npz, smollm2, a folder); repeatable")
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
                    help=f"where --report writes (default {COMMITTED_REPORT} with --out {COMMITTED_RESULTS}, else OUT/reproduction.md)")
    add_common_arguments(ap)
    args = ap.parse_args(argv)
    for lm in args.lm or ():
        try:
            lm_kind(lm)
        except ValueError as exc:
            ap.error(f"argument --lm: {exc}")
    if args.workers is not None and args.workers < 0:
        ap.error(f"--workers must be in [0, inf); got {args.workers}")
    for k in ("n", "T"):
        if getattr(args, f"real_{k}") < 1:
            ap.error(f"--real-{k} must be in [1, inf); got {getattr(args, f'real_{k}')}")
        _data.REAL_SIZE[k] = getattr(args, f"real_{k}")
    _sweep.WHERE.update(workers=args.workers, scheduler=args.scheduler)
    out = args.out or pathlib.Path("out/figs-quick" if args.quick else "out/figs")
    try:
        writable_folder("out", out)
        report_path = writable_file("report-path", args.report_path or default_report_path(out, args.quick))
    except ValueError as exc:
        ap.error(str(exc))
    apply_threads(args.threads)
    with shown(not args.quiet):
        return _main(args, ap, out, report_path)


def default_report_path(out: pathlib.Path, quick: bool) -> pathlib.Path:
    """Where ``--report`` writes by default.

    Parameters
    ----------
    out : pathlib.Path
        The output folder of the run.
    quick : bool
        Whether the run is quick.

    Returns
    -------
    pathlib.Path
        The committed report (``docs/reproduction.md``) for the committed results folder at full size;
        OUT/reproduction.md otherwise (so a quick run never rewrites the committed report).
    """
    committed = not quick and out.resolve() == (pathlib.Path.cwd() / COMMITTED_RESULTS).resolve()
    return COMMITTED_REPORT if committed else out / "reproduction.md"


def _main(args, ap, out: pathlib.Path, report_path: pathlib.Path) -> int:
    if args.report:
        from paper_figs import report

        missing = [s for s in report.needed_scripts() if not (out / f"{s}.json").exists()]
        if not args.no_run:
            run(args.only or missing, out, args.quick, args.lm)
        columns = report_columns()
        for c in args.column:
            lm, sep, folder = c.partition("=")
            if not sep or not lm or not folder:
                ap.error(f"--column must be LM=DIR; got {c!r}")
            columns[lm] = pathlib.Path(folder)
        report_path.write_text(report.render(out, quick=args.quick, columns=columns))
        print(f"report: {report_path}")
        return 0
    run(args.only or scripts(), out, args.quick, args.lm)
    return 0


if __name__ == "__main__":
    sys.exit(main())
