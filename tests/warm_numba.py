"""Compile the kernels most test files share into the Numba cache, two processes at once, before the suite.

On an empty cache (CI) both xdist workers start with tests that generate texts, so both compiled the DualGA
generator kernel (``sims.watermarks.generate._generate``: one signature for every algorithm, ~94 CPU-s) at
the same time, and each paid for it.  ``make test`` runs ``python -m tests.warm_numba`` first: one process
compiles that generator (and red-green scoring), the other SynthID's tournament generator and its score, so
the workers load both from the cache.  The calls are the public ones the tests make, so the signatures
compiled are theirs.  A failure here is a failure of ``sims.generate`` / ``sims.score`` and stops the run.
"""

from __future__ import annotations

import subprocess
import sys
import time


def _generator():
    import sims

    lm = sims.get_lm("news", vocab_size=1000)
    sims.score(sims.generate(lm, "srl", n=1, T=8, seed=0, key=1, delta=2.0), lm)


def _tournament():
    import numpy as np

    import sims

    lm = sims.get_lm("news", vocab_size=1000)
    prompts = np.arange(16, dtype=np.int64)[None, :]  # given: sampling prompts would compile the DualGA generator here too
    sims.score(sims.generate(lm, "synthid", n=1, T=8, seed=0, key=1, prompts=prompts), lm)


GROUPS = {"generator": _generator, "tournament": _tournament}


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv:
        for name in argv:
            GROUPS[name]()
        return 0
    t0 = time.perf_counter()
    procs = {name: subprocess.Popen([sys.executable, "-m", "tests.warm_numba", name]) for name in GROUPS}
    failed = [name for name, p in procs.items() if p.wait() != 0]
    print(f"warm_numba: {', '.join(GROUPS)} in {time.perf_counter() - t0:.0f} s" + (f"; FAILED: {failed}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
