"""``python -m sims plan``: tokens per text for a detection study, from closed forms (no simulation).

::

    python -m sims plan --algo dualga --Delta 0.2 --lm smollm2-fit --fpr 1e-6 --power 0.9
                        [--score NAME] [--attack substitution:0.3] [--dedup] [--T 200] [--plot out.png] [--json]

Prints the tokens per text needed for the power at the false-positive rate, the power at ``--T``
and, with ``--plot``, draws the power curve (:mod:`sims.plan`, :mod:`theory.power`).
``--score lr`` also prints ``limits``: the LR detector drops positions whose context window repeats,
which the planner does not model (:data:`sims.plan.LR_LIMIT`).
"""

from __future__ import annotations

import argparse
import pathlib

from sims.cli.checks import KEY, integer
from sims.core import defaults

#: The subcommand's one-line summary (``python -m sims --help`` and this subcommand's description).
HELP = "tokens per text needed for a power at a false-positive rate, from the LM's per-token law (closed forms)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add the options of ``python -m sims plan`` to ``p``.

    ``--algo`` (srl, hard, dualga, unigram, morphmark, dipmark, sweet or ems; required), ``--lm`` (synthetic preset or
    fitted LM), the algorithm's ``--Delta`` / ``--delta`` / ``--gamma`` / ``--alpha`` (SWEET's entropy threshold) /
    ``--morph-kappa`` / ``--morph-p0`` / ``--dip-alpha``, ``--fpr`` (default 1e-6) and ``--power`` (default
    0.9) of the test, ``--score`` (the detection score), ``--attack`` (``substitution:RATE``), ``--dedup``,
    ``--T`` (also the power at this length), ``--key``, ``--plot`` (the power curve, PNG) and ``--json``.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The subcommand's parser; modified in place.
    """
    p.add_argument("--algo", required=True, help="srl, hard, dualga, unigram, morphmark, dipmark, sweet or ems")
    p.add_argument("--lm", default="news", help="synthetic preset or fitted LM (e.g. smollm2-fit)")
    p.add_argument("--Delta", type=float, default=None, help="DualGA's target DG")
    p.add_argument("--delta", type=float, default=None, help="SRL's boost")
    p.add_argument("--gamma", type=float, default=None, help="green-list ratio")
    p.add_argument("--alpha", type=float, default=None, help="SWEET's entropy threshold in nats (its gate)")
    p.add_argument("--morph-kappa", type=float, default=None, help="MorphMark's kappa")
    p.add_argument("--morph-p0", type=float, default=None, help="MorphMark's p0")
    p.add_argument("--dip-alpha", type=float, default=None, help="DiPmark's reweight alpha")
    p.add_argument("--fpr", type=float, default=1e-6, help="false-positive rate of the test (default 1e-6)")
    p.add_argument("--power", type=float, default=0.9, help="target power (default 0.9)")
    p.add_argument("--score", default=None, help="detection score (green, lr; ems-ars, ems-log, ems-opt, ems-hc, ems-trgof)")
    p.add_argument("--attack", default=None, help="substitution:RATE")
    p.add_argument("--dedup", action="store_true", help="the detector scores each (context, token) pair once (green count)")
    p.add_argument("--T", type=integer(1), default=None, help="also print the power at this text length")
    p.add_argument("--key", type=KEY, default=defaults.KEY, help="key of the LM sample's green lists")
    p.add_argument("--plot", type=pathlib.Path, default=None, help="write the power curve here (PNG)")
    p.add_argument("--json", action="store_true", help="one JSON object")


def run(args) -> int:
    """Print the tokens per text needed for the power at the false-positive rate (:func:`sims.plan.plan`).

    Prints the plan as a table or, with ``--json``, one JSON object; with ``--plot`` also draws the power
    against the text length on a grid of 60 lengths up to twice the tokens needed and writes it as a PNG
    (the plan then carries ``plot``, its path).

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
        If the algorithm, score, attack or a parameter is not one the planner accepts.
    """
    from sims.cli.main import emit
    from sims.plan import plan

    kw = dict(score=args.score, attack=args.attack, gamma=args.gamma, delta=args.delta, Delta=args.Delta, key=args.key, dedup=args.dedup,
              **{k: v for k, v in dict(alpha=args.alpha, morph_kappa=args.morph_kappa, morph_p0=args.morph_p0, dip_alpha=args.dip_alpha).items()
                 if v is not None})
    out = plan(args.algo, lm=args.lm, fpr=args.fpr, power=args.power, T=args.T, **kw)
    if args.plot is not None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        top = 2 * (out["tokens_needed"] or 1000)
        grid = sorted({max(2, int(top * i / 60)) for i in range(1, 61)})
        curve = plan(args.algo, lm=args.lm, fpr=args.fpr, power=args.power, curve=tuple(grid), **kw)["curve"]
        fig, ax = plt.subplots(figsize=(5, 3.2))
        ax.plot([c[0] for c in curve], [c[1] for c in curve])
        ax.axhline(args.power, ls=":", c="gray")
        ax.set(xlabel="tokens per text", ylabel=f"power at fpr {args.fpr:g}", title=f"{args.algo} on {args.lm}" + (f", {args.attack}" if args.attack else ""))
        fig.tight_layout()
        fig.savefig(args.plot, dpi=120)
        plt.close(fig)
        out["plot"] = str(args.plot)
    emit(out, args.json)
    return 0
