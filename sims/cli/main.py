"""``python -m sims SUBCOMMAND ...``: one entry point, one module per subcommand.

Each module named in ``COMMANDS`` defines ``HELP`` (one line),
``add_arguments(parser)`` and ``run(args) -> int``; modules are imported only
when their subcommand runs, so ``--help`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys

COMMANDS: dict[str, tuple[str, str]] = {
    "reduced": ("sims.cli.reduced", "online DualGA / SRL / backpressure on G_t sequences vs the hindsight optimum"),
    "generate": ("sims.cli.generate", "watermarked text from a synthetic or real LM, saved as .npz"),
    "detect": ("sims.cli.detect", "was this text watermarked? a decision per text (.npz or raw text), JSON, HTML"),
    "evaluate": ("sims.cli.evaluate", "generate + detect: KL, DG, TPR at FPR 1e-4 / 1e-6"),
    "attack": ("sims.cli.attack", "delete / insert / substitute / paraphrase tokens of saved texts"),
    "sweep": ("sims.cli.sweep", "a grid of experiments on Dask (local or a cluster): Parquet rows, TPR / KL / DG summary"),
    "steal": ("sims.cli.steal", "steal green lists from N watermarked texts, then spoof and scrub"),
    "fit-lm": ("sims.cli.fit_lm", "fit a synthetic LM to a real LM's next-token statistics (needs torch)"),
    "plan": ("sims.cli.plan", "tokens per text for a power at a false-positive rate (closed forms, no simulation)"),
}


def build_parser(selected: str | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m sims", description="Watermarking simulators on synthetic and real LMs.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (modname, summary) in COMMANDS.items():
        if name != selected:
            sub.add_parser(name, help=summary)
            continue
        mod = importlib.import_module(modname)
        p = sub.add_parser(name, help=mod.HELP, description=mod.HELP)
        mod.add_arguments(p)
        p.set_defaults(_run=mod.run)
    return parser


def emit(out: dict, as_json: bool) -> None:
    """Print a result as one JSON object or as an aligned key/value table."""
    if as_json:
        print(json.dumps(out))
    else:
        for k, v in out.items():
            print(f"{k:28s} {v}")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    selected = next((a for a in argv if a in COMMANDS), None)
    parser = build_parser(selected)
    args = parser.parse_args(argv)
    if getattr(args, "_run", None) is None:
        parser.print_help()
        return 2
    try:
        return int(args._run(args) or 0)
    except ValueError as exc:  # bad input: one clear line, no traceback
        print(f"error: {exc}", file=sys.stderr)
        return 2
