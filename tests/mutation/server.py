"""A fork server that runs pytest for one mutant in a process whose heavy imports are already done.

cosmic-ray starts its test command once per mutant; a fresh interpreter spends most of a run importing
NumPy, SciPy, Numba and pytest.  This server imports them once, then forks a child per request: the
child imports ``theory`` / ``sims`` from disk (the mutated source), points Numba at the cache folder
the request names, and runs pytest.  Nothing of the packages under test is imported in the server.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
import time
import traceback


def _preload() -> None:
    import hypothesis  # noqa: F401
    import mpmath  # noqa: F401
    import numba  # noqa: F401
    import numpy  # noqa: F401
    import pytest  # noqa: F401
    import scipy.optimize  # noqa: F401
    import scipy.special  # noqa: F401
    import scipy.stats  # noqa: F401


def _run_child(req: dict) -> None:
    from numba.core import config

    config.CACHE_DIR = req["cache"]
    os.environ["NUMBA_CACHE_DIR"] = req["cache"]
    # no plugin autoload (xdist, anyio, hypothesis' reporting plugin): faster, and the preloaded
    # hypothesis is then not a plugin pytest would want to rewrite
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    fd = os.open(req["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    import pytest

    rc = pytest.main(req["args"])
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(int(rc))


def _serve_one(conn: socket.socket) -> None:
    req = json.loads(conn.makefile("r").readline())
    pid = os.fork()
    if pid == 0:
        conn.close()
        os.setsid()
        try:
            _run_child(req)
        except BaseException:
            traceback.print_exc()
        finally:
            os._exit(99)
    deadline = time.monotonic() + float(req["timeout"])
    status = None
    while time.monotonic() < deadline:
        done, st = os.waitpid(pid, os.WNOHANG)
        if done:
            status = st
            break
        time.sleep(0.02)
    if status is None:
        os.killpg(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        rc = 124
    else:
        rc = os.waitstatus_to_exitcode(status)
    conn.sendall(f"{rc}\n".encode())
    conn.close()


def main(sock_path: str, root: str) -> None:
    """Serve pytest runs on the Unix socket ``sock_path`` with ``root`` (the sandbox) as cwd."""
    os.chdir(root)
    sys.path.insert(0, root)
    sys.dont_write_bytecode = True
    _preload()
    if os.path.exists(sock_path):
        os.unlink(sock_path)
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(sock_path)
    srv.listen(1)
    print("ready", flush=True)
    while True:
        conn, _ = srv.accept()
        _serve_one(conn)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
