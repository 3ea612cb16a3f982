"""End-to-end time of ``python -m sims detect FILE.npz`` in this tree against another checkout, in one run.

Each repetition runs both trees' command once, alternately (so that a change in the machine's load
falls on both), in a fresh interpreter from the tree's root; the result is the median wall time of
each and their ratio, and whether the two printed the same bytes::

    python -m sims generate --lm news --algo srl --n 10000 --T 200 --seed 0 --key 7 --out big.npz
    git archive BASE | tar -x -C /tmp/base
    python -m bench.compare_detect_cli big.npz --key 7 --dedup --other /tmp/base --reps 7
"""

from __future__ import annotations

import argparse
import os
import pathlib
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]


def run(tree: pathlib.Path, argv: list[str]) -> tuple[float, bytes]:
    """Wall seconds and stdout of ``python -m sims detect ARGV`` run from ``tree``."""
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "sims", "detect", *argv], cwd=tree, capture_output=True, check=True,
                         env=dict(os.environ, PYTHONPATH=str(tree))).stdout
    return time.perf_counter() - t0, out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("file", type=pathlib.Path)
    p.add_argument("--key", default="7")
    p.add_argument("--dedup", action="store_true")
    p.add_argument("--other", type=pathlib.Path, required=True, help="root of the other checkout")
    p.add_argument("--reps", type=int, default=5)
    args = p.parse_args(argv)
    cmd = [str(args.file.resolve()), "--key", args.key, "--json", *(["--dedup"] if args.dedup else [])]
    run(ROOT, cmd), run(args.other, cmd)  # warm: the Numba caches and the file in the page cache
    times = {"this": [], "other": []}
    outs = {}
    for _ in range(args.reps):
        for name, tree in (("other", args.other), ("this", ROOT)):
            t, outs[name] = run(tree, cmd)
            times[name].append(t)
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"sims detect {' '.join(cmd[1:])} on {args.file.name}: other {med['other']:.2f} s, this {med['this']:.2f} s "
          f"(median of {args.reps}); ratio {med['other'] / med['this']:.2f}x; same output: {outs['this'] == outs['other']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
