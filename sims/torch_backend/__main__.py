"""``python -m sims.torch_backend evaluate --model smollm2 --algo ALGO [params] --n N --T T --json``."""

from __future__ import annotations

import argparse
import json
import sys

from sims.torch_backend.generate_torch import ALGOS


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m sims.torch_backend")
    sub = ap.add_subparsers(dest="cmd", required=True)
    ev = sub.add_parser("evaluate", help="generate with a real LM and detect: KL, DG, TPR at FPR 1e-4 / 1e-6, tokens/s")
    ev.add_argument("--model", default="smollm2", help="smollm2, tiny, or a local transformers folder")
    ev.add_argument("--algo", choices=ALGOS, default="dualga")
    ev.add_argument("--prompts", default="lfqa", help="lfqa, news, or a JSONL file with a 'prompt' field")
    for name, typ in (("--gamma", float), ("--delta", float), ("--Delta", float), ("--eta", float), ("--lam1", float)):
        ev.add_argument(name, type=typ, default=None)
    ev.add_argument("--tau", type=float, default=1.0)
    ev.add_argument("--alpha", type=float, default=2.0)
    ev.add_argument("--n", type=int, default=4)
    ev.add_argument("--T", type=int, default=100)
    ev.add_argument("--seed", type=int, default=0)
    ev.add_argument("--key", type=int, default=15485863)
    ev.add_argument("--dedup", action="store_true")
    ev.add_argument("--engine", choices=("loop", "static"), default="loop",
                    help="loop: LogitsProcessors, every algo; static: static KV cache + fused kernels (+ CUDA graphs on GPU)")
    ev.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    from sims.torch_backend.evaluate_torch import evaluate

    try:
        out = evaluate(args.model, args.algo, n=args.n, T=args.T, seed=args.seed, key=args.key, prompts=args.prompts, dedup=args.dedup, engine=args.engine,
                       gamma=args.gamma, delta=args.delta, Delta=args.Delta, eta=args.eta, lam1=args.lam1, tau=args.tau, alpha=args.alpha)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(out) if args.json else "\n".join(f"{k:28s} {v}" for k, v in out.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
