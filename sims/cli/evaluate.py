"""``python -m sims evaluate --lm NAME --algo ALGO [params] --n N --T T --seed S --json``: generate + detect,
on a synthetic LM or a real one (the same keys either way)."""

from __future__ import annotations

import argparse

from sims.cli.checks import integer
from sims.cli.generate import add_algo_arguments, algo_kwargs, check_size, generation_options
from sims.cli.lms import open_lm
from sims.cli.main import emit

#: The subcommand's one-line summary (``python -m sims --help`` and this subcommand's description).
HELP = "generate + detect: KL, DG, TPR at FPR 1e-4 / 1e-6, empirical FPR with its CI"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add the options of ``python -m sims evaluate`` to ``p``.

    Those of :func:`sims.cli.generate.add_algo_arguments` (LM, algorithm and its parameters, ``--n``,
    ``--T``, ``--seed``, ``--key``, the real-LM options), and ``--n-null`` (unwatermarked texts for the
    empirical FPR, default ``--n``), ``--dedup`` (score each (context, token) pair once) and ``--json``.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The subcommand's parser; modified in place.
    """
    add_algo_arguments(p)
    p.add_argument("--n-null", type=integer(1), default=None, help="unwatermarked texts for the empirical FPR (default: --n)")
    p.add_argument("--dedup", action="store_true", help="score each (context, token) pair once")
    p.add_argument("--json", action="store_true", help="one JSON object (default: a table)")


def run(args) -> int:
    """Generate watermarked and unwatermarked texts, detect them and print the metrics.

    Runs :func:`sims.experiments.evaluate.evaluate` (KL and DG per token, TPR at FPR 1e-4 / 1e-6, the
    empirical FPR with its Clopper-Pearson interval) and prints its result as a table or, with ``--json``,
    one JSON object (:func:`sims.cli.main.emit`).

    Parameters
    ----------
    args : argparse.Namespace
        The parsed options of :func:`add_arguments`.

    Returns
    -------
    int
        The exit status, 0.

    Raises
    ------
    ValueError
        If the texts would not fit in memory (:func:`sims.cli.generate.check_size`) or a parameter is not
        one the algorithm takes.
    """
    check_size(args, args.n + (args.n if args.n_null is None else max(0, args.n_null)))
    from sims.experiments.evaluate import evaluate

    out = evaluate(open_lm(args.lm, args.dtype), args.algo, n=args.n, T=args.T, seed=args.seed, key=args.key, dedup=args.dedup,
                   n_null=args.n_null, h=args.h, **generation_options(args), **algo_kwargs(args))
    emit(out, args.json)
    return 0
