"""``python -m sims evaluate --lm NAME --algo ALGO [params] --n N --T T --seed S --json``: generate + detect,
on a synthetic LM or a real one (the same keys either way)."""

from __future__ import annotations

import argparse

from sims.cli.checks import integer
from sims.cli.generate import add_algo_arguments, algo_kwargs, check_size, generation_options
from sims.cli.lms import open_lm
from sims.cli.main import emit

HELP = "generate + detect: KL, DG, TPR at FPR 1e-4 / 1e-6, empirical FPR with its CI"


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_algo_arguments(p)
    p.add_argument("--n-null", type=integer(1), default=None, help="unwatermarked texts for the empirical FPR (default: --n)")
    p.add_argument("--dedup", action="store_true", help="score each (context, token) pair once")
    p.add_argument("--json", action="store_true", help="one JSON object (default: a table)")


def run(args) -> int:
    check_size(args, args.n + (args.n if args.n_null is None else max(0, args.n_null)))
    from sims.experiments.evaluate import evaluate

    out = evaluate(open_lm(args.lm, args.dtype), args.algo, n=args.n, T=args.T, seed=args.seed, key=args.key, dedup=args.dedup,
                   n_null=args.n_null, h=args.h, **generation_options(args), **algo_kwargs(args))
    emit(out, args.json)
    return 0
