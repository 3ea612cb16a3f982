"""Run the figure/table scripts and the reproduction report.

``python -m paper_figs [--quick] [--only NAME] [--lm LM ...] [--out DIR] [--report [--report-path FILE]]``

``--lm`` (repeatable) picks the LM(s) of every script that draws texts (its first one, or its
first two for the two-LM figures); default each script's own presets.  ``--report`` runs the
scripts whose JSON is missing from ``--out``, then writes the reproduction report (:mod:`paper_figs.report`).
"""

from __future__ import annotations

import argparse
import importlib
import pathlib
import pkgutil
import sys
import time

import paper_figs


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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m paper_figs", description=__doc__)
    ap.add_argument("--out", type=pathlib.Path, default=None, help="output folder (default out/figs, out/figs-quick with --quick)")
    ap.add_argument("--quick", action="store_true", help="small sizes (seconds, for tests and make demo)")
    ap.add_argument("--full", action="store_true", help="full paper sizes (the default; e.g. tab_performance: 20 configurations x 500 texts x 200 tokens)")
    ap.add_argument("--only", action="append", choices=scripts(), help="run only this script (repeatable)")
    ap.add_argument("--lm", action="append", help="LM of the scripts: a synthetic preset or a real LM (smollm2, a folder); repeatable")
    ap.add_argument("--report", action="store_true", help="write the reproduction report from the JSON outputs in --out")
    ap.add_argument("--report-path", type=pathlib.Path, default=pathlib.Path("docs/reproduction.md"))
    args = ap.parse_args(argv)
    out = args.out or pathlib.Path("out/figs-quick" if args.quick else "out/figs")
    if args.report:
        from paper_figs import report

        missing = [s for s in report.needed_scripts() if not (out / f"{s}.json").exists()]
        run(args.only or missing, out, args.quick, args.lm)
        args.report_path.parent.mkdir(parents=True, exist_ok=True)
        args.report_path.write_text(report.render(out, quick=args.quick))
        print(f"report: {args.report_path}")
        return 0
    run(args.only or scripts(), out, args.quick, args.lm)
    return 0


if __name__ == "__main__":
    sys.exit(main())
