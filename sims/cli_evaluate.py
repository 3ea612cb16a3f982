"""``python -m sims evaluate``: generate + detect, the paper's table quantities."""

from __future__ import annotations

import argparse

from .cli import emit
from .cli_generate import add_algo_arguments, algo_kwargs

HELP = "generate + detect: KL, DG, TPR at FPR 1e-4 / 1e-6"


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_algo_arguments(p)
    p.add_argument("--dedup", action="store_true")
    p.add_argument("--json", action="store_true")


def run(args) -> int:
    from .evaluate import evaluate

    out = evaluate(args.lm, args.algo, n=args.n, T=args.T, seed=args.seed, key=args.key, dedup=args.dedup, h=args.h, **algo_kwargs(args))
    emit(out, args.json)
    return 0
