"""Run many tiny Numba calls on one thread.

A ``parallel=True`` kernel called with one text pays the thread pool's start-up
on every call (milliseconds on a loaded machine, against microseconds of work);
the per-key loops of the checks therefore run with one Numba thread.
"""

from __future__ import annotations

import contextlib

import numba


@contextlib.contextmanager
def single_thread():
    """Numba's thread count set to 1 inside the block, restored after."""
    before = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        yield
    finally:
        numba.set_num_threads(before)
