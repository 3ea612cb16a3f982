"""Run every figure/table script: ``python -m paper_figs [--quick] [--only NAME] [--out DIR]``."""

from __future__ import annotations

import argparse
import importlib
import pathlib
import pkgutil
import sys
import time

import paper_figs


def scripts() -> list[str]:
    return sorted(m.name for m in pkgutil.iter_modules(paper_figs.__path__) if m.name.startswith(("fig_", "tab_")))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m paper_figs", description=__doc__)
    ap.add_argument("--out", type=pathlib.Path, default=pathlib.Path("out/figs"))
    ap.add_argument("--quick", action="store_true", help="small sizes (seconds, for tests and make demo)")
    ap.add_argument("--only", action="append", choices=scripts(), help="run only this script (repeatable)")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for name in args.only or scripts():
        mod = importlib.import_module(f"paper_figs.{name}")
        t0 = time.perf_counter()
        files = mod.main(args.out, args.quick)
        print(f"{name:32s} {time.perf_counter() - t0:7.1f} s  " + ", ".join(str(f) for f in files))
    return 0


if __name__ == "__main__":
    sys.exit(main())
