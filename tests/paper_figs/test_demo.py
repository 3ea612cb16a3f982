"""``python -m paper_figs.demo``: a short summary on stdout, the report and everything the parts print on disk.

The parts' computations are replaced by stubs that print and warn like the real ones (the real demo takes
minutes: ``make demo``); the theory part runs for real.
"""

import json
import re
import sys
import warnings

import pytest

from paper_figs import demo


@pytest.fixture
def stubbed(monkeypatch):
    """The heavy parts as stubs that print, warn and draw a tqdm-style bar; returns the proofs_check argv seen."""
    import importlib

    import proofs_check.__main__ as pc

    seen = {}

    def chatter(name):
        print(f"{name}: a line on stdout")
        print(f"{name}: 10%|#         | 1/10 [00:01<00:09]", file=sys.stderr)
        warnings.warn(f"{name}: a third-party warning", UserWarning, stacklevel=1)

    def reduced_table(seed):
        chatter("reduced")
        return "| controller |\n|---|\n| dualga |"

    def token_table(seed):
        chatter("token")
        return "| LM |\n|---|\n| news |"

    monkeypatch.setattr(demo, "reduced_table", reduced_table)
    monkeypatch.setattr(demo, "token_table", token_table)
    for name in demo.FIGURES:
        def fig(out, quick, name=name):
            assert quick
            chatter(name)
            png = out / f"{name}.png"
            png.write_bytes(b"\x89PNG")
            (out / f"{name}.json").write_text("{}")
            return [png, out / f"{name}.json"]

        monkeypatch.setattr(importlib.import_module(f"paper_figs.{name}"), "main", fig)

    def proofs(argv):
        seen["argv"] = argv
        out = __import__("pathlib").Path(argv[argv.index("--out") + 1])
        out.mkdir(parents=True, exist_ok=True)
        for k in range(150):  # the real run prints a row per check
            print(f"row {k} ok")
        (out / "report.json").write_text(json.dumps({"checks": [{"passed": True}] * 149 + [{"passed": False}]}))
        (out / "report.md").write_text("# proofs_check report\n")
        return 1

    monkeypatch.setattr(pc, "main", proofs)
    return seen


@pytest.mark.filterwarnings("always::UserWarning")
def test_demo_prints_a_short_summary_and_keeps_the_rest_on_disk(stubbed, tmp_path, capfd):
    out = tmp_path / "demo"
    rc = demo.main(["--out", str(out)])
    stdout, stderr = capfd.readouterr()
    assert rc == 1  # proofs_check's exit status: a failed check is not hidden
    assert stderr == "", stderr
    lines = stdout.splitlines()
    assert len(lines) <= 20, stdout
    assert "chatter" not in stdout and "a line on stdout" not in stdout and "row 0" not in stdout and "warning" not in stdout
    # one line per part, each with its seconds
    parts = [ln for ln in lines if re.match(r"\s+[1-5]\. ", ln)]
    assert len(parts) == 3 + len(demo.FIGURES) + 1, stdout
    assert all(re.search(r"\d+\.\d s$", ln) for ln in parts), parts
    assert "149/150 checks passed" in stdout and "exit status 1" in stdout
    # the paths printed are the files written
    paths = {ln.split(":", 1)[0].strip(): ln.split(":", 1)[1].strip() for ln in lines[-4:]}
    assert set(paths) == {"report", "figures", "proofs_check", "log"}, lines[-4:]
    for key in ("report", "proofs_check", "log"):
        assert (out / paths[key].split(str(out) + "/")[1]).is_file() and paths[key].startswith(str(out)), paths[key]
    assert paths["figures"].split(", ") == [str(out / f"{name}.png") for name in demo.FIGURES]
    # the full report on disk: every section, the theory computed for real, the times
    report = (out / "report.md").read_text()
    for heading in ("## 1.", "## 2.", "## 3.", "## 4.", "## 5.", "## 6.", "## Times"):
        assert heading in report, heading
    assert "OPT(0.2) = " in report and "| 0.2 | " in report and "149/150 checks passed" in report
    assert all(f"![{name}]({name}.png)" in report for name in demo.FIGURES)
    # what the parts printed and warned is in the log
    log = (out / "demo.log").read_text()
    for name in ("reduced", "token", *demo.FIGURES):
        assert f"{name}: a line on stdout" in log and f"{name}: a third-party warning" in log and f"{name}: 10%" in log, name
    assert "row 149 ok" in log


@pytest.mark.filterwarnings("always::UserWarning")
def test_demo_runs_proofs_check_quick_on_every_module_but_the_planners(stubbed, tmp_path, capfd):
    from proofs_check.__main__ import modules

    demo.main(["--out", str(tmp_path)])
    argv = stubbed["argv"]
    assert "--quick" in argv
    only = [argv[i + 1] for i, a in enumerate(argv) if a == "--only"]
    assert only == [m for m in modules() if m != "check_power_plan"]
    assert set(demo.SKIPPED_CHECKS) == {"check_power_plan"}


@pytest.mark.filterwarnings("always::UserWarning")
def test_a_failing_part_is_marked_on_its_line_and_raises(stubbed, tmp_path, capfd, monkeypatch):
    def broken(seed):
        raise RuntimeError("boom")

    monkeypatch.setattr(demo, "token_table", broken)
    with pytest.raises(RuntimeError, match="boom"):
        demo.main(["--out", str(tmp_path)])
    stdout = capfd.readouterr().out
    assert re.search(r"3\. watermarks.* failed$", stdout, re.M), stdout
