"""``python -m sims detect FILE.npz --key K``: per-text n_scored, green, z, log10_p."""

from __future__ import annotations

import argparse
import json
import pathlib

HELP = "score saved texts: z, exact log10 p, green counts"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", type=pathlib.Path)
    p.add_argument("--key", type=int, required=True, help="detection key")
    p.add_argument("--gamma", type=float, default=None, help="green-list ratio (default: the file's)")
    p.add_argument("--dedup", action="store_true", help="score each (context, token) pair once")
    p.add_argument("--json", action="store_true", help="JSON (default: a table)")


def run(args) -> int:
    from . import detect
    from .generate import Generation
    from .lm import get_lm

    gen = Generation.load(args.file)
    m = gen.meta
    if args.gamma is not None and m.get("gamma") is not None and abs(args.gamma - m["gamma"]) > 1e-12:
        print(f"warning: --gamma {args.gamma} differs from the generation's gamma {m['gamma']}", flush=True)
    lm = get_lm(m["lm"], vocab_size=m["vocab_size"], seed=m.get("lm_seed", 0))
    res = detect.score(gen, lm, dedup=args.dedup, key=args.key, gamma=args.gamma)
    rows = res.as_rows()
    if args.json:
        print(json.dumps(dict(file=str(args.file), algo=m["algo"], key=args.key, dedup=args.dedup, texts=rows)))
    else:
        print(f"{'text':>5} {'n':>5} {'score':>9} {'z':>8} {'log10_p':>9}")
        for i, r in enumerate(rows):
            print(f"{i:5d} {r['n_scored']:5d} {r['green']:9.2f} {r['z']:8.2f} {r['log10_p']:9.2f}")
    return 0
