"""``python -m proofs_check [--quick] [--out DIR] [--only NAME] [--seed S] [--update-report]``."""

from __future__ import annotations

import argparse
import importlib
import json
import pathlib
import pkgutil
import shutil
import sys
import time

import numpy as np

import proofs_check


def modules() -> list[str]:
    return sorted(m.name for m in pkgutil.iter_modules(proofs_check.__path__) if m.name.startswith("check_"))


def render(rows: list[dict], quick: bool, seconds: float) -> str:
    lines = [
        "# proofs_check report",
        "",
        f"Mode: {'quick' if quick else 'full'}; {sum(r['passed'] for r in rows)}/{len(rows)} checks passed in {seconds:.0f} s.",
        "",
        "| result | quantity | measured | claimed | tolerance | pass |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(f"| {r['result']} | {r['quantity']} | {r['measured']:.6g} | {r['claimed']} | {r['tolerance']} | {'yes' if r['passed'] else '**NO**'} |")
    notes = [r for r in rows if r["note"]]
    if notes:
        lines += ["", "## Findings and notes", ""]
        lines += [f"- **{r['result']}** ({r['quantity']}): {r['note']}" for r in notes]
    lines += ["", "## Justifications", ""]
    lines += [f"- {r['result']} / {r['quantity']}: {r['justification']}" for r in rows]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m proofs_check", description=proofs_check.__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes (< 3 minutes)")
    ap.add_argument("--out", type=pathlib.Path, default=pathlib.Path("out/proofs_check"))
    ap.add_argument("--only", action="append", choices=modules())
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--update-report", action="store_true", help="also copy report.md to proofs_check/report.md")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    rows = []
    t_all = time.perf_counter()
    print(f"{'result':28s} {'quantity':44s} {'measured':>12s}  pass")
    for name in args.only or modules():
        mod = importlib.import_module(f"proofs_check.{name}")
        t0 = time.perf_counter()
        for c in mod.run(args.quick, np.random.default_rng([args.seed, len(name)])):
            rows.append(c.as_dict())
            print(f"{c.result:28s} {c.quantity[:44]:44s} {c.measured:12.5g}  {'ok' if c.passed else 'FAIL'}", flush=True)
        print(f"  ({name}: {time.perf_counter() - t0:.1f} s)", flush=True)
    seconds = time.perf_counter() - t_all
    (args.out / "report.json").write_text(json.dumps(dict(quick=args.quick, seed=args.seed, seconds=seconds, checks=rows), indent=1))
    (args.out / "report.md").write_text(render(rows, args.quick, seconds))
    if args.update_report:
        shutil.copy(args.out / "report.md", pathlib.Path(proofs_check.__file__).parent / "report.md")
    failed = [r for r in rows if not r["passed"]]
    print(f"{len(rows) - len(failed)}/{len(rows)} passed; report in {args.out}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
