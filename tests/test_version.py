"""``sims.__version__`` and ``python -m sims --version`` say the version pyproject.toml declares."""

import pathlib
import subprocess
import sys
import tomllib
from importlib import metadata

import sims

ROOT = pathlib.Path(__file__).parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]


def test_version_is_pyprojects():
    assert isinstance(sims.__version__, str)
    assert sims.__version__ == PYPROJECT
    assert "__version__" in dir(sims)


def test_version_falls_back_to_pyproject_when_not_installed(monkeypatch):
    def missing(name):
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "version", missing)
    assert sims._version() == PYPROJECT


def test_cli_version():
    proc = subprocess.run([sys.executable, "-m", "sims", "--version"], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"wmstats {PYPROJECT}\n"
    assert proc.stderr == ""


def test_cli_help_lists_version():
    proc = subprocess.run([sys.executable, "-m", "sims", "--help"], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0 and "--version" in proc.stdout
