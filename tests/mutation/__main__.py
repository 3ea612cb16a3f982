"""``python -m tests.mutation``: mutation testing of theory/ and sims/ with cosmic-ray (``make mutate``).

For each module of the packages named in map.toml: copy the sources into a sandbox (out/mutants/tree,
so a crash never leaves a mutant in the working tree), run the module's tests once unmutated (this
fills a warm Numba cache and times the run), let cosmic-ray write every mutant of the kept operators
and run the module's tests on it through the fork server (server.py, client.py), then write the
scores and the surviving mutants.  Incremental: a module whose source, tests and operator set are
unchanged since the last run keeps its session (cosmic-ray only runs what is still pending).

Outputs (under --out, default out/mutants): scores.tsv (per module and per package), survivors.txt
(each surviving mutant's diff, equivalent ones marked), sessions/*.sqlite (cosmic-ray's sessions).
"""

from __future__ import annotations

import argparse
import ast
import glob
import hashlib
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import time
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
# docs/results and docs/reproduction.md: the committed full run and its report, which tests/paper_figs/test_report_render.py reads
COPIED = ["theory", "sims", "tests", "paper_figs", "proofs_check", "pyproject.toml", "docs/results", "docs/reproduction.md"]
SCANNED = ["theory", "sims", "tests", "paper_figs", "proofs_check"]
# One mutant per operator occurrence, as mutmut does (cosmic-ray's default set replaces each binary
# operator by every other one: 4229 mutants in theory/ alone, ten times what a developer will wait for).
KEEP = [
    r"core/ReplaceBinaryOperator_(Add_Sub|Sub_Add|Mul_Div|Div_Mul|Pow_Mul|FloorDiv_Div|Mod_FloorDiv"
    r"|BitAnd_BitOr|BitOr_BitAnd|BitXor_BitOr|LShift_RShift|RShift_LShift)$",
    r"core/ReplaceComparisonOperator_(Lt_LtE|LtE_Lt|Gt_GtE|GtE_Gt|Eq_NotEq|NotEq_Eq|Is_IsNot|IsNot_Is|In_NotIn|NotIn_In)$",
    r"core/ReplaceUnaryOperator_(USub_UAdd|Delete_Not)$",
    r"core/(AddNot|ReplaceTrueWithFalse|ReplaceFalseWithTrue|ReplaceAndWithOr|ReplaceOrWithAnd|ReplaceBreakWithContinue|ZeroIterationForLoop)$",
    r"core/NumberReplacer$",  # only the +1 offset (even occurrences), see _prune
]
OPERATOR_SET_VERSION = "1"


def _cosmic_ray_version() -> str:
    from importlib.metadata import version

    return version("cosmic-ray")


def _sync_sandbox(tree: Path) -> None:
    tree.mkdir(parents=True, exist_ok=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".hypothesis")
    for name in COPIED:
        src, dst = ROOT / name, tree / name
        if dst.is_dir():
            shutil.rmtree(dst)
        elif dst.exists():
            dst.unlink()
        if src.is_dir():
            shutil.copytree(src, dst, ignore=ignore)  # copy2: mtimes kept, so the warm cache stays valid
        else:
            shutil.copy2(src, dst)


def _module_name(path: str) -> str:
    p = path[:-3].replace("/", ".")
    return p[: -len(".__init__")] if p.endswith(".__init__") else p


def _importers(tree: Path) -> dict[str, set[str]]:
    """Reverse import graph over the copied packages: module -> modules that import it directly."""
    files = {_module_name(str(f.relative_to(tree))): str(f.relative_to(tree)) for d in SCANNED for f in (tree / d).rglob("*.py")}
    rev: dict[str, set[str]] = {m: set() for m in files}
    for mod, path in files.items():
        for node in ast.walk(ast.parse((tree / path).read_text())):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            for t in targets:
                parts = t.split(".")
                for i in range(1, len(parts) + 1):  # importing a.b.c runs a/__init__ and a/b/__init__ too
                    if ".".join(parts[:i]) in rev:
                        rev[".".join(parts[:i])].add(mod)
    return rev


def _dependents(module: str, rev: dict[str, set[str]], packages: set[str]) -> set[str]:
    """Modules whose compiled kernels may hold ``module``'s code: its importers, theirs, and so on.
    A package's __init__ is included but not followed: it re-exports Python functions, never a
    kernel another kernel could inline (following it would make every module of sims depend on
    every module of theory, and each mutant recompile every kernel)."""
    seen, todo = {module}, [module]
    while todo:
        for m in rev.get(todo.pop(), ()):
            if m not in seen:
                seen.add(m)
                if m not in packages:
                    todo.append(m)
    return seen


def _packages(tree: Path) -> set[str]:
    return {_module_name(str(f.relative_to(tree))) for d in SCANNED for f in (tree / d).rglob("__init__.py")}


def _cache_drop(mods: set[str]) -> list[list[str]]:
    """Numba cache entries to drop: (folder name, file stem) of each module (folder = its parent dir)."""
    out = []
    for m in sorted(mods):
        parts = m.split(".")
        if len(parts) >= 2:
            out.append([parts[-2], parts[-1]])
        out.append([parts[-1], "__init__"])
    return out


def _tests_of(module: str, pkg: dict, base: Path) -> list[str]:
    """The module's test files (globs), or single tests as ``file::name`` (the file part is not globbed)."""
    pats = pkg.get("tests_of", {}).get(module, pkg["tests"])
    stem = Path(module).stem.lstrip("_")
    found = set()
    for p in pats:
        p = p.format(stem=stem)
        found |= {p} if "::" in p and (base / p.split("::")[0]).is_file() else set(glob.glob(p, root_dir=base))
    return sorted(f for f in found if not f.startswith("tests/mutation/"))


def _run_options(cfg_run: dict, pkg: dict) -> dict:
    """The pytest options of a package's runs: [run]'s, with the package's own ``keyword`` and
    ``deselect`` where it gives them (the theory filter would drop the sims generator tests)."""
    return {**cfg_run, **{k: pkg[k] for k in ("keyword", "deselect") if k in pkg}}


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:20]


def _key(module: str, tests: list[str], cfg_run: dict, base: Path) -> dict:
    """What a session's results depend on: the module, its tests, the operators, the run options."""
    return {
        "module": _digest((base / module).read_bytes()),
        "tests": {f: _digest((base / f.split("::")[0]).read_bytes()) + f[len(f.split("::")[0]):] for f in [*tests, "tests/conftest.py"]},
        "config": _digest(json.dumps([KEEP, OPERATOR_SET_VERSION, cfg_run, _cosmic_ray_version()]).encode()),
    }


def _reuse(old: dict | None, new: dict) -> str:
    """'all': nothing changed; 'killed': tests were only added (a killed mutant stays killed, the
    survivors run again); 'none': the module, an existing test or the options changed."""
    if old == new:
        return "all"
    if old and old["module"] == new["module"] and old["config"] == new["config"] and old["tests"].items() <= new["tests"].items():
        return "killed"
    return "none"


def _load_key(keyfile: Path) -> dict | None:
    try:
        return json.loads(keyfile.read_text())
    except (OSError, ValueError):
        return None


def _rerun_survivors(db: Path) -> list[str]:
    """Forget the results of the survivors and of the mutants whose test command could not start
    (cosmic-ray's INCOMPETENT): they run again; returns their job ids."""
    con = sqlite3.connect(db)
    ids = [j for (j,) in con.execute("select job_id from work_results where worker_outcome = 'NORMAL' "
                                     "and test_outcome in ('SURVIVED', 'INCOMPETENT')")]
    con.executemany("delete from work_results where job_id = ?", [(j,) for j in ids])
    con.commit()
    con.close()
    return ids


def _prune(db: Path, source: str) -> None:
    """Keep the operators of KEEP, the +1 of NumberReplacer, and no ``cache=True`` -> ``False`` (a
    Numba / vectorize cache flag changes speed only: every such mutant is equivalent)."""
    keep = re.compile("|".join(KEEP))
    lines = source.splitlines()
    con = sqlite3.connect(db)
    rows = con.execute("select job_id, operator_name, occurrence, start_pos_row, start_pos_col from mutation_specs").fetchall()
    drop = [
        (j,)
        for j, op, occ, row, col in rows
        if not keep.match(op)
        or (op == "core/NumberReplacer" and occ % 2 == 1)
        or (op == "core/ReplaceTrueWithFalse" and lines[row - 1][:col].rstrip().endswith("cache="))
    ]
    con.executemany("delete from mutation_specs where job_id = ?", drop)
    con.executemany("delete from work_items where job_id = ?", drop)
    con.commit()
    con.close()


def _sample(db: Path, n: int | None, first: list[str] = ()) -> None:
    """Run at most ``n`` mutants of the session (a fixed pseudo-random subset: cosmic-ray's job ids
    are random, ``first`` (survivors to run again) before the others); the others are marked skipped.
    ``n`` None: every mutant (the skipped become pending)."""
    con = sqlite3.connect(db)
    con.execute("delete from work_results where worker_outcome = 'SKIPPED'")
    if n is not None:  # the mutants already run count towards n
        done = con.execute("select count(*) from work_results").fetchone()[0]
        pending = [j for (j,) in con.execute("select job_id from mutation_specs where job_id not in (select job_id from work_results) order by job_id")]
        pending.sort(key=lambda j: j not in first)  # stable: the survivors first, then by job id
        con.executemany(
            "insert into work_results (job_id, worker_outcome, output) values (?, 'SKIPPED', 'not in the sample')",
            [(j,) for j in pending[max(0, n - done) :]],
        )
    con.commit()
    con.close()


def _cr(*args: str, cwd: Path) -> None:
    subprocess.run([sys.executable, "-m", "cosmic_ray.cli", *args], cwd=cwd, check=True, stdout=subprocess.DEVNULL)


def _equivalents() -> list[dict]:
    with open(HERE / "equivalent.toml", "rb") as f:
        return tomllib.load(f).get("equivalent", [])


def _changed_lines(diff: str) -> tuple[str, str]:
    minus = " ".join(line[1:].strip() for line in diff.splitlines() if line.startswith("-") and not line.startswith("---"))
    plus = " ".join(line[1:].strip() for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++"))
    return minus, plus


def _results(db: Path, module: str, equivalents: list[dict]) -> tuple[dict, list[str]]:
    con = sqlite3.connect(db)
    rows = con.execute(
        "select s.operator_name, s.start_pos_row, r.test_outcome, r.worker_outcome, r.output, r.diff "
        "from mutation_specs s left join work_results r on r.job_id = s.job_id"
    ).fetchall()
    con.close()
    eq = [(e["before"].strip(), e["after"].strip()) for e in equivalents if e["module"] == module]
    n = {"mutants": len(rows), "killed": 0, "timeout": 0, "survived": 0, "equivalent": 0, "not_run": 0, "other": 0}
    survivors = []
    for op, line, test, worker, output, diff in sorted(rows, key=lambda r: r[1]):
        if worker is None or worker == "SKIPPED":
            n["not_run"] += 1
        elif worker != "NORMAL":
            n["other"] += 1
        elif test == "INCOMPETENT":  # the test command did not start (e.g. its interpreter was being reinstalled)
            n["other"] += 1
        elif test == "KILLED":
            n["timeout" if (output or "").startswith(("TIMEOUT", "timeout")) else "killed"] += 1
        else:
            before, after = _changed_lines(diff or "")
            is_eq = (before, after) in eq or (before != after and before.replace("cache=True", "cache=False") == after)
            n["equivalent" if is_eq else "survived"] += 1
            tag = "EQUIVALENT" if is_eq else "SURVIVED"
            survivors.append(f"{tag} {module}:{line} {op}\n  - {before}\n  + {after}\n")
    return n, survivors


def _score(n: dict) -> str:
    live = n["mutants"] - n["equivalent"] - n["not_run"] - n["other"]
    return f"{100.0 * (n['killed'] + n['timeout']) / live:.1f}" if live else "n/a"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.mutation", description=__doc__.splitlines()[0])
    ap.add_argument("--package", action="append", help="package(s) of map.toml to run (default: all)")
    ap.add_argument("--module", action="append", help="only these module files (e.g. theory/soft.py)")
    ap.add_argument("--out", default="out/mutants", help="output folder (default out/mutants)")
    ap.add_argument("--python", default=sys.executable, help="the interpreter that runs the tests (default: this one)")
    ap.add_argument("--sample", type=int, help="run at most this many mutants of each module (a fixed pseudo-random subset)")
    ap.add_argument("--report-only", action="store_true", help="write the scores of the sessions already run; run nothing")
    ns = ap.parse_args(argv)
    ns.python = os.path.abspath(ns.python)  # the tests run in the sandbox; a venv's python is not resolved (it is a link)

    with open(HERE / "map.toml", "rb") as f:
        cfg = tomllib.load(f)
    out = (ROOT / ns.out).resolve()
    tree, sessions, scratch = out / "tree", out / "sessions", out / "scratch"
    for d in (sessions, scratch):
        d.mkdir(parents=True, exist_ok=True)
    for d in [] if ns.report_only else scratch.glob("mutant-cache-*"):  # left by an interrupted run
        shutil.rmtree(d, ignore_errors=True)
    if not ns.report_only:
        _sync_sandbox(tree)  # from here on, the sandbox is what runs: files edited meanwhile wait for the next run
    jobs: list[tuple[str, str, list[str]]] = []
    for pname, pkg in cfg["packages"].items():
        if ns.package and pname not in ns.package:
            continue
        mods = sorted({m for p in pkg["modules"] for m in glob.glob(p, root_dir=ROOT)} - set(pkg.get("skip", [])))
        jobs += [(pkg, m, _tests_of(m, pkg, tree)) for m in mods if not ns.module or m in ns.module]
    if ns.module:  # in the order given
        jobs.sort(key=lambda j: ns.module.index(j[1]))

    server = None
    state_path = scratch / "state.json"
    equivalents = _equivalents()
    if not ns.report_only:
        rev, packages = _importers(tree), _packages(tree)
        state = {
            "socket": str(scratch / "server.sock"),
            "scratch": str(scratch),
            "warm_cache": str(out / "warm-numba-cache"),
            "mtimes": {str(f.relative_to(tree)): f.stat().st_mtime for d in SCANNED for f in (tree / d).rglob("*.py")},
            "modules": {},
        }
        log = open(scratch / "server.log", "w")  # noqa: SIM115
        server = subprocess.Popen([ns.python, str(HERE / "server.py"), state["socket"], str(tree)], stdout=subprocess.PIPE, stderr=log, text=True)
        if server.stdout.readline().strip() != "ready":
            raise SystemExit(f"the fork server did not start: see {scratch / 'server.log'}")
    try:
        for pkg, module, tests in jobs:
            db = sessions / (module.replace("/", "__") + ".sqlite")
            if ns.report_only:
                continue
            if not tests:
                print(f"{module}: no tests in map.toml, skipped", flush=True)
                continue
            run = _run_options(cfg["run"], pkg)
            key = _key(module, tests, run, tree)
            keyfile = db.with_suffix(".key")
            reuse = _reuse(_load_key(keyfile) if db.exists() else None, key)
            state["modules"][module] = {
                "pytest_args": [*run["pytest"], *(["-k", run["keyword"]] if run.get("keyword") else []),
                                *(a for d in run.get("deselect", []) for a in ("--deselect", d)), *tests],
                "drop": _cache_drop(_dependents(_module_name(module), rev, packages)),
                "timeout": 600,
            }
            state_path.write_text(json.dumps(state))
            t0 = time.monotonic()
            base = subprocess.run([ns.python, str(HERE / "client.py"), str(state_path), module, "--warm"], cwd=tree, capture_output=True, text=True)
            t_base = time.monotonic() - t0
            if base.returncode != 0:
                print(f"{module}: the unmutated tests fail, skipped\n{base.stdout[-3000:]}", flush=True)
                continue
            # the unmutated tests once more as a mutant runs them (the module's kernels and their importers'
            # recompiled): a mutant of the generator recompiles it, minutes on a loaded machine, which must
            # not count as a timeout (a kill)
            t0 = time.monotonic()
            cold = subprocess.run([ns.python, str(HERE / "client.py"), str(state_path), module], cwd=tree, capture_output=True, text=True)
            t_cold = time.monotonic() - t0
            if cold.returncode != 0:
                print(f"{module}: the unmutated tests fail with its kernels recompiled, skipped\n{cold.stdout[-3000:]}", flush=True)
                continue
            timeout = max(run["min_timeout"], 4 * t_base, 3 * t_cold)
            state["modules"][module]["timeout"] = timeout
            state_path.write_text(json.dumps(state))
            conf = scratch / (module.replace("/", "__") + ".toml")
            client = f"{ns.python} {HERE / 'client.py'} {state_path} {module}"
            conf.write_text(
                f'[cosmic-ray]\nmodule-path = "{module}"\ntimeout = {timeout + 30:.0f}\nexcluded-modules = []\n'
                f'test-command = "{client}"\n[cosmic-ray.distributor]\nname = "local"\n'
            )
            if reuse == "none":
                keyfile.unlink(missing_ok=True)
                db.unlink(missing_ok=True)  # cosmic-ray init refuses an existing session
                _cr("init", str(conf), str(db), cwd=tree)
                _prune(db, (tree / module).read_text())
            rerun = _rerun_survivors(db) if reuse == "killed" else []
            keyfile.write_text(json.dumps(key))
            _sample(db, ns.sample, set(rerun))
            t0 = time.monotonic()
            _cr("exec", str(conf), str(db), cwd=tree)
            n, _ = _results(db, module, equivalents)
            print(f"{module}: {n} score {_score(n)} % (baseline {t_base:.1f} s, recompiled {t_cold:.1f} s, mutants {time.monotonic() - t0:.0f} s)", flush=True)
    finally:
        if server:
            server.kill()
            server.wait()
    return _report(cfg, out, sessions, equivalents)


def _report(cfg: dict, out: Path, sessions: Path, equivalents: list[dict]) -> int:
    lines, survivors, totals = [], [], {}
    for pname, pkg in cfg["packages"].items():
        mods = sorted({m for p in pkg["modules"] for m in glob.glob(p, root_dir=ROOT)} - set(pkg.get("skip", [])))
        for module in mods:
            db = sessions / (module.replace("/", "__") + ".sqlite")
            if not db.exists():
                continue
            n, surv = _results(db, module, equivalents)
            survivors += surv
            lines.append("\t".join([module, *(str(v) for v in n.values()), _score(n)]))
            t = totals.setdefault(pname, dict.fromkeys(n, 0))
            for k, v in n.items():
                t[k] += v
    cols = ["module", "mutants", "killed", "timeout", "survived", "equivalent", "not_run", "other", "score_%"]
    rows = [f"{p}\t" + "\t".join(str(v) for v in t.values()) + f"\t{_score(t)}" for p, t in totals.items()]
    (out / "scores.tsv").write_text("\n".join(["\t".join(cols), *rows, *lines]) + "\n")
    (out / "survivors.txt").write_text("".join(survivors))
    print("\n".join(["\t".join(cols), *rows]))
    print(f"scores: {out / 'scores.tsv'}; surviving mutants: {out / 'survivors.txt'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
