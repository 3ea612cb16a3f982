"""``python -m sims reduced``: an online controller on a G_t process vs the hindsight optimum."""

from __future__ import annotations

import argparse

from sims.cli.checks import SEED, integer
from sims.cli.main import emit
from sims.reduced.gprocess import SPEC_HELP
from sims.reduced.online import ONLINE_ALGOS

#: The subcommand's one-line summary (``python -m sims --help`` and this subcommand's description).
HELP = "online DualGA / SRL / backpressure on G_t sequences vs the hindsight optimum"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add the options of ``python -m sims reduced`` to ``p``.

    ``--algo`` (an online controller of :data:`sims.reduced.online.ONLINE_ALGOS`), ``--G`` (the G_t
    process, :data:`sims.reduced.gprocess.SPEC_HELP`), ``--T`` steps per replication, ``--reps``,
    ``--seed``, ``--Delta`` (the DG target), DualGA's step size ``--eta`` and ``--eta-mode``, the initial
    dual variable ``--lam1``, SRL's ``--delta``, ``--gamma``, the projection bound ``--M`` of lambda,
    ``--no-opt`` (skip the hindsight optimum) and ``--json``.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The subcommand's parser; modified in place.
    """
    p.add_argument("--algo", choices=sorted(ONLINE_ALGOS), default="dualga")
    p.add_argument("--G", default="beta:2,2", metavar="SPEC", help=f"G_t process: {SPEC_HELP}")
    p.add_argument("--T", type=integer(1), default=10**5, help="steps per replication")
    p.add_argument("--reps", type=integer(1), default=8, help="replications (run in parallel)")
    p.add_argument("--seed", type=SEED, default=0)
    p.add_argument("--Delta", type=float, default=0.2, help="DG target")
    p.add_argument("--eta", type=float, default=None, help="DualGA step size (default 1/sqrt(T), or c for --eta-mode sqrt); "
                                                                   "backpressure uses V = sqrt(T), alpha = T")
    p.add_argument("--eta-mode", choices=("const", "sqrt"), default="const", help="eta constant, or eta_t = eta / sqrt(t)")
    p.add_argument("--lam1", type=float, default=None, help="initial dual variable / boost of dualga and backpressure "
                                                                    "(default delta_star(Delta, gamma), clipped to M)")
    p.add_argument("--delta", type=float, default=None, help="SRL's fixed boost")
    p.add_argument("--gamma", type=float, default=None, help="green-list ratio (default E[G])")
    p.add_argument("--M", type=float, default=15.0, help="projection bound of lambda")
    p.add_argument("--no-opt", action="store_true", help="skip the hindsight optimum")
    p.add_argument("--json", action="store_true", help="print one JSON object (default: a table)")


def run(args) -> int:
    """Run the online controller on the G_t process against the hindsight optimum and print the summary.

    Runs :func:`sims.reduced.runner.simulate` and prints :meth:`~sims.reduced.runner.ReducedResult.summary`
    as a table or, with ``--json``, one JSON object.

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
        If the G_t specification or a parameter is invalid.
    """
    from sims.reduced.runner import simulate

    res = simulate(
        args.algo, args.G, T=args.T, reps=args.reps, seed=args.seed, Delta=args.Delta, gamma=args.gamma,
        eta=args.eta, eta_mode=args.eta_mode, lam1=args.lam1, delta=args.delta, M=args.M, with_opt=not args.no_opt,
    )
    out = res.summary()
    emit(out, args.json)
    return 0
