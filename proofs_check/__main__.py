"""``python -m proofs_check [--quick] [--out DIR] [--only NAME] [--seed S] [--update-report]``."""

from __future__ import annotations

import argparse
import importlib
import json
import math
import pathlib
import pkgutil
import shutil
import sys
import time
import traceback
import zlib

import numpy as np

import proofs_check
from proofs_check._check import Check


def modules() -> list[str]:
    """Names of the check modules, sorted.

    Returns
    -------
    list of str
        The modules of :mod:`proofs_check` whose name starts with ``check_``.
    """
    return sorted(m.name for m in pkgutil.iter_modules(proofs_check.__path__) if m.name.startswith("check_"))


def _fmt(x: float) -> str:
    return f"{x:.6g}" if math.isfinite(x) else str(x)


def render(rows: list[dict], quick: bool, seed: int, seconds: float) -> str:
    """The markdown report: table, findings, notes, justifications.

    Parameters
    ----------
    rows : list of dict
        The checks as :meth:`proofs_check._check.Check.as_dict` rows.
    quick : bool
        Whether the run used ``--quick`` (named in the header).
    seed : int
        The run's seed.
    seconds : float
        Wall time of the run.

    Returns
    -------
    str
        The markdown of ``report.md``: a table of every check, then the findings (rows whose result ends in
        ``(finding)``), the notes, the failed checks and how each quantity is computed.
    """
    n_ok = sum(r["passed"] for r in rows)
    lines = [
        "# proofs_check report",
        "",
        f"Mode: {'quick' if quick else 'full'}; seed {seed}; {n_ok}/{len(rows)} checks passed in {seconds:.0f} s.",
        "",
        "Each row computes a quantity of one result of the paper independently of the function under test and",
        "compares it with the claim at the stated tolerance (exact arithmetic, solver accuracy, or a test /",
        "confidence interval at a stated level). Rows marked *(finding)* check a discrepancy with the paper:",
        "they pass when the counterexample is reproduced, and the corrected statement is checked beside them.",
        "",
        "| result | quantity | measured | claimed | tolerance | pass |",
        "|---|---|---|---|---|---|",
    ]
    esc = lambda s: str(s).replace("|", "\\|")  # noqa: E731
    for r in rows:
        lines.append(f"| {esc(r['result'])} | {esc(r['quantity'])} | {_fmt(r['measured'])} | {esc(r['claimed'])} | {esc(r['tolerance'])} | "
                     f"{'yes' if r['passed'] else '**NO**'} |")
    findings = [r for r in rows if r["result"].endswith("(finding)")]
    notes = [r for r in rows if r["note"] and not r["result"].endswith("(finding)")]
    if findings:
        lines += ["", "## Findings (the paper's statement or proof needs a correction)", ""]
        lines += [f"- **{r['result']}** ({esc(r['quantity'])}): {r['note'] or r['claimed']}" for r in findings]
    if notes:
        lines += ["", "## Notes", ""]
        lines += [f"- **{r['result']}** ({esc(r['quantity'])}): {r['note']}" for r in notes]
    failed = [r for r in rows if not r["passed"]]
    if failed:
        lines += ["", "## Failed checks", ""]
        lines += [f"- **{r['result']}** ({esc(r['quantity'])}): measured {_fmt(r['measured'])}, claimed {esc(r['claimed'])}. {r['note']}" for r in failed]
    lines += ["", "## How each quantity is computed", ""]
    lines += [f"- {r['result']} / {esc(r['quantity'])}: {r['justification']}" for r in rows]
    return "\n".join(lines) + "\n"


def _run_module(name: str, quick: bool, seed: int) -> list[Check]:
    mod = importlib.import_module(f"proofs_check.{name}")
    try:
        return list(mod.run(quick, np.random.default_rng([seed, zlib.crc32(name.encode())])))
    except Exception as exc:  # a module that crashes is a failed check, reported, not a crashed certificate
        tb = traceback.format_exc(limit=-3).strip().splitlines()
        return [Check(getattr(mod, "RESULT", name), f"{name} raised {type(exc).__name__}", float("nan"), "runs", "-", False,
                      "the module did not complete", note=" / ".join(tb[-3:]))]


def main(argv=None) -> int:
    """Run the checks, print the table, write report.md and report.json.

    Options: ``--quick`` (small sizes), ``--out DIR`` (default ``out/proofs_check``), ``--only NAME``
    (repeatable), ``--seed S`` (default 0), ``--update-report`` (also copy report.md to
    ``proofs_check/report.md``).  A module that raises is reported as a failed check.

    Parameters
    ----------
    argv : list of str, optional
        The arguments; None reads the command line.

    Returns
    -------
    int
        The exit status: 0 when every check passed, 1 if any failed.
    """
    ap = argparse.ArgumentParser(prog="python -m proofs_check", description=proofs_check.__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes (< 3 minutes)")
    ap.add_argument("--out", type=pathlib.Path, default=pathlib.Path("out/proofs_check"), help="folder for report.md and report.json")
    ap.add_argument("--only", action="append", choices=modules(), metavar="NAME", help=f"run one module (repeatable): {', '.join(modules())}")
    ap.add_argument("--seed", type=int, default=0, help="seed of every module's generator (default 0)")
    ap.add_argument("--update-report", action="store_true", help="also copy report.md to proofs_check/report.md")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    rows, timing = [], {}
    t_all = time.perf_counter()
    print(f"{'result':28s} {'quantity':48s} {'measured':>12s}  pass")
    for name in args.only or modules():
        t0 = time.perf_counter()
        for c in _run_module(name, args.quick, args.seed):
            rows.append(c.as_dict())
            print(f"{c.result[:28]:28s} {c.quantity[:48]:48s} {c.measured:12.5g}  {'ok' if c.passed else 'FAIL'}", flush=True)
        timing[name] = time.perf_counter() - t0
        print(f"  ({name}: {timing[name]:.1f} s)", flush=True)
    seconds = time.perf_counter() - t_all
    report = dict(quick=args.quick, seed=args.seed, seconds=seconds, module_seconds=timing, checks=rows)
    (args.out / "report.json").write_text(json.dumps(report, indent=1, allow_nan=True))
    (args.out / "report.md").write_text(render(rows, args.quick, args.seed, seconds))
    if args.update_report:
        shutil.copy(args.out / "report.md", pathlib.Path(proofs_check.__file__).parent / "report.md")
    failed = [r for r in rows if not r["passed"]]
    print(f"{len(rows) - len(failed)}/{len(rows)} passed; report in {args.out}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
