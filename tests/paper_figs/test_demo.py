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


_BLOCKED_RUN = """
import importlib.abc, sys
blocked = set(sys.argv[1].split(","))
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in blocked:
            raise ModuleNotFoundError(f"No module named {name!r} (not in requirements-demo.lock)", name=name)
sys.meta_path.insert(0, Block())
from paper_figs.demo import main
sys.exit(main(sys.argv[2:]))
"""


@pytest.mark.slow
def test_the_real_demo_runs_on_the_demo_lock_alone(tmp_path):
    """The whole demo with every package outside requirements-demo.lock unimportable (torch, transformers, Dask,
    the test and docs tools): what `make demo` installs is enough, every check passes, the summary is short."""
    import pathlib
    import subprocess
    from importlib.metadata import packages_distributions

    root = pathlib.Path(__file__).resolve().parents[2]
    norm = lambda d: re.sub(r"[-_.]+", "-", d).lower()  # noqa: E731
    demo_lock = {norm(ln.split("==")[0]) for ln in (root / "requirements-demo.lock").read_text().splitlines() if "==" in ln}
    blocked = sorted(top for top, dists in packages_distributions().items()
                     if top.isidentifier() and not any(norm(d) in demo_lock or norm(d) == "wmstats" for d in dists))
    assert "torch" in blocked or "torch" not in packages_distributions(), blocked
    proc = subprocess.run([sys.executable, "-c", _BLOCKED_RUN, ",".join(blocked), "--out", str(tmp_path / "demo")],
                          capture_output=True, text=True, cwd=root, timeout=1800)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    assert proc.stderr == "", proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    assert len(lines) <= 20, proc.stdout
    passed = re.search(r"proofs_check: (\d+)/(\d+) checks passed$", proc.stdout, re.M)
    assert passed and passed.group(1) == passed.group(2), proc.stdout
    assert (tmp_path / "demo" / "report.md").is_file() and "## Times" in (tmp_path / "demo" / "report.md").read_text()
