"""``python -m sims fit-lm``: fit a synthetic LM to a real LM's next-token statistics (:mod:`sims.lm.fitted`).

Runs the real LM (``smollm2``, a random test model such as ``random-llama`` or a local transformers folder) on ``--n`` prompts of
``--prompts`` for ``--T`` sampled tokens, records the per-token statistics
(:mod:`sims.torch_backend.lm_stats`), fits and writes the small ``.npz`` that
``--lm FILE.npz`` (any subcommand) or :func:`sims.lm.synthetic.open_synthetic` reads.  With
``--stats-out`` the recorded statistics are kept too, with ``--reference-out`` the SRL /
DualGA reference runs on the real LM (``--reference-n`` texts) are written as JSON.
"""

from __future__ import annotations

import argparse
import json
import pathlib

from sims.cli.checks import SEED, integer, writable_file

#: The subcommand's one-line summary (``python -m sims --help`` and this subcommand's description).
HELP = "fit a synthetic LM to a real LM's next-token statistics (needs torch)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add the options of ``python -m sims fit-lm`` to ``p``.

    ``--lm`` (the real LM, default ``smollm2``), ``--prompts`` (lfqa, news or a JSONL file), ``--n``
    prompts, ``--T`` sampled tokens per prompt, ``--order`` (the fitted LM's context width), ``--seed``,
    ``--out`` (the fitted LM, ``.npz``, required), ``--stats-out`` (the recorded statistics),
    ``--reference-out`` (SRL / DualGA reference runs on the real LM, JSON) and ``--reference-n`` (texts per
    reference configuration).

    Parameters
    ----------
    p : argparse.ArgumentParser
        The subcommand's parser; modified in place.
    """
    p.add_argument("--lm", default="smollm2", help="real LM: smollm2, a random test model (random-llama, ...), or a local transformers folder")
    p.add_argument("--prompts", default="lfqa", help="lfqa, news, or a JSONL file with a 'prompt' field")
    p.add_argument("--n", type=integer(1), default=64, help="prompts (one sampled text each)")
    p.add_argument("--T", type=integer(1), default=200, help="tokens sampled per prompt")
    p.add_argument("--order", type=integer(1), default=2, help="context width of the fitted LM")
    p.add_argument("--seed", type=SEED, default=0)
    p.add_argument("--out", type=pathlib.Path, required=True, help="the fitted LM, .npz")
    p.add_argument("--stats-out", type=pathlib.Path, default=None, help="also save the recorded statistics (.npz)")
    p.add_argument("--reference-out", type=pathlib.Path, default=None, help="also run SRL / DualGA on the real LM (JSON)")
    p.add_argument("--reference-n", type=integer(1), default=16, help="texts per reference configuration")


def run(args) -> int:
    """Record a real LM's per-token statistics, fit a synthetic LM to them and save it.

    Runs :func:`sims.torch_backend.lm_stats.record_stats`, fits with :func:`sims.lm.fitted.fit` and saves
    with :func:`sims.lm.fitted.save_fit`; with ``--stats-out`` also saves the statistics, with
    ``--reference-out`` also runs :func:`sims.torch_backend.lm_stats.reference_runs` and writes their
    summary.  Prints one JSON line: the output paths, the fit's vocabulary size, bump scale and latent
    parameters, and the real LM's mean entropy.

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
        If ``--out`` does not end in ``.npz`` or an output path cannot be written.
    """
    import numpy as np

    from sims.lm import fitted
    from sims.torch_backend import lm_stats

    if args.out.suffix != ".npz":
        raise ValueError(f"--out must end in .npz (how --lm FILE.npz recognises a fitted LM); got {str(args.out)!r}")
    for name in ("out", "stats_out", "reference_out"):
        writable_file(name.replace("_", "-"), getattr(args, name))
    st = lm_stats.record_stats(args.lm, args.prompts, n=args.n, T=args.T, seed=args.seed)
    meta = st.pop("meta")
    if args.stats_out is not None:
        with open(args.stats_out, "wb") as f:  # exactly the name given (numpy would add .npz)
            np.savez_compressed(f, meta=json.dumps(meta),
                                **{k: v.astype(np.int32 if k in ("tokens", "prompt_lens") else np.float32) for k, v in st.items()})
    fit = fitted.fit(dict(entropy=st["entropy"], coll=st["coll"], vocab_size=meta["vocab_size"]), order=args.order, seed=args.seed)
    fitted.save_fit(args.out, fit)
    out = dict(out=str(args.out), vocab_size=fit["vocab_size"], bump_scale=fit["bump_scale"], latent_a2_b2_w=fit["latent"],
               real_mean_entropy=float(st["entropy"].mean()))
    if args.reference_out is not None:
        runs = lm_stats.reference_runs(args.lm, args.prompts, n=args.reference_n, T=args.T, seed=args.seed)
        args.reference_out.write_text(json.dumps(dict(summary=lm_stats.summarise(runs), model=args.lm, prompts=args.prompts,
                                                      n=args.reference_n, T=args.T, seed=args.seed), indent=1))
        out["reference_out"] = str(args.reference_out)
    print(json.dumps(out))
    return 0
