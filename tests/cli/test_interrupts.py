"""Ctrl-C: the compiled generators run in chunks of rows (:func:`sims.core.progress.in_chunks`), so that it is answered
between chunks (the texts do not depend on the split, and an interrupted ``sims generate`` exits with 130); a sweep's
local Dask workers ignore it and the sweep's own process stops them, quietly."""

from __future__ import annotations

import os
import pathlib
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import sims
from sims.core import progress


def test_in_chunks_covers_every_row_once_in_order():
    """Calls cover 0 .. n-1 exactly once, in order; the first covers about 2e4 tokens (n = 1000, T = 200: 100 rows)."""
    calls = []
    progress.in_chunks(lambda a, b: calls.append((a, b)), 1000, 200, "test")
    assert calls[0] == (0, 100) and calls[-1][1] == 1000
    assert all(b > a for a, b in calls) and all(calls[k][1] == calls[k + 1][0] for k in range(len(calls) - 1))


@pytest.mark.parametrize("algo", ["dualga", "synthid"])
def test_texts_do_not_depend_on_the_chunks(algo, monkeypatch):
    """news (V = 2000), 300 texts x 200 tokens, seed 4: one row per chunk after the first (CHUNK_SECONDS 1e-9: 201
    calls) gives the same tokens and records, bit for bit, as chunks growing 4x (CHUNK_SECONDS 1e9: 100, 200 rows)."""
    lm = sims.get_lm("news", vocab_size=2000)

    def run(seconds):
        monkeypatch.setattr(progress, "CHUNK_SECONDS", seconds)
        return sims.generate(lm, algo, n=300, T=200, seed=4, key=9)

    a, b = run(1e-9), run(1e9)
    for f in ("tokens", "kl", "G", "dg", "entropy", "lam"):
        np.testing.assert_array_equal(getattr(a, f), getattr(b, f))


def test_ctrl_c_stops_a_long_generation(tmp_path):
    """``sims generate`` of 40000 texts x 200 tokens (minutes) gets SIGINT once its progress bar is up: it exits with
    130 and "interrupted" within 60 s, where the run would need several minutes (the measured answer on 2 cores is
    about 1 s, one chunk of CHUNK_SECONDS; the bound leaves room for a loaded machine)."""
    p = subprocess.Popen([sys.executable, "-m", "sims", "generate", "--lm", "news", "--algo", "srl", "--n", "40000", "--T", "200",
                          "--out", str(tmp_path / "g.npz")], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    first = p.stderr.read(1)  # the bar's first line: generation has started
    assert first
    time.sleep(1.0)
    t0 = time.monotonic()
    p.send_signal(signal.SIGINT)
    err = p.communicate(timeout=120)[1]
    assert p.returncode == 130 and "interrupted" in err and time.monotonic() - t0 < 60
    assert not (tmp_path / "g.npz").exists()


def test_ctrl_c_stops_a_sweep_quietly(tmp_path):
    """``sims sweep examples/sweep_matched.toml --workers 2`` (486 tasks: many minutes) gets SIGINT at its whole process
    group, as a terminal sends it, once its first chunk is on disk: it exits with 130 within 60 s, its stderr holds
    the one line "interrupted" (no worker or nanny traceback, no shutdown warning), and no worker process is left
    running."""
    root = pathlib.Path(__file__).resolve().parents[2]
    out = tmp_path / "sw"
    p = subprocess.Popen([sys.executable, "-m", "sims", "sweep", str(root / "examples" / "sweep_matched.toml"), "--out", str(out),
                          "--workers", "2"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + 300
    while not list((out / "chunks").glob("*.parquet")) and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    assert p.poll() is None, p.stderr.read()
    t0 = time.monotonic()
    os.killpg(p.pid, signal.SIGINT)
    err = p.communicate(timeout=120)[1]
    assert p.returncode == 130 and time.monotonic() - t0 < 60
    assert err.strip().splitlines() == ["interrupted"], err[-2000:]
    ps = subprocess.run(["ps", "-o", "stat=,pid=,args=", "-g", str(p.pid)], capture_output=True, text=True).stdout.splitlines()
    alive = [line for line in ps if not line.strip().startswith("Z")]  # a zombie has exited (its reaper is init's)
    assert not alive, alive
