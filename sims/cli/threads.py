"""How many CPU threads a command gives torch and Numba (``--threads N`` on every subcommand).

On a machine that other processes keep busy, more threads than free cores is much slower than
fewer: SmolLM2's forward passes with 2 torch threads on a 2-core machine with a second busy
process ran 4.5x slower than with 1 thread (measurements in bench/NOTES.md, "Threads").
The default is therefore the number of cores that are idle when the command starts: the core
count less the one-minute load average (rounded), at least 1.  ``--threads`` overrides it.
"""

from __future__ import annotations

import argparse
import os
import sys

#: How ``--help`` describes the default of ``--threads`` (:func:`default_threads`).
DEFAULT_HELP = "the idle cores: core count less the 1-minute load average, at least 1"


def cores() -> int:
    """Cores this process may run on (its CPU affinity; the CPU count where affinity is unknown).

    Returns
    -------
    int
        The number of cores, at least 1.
    """
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def default_threads() -> int:
    """Idle cores now: :func:`cores` less the rounded one-minute load average, in [1, cores].

    Returns
    -------
    int
        The default of ``--threads`` (:func:`cores` where the load average is unknown).
    """
    n = cores()
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        return n
    return max(1, min(n, n - round(load)))


def parse(value: str) -> int:
    """argparse ``type=`` of ``--threads``: an integer in [1, cores].

    Parameters
    ----------
    value : str
        The option's text.

    Returns
    -------
    int
        The number of threads.

    Raises
    ------
    argparse.ArgumentTypeError
        If ``value`` is not an integer in [1, :func:`cores`].
    """
    try:
        n = int(value)
    except ValueError:
        n = None
    if n is None or not 1 <= n <= cores():
        raise argparse.ArgumentTypeError(f"must be an integer in [1, {cores()}] (the cores of this machine); got {value!r}")
    return n


def apply(n: int | None) -> int:
    """Give torch and Numba (now, or when each is first imported) ``n`` threads.

    Sets ``OMP_NUM_THREADS`` and ``MKL_NUM_THREADS``, torch's threads if it is imported, and Numba's
    threads (its ``NUMBA_NUM_THREADS`` before it is imported, capped by that variable's value).

    Parameters
    ----------
    n : int or None
        Threads to use; None: :func:`default_threads`.

    Returns
    -------
    int
        The number of threads used.
    """
    n = default_threads() if n is None else int(n)
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):  # read by torch when it is imported
        os.environ[var] = str(n)
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(n)
    numba = sys.modules.get("numba")
    if numba is None:  # read by Numba when it is imported (a command that never loads it, e.g. plan, stays light)
        os.environ["NUMBA_NUM_THREADS"] = str(min(n, _env_int("NUMBA_NUM_THREADS", cores())))
    else:
        numba.set_num_threads(min(n, numba.config.NUMBA_NUM_THREADS))
    return n


def _env_int(var: str, default: int) -> int:
    try:
        return max(1, int(os.environ[var]))
    except (KeyError, ValueError):
        return default
