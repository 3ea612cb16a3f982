"""Run the benchmarks: ``python -m bench [--only NAME] [--out DIR]``.

Results go to ``out/bench/NAME.json``; the committed results in ``bench/results/`` change only
on purpose (``--out bench/results``).  Each result records the seconds its benchmark took
(``seconds``); before a benchmark starts, its line says which of how many it is and how long its
committed result took, where that result records it (:func:`expected_seconds`)."""

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


def expected_seconds(name: str, results: pathlib.Path = RESULTS) -> float | None:
    """The seconds benchmark ``name`` took in its committed result, None where it has no result or no time."""
    try:
        return float(json.loads((results / f"{name}.json").read_text())["seconds"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


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
    todo = args.only or names()
    for k, name in enumerate(todo, 1):
        took = expected_seconds(name, RESULTS)
        print(f"== [{k}/{len(todo)}] {name} ({'about ' + format(took, '.0f') + ' s last time' if took is not None else 'duration not recorded yet'})",
              flush=True)
        t0 = time.perf_counter()
        res = importlib.import_module(f"bench.{name}").main([])
        seconds = time.perf_counter() - t0
        if res.get("skipped"):
            print(f"   skipped: {res['skipped']}")
            continue
        print(f"   done in {seconds:.0f} s", flush=True)
        res = {"machine": platform.processor() or platform.machine(), "date": time.strftime("%Y-%m-%d"), "seconds": round(seconds, 1), **res}
        (args.out / f"{name}.json").write_text(json.dumps(res, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
