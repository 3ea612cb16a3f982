"""The Makefile's install steps, read from ``make -n`` (nothing is installed or downloaded).

``make demo`` installs requirements-demo.lock (no torch); ``make test`` installs requirements.lock with torch from
a wheel folder when it holds torch, else from PyTorch's CPU wheel index.
"""

import pathlib
import re
import shutil
import subprocess
import tomllib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
TORCH_INDEX = "https://download.pytorch.org/whl/cpu"
TORCH_ONLY = {"torch", "triton", "transformers", "accelerate", "safetensors", "gguf", "tokenizers", "huggingface-hub"}

needs_make = pytest.mark.skipif(shutil.which("make") is None, reason="make not installed")


def dry_run(target: str, **variables: str) -> list[str]:
    """The uv commands ``make -n -B TARGET`` would run (``-B``: as on a fresh clone, whatever is built here)."""
    proc = subprocess.run(["make", "-n", "-B", "-C", str(ROOT), target, *(f"{k}={v}" for k, v in variables.items())],
                          capture_output=True, text=True, check=True)
    return [ln for ln in proc.stdout.splitlines() if "uv pip install" in ln]


def pins(path: pathlib.Path) -> dict[str, str]:
    return dict(ln.split("==", 1) for ln in path.read_text().splitlines() if ln and not ln.startswith("#"))


@needs_make
def test_full_install_takes_torch_from_the_wheel_folder_when_it_holds_torch(tmp_path):
    (tmp_path / "torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl").touch()
    locked = [ln for ln in dry_run(".venv/.installed", WHEELS=str(tmp_path)) if "-r requirements.lock" in ln]
    assert len(locked) == 1, locked
    assert f"--find-links {tmp_path} " in locked[0]
    assert TORCH_INDEX not in locked[0]


@needs_make
@pytest.mark.parametrize("wheels", ["/nonexistent", "EMPTY"])
def test_full_install_takes_torch_from_the_pytorch_cpu_index_without_the_wheels(wheels, tmp_path):
    folder = str(tmp_path) if wheels == "EMPTY" else wheels  # an empty folder: no torch wheel, so the index
    locked = [ln for ln in dry_run(".venv/.installed", WHEELS=folder) if "-r requirements.lock" in ln]
    assert len(locked) == 1, locked
    assert f"--extra-index-url {TORCH_INDEX} " in locked[0]
    assert "--index-strategy unsafe-best-match" in locked[0]
    assert "--find-links" not in locked[0]


@needs_make
def test_this_machines_wheel_folder_is_used_when_present():
    """CI's `make test` on this machine installs torch from /opt/wheels, as before the index fallback existed."""
    if not list(pathlib.Path("/opt/wheels").glob("torch-*.whl")):
        pytest.skip("no torch wheel in /opt/wheels")
    assert any("--find-links /opt/wheels -r requirements.lock" in ln for ln in dry_run(".venv/.installed"))


@needs_make
@pytest.mark.parametrize("wheels", ["/nonexistent", "/opt/wheels"])
def test_demo_installs_the_demo_lock_only_and_needs_no_torch_source(wheels):
    lines = dry_run("demo", WHEELS=wheels)
    assert lines and all("requirements.lock" not in ln for ln in lines), lines
    assert any("-r requirements-demo.lock" in ln for ln in lines), lines
    assert not any("--find-links" in ln or TORCH_INDEX in ln for ln in lines), lines


@needs_make
def test_full_install_marks_the_demo_environment_installed_too():
    """`make demo` after `make test` has nothing to add: the full install touches both stamps."""
    proc = subprocess.run(["make", "-n", "-B", "-C", str(ROOT), ".venv/.installed"], capture_output=True, text=True, check=True)
    touch = [ln for ln in proc.stdout.splitlines() if ln.startswith("touch")]
    assert touch and ".venv/.installed-demo" in touch[-1].split() and ".venv/.installed" in touch[-1].split(), touch


def requirements(extra: str) -> set[str]:
    """The distributions the core and ``extra`` name, ``wmstats[...]`` expanded."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    todo, names, seen = [extra], {re.split(r"[<>=\[ ;]", d, maxsplit=1)[0].lower() for d in project["dependencies"]}, set()
    while todo:
        for d in project["optional-dependencies"][todo.pop()]:
            if d.startswith("wmstats["):
                todo += [e for e in d[len("wmstats["):-1].split(",") if e not in seen]
                seen.update(todo)
            else:
                names.add(re.split(r"[<>=\[ ;]", d, maxsplit=1)[0].lower())
    return names


def test_demo_lock_is_the_full_lock_less_the_torch_extra():
    """Same versions as requirements.lock, every core and [demo] dependency ([plot] and pyarrow), none of the torch extra's."""
    demo, full = pins(ROOT / "requirements-demo.lock"), pins(ROOT / "requirements.lock")
    assert {k: full.get(k) for k in demo} == demo
    assert not TORCH_ONLY & set(demo)
    wanted = requirements("demo")
    assert {"matplotlib", "pyarrow", "numba", "cvxpy"} <= wanted
    assert wanted <= set(demo), wanted - set(demo)
    assert requirements("demo") <= requirements("all")
