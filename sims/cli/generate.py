"""``python -m sims generate``: watermarked texts from a synthetic LM, saved as .npz."""

from __future__ import annotations

import argparse
import json
import pathlib

from sims.watermarks.generate import ALGOS
from sims.lm.synthetic import LM_PRESETS

HELP = "watermarked text from a synthetic LM, saved as .npz"


def add_algo_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--lm", default="news", help=f"synthetic LM: a preset ({', '.join(LM_PRESETS)}) or a fitted .npz (python -m sims fit-lm)")
    p.add_argument("--algo", choices=ALGOS, default="dualga")
    p.add_argument("--gamma", type=float, default=None, help="green-list ratio (default 0.25; DualGA: gamma*(Delta))")
    p.add_argument("--delta", type=float, default=None, help="SRL / ATW boost")
    p.add_argument("--Delta", type=float, default=None, help="DualGA / AutoCov DG target (default 0.3)")
    p.add_argument("--eta", type=float, default=None, help="DualGA step size (default 0.5)")
    p.add_argument("--lam1", type=float, default=None, help="initial dual variable (default delta*(Delta, gamma))")
    p.add_argument("--tau", type=float, default=1.0, help="EMS temperature")
    p.add_argument("--alpha", type=float, default=2.0, help="ATW entropy threshold (nats)")
    p.add_argument("--h", type=int, default=1, help="context width of the green-list hash")
    p.add_argument("--n", type=int, default=100, help="number of texts")
    p.add_argument("--T", type=int, default=200, help="tokens per text")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--key", type=int, default=15485863, help="watermark key in [0, 2**64)")


def algo_kwargs(args) -> dict:
    return dict(gamma=args.gamma, delta=args.delta, Delta=args.Delta, eta=args.eta, lam1=args.lam1, tau=args.tau, alpha=args.alpha)


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_algo_arguments(p)
    p.add_argument("--out", type=pathlib.Path, required=True, help="output .npz")


def run(args) -> int:
    from sims.watermarks.generate import generate
    from sims.lm.synthetic import get_lm

    gen = generate(get_lm(args.lm), args.algo, n=args.n, T=args.T, seed=args.seed, key=args.key, h=args.h, **algo_kwargs(args))
    gen.save(args.out)
    print(json.dumps(dict(out=str(args.out), n=gen.n, T=args.T, kl_per_token=float(gen.kl.mean()), realized_dg=float(gen.dg.mean()), meta=gen.meta)))
    return 0
