"""sims.cli.threads.apply: Numba's threads set now when it is loaded, through its environment when it is
not (so a command that never loads Numba, such as plan, does not import it)."""

import sys

import numba

from sims.cli import threads


def test_apply_without_numba_loaded_sets_its_environment(monkeypatch):
    monkeypatch.delitem(sys.modules, "numba")
    monkeypatch.setenv("NUMBA_NUM_THREADS", "1")
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert threads.apply(2) == 2
    assert threads.os.environ["NUMBA_NUM_THREADS"] == "1" and "numba" not in sys.modules  # never above the user's cap
    monkeypatch.delenv("NUMBA_NUM_THREADS")
    threads.apply(1)
    assert threads.os.environ["NUMBA_NUM_THREADS"] == "1"


def test_apply_with_numba_loaded_sets_its_threads(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    before = numba.get_num_threads()
    try:
        assert threads.apply(1) == 1 and numba.get_num_threads() == 1
    finally:
        numba.set_num_threads(before)
