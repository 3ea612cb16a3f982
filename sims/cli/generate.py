"""``python -m sims generate --lm NAME --algo ALGO [params] --n N --T T --out F.npz``: watermarked
texts of a synthetic LM or a real one (``--batch``, ``--prompts``, ``--engine``), saved as one
:class:`~sims.core.record.Generation` .npz that ``sims detect`` and ``sims attack`` read."""

from __future__ import annotations

import argparse
import json
import pathlib

import numpy as np

from sims.cli.checks import KEY, SEED, check_memory, integer, writable_file
from sims.cli.lms import LM_HELP, open_lm
from sims.core import defaults
from sims.watermarks import registry

#: The subcommand's one-line summary (``python -m sims --help`` and this subcommand's description).
HELP = "watermarked text from a synthetic or real LM, saved as .npz"
#: The weights' dtypes ``--dtype`` accepts (names of torch dtypes); a real LM's records stay float64.
DTYPES = ("float32", "bfloat16", "float16")


def add_algo_arguments(p: argparse.ArgumentParser) -> None:
    """Add the options that choose an LM, an algorithm and its texts to ``p`` (shared by ``generate`` and ``evaluate``).

    ``--lm``, ``--algo`` (a name of :func:`sims.watermarks.registry.names`, default ``dualga``), one float
    option per registry parameter (:data:`sims.watermarks.registry.PARAMS`; unset means the algorithm's
    default), ``--h`` (the green-list hash's context width), ``--n`` texts of ``--T`` tokens, ``--seed``,
    ``--key``, and the real-LM group: ``--batch``, ``--prompts``, ``--engine`` (loop or static) and
    ``--dtype`` (:data:`DTYPES`).

    Parameters
    ----------
    p : argparse.ArgumentParser
        The subcommand's parser; modified in place.
    """
    p.add_argument("--lm", default="news", help=LM_HELP)
    p.add_argument("--algo", choices=registry.names(), default="dualga")
    for name, prm in registry.PARAMS.items():  # one option per registry parameter; unset (None) means the default
        p.add_argument(f"--{name}", type=float, default=None, help=f"{', '.join(registry.taking(name)) if name != 'gamma' else 'all'}: {prm.help}")
    p.add_argument("--h", type=integer(0), default=1, help="context width of the green-list hash (0: one fixed green list; unigram runs at 0)")
    p.add_argument("--n", type=integer(1), default=100, help="number of texts")
    p.add_argument("--T", type=integer(1), default=200, help="tokens per text")
    p.add_argument("--seed", type=SEED, default=0)
    p.add_argument("--key", type=KEY, default=defaults.KEY, help="watermark key in [0, 2**64)")
    g = p.add_argument_group("real LMs (torch backend)")
    g.add_argument("--batch", type=integer(1), default=None,
                   help="rows per forward pass (default: what the machine holds: 16 on a CPU; on a GPU the rows whose KV cache "
                        "fits in half the free memory, at most 256)")
    g.add_argument("--prompts", default=None,
                   help="lfqa (default), news, or a JSONL file with a 'prompt' field (random ids for random-* models)")
    g.add_argument("--engine", choices=("loop", "static"), default=None,
                   help="loop: any causal LM, transformers forward; static: Llama family, static KV cache, fused kernels (CUDA graphs on a GPU)")
    g.add_argument("--dtype", choices=DTYPES, default=None, help="weights' dtype (default float32; records stay float64)")


def algo_kwargs(args) -> dict:
    """The registry parameters given on the command line; one that ``--algo`` does not take is refused.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed options of :func:`add_algo_arguments`.

    Returns
    -------
    dict
        ``{parameter: value}`` of the registry parameters that were given (not None).

    Raises
    ------
    ValueError
        If ``--algo`` does not take one of them or a value is out of its range
        (:func:`sims.watermarks.registry.check_params`).
    """
    given = {name: getattr(args, name) for name in registry.PARAMS if getattr(args, name) is not None}
    registry.check_params(args.algo, **given)
    return given


def generation_options(args) -> dict:
    """The real-LM generation options given on the command line (``batch``, ``prompts``, ``engine``).

    A synthetic LM refuses them (:func:`sims.generation.any_lm.generate`).

    Parameters
    ----------
    args : argparse.Namespace
        Parsed options of :func:`add_algo_arguments`.

    Returns
    -------
    dict
        ``{option: value}`` of those given (not None).
    """
    return {k: getattr(args, k) for k in ("batch", "prompts", "engine") if getattr(args, k) is not None}


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add the options of ``python -m sims generate`` to ``p``.

    Those of :func:`add_algo_arguments`, and ``--out`` (the generation ``.npz``, required), ``--seeding``
    (the green list's seeding scheme, :mod:`sims.core.seeding`, default lefthash) and ``--stop-at-eos``
    (a real LM's texts end at its first end token, the rest padded).

    Parameters
    ----------
    p : argparse.ArgumentParser
        The subcommand's parser; modified in place.
    """
    add_algo_arguments(p)
    p.add_argument("--out", type=pathlib.Path, required=True, help="output .npz")
    p.add_argument("--seeding", default="lefthash", help="the green list's seeding scheme over the last --h tokens: lefthash "
                   "(default), selfhash, minhash, skipgram or semantic (sims.core.seeding; red-green algorithms)")
    p.add_argument("--stop-at-eos", action="store_true",
                   help="real LMs: end each text at the model's first end token (end of turn / text), padding the rest (loop "
                        "engine); default: every text has T tokens, as in the paper's experiments")


def check_size(args, n_texts: int) -> None:
    """Refuse ``n_texts`` texts of ``--T`` tokens that would not fit in memory (before any work).

    Parameters
    ----------
    args : argparse.Namespace
        Parsed options with ``n`` and ``T``.
    n_texts : int
        Texts the command will hold at once (``evaluate``: the watermarked and the null ones).

    Raises
    ------
    ValueError
        If ``--n`` or ``--T`` is below 1, or the texts' arrays
        (:meth:`sims.core.record.Generation.nbytes`) exceed the available memory
        (:func:`sims.cli.checks.check_memory`).
    """
    from sims.core.record import Generation

    for name in ("n", "T"):
        if getattr(args, name) < 1:
            raise ValueError(f"--{name} must be an integer in [1, inf); got {getattr(args, name)}")
    check_memory(Generation.nbytes(n_texts, args.T), f"{n_texts} texts of {args.T} tokens")


def run(args) -> int:
    """Generate ``--n`` watermarked texts and save them as one :class:`~sims.core.record.Generation` ``.npz``.

    Runs :func:`sims.generation.any_lm.generate` on the LM of ``--lm`` (synthetic or real) and prints one
    JSON line: the output path, ``n``, ``T``, the mean KL and realised DG per token and the generation's
    meta.

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
        If ``--out`` cannot be written, the texts would not fit in memory, or an option does not apply to
        the algorithm or the LM.
    """
    from sims.generation.any_lm import generate

    writable_file("out", args.out)
    check_size(args, args.n)
    lm = open_lm(args.lm, args.dtype)
    gen = generate(lm, args.algo, n=args.n, T=args.T, seed=args.seed, key=args.key, h=args.h, stop_at_eos=args.stop_at_eos,
                    **generation_options(args), seeding=args.seeding, **algo_kwargs(args))
    gen.save(args.out)
    print(json.dumps(dict(out=str(args.out), n=gen.n, T=args.T, kl_per_token=float(np.nanmean(gen.kl)), realized_dg=float(np.nanmean(gen.dg)), meta=gen.meta)))
    return 0
