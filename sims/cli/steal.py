"""``python -m sims steal --lm news --algo srl --gamma 0.25 --delta 2 --n-stolen 1000 [--h 1] --json``.

Prints the attack point (:func:`sims.steal.attack_point`) and the owner's spoof test
(:func:`sims.steal.spoof_test_power`: reference = the stolen texts, calibration =
``--n-calibration`` fresh genuine texts) as ``spoof_test_fpr`` / ``spoof_test_power`` (with 95%
Clopper-Pearson intervals) at ``--spoof-level``.  The spoof test needs long texts: at ``--T 200``
it separates genuine from spoofed texts, at 32 tokens it has little power.

Several ``--n-stolen`` values print one point per N (one JSON object per line), stolen as
prefixes of one haul of the largest N.  The LM is any of :func:`sims.get_lm` (a preset, a fitted
``.npz``, ...).  On a real LM (``--lm smollm2``, a random test model or a model folder) the texts
come from the torch backend (:func:`sims.steal.steal_texts`: ``--n-eval`` held-out
base texts after the last prompts of ``--prompts``) and each point is the green-list estimate's accuracy
(:func:`sims.steal.estimate_curve`); spoofing and scrubbing need the base LM's
exact probabilities at every step and run on the synthetic LMs only.
"""

from __future__ import annotations

import argparse

from sims.cli.checks import KEY, SEED, integer
from sims.core import defaults

#: The subcommand's one-line summary (``python -m sims --help`` and this subcommand's description).
HELP = "steal green lists from N watermarked texts, then spoof and scrub (owner's exact detector)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add the options of ``python -m sims steal`` to ``p``.

    ``--lm``, ``--vocab-size``, ``--algo`` (one of :data:`sims.steal.STEALABLE_ALGOS`) and the registry
    parameters those algorithms take, ``--h``, ``--n-stolen`` (one or more N), ``--T``, ``--n-eval``, the
    spoofer's ``--boost``, the scrubber's ``--budget``, ``--no-base``, the spoof test's ``--n-calibration``
    and ``--spoof-level``, a real LM's ``--prompts`` and ``--batch``, ``--key``, ``--seed`` and ``--json``.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The subcommand's parser; modified in place.
    """
    from sims.cli.lms import LM_HELP
    from sims.steal import STEALABLE_ALGOS
    from sims.watermarks import registry

    p.add_argument("--lm", default="news", help=LM_HELP + " (a real LM: green-list estimate accuracy only)")
    p.add_argument("--vocab-size", type=integer(2), default=None, help="override the preset's vocabulary size")
    p.add_argument("--algo", choices=STEALABLE_ALGOS, default="srl")
    for name in registry.PARAMS:  # the parameters of the stealable algorithms, from the registry; unset (None) means the default
        takers = [a for a in registry.taking(name) if a in STEALABLE_ALGOS]
        if takers:
            p.add_argument(f"--{name}", type=float, default=None, help=f"{', '.join(takers)}: {registry.PARAMS[name].help}")
    p.add_argument("--h", type=integer(1), default=defaults.H, help="context width of the green-list hash")
    p.add_argument("--n-stolen", type=integer(1), nargs="+", required=True, help="watermarked (and base) texts the attacker sees (one or more N)")
    p.add_argument("--T", type=integer(1), default=32, help="tokens per text")
    p.add_argument("--n-eval", type=integer(1), default=200, help="spoofed texts, scrubbed targets and held-out texts")
    p.add_argument("--boost", type=float, default=4.0, help="the spoofer's logit boost")
    p.add_argument("--budget", type=float, default=0.5, help="the scrubber's largest edit share")
    p.add_argument("--no-base", action="store_true", help="the attacker has no base-LM texts")
    p.add_argument("--n-calibration", type=integer(1), default=500, help="the owner's genuine texts that calibrate the spoof test")
    p.add_argument("--spoof-level", type=float, default=0.01, help="level of the spoof test")
    p.add_argument("--prompts", default=None, help="real LM: prompt set (lfqa, the default, news or a JSONL file)")
    p.add_argument("--batch", type=integer(1), default=None, help="real LM: rows per forward pass")
    p.add_argument("--key", type=KEY, default=defaults.KEY)
    p.add_argument("--seed", type=SEED, default=0)
    p.add_argument("--json", action="store_true")


def run(args) -> int:
    """Steal green lists from ``--n-stolen`` texts and print one point per N.

    On a synthetic LM each point is :func:`sims.steal.attack_point` (the estimate's accuracy, spoofing and
    scrubbing) with the owner's spoof test (:func:`sims.steal.spoof_test_power`) as ``spoof_test_*``
    fields; on a real LM it is the green-list estimate's accuracy (:func:`sims.steal.estimate_curve`).
    Each point is printed as a table or one JSON line (:func:`sims.cli.main.emit`).

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
        If a parameter is not one the algorithm takes, or ``--prompts`` / ``--batch`` is given with a
        synthetic LM.
    """
    from sims.cli.main import emit
    from sims.lm.door import get_lm
    from sims.watermarks import registry

    params = {k: getattr(args, k) for k in registry.PARAMS if getattr(args, k, None) is not None}
    registry.check_params(args.algo, **params)
    lm = get_lm(args.lm, vocab_size=args.vocab_size)
    # spoofing and scrubbing read the exact probabilities of a synthetic LM; a real LM's point is the estimate's accuracy
    points = (_real_lm_points if lm.real else _synthetic_points)(lm, args, params)
    for out in points:
        emit(out, args.json)
    return 0


def _synthetic_points(lm, args, params: dict) -> list[dict]:
    from sims.steal import attack_point, generate_stealing_texts, spoof_test_power

    if args.prompts is not None or args.batch is not None:
        raise ValueError(f"--prompts and --batch apply to real LMs; synthetic LM {args.lm!r} samples its prompts")
    haul = generate_stealing_texts(lm, args.algo, n_max=max(args.n_stolen), T=args.T, n_eval=args.n_eval, seed=args.seed, key=args.key, h=args.h,
                     **params)
    points = []
    for n in sorted(args.n_stolen):
        out = attack_point(haul, n, use_base=not args.no_base, boost=args.boost, budget=args.budget, seed=args.seed)
        st = spoof_test_power(haul, n, n_calibration=args.n_calibration, boost=args.boost, seed=args.seed, level=args.spoof_level)
        out.update({f"spoof_test_{k}": st[k] for k in ("level", "n_reference", "n_calibration", "genuine_flagged", "spoofed_flagged",
                                                       "genuine_mean_z", "spoofed_mean_z", "fpr", "fpr_ci95", "power", "power_ci95")})
        points.append(out)
    return points


def _real_lm_points(lm, args, params: dict) -> list[dict]:
    from sims.steal import estimate_curve, steal_texts

    wm, base, held_out = steal_texts(lm, args.algo, n=max(args.n_stolen), n_eval=args.n_eval, T=args.T, seed=args.seed,
                                     key=args.key, h=args.h, prompts=args.prompts, use_base=not args.no_base, batch=args.batch,
                                     **params)
    m = wm.meta
    head = dict(lm=args.lm, algo=m["algo"], h=int(m["h"]), gamma=float(m["gamma"]), delta=m.get("delta"), Delta=m.get("Delta"),
                T=args.T, n_eval=args.n_eval, vocab_size=int(m["vocab_size"]), use_base=base is not None,
                generate_seconds=float(sum(g.meta["seconds"] for g in (wm, base, held_out) if g is not None)))
    return [{**head, **point} for point in estimate_curve(wm, held_out, args.n_stolen, base=base)]
