"""``python -m sims steal --lm news --algo srl --gamma 0.25 --delta 2 --n-stolen 1000 [--h 1] --json``.

Prints the attack point (:func:`sims.experiments.steal.attack_point`) and the owner's spoof test
(:func:`sims.experiments.steal.spoof_test_power`: reference = the stolen texts, calibration =
``--n-calibration`` fresh genuine texts) as ``spoof_test_fpr`` / ``spoof_test_power`` (with 95%
Clopper-Pearson intervals) at ``--spoof-level``.  The spoof test needs long texts: at ``--T 200``
it separates genuine from spoofed texts, at 32 tokens it has little power.
"""

from __future__ import annotations

import argparse

from sims.core import defaults

HELP = "steal green lists from N watermarked texts, then spoof and scrub (owner's exact detector)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    from sims.experiments.steal import STEALABLE_ALGOS
    from sims.lm.synthetic import LM_PRESETS

    p.add_argument("--lm", choices=LM_PRESETS, default="news")
    p.add_argument("--vocab-size", type=int, default=None, help="override the preset's vocabulary size")
    p.add_argument("--algo", choices=STEALABLE_ALGOS, default="srl")
    p.add_argument("--gamma", type=float, default=None)
    p.add_argument("--delta", type=float, default=None)
    p.add_argument("--Delta", type=float, default=None)
    p.add_argument("--h", type=int, default=defaults.H, help="context width of the green-list hash")
    p.add_argument("--n-stolen", type=int, required=True, help="watermarked (and base) texts the attacker sees")
    p.add_argument("--T", type=int, default=32, help="tokens per text")
    p.add_argument("--n-eval", type=int, default=200, help="spoofed texts, scrubbed targets and held-out texts")
    p.add_argument("--boost", type=float, default=4.0, help="the spoofer's logit boost")
    p.add_argument("--budget", type=float, default=0.5, help="the scrubber's largest edit share")
    p.add_argument("--no-base", action="store_true", help="the attacker has no base-LM texts")
    p.add_argument("--n-calibration", type=int, default=500, help="the owner's genuine texts that calibrate the spoof test")
    p.add_argument("--spoof-level", type=float, default=0.01, help="level of the spoof test")
    p.add_argument("--key", type=int, default=defaults.KEY)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", action="store_true")


def run(args) -> int:
    from sims.cli.main import emit
    from sims.experiments.steal import attack_point, make_haul, spoof_test_power
    from sims.lm.synthetic import get_lm

    if args.n_stolen < 1:
        raise ValueError(f"n-stolen must be in [1, inf); got {args.n_stolen}")
    lm = get_lm(args.lm, vocab_size=args.vocab_size)
    params = {k: v for k, v in dict(gamma=args.gamma, delta=args.delta, Delta=args.Delta).items() if v is not None}
    haul = make_haul(lm, args.algo, n_max=args.n_stolen, T=args.T, n_eval=args.n_eval, seed=args.seed, key=args.key, h=args.h, **params)
    out = attack_point(haul, args.n_stolen, use_base=not args.no_base, boost=args.boost, budget=args.budget, seed=args.seed)
    st = spoof_test_power(haul, args.n_stolen, n_calibration=args.n_calibration, boost=args.boost, seed=args.seed, level=args.spoof_level)
    out.update({f"spoof_test_{k}": st[k] for k in ("level", "n_reference", "n_calibration", "genuine_flagged", "spoofed_flagged",
                                                   "genuine_mean_z", "spoofed_mean_z", "fpr", "fpr_ci95", "power", "power_ci95")})
    emit(out, args.json)
    return 0
