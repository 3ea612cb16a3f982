"""The pure parts of make mutate's driver (tests/mutation): which Numba cache entries a mutant
invalidates, when a session's results are reused, which operators run, how a diff is read."""

import re

from tests.mutation import client
from tests.mutation.__main__ import KEEP, ROOT, _cache_drop, _changed_lines, _dependents, _importers, _packages, _reuse, _run_options, _tests_of


def test_a_kernel_modules_importers_are_invalidated_and_nothing_else():
    rev, pk = _importers(ROOT), _packages(ROOT)
    dep = _dependents("theory._scalar", rev, pk)
    # every module that can hold _scalar's kernels inlined: theory's ufuncs and solver, sims' kernels
    assert {"theory._scalar", "theory.soft", "theory.dual_ascent", "theory.offline", "sims.watermarks.generate", "sims.reduced.online"} <= dep
    assert "theory._validate" not in dep and "theory._numba_cache" not in dep
    # a package's __init__ is included but not followed: sims/watermarks/__init__ imports tournament (to register
    # it), and sims.detect.stats.scores, which imports sims.watermarks but not tournament, holds none of its kernels
    tour = _dependents("sims.watermarks.tournament", rev, pk)
    assert "sims.watermarks" in tour and "sims.detect.stats.scores" not in tour and "sims.detect.stats.scores" in rev["sims.watermarks"]
    assert "sims.watermarks.generate" not in _dependents("theory.soft", rev, pk)
    assert "sims.core.prf" not in _dependents("sims.core.rng", rev, pk)
    assert "sims.core.rng" in _dependents("sims.core.prf", rev, pk)
    drop = _cache_drop({"theory._scalar", "sims.core.prf"})
    assert ["theory", "_scalar"] in drop and ["core", "prf"] in drop


def test_the_client_copies_the_warm_cache_less_the_dropped_entries():
    ignore = client._ignore([["theory", "_scalar"]])
    names = ["_scalar.kl-57.py311.nbi", "_scalar.kl-57.py311.1.nbc", "offline._solve_lam-62.py311.nbi", "soft_scalar.x.nbi"]
    assert ignore("/c/theory_84fe", names) == names[:2]
    assert ignore("/c/core_a61f", names) == []


def test_results_are_reused_only_when_nothing_but_added_tests_changed():
    old = {"module": "m1", "tests": {"a.py": "1"}, "config": "c"}
    assert _reuse(old, dict(old)) == "all"
    assert _reuse(old, {**old, "tests": {"a.py": "1", "b.py": "2"}}) == "killed"  # a test added
    assert _reuse(old, {**old, "tests": {"a.py": "9"}}) == "none"  # a test changed
    assert _reuse(old, {**old, "module": "m2"}) == "none"
    assert _reuse(old, {**old, "config": "d"}) == "none"
    assert _reuse(None, old) == "none"


def test_one_mutant_per_operator_occurrence():
    keep = re.compile("|".join(KEEP))
    kept = ["core/ReplaceBinaryOperator_Add_Sub", "core/ReplaceComparisonOperator_Lt_LtE", "core/NumberReplacer", "core/AddNot", "core/ZeroIterationForLoop"]
    for op in kept:
        assert keep.match(op), op
    for op in ["core/ReplaceBinaryOperator_Add_Mul", "core/ReplaceComparisonOperator_Lt_Gt", "core/RemoveDecorator", "core/ExceptionReplacer"]:
        assert not keep.match(op), op


def test_a_diff_is_read_as_the_line_before_and_after():
    diff = "--- mutation diff ---\n--- a/theory/x.py\n+++ b/theory/x.py\n@@ -1,3 +1,3 @@\n a = 1\n-    if x < 0:\n+    if x <= 0:\n b = 2\n"
    assert _changed_lines(diff) == ("if x < 0:", "if x <= 0:")


def test_a_modules_tests_are_globs_or_single_tests_and_a_package_may_set_its_own_filter():
    pkg = {"tests": ["tests/test_mutation_driv*.py", "tests/test_imports.py::test_x", "tests/no_such_file.py::test_y"]}
    assert _tests_of("theory/x.py", pkg, ROOT) == ["tests/test_imports.py::test_x", "tests/test_mutation_driver.py"]
    run = {"pytest": ["-x"], "keyword": "not generator", "deselect": ["a"], "min_timeout": 60}
    assert _run_options(run, {"keyword": "", "deselect": []}) == {**run, "keyword": "", "deselect": []}
    assert _run_options(run, {}) == run


def test_a_sampled_rerun_runs_the_survivors_again_not_new_mutants(tmp_path):
    import sqlite3

    from tests.mutation.__main__ import _rerun_survivors, _sample

    db = tmp_path / "s.sqlite"
    con = sqlite3.connect(db)
    con.execute("create table mutation_specs (job_id text)")
    con.execute("create table work_results (job_id text, worker_outcome text, output text, test_outcome text)")
    con.executemany("insert into mutation_specs values (?)", [(j,) for j in "abcdefgh"])
    con.executemany("insert into work_results values (?, 'NORMAL', '', ?)", [("b", "KILLED"), ("g", "SURVIVED"), ("h", "SURVIVED")])
    con.commit()
    _sample(db, 3)  # the 3 already run fill the sample
    assert con.execute("select count(*) from work_results where worker_outcome = 'SKIPPED'").fetchone()[0] == 5
    rerun = _rerun_survivors(db)
    assert sorted(rerun) == ["g", "h"]
    _sample(db, 3, set(rerun))
    pending = {j for (j,) in con.execute("select job_id from mutation_specs where job_id not in (select job_id from work_results)")}
    assert pending == {"g", "h"}  # not a, c, d: the survivors run again, the sample stays the same


def test_the_keyword_filter_drops_only_the_cross_backend_checks():
    """map.toml's [run] keyword must keep every test of theory's own files (a bare "not fused" dropped every
    test named "..._refused", so range-check mutants of theory survived) and drop test_dual_ascent's
    sims-backed parametrisations."""
    import subprocess
    import sys
    import tomllib

    keyword = tomllib.loads((ROOT / "tests/mutation/map.toml").read_text())["run"]["keyword"]

    def collected(path):
        out = subprocess.run([sys.executable, "-m", "pytest", path, "-q", "-p", "no:cacheprovider", "--collect-only", "-k", keyword],
                             capture_output=True, text=True, cwd=ROOT).stdout
        return [line for line in out.splitlines() if "::" in line]

    kept = collected("tests/theory/test_dual_ascent_edges.py") + collected("tests/theory/test_certainty_mpmath.py")
    assert sum("refused" in t for t in kept) >= 2
    backends = collected("tests/theory/test_dual_ascent.py")
    assert backends and not any(b in t for t in backends for b in ("generator", "processor", "fused-", "reduced", "numba-scalar"))


def test_a_test_command_that_could_not_start_is_no_survivor_and_runs_again(tmp_path):
    """cosmic-ray's INCOMPETENT (the client could not start, e.g. the test interpreter was being reinstalled) is
    counted apart from the score, listed nowhere, and re-run like a survivor."""
    import sqlite3

    from tests.mutation.__main__ import _rerun_survivors, _results

    db = tmp_path / "s.sqlite"
    con = sqlite3.connect(db)
    con.execute("create table mutation_specs (job_id text, operator_name text, start_pos_row int)")
    con.execute("create table work_results (job_id text, worker_outcome text, output text, test_outcome text, diff text)")
    con.executemany("insert into mutation_specs values (?, 'op', 1)", [(j,) for j in "abc"])
    diff = "--- a\n+++ b\n-x = 1\n+x = 2\n"
    con.executemany("insert into work_results values (?, 'NORMAL', '', ?, ?)",
                    [("a", "KILLED", diff), ("b", "INCOMPETENT", diff), ("c", "SURVIVED", diff)])
    con.commit()
    n, survivors = _results(db, "m.py", [])
    assert (n["killed"], n["survived"], n["other"]) == (1, 1, 1) and len(survivors) == 1
    assert sorted(_rerun_survivors(db)) == ["b", "c"]
