"""``python -m sims SUBCOMMAND ...``: one entry point, one module per subcommand.

Each module named in ``COMMANDS`` defines ``HELP`` (one line),
``add_arguments(parser)`` and ``run(args) -> int``; modules are imported only
when their subcommand runs, so ``--help`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import sys

COMMANDS: dict[str, str] = {
    "demo": "sims.demo",
    "reduced": "sims.cli_reduced",
    "generate": "sims.cli_generate",
    "detect": "sims.cli_detect",
    "evaluate": "sims.cli_evaluate",
    "attack": "sims.cli_attack",
}


def build_parser(selected: str | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m sims", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, modname in COMMANDS.items():
        if name != selected:
            sub.add_parser(name, help=f"see: python -m sims {name} --help")
            continue
        mod = importlib.import_module(modname)
        p = sub.add_parser(name, help=mod.HELP, description=mod.HELP)
        mod.add_arguments(p)
        p.set_defaults(_run=mod.run)
    return parser


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
