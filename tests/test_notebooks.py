"""The teaching notebooks (jupytext markdown) run top to bottom without error."""

import os
import pathlib
import subprocess
import sys

import pytest

NOTEBOOKS = sorted((pathlib.Path(__file__).parents[1] / "notebooks").glob("*.md"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(path, tmp_path):
    import jupytext

    script = tmp_path / (path.stem + ".py")
    jupytext.write(jupytext.read(path), script, fmt="py:percent")
    env = {"MPLBACKEND": "Agg", "PYTHONPATH": str(path.parents[1])}
    proc = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path, env={**os.environ, **env}, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
