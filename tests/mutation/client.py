"""cosmic-ray's test command: run one module's tests on the mutant now on disk, through the fork server.

Numba cache: the warm cache (built by the unmutated baseline) is copied for each mutant, less the
entries of the mutated module and of every module that imports it (their compiled code may hold the
mutated kernels inlined); everything else loads compiled.  Files cosmic-ray restored get their
original mtime back, so Numba's per-file stamps in the warm cache stay valid.
Exit status: 0 survived, 124 timeout, anything else killed.  Standard library only (starts fast).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import sys
import tempfile


def _ignore(drop: list[list[str]]):
    def ignore(folder, names):
        sub = os.path.basename(folder)
        return [n for n in names for d, stem in drop if sub.startswith(d + "_") and n.startswith(stem + ".")]

    return ignore


def main(state_path: str, module: str, warm: bool = False) -> int:
    with open(state_path) as f:
        state = json.load(f)
    job = state["modules"][module]
    for path, mtime in state["mtimes"].items():
        if path != module and os.path.getmtime(path) != mtime:
            os.utime(path, (mtime, mtime))
    if warm:
        cache, tmp = state["warm_cache"], None
    else:
        tmp = tempfile.mkdtemp(prefix="mutant-cache-", dir=state["scratch"])
        cache = os.path.join(tmp, "numba")
        if os.path.isdir(state["warm_cache"]):
            shutil.copytree(state["warm_cache"], cache, ignore=_ignore(job["drop"]))
    log = os.path.join(state["scratch"], "last-test-run.log")
    req = {"args": job["pytest_args"], "cache": cache, "timeout": job["timeout"], "log": log}
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.connect(state["socket"])
            s.sendall((json.dumps(req) + "\n").encode())
            rc = int(s.makefile("r").readline())
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    with open(log, errors="replace") as f:
        tail = f.read()[-1500:]
    print("TIMEOUT" if rc == 124 else f"pytest exit {rc}")
    print(tail)
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], warm="--warm" in sys.argv[3:]))
