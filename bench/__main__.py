"""Run the benchmarks: ``python -m bench [--only NAME] [--out DIR]``.

Results go to ``out/bench/NAME.json``; the committed results in ``bench/results/`` change only
on purpose (``--out bench/results``)."""

from __future__ import annotations

import importlib
import json
import pathlib
import pkgutil
import platform
import sys
import time

import bench

RESULTS = pathlib.Path(__file__).parent / "results"  # committed: written only with --out bench/results
OUT = pathlib.Path("out/bench")


def names() -> list[str]:
    return sorted(m.name for m in pkgutil.iter_modules(bench.__path__) if m.name.startswith("bench_"))


def main(argv=None) -> int:
    from sims.cli.checks import writable_folder
    from sims.cli.main import Parser

    ap = Parser(prog="python -m bench")
    ap.add_argument("--only", action="append", choices=names())
    ap.add_argument("--out", type=pathlib.Path, default=OUT, help=f"results folder (default {OUT}; the committed ones: {RESULTS})")
    args = ap.parse_args(argv)
    try:
        writable_folder("out", args.out)
    except ValueError as exc:
        ap.error(str(exc))
    for name in args.only or names():
        print(f"== {name}", flush=True)
        res = importlib.import_module(f"bench.{name}").main([])
        if res.get("skipped"):
            print(f"   skipped: {res['skipped']}")
            continue
        res = {"machine": platform.processor() or platform.machine(), "date": time.strftime("%Y-%m-%d"), **res}
        (args.out / f"{name}.json").write_text(json.dumps(res, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
