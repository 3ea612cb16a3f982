"""Run the benchmarks: ``python -m bench [--only NAME]``; results go to bench/results/."""

from __future__ import annotations

import argparse
import importlib
import json
import pathlib
import pkgutil
import platform
import sys
import time

import bench

RESULTS = pathlib.Path(__file__).parent / "results"


def names() -> list[str]:
    return sorted(m.name for m in pkgutil.iter_modules(bench.__path__) if m.name.startswith("bench_"))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench")
    ap.add_argument("--only", action="append", choices=names())
    args = ap.parse_args(argv)
    RESULTS.mkdir(exist_ok=True)
    for name in args.only or names():
        print(f"== {name}", flush=True)
        res = importlib.import_module(f"bench.{name}").main([])
        if res.get("skipped"):
            print(f"   skipped: {res['skipped']}")
            continue
        res = {"machine": platform.processor() or platform.machine(), "date": time.strftime("%Y-%m-%d"), **res}
        (RESULTS / f"{name}.json").write_text(json.dumps(res, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
