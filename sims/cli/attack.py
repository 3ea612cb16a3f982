"""``python -m sims attack FILE.npz --kind KIND --rate R --seed S --out FILE2.npz``."""

from __future__ import annotations

import argparse
import json
import pathlib

from sims.experiments.attacks import KINDS

HELP = "delete / insert / substitute / paraphrase tokens of saved texts"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", type=pathlib.Path)
    p.add_argument("--kind", choices=KINDS, required=True)
    p.add_argument("--rate", type=float, required=True, help="share of tokens attacked, in [0, 1]")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=pathlib.Path, required=True)


def run(args) -> int:
    from sims.experiments.attacks import attack
    from sims.core.record import Generation
    from sims.lm.synthetic import lm_from_meta

    gen = Generation.load(args.file)
    m = gen.meta
    lm = lm_from_meta(m)
    out = attack(gen, args.kind, args.rate, args.seed, lm=lm)
    out.save(args.out)
    print(json.dumps(dict(out=str(args.out), attacks=out.meta["attacks"])))
    return 0
