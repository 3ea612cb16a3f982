"""``python -m sims attack FILE.npz --kind KIND --rate R --seed S --out FILE2.npz``.

Every kind of :mod:`sims.experiments.attacks`.  A real LM's texts: deletion / insertion /
substitution on its token ids; ``entropy`` and ``color`` with the model's next-token probabilities
(the LM opened by :func:`sims.get_lm`); ``paraphrase`` by the LM itself
(:func:`sims.torch_backend.paraphrase.paraphrase_generation`: decoded, rewritten, re-tokenised).
The text attacks of :mod:`sims.experiments.text_attacks` (emoji, typo, homoglyph, zero-width,
copy-paste): in text through the LM's tokenizer, else their token stand-ins."""

from __future__ import annotations

import argparse
import json
import pathlib

from sims.cli.checks import SEED, writable_file
from sims.experiments.text_attacks import KINDS, TEXT_KINDS

#: The subcommand's one-line summary (``python -m sims --help`` and this subcommand's description).
HELP = "delete / insert / substitute / paraphrase tokens of saved texts; emoji, typo, homoglyph, zero-width, copy-paste attacks"
TOKEN_EDITS = ("deletion", "insertion", "substitution")  #: need no LM


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add the options of ``python -m sims attack`` to ``p``.

    The positional ``file`` (a generation ``.npz``), ``--kind`` (one of
    :data:`sims.experiments.text_attacks.KINDS`, required), ``--rate`` (the share attacked, required: of
    tokens for the token edits, of words for typo / homoglyph / zero-width, the chance of an emoji after
    each word, the unwatermarked share of copy-paste), ``--seed`` and ``--out`` (the attacked ``.npz``,
    required).

    Parameters
    ----------
    p : argparse.ArgumentParser
        The subcommand's parser; modified in place.
    """
    p.add_argument("file", type=pathlib.Path)
    p.add_argument("--kind", choices=KINDS, required=True)
    p.add_argument("--rate", type=float, required=True, help="share of tokens attacked, in [0, 1] (typo / homoglyph / zero-width: of words; "
                   "emoji: chance of an emoji after each word; copy-paste: the unwatermarked share)")
    p.add_argument("--seed", type=SEED, default=0)
    p.add_argument("--out", type=pathlib.Path, required=True)


def run(args) -> int:
    """Attack the texts of ``args.file`` and save the attacked generation to ``args.out``.

    Token edits (deletion, insertion, substitution) need no LM; the text attacks go through the LM's
    tokenizer (:func:`sims.experiments.text_attacks.attack`); ``paraphrase`` of a real LM's texts is
    rewritten by the LM itself (:func:`sims.torch_backend.paraphrase.paraphrase_generation`); the other
    kinds read the LM's next-token probabilities (:func:`sims.experiments.attacks.attack`).  Prints one
    JSON line with the output path and the attacks recorded in its meta.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed options of :func:`add_arguments` (``file``, ``kind``, ``rate``, ``seed``, ``out``).

    Returns
    -------
    int
        The exit status, 0.

    Raises
    ------
    ValueError
        If ``--out`` cannot be written, or ``--kind paraphrase`` is asked of a random test model that has no
        tokenizer (:func:`sims.cli.main.main` turns it into exit status 2).
    """
    from sims.core.record import Generation
    from sims.experiments.attacks import attack
    from sims.lm.door import lm_of

    writable_file("out", args.out)
    gen = Generation.load(args.file)
    m = gen.meta
    if args.kind in TEXT_KINDS:  # sims.experiments.text_attacks: the LM's tokenizer (emoji, copy-paste: the LM itself)
        from sims.experiments.text_attacks import attack as text_attack

        out = text_attack(gen, args.kind, args.rate, args.seed, lm=lm_of(m))
    elif args.kind in TOKEN_EDITS:  # no LM needed (a real LM's weights are not loaded)
        out = attack(gen, args.kind, args.rate, args.seed)
    else:
        lm = lm_of(m)
        if args.kind == "paraphrase" and lm.real:  # the LM itself rewrites the decoded text
            from sims.torch_backend.paraphrase import paraphrase_generation

            if lm.tokenizer is None:
                raise ValueError(f"--kind paraphrase needs a tokenizer; the random test model {m['lm']!r} has none")
            out = paraphrase_generation(gen, args.rate, args.seed, lm.model, lm.tokenizer)
        else:
            out = attack(gen, args.kind, args.rate, args.seed, lm=lm)
    out.save(args.out)
    print(json.dumps(dict(out=str(args.out), attacks=out.meta["attacks"])))
    return 0
