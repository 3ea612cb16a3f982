"""Wall time of each command of the README's "What you can run" table: ``python -m bench.time_commands [--out FILE]``.

Runs the table's commands in order, in a scratch folder (the ones that read ``texts.npz`` read the one ``generate``
wrote), each in a fresh interpreter with a warm Numba cache, and prints one line per command with its wall time;
``--out`` also writes the lines to a file (``bench/results/time_commands.txt`` is the committed run).  The long
commands (``fit-lm`` on SmolLM2, ``python -m bench``, ``make docs``, ``make mutate``) are not run here.
"""

from __future__ import annotations

import argparse
import pathlib
import platform
import subprocess
import sys
import tempfile
import time

COMMANDS = (
    "-m sims generate --lm news --algo dualga --Delta 0.3 --n 10 --T 200 --out texts.npz",
    "-m sims detect texts.npz --key 15485863 --dedup",
    "-m sims detect texts.npz --key 15485863 --sequential",
    "-m sims attack texts.npz --kind substitution --rate 0.3 --seed 1 --out attacked.npz",
    "-m sims show texts.npz --index 0 1",
    "-m sims evaluate --lm lfqa --algo dualga --Delta 0.3 --n 100 --T 200 --json",
    "-m sims reduced --algo dualga --G regime:0.001,2,5,5,2 --T 100000 --reps 32 --json",
    "-m sims plan --algo dualga --Delta 0.2 --lm smollm2-fit --fpr 1e-6 --power 0.9",
    "-m sims sweep {root}/examples/sweep_quick.toml --out sweep_quick",
    "-m sims steal --lm news --algo srl --gamma 0.25 --delta 4 --n-stolen 1000 --json",
    "-m proofs_check --quick",
    "-m paper_figs --quick --report --out figs-quick",
)
"""The README's commands (after ``python``), in its order; ``{root}`` is the repository."""


def main(argv=None) -> int:
    """Time every command of :data:`COMMANDS` and print (and with ``--out`` write) one line each.

    Parameters
    ----------
    argv : list of str, optional
        The arguments (default ``sys.argv[1:]``).

    Returns
    -------
    int
        0 when every command exited 0, else 1.
    """
    ap = argparse.ArgumentParser(prog="python -m bench.time_commands", description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=pathlib.Path, default=None, help="also write the lines here")
    args = ap.parse_args(argv)
    root = pathlib.Path(__file__).resolve().parents[1]
    lines = [f"# python -m bench.time_commands on {platform.node()} ({platform.processor() or platform.machine()}), "
             f"Python {platform.python_version()}, {time.strftime('%Y-%m-%d')}"]
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for cmd in COMMANDS:
            cmd = cmd.format(root=root)
            t0 = time.perf_counter()
            run = subprocess.run([sys.executable, *cmd.split()], cwd=tmp, capture_output=True, text=True)
            took = time.perf_counter() - t0
            failed += run.returncode != 0
            lines.append(f"{took:7.1f} s  exit {run.returncode}  python {cmd.replace(str(root) + '/', '')}")
            print(lines[-1], flush=True)
    if args.out:
        args.out.write_text("\n".join(lines) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
