"""``python -m bench``: each benchmark's line says which of how many it is and how long it took last time;
each run records its seconds in the results folder's durations file, apart from the numbers."""

import json
import sys
import types

import bench.__main__ as runner


def test_each_benchmark_line_has_its_rank_and_expected_duration(tmp_path, monkeypatch, capsys):
    results = tmp_path / "committed"
    results.mkdir()
    (results / runner.DURATIONS).write_text(json.dumps({"seconds": {"bench_a": 12.3}}))  # bench_b: no duration recorded
    for name, res in (("bench_a", {"x": 1}), ("bench_b", {"skipped": "no GPU"})):
        monkeypatch.setitem(sys.modules, f"bench.{name}", types.SimpleNamespace(main=lambda argv, res=res: dict(res)))
    monkeypatch.setattr(runner, "names", lambda: ["bench_a", "bench_b"])
    monkeypatch.setattr(runner, "RESULTS", results)
    assert runner.main(["--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out.pop(0) == f"2 benchmarks, about 12 s expected (1 with no recorded duration) (from {results})"
    assert out[0] == "== [1/2] bench_a (about 12 s last time)"
    assert out[1].startswith("   done in ") and out[1].endswith(" s")
    assert out[2] == "== [2/2] bench_b (duration not recorded yet)"
    assert out[3] == "   skipped: no GPU"
    written = json.loads((tmp_path / "out" / "bench_a.json").read_text())
    assert written["x"] == 1 and "seconds" not in written
    took = json.loads((tmp_path / "out" / runner.DURATIONS).read_text())
    assert list(took["seconds"]) == ["bench_a"] and took["seconds"]["bench_a"] >= 0.0  # a skipped benchmark records none
    assert not (tmp_path / "out" / "bench_b.json").exists()


def test_a_recorded_duration_keeps_the_other_benchmarks_entries(tmp_path):
    runner.record_duration("bench_b", 20.04, tmp_path)
    runner.record_duration("bench_a", 5.0, tmp_path)
    runner.record_duration("bench_b", 30.0, tmp_path)
    assert runner.expected_seconds("bench_a", tmp_path) == 5.0
    assert runner.expected_seconds("bench_b", tmp_path) == 30.0
    assert runner.plan(["bench_a", "bench_b", "bench_c"], tmp_path) == f"3 benchmarks, about 35 s expected (1 with no recorded duration) (from {tmp_path})"


def test_expected_seconds_of_a_missing_or_broken_result_is_none(tmp_path):
    (tmp_path / runner.DURATIONS).write_text("not json")
    assert runner.expected_seconds("bench_c", tmp_path) is None
    assert runner.expected_seconds("bench_none", tmp_path) is None


def test_a_running_benchmark_prints_progress_against_its_expected_time(tmp_path, monkeypatch, capsys):
    """While a benchmark runs, a line every --every seconds: elapsed time and the share of its committed time."""
    import time

    results = tmp_path / "committed"
    results.mkdir()
    (results / runner.DURATIONS).write_text(json.dumps({"seconds": {"bench_slow": 0.4}}))
    monkeypatch.setitem(sys.modules, "bench.bench_slow", types.SimpleNamespace(main=lambda argv: time.sleep(0.35) or {"x": 1}))
    monkeypatch.setattr(runner, "names", lambda: ["bench_slow"])
    monkeypatch.setattr(runner, "RESULTS", results)
    assert runner.main(["--out", str(tmp_path / "out"), "--every", "0.1"]) == 0
    out = capsys.readouterr().out.splitlines()
    beats = [line for line in out if line.startswith("   ... ")]
    assert len(beats) >= 2, out
    assert beats[0].endswith(" %)") and "of about 0 s" in beats[0], beats[0]
    assert out.index(beats[0]) < out.index(next(line for line in out if line.startswith("   done in")))


def test_progress_lines_and_plan_without_a_recorded_duration(tmp_path):
    assert runner.Heartbeat(None).line(75) == "   ... 75 s so far"
    assert runner.Heartbeat(300.0).line(150) == "   ... 2.5 min of about 5.0 min (50 %)"
    assert runner.plan(["bench_x"], tmp_path) == f"1 benchmark, no expected duration recorded (from {tmp_path})"


def test_every_benchmark_the_runner_finds_returns_its_result_from_main_with_no_arguments():
    """The runner calls ``bench.NAME.main([])`` for every ``bench_*`` module and stores the dict it returns: a tool that
    needs arguments (``bench.compare_detect_cli``, ``bench.identity_check``) must not carry the prefix."""
    import ast
    import pathlib

    folder = pathlib.Path(runner.__file__).parent
    assert runner.names(), "no benchmark found"
    for name in runner.names():
        tree = ast.parse((folder / f"{name}.py").read_text())
        main = next(f for f in tree.body if isinstance(f, ast.FunctionDef) and f.name == "main")
        assert ast.unparse(main.returns) == "dict", f"bench/{name}.py: main() returns {ast.unparse(main.returns)}, not the result dict"
        args = main.args
        assert len(args.defaults) == len(args.args), f"bench/{name}.py: main() has an argument without a default"
        for call in ast.walk(main):  # an argparse positional or required option cannot be met by main([])
            if isinstance(call, ast.Call) and getattr(call.func, "attr", "") == "add_argument":
                first = call.args[0].value if call.args and isinstance(call.args[0], ast.Constant) else "-"
                required = any(k.arg == "required" and getattr(k.value, "value", False) for k in call.keywords)
                assert first.startswith("-") and not required, f"bench/{name}.py: main() needs the argument {first!r}"
