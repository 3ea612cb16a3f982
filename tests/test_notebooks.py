"""The teaching notebooks (jupytext MyST markdown, the chapters of the book) run top to bottom.

Each chapter's exercises end in check cells (assertions), so a chapter whose solutions or
prose numbers drift from the package fails here.  Chapter 8 runs on the random tiny model;
its SmolLM2 mode (``WMSTATS_BOOK_MODEL=smollm2``) is the slow test.
"""

import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.md"))
TORCH_CHAPTER = "08_real_lm"


def _run(path, tmp_path, **env):
    import jupytext

    script = tmp_path / (path.stem + ".py")
    jupytext.write(jupytext.read(path), script, fmt="py:percent")
    env = {**{k: v for k, v in os.environ.items() if k != "WMSTATS_BOOK_MODEL"}, "MPLBACKEND": "Agg", "PYTHONPATH": str(ROOT), **env}
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]


def test_ten_chapters():
    assert len(NOTEBOOKS) == 10, [p.name for p in NOTEBOOKS]
    for path in NOTEBOOKS:
        text = path.read_text()
        assert "format_name: myst" in text, f"{path.name}: not a jupytext MyST notebook"
        assert "Learning goals" in text, f"{path.name}: no learning goals"
        assert ":tags: [hide-input]" in text and "{dropdown} Solution" in text, f"{path.name}: no collapsed solution"
        assert "assert " in text and "{ref}`" in text, f"{path.name}: no check cell or no link to the paper's labels"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(path, tmp_path):
    if path.stem == TORCH_CHAPTER:
        pytest.importorskip("torch")
        pytest.importorskip("transformers")
    _run(path, tmp_path)  # chapter 8: the notebook's default, the random tiny model


@pytest.mark.slow
@pytest.mark.torch
def test_real_lm_chapter_on_smollm2(tmp_path):
    pytest.importorskip("transformers")
    _run(ROOT / "notebooks" / f"{TORCH_CHAPTER}.md", tmp_path, WMSTATS_BOOK_MODEL="smollm2")
