"""Progress bars (:mod:`sims.core.progress`): who decides whether a bar shows (``force``, then
:func:`shown`, then whether stderr is a terminal), the silent bar's behaviour, and a bar's settings on
a terminal and in a log (one ASCII line every ``LOG_INTERVAL`` seconds, kept)."""

from __future__ import annotations

import io

import pytest

from sims.core import progress as pg


class _Err(io.StringIO):
    def __init__(self, tty: bool):
        super().__init__()
        self._tty = tty

    def isatty(self):
        return self._tty


@pytest.fixture
def stderr(monkeypatch):
    def use(tty: bool) -> _Err:
        err = _Err(tty)
        monkeypatch.setattr(pg.sys, "stderr", err)
        return err

    return use


def _silent(bar) -> bool:
    return type(bar).__name__ == "_Silent"


def test_log_interval_is_ten_seconds():
    assert pg.LOG_INTERVAL == 10.0


@pytest.mark.parametrize("tty", [False, True])
def test_force_wins_over_shown_and_the_terminal(stderr, tty):
    stderr(tty)
    for setting in (None, True, False):
        with pg.shown(setting):
            assert not _silent(pg.progress(3, "x", force=True))
            assert _silent(pg.progress(3, "x", force=False))


def test_shown_wins_over_the_terminal_and_is_restored(stderr):
    stderr(False)
    assert _silent(pg.progress(3, "x"))
    with pg.shown(True):
        assert not _silent(pg.progress(3, "x"))
        with pg.shown(False):
            assert _silent(pg.progress(3, "x"))
        assert not _silent(pg.progress(3, "x"))  # the inner block restored the outer setting
    assert pg._SHOW is None
    stderr(True)
    assert not _silent(pg.progress(3, "x"))  # default: shown on a terminal
    with pg.shown(False):
        assert _silent(pg.progress(3, "x"))
    with pytest.raises(RuntimeError), pg.shown(True):
        raise RuntimeError
    assert pg._SHOW is None  # restored after an exception too


def test_the_silent_bar_passes_the_iterable_through_and_exceptions_out(stderr):
    stderr(False)
    bar = pg.progress([4, 5, 6], "x")
    assert _silent(bar) and list(bar) == [4, 5, 6]
    with pytest.raises(KeyError), pg.progress(10, "x") as b:
        b.update(3)
        b.close()
        raise KeyError("propagates")


def test_a_log_gets_one_ascii_line_per_interval_that_stays(stderr):
    err = stderr(False)
    bar = pg.progress(10, "steps", unit="tok", force=True)
    assert (bar.total, bar.desc, bar.unit, bar.unit_scale) == (10, "steps", "tok", True)
    assert bar.mininterval == pg.LOG_INTERVAL and bar.ascii is True and bar.leave is True
    bar.update(10)
    bar.close()
    assert "steps: 100%|##########| 10.0/10.0 [" in err.getvalue() and err.getvalue().endswith("\n")  # kept


def test_a_terminal_bar_is_redrawn_and_cleared(stderr):
    err = stderr(True)
    bar = pg.progress([1, 2, 3], "texts")
    assert bar.leave is False and bar.mininterval < pg.LOG_INTERVAL and bar.total == 3
    assert list(bar) == [1, 2, 3] and err.getvalue().startswith("\rtexts:")  # drawn on stderr
