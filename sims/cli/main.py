"""``python -m sims SUBCOMMAND ...``: one entry point, one module per subcommand.

Each module named in ``COMMANDS`` defines ``HELP`` (one line),
``add_arguments(parser)`` and ``run(args) -> int``; modules are imported only
when their subcommand runs, so ``--help`` stays fast.

Every subcommand also takes ``--threads N`` (torch's and Numba's threads, see
:mod:`sims.cli.threads`) and ``--quiet`` (no progress bar).  Bad input never shows
a traceback: a ``ValueError`` from the library, an unreadable or unwritable file and
an argument that does not parse each end in one line on stderr and exit status 2;
output cut short by its reader (``... | head``) ends quietly.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import re
import sys

from sims.cli import threads as threads_mod
from sims.core import progress

#: Subcommand name -> (its module, its one-line summary for ``python -m sims --help``); a module is imported only
#: when its subcommand is chosen.
COMMANDS: dict[str, tuple[str, str]] = {
    "reduced": ("sims.cli.reduced", "online DualGA / SRL / backpressure on G_t sequences vs the hindsight optimum"),
    "generate": ("sims.cli.generate", "watermarked text from a synthetic or real LM, saved as .npz"),
    "detect": ("sims.cli.detect", "was this text watermarked? a decision per text (.npz or raw text), JSON, HTML"),
    "show": ("sims.cli.show", "print or export the texts of an .npz (decoded words for a real LM) with the key's decision"),
    "evaluate": ("sims.cli.evaluate", "generate + detect: KL, DG, TPR at FPR 1e-4 / 1e-6"),
    "attack": ("sims.cli.attack", "delete / insert / substitute / paraphrase tokens of saved texts"),
    "sweep": ("sims.cli.sweep", "a grid of experiments on Dask (local or a cluster): Parquet rows, TPR / KL / DG summary"),
    "steal": ("sims.cli.steal", "steal green lists from N watermarked texts, then spoof and scrub"),
    "fit-lm": ("sims.cli.fit_lm", "fit a synthetic LM to a real LM's next-token statistics (needs torch)"),
    "plan": ("sims.cli.plan", "tokens per text for a power at a false-positive rate (closed forms, no simulation)"),
}


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line on stderr (exit status 2), not a usage block."""

    def error(self, message: str):
        """Exit with one line on stderr and status 2 (no usage block).

        An option's range check (:func:`sims.cli.checks.integer`, ``--threads``) is worded as the checks that run
        later: ``--key must be an integer in [0, 2**64); got 'abc'``, not ``argument --key: must be ...``.

        Parameters
        ----------
        message : str
            argparse's message.
        """
        # an option's range check (sims.cli.checks.integer, --threads) in the wording of the checks
        # that run later: "--key must be an integer in [0, 2**64); got 'abc'", not "argument --key: must be ..."
        m = re.fullmatch(r"argument (\S+): (must be .*)", message, flags=re.S)
        if m:
            message = f"{m[1].split('/')[-1]} {m[2]}"
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


class _Version(argparse.Action):
    """``--version``: print ``wmstats X.Y.Z`` and exit 0; the version is read only when asked (``--help`` stays fast)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        import sims

        print(f"wmstats {sims.__version__}")  # on stdout, as argparse's own version action
        parser.exit(0)


def add_common_arguments(p: argparse.ArgumentParser) -> None:
    """Add ``--threads`` and ``--quiet``, which every subcommand takes, to ``p`` (a group named ``run``).

    ``--threads N`` (an integer in [1, cores], :func:`sims.cli.threads.parse`; default
    :func:`sims.cli.threads.default_threads`) sets torch's and Numba's threads; ``--quiet`` hides the
    progress bar on stderr.

    Parameters
    ----------
    p : argparse.ArgumentParser
        A subcommand's parser; modified in place.
    """
    g = p.add_argument_group("run")
    g.add_argument("--threads", type=threads_mod.parse, default=None,
                   help=f"CPU threads of torch and Numba, in [1, {os.cpu_count()}] (default: {threads_mod.DEFAULT_HELP})")
    g.add_argument("--quiet", action="store_true", help="no progress bar on stderr")


def build_parser(selected: str | None = None) -> argparse.ArgumentParser:
    """The parser of ``python -m sims``, with the full options of the subcommand ``selected`` only.

    Every subcommand of :data:`COMMANDS` gets a sub-parser with its summary; only the selected one has its
    module imported, its options added (``add_arguments`` and :func:`add_common_arguments`) and its ``run``
    stored as the parsed namespace's ``_run``, so ``python -m sims --help`` imports no subcommand.

    Parameters
    ----------
    selected : str or None, optional
        The subcommand named on the command line, or None (none named: the top-level help).

    Returns
    -------
    argparse.ArgumentParser
        A :class:`Parser` (errors are one line on stderr, exit status 2) with ``--version``.
    """
    parser = Parser(prog="python -m sims", description="Watermarking simulators on synthetic and real LMs.")
    parser.add_argument("--version", action=_Version, help="print the version of wmstats and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for name, (modname, summary) in COMMANDS.items():
        if name != selected:
            sub.add_parser(name, help=summary)
            continue
        mod = importlib.import_module(modname)
        p = sub.add_parser(name, help=mod.HELP, description=mod.HELP)
        mod.add_arguments(p)
        add_common_arguments(p)
        p.set_defaults(_run=mod.run)
    return parser


def emit(out: dict, as_json: bool) -> None:
    """Print a result as one JSON object or as an aligned key/value table (one ``key value`` line per item).

    Parameters
    ----------
    out : dict
        The result; JSON-serialisable when ``as_json``.
    as_json : bool
        True: ``json.dumps(out)`` on one line; False: the table.
    """
    if as_json:
        print(json.dumps(out))
    else:
        for k, v in out.items():
            print(f"{k:28s} {v}")


def _fail(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 2


def main(argv: list[str] | None = None) -> int:
    """Run ``python -m sims`` on ``argv`` and return its exit status.

    Parses the arguments (:func:`build_parser`), sets the threads (:func:`sims.cli.threads.apply`) and runs
    the subcommand under a progress bar (none with ``--quiet``).  Bad input never shows a traceback: a
    ``ValueError``, an ``OSError`` (a file that cannot be read or written) and ``MemoryError`` each print one
    ``error: ...`` line on stderr.

    Parameters
    ----------
    argv : list of str or None, optional
        The arguments after ``python -m sims``; None reads ``sys.argv[1:]``.

    Returns
    -------
    int
        The exit status: the subcommand's (0 on success; ``sweep`` returns 1 when tasks failed), 2 on bad
        input or when no subcommand is given (the help is printed), 130 on Ctrl-C, 0 when the reader of
        stdout went away (``| head``).  An argument that does not parse exits 2 from the parser itself.
    """
    argv = sys.argv[1:] if argv is None else argv
    selected = next((a for a in argv if a in COMMANDS), None)
    parser = build_parser(selected)
    args = parser.parse_args(argv)
    if getattr(args, "_run", None) is None:
        parser.print_help()
        return 2
    threads_mod.apply(args.threads)
    try:
        with progress.shown(not args.quiet):
            return int(args._run(args) or 0)
    except ValueError as exc:  # bad input: one clear line, no traceback
        return _fail(str(exc))
    except OSError as exc:  # a file that cannot be read or written
        if isinstance(exc, BrokenPipeError):
            return _quiet_broken_pipe()
        where = f" {exc.filename!r}" if exc.filename else ""
        return _fail(f"{exc.strerror or exc}{':' if where else ''}{where}")
    except MemoryError:
        return _fail("out of memory: lower --n, --T or --batch")
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


def _quiet_broken_pipe() -> int:
    """The reader of stdout went away (``| head``): stop writing, say nothing (Python's advice:
    point stdout at /dev/null so the interpreter's final flush cannot fail again)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return 0
