"""``python -m sims detect FILE.npz --key K [--dedup] --json``: per text n_scored, green, z, log10_p."""

from __future__ import annotations

import argparse
import json
import pathlib

HELP = "score saved texts: z, exact log10 p, green counts"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", type=pathlib.Path, help="a .npz written by `python -m sims generate` (synthetic or real LM)")
    p.add_argument("--key", type=int, required=True, help="detection key in [0, 2**64)")
    p.add_argument("--gamma", type=float, default=None, help="green-list ratio; must equal the file's (default: the file's)")
    p.add_argument("--vocab-size", type=int, default=None, help="detector's vocabulary size; must equal the file's (default: the file's)")
    p.add_argument("--algo", default=None, help="detector to use (default: the file's algorithm)")
    p.add_argument("--dedup", action="store_true", help="score each (context, token) pair once")
    p.add_argument("--json", action="store_true", help="JSON (default: a table)")


def run(args) -> int:
    from sims.cli.lms import is_synthetic
    from sims.core.record import Generation
    from sims.detect import scores as detect
    from sims.lm.synthetic import lm_from_meta

    if not args.file.is_file():
        raise ValueError(f"file must be an existing .npz; got {str(args.file)!r}")
    gen = Generation.load(args.file)
    m = gen.meta
    if args.vocab_size is not None and args.vocab_size != m["vocab_size"]:
        raise ValueError(f"--vocab-size must equal the generation's vocab_size {m['vocab_size']} (vocabulary mismatch); got {args.vocab_size}")
    if not is_synthetic(m["lm"]):  # a real LM's texts: ITS / UW read its teacher-forced probabilities
        from sims.torch_backend.real_lm import score

        res = score(gen, dedup=args.dedup, key=args.key, gamma=args.gamma, algo=args.algo)
    else:
        lm = lm_from_meta(m) if (args.algo or m["algo"]) in detect.KEYED_ORDER_ALGOS else None
        res = detect.score(gen, lm, dedup=args.dedup, key=args.key, gamma=args.gamma, algo=args.algo)
    rows = res.as_rows()
    if args.json:
        print(json.dumps(dict(file=str(args.file), algo=args.algo or m["algo"], key=args.key, dedup=args.dedup, gamma=args.gamma or m["gamma"],
                              vocab_size=m["vocab_size"], texts=rows)))
    else:
        print(f"{'text':>5} {'n':>5} {'score':>9} {'z':>8} {'log10_p':>9} flagged")
        for i, r in enumerate(rows):
            z = float("nan") if r["z"] is None else r["z"]
            print(f"{i:5d} {r['n_scored']:5d} {r['green']:9.2f} {z:8.2f} {r['log10_p']:9.2f} {r['flagged']}")
    return 0
