"""The command line's edges (issue 44, item 8): output paths that cannot be written are refused
before any work (special file systems too, and a parent that is a file is named as such), a
refused sweep grid leaves no folder behind, and every integer option is refused in one wording
(``--NAME must be an integer in [lo, hi); got VALUE``).  Each case runs ``python -m sims`` in a
subprocess: exit status 2, one line on stderr, no traceback."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

from sims.cli.main import main

ROOT = pathlib.Path(__file__).resolve().parents[2]


def sims(*argv: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sims", *argv], capture_output=True, text=True, cwd=ROOT, timeout=timeout,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def refused(p: subprocess.CompletedProcess, phrase: str) -> None:
    assert p.returncode == 2, (p.returncode, p.stderr[-2000:])
    assert p.stderr.count("\n") == 1 and "Traceback" not in p.stderr, p.stderr[-2000:]
    assert phrase in p.stderr, p.stderr


@pytest.fixture(scope="module")
def texts(tmp_path_factory) -> pathlib.Path:
    path = tmp_path_factory.mktemp("gen") / "texts.npz"
    assert main(["generate", "--lm", "tiny", "--algo", "srl", "--n", "3", "--T", "12", "--out", str(path), "--quiet"]) == 0
    return path


def _special(folder: str) -> str:
    if not os.path.isdir(folder):
        pytest.skip(f"no {folder} here")
    return f"{folder}/wm-test-{os.getpid()}.npz"


# --- 1. an output path on a special file system is refused before any work ----------------------------

@pytest.mark.parametrize("folder", ["/proc", "/sys"])
def test_generate_refuses_an_out_on_a_special_file_system_before_any_work(folder):
    """``--out /proc/wm.npz`` used to fail only after the whole generation (39 s at the defaults of
    ``--lm news``): root passes ``os.access`` there, yet no file can be created.  Refused at once now."""
    out = _special(folder)
    p = sims("generate", "--lm", "news", "--out", out, "--quiet", timeout=30)
    refused(p, f"error: --out must be a writable path; got {out!r} (a file cannot be created in {folder!r}")


def test_every_output_option_refuses_a_special_file_system(texts):
    out = _special("/proc")
    for argv, name in [
        (["attack", str(texts), "--kind", "deletion", "--rate", "0.1", "--out", out], "--out"),
        (["show", str(texts), "--jsonl", out], "--jsonl"),
        (["detect", str(texts), "--key", "1", "--html", out], "--html"),
        (["fit-lm", "--lm", "random-llama", "--out", out], "--out"),
    ]:
        refused(sims(*argv, "--quiet"), f"error: {name} must be a writable path; got {out!r} (a file cannot be created in '/proc'")


def test_a_folder_on_a_special_file_system_is_refused_without_making_anything(tmp_path):
    grid = tmp_path / "grid.toml"
    grid.write_text('lm = "tiny"\n')
    refused(sims("sweep", str(grid), "--out", "/proc/wm-sweep/out"), "error: --out must be a folder that can be created; got '/proc/wm-sweep/out'")


# --- 2. a parent that is a file is named as a file --------------------------------------------------------

def test_an_out_whose_parent_is_a_file_says_so(texts, tmp_path):
    out = texts / "out.npz"
    p = sims("generate", "--lm", "tiny", "--n", "2", "--T", "5", "--out", str(out))
    refused(p, f"error: --out must be in an existing folder; got {str(out)!r} ({str(texts)!r} is a file, not a folder)")
    deeper = texts / "a" / "b.npz"
    p = sims("attack", str(texts), "--kind", "deletion", "--rate", "0.1", "--out", str(deeper))
    refused(p, f"error: --out must be in an existing folder; got {str(deeper)!r} ({str(texts)!r} is a file, not a folder)")
    missing = tmp_path / "no-such-folder" / "x.npz"
    p = sims("generate", "--lm", "tiny", "--out", str(missing))
    refused(p, f"({str(missing.parent)!r} does not exist)")


def test_a_sweep_folder_under_a_file_says_so(texts, tmp_path):
    grid = tmp_path / "grid.toml"
    grid.write_text('lm = "tiny"\n')
    p = sims("sweep", str(grid), "--out", str(texts / "sw"))
    refused(p, f"error: --out must be a folder that can be created; got {str(texts / 'sw')!r} ({str(texts)!r} is a file, not a folder)")


# --- 3. a refused grid leaves no folder -------------------------------------------------------------------

def test_a_refused_sweep_grid_makes_no_folder(tmp_path):
    grid = tmp_path / "grid.toml"
    grid.write_text('lm = "tiny"\nnonsense = 1\n')
    out = tmp_path / "results" / "deeper"
    p = sims("sweep", str(grid), "--out", str(out))
    refused(p, "key 'nonsense': unknown key")
    assert sorted(x.name for x in tmp_path.iterdir()) == ["grid.toml"], "a refused grid made a folder"


# --- 4. one wording for every integer option --------------------------------------------------------------

@pytest.mark.parametrize("argv, option, value, valid", [
    (["generate", "--out", "x.npz"], "--key", "abc", "[0, 2**64)"),
    (["generate", "--out", "x.npz"], "--key", "-1", "[0, 2**64)"),
    (["generate", "--out", "x.npz"], "--key", str(2**64), "[0, 2**64)"),
    (["detect", "texts.npz"], "--key", "abc", "[0, 2**64)"),
    (["generate", "--out", "x.npz"], "--n", "0", "[1, inf)"),
    (["generate", "--out", "x.npz"], "--T", "ten", "[1, inf)"),
    (["generate", "--out", "x.npz"], "--h", "-1", "[0, inf)"),
    (["generate", "--out", "x.npz"], "--seed", "-3", "[0, inf)"),
    (["generate", "--out", "x.npz"], "--batch", "0", "[1, inf)"),
    (["evaluate"], "--n-null", "1.5", "[1, inf)"),
    (["attack", "texts.npz", "--kind", "deletion", "--rate", "0.1", "--out", "y.npz"], "--seed", "x", "[0, inf)"),
    (["detect", "texts.npz", "--key", "1"], "--table-size", "0", "[1, inf)"),
    (["show", "texts.npz"], "--index", "first", "[0, inf)"),
    (["plan", "--algo", "srl"], "--key", "-1", "[0, 2**64)"),
    (["reduced"], "--reps", "0", "[1, inf)"),
    (["steal", "--lm", "tiny"], "--n-stolen", "0", "[1, inf)"),
    (["sweep", "grid.toml", "--out", "sw"], "--workers", "-1", "[0, inf)"),
    (["fit-lm", "--lm", "random-llama", "--out", "f.npz"], "--order", "two", "[1, inf)"),
])
def test_every_integer_option_names_itself_its_value_and_its_range(argv, option, value, valid, tmp_path):
    p = subprocess.run([sys.executable, "-m", "sims", *argv, option, value], capture_output=True, text=True, cwd=tmp_path,
                       timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)})
    refused(p, f"error: {option} must be an integer in {valid}; got {value!r}")
    assert list(tmp_path.iterdir()) == []
