"""``python -m sims show FILE.npz [--key K] [--fpr F] [--index I ...] [--jsonl OUT.jsonl]``: read the texts.

Prints each text of a generation file (written by ``sims generate`` / ``attack``): its prompt, its
reply and the key's decision (the file's own key unless ``--key``), at false-positive rate
``--fpr``.  A real LM's texts are decoded with its tokenizer (words); a synthetic LM's are token
ids.  ``--jsonl`` exports one object per text instead: ``index``, ``prompt``, ``text`` (the
reply), ``ids`` (the reply's token ids), ``log10_p`` and ``watermarked``.  ``sims detect --text
OUT.jsonl --lm LM`` scores the ``text`` fields again and says how many tokens re-encoded to other
ids than ``ids`` (decoded text does not always re-encode to the ids the LM sampled).
"""

from __future__ import annotations

import argparse
import json
import pathlib

from sims.cli.checks import integer, writable_file
from sims.core import defaults

#: The subcommand's one-line summary (``python -m sims --help`` and this subcommand's description).
HELP = "print or export the texts of an .npz (decoded words for a real LM) with the key's decision"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add the options of ``python -m sims show`` to ``p``.

    The positional ``file`` (a generation ``.npz``), ``--key`` (default: the file's own), ``--fpr``,
    ``--index`` (only these texts) and ``--jsonl`` (write one JSON object per text instead of printing).

    Parameters
    ----------
    p : argparse.ArgumentParser
        The subcommand's parser; modified in place.
    """
    p.add_argument("file", type=pathlib.Path, help="a .npz written by `python -m sims generate` or `attack`")
    p.add_argument("--key", default=None, help="detection key in [0, 2**64) (default: the key the file was generated with)")
    p.add_argument("--fpr", default=str(defaults.FPR), help=f"false-positive rate of the decision, in (0, 1) (default {defaults.FPR:g})")
    p.add_argument("--index", type=integer(0), nargs="+", default=None, help="only these texts (default all)")
    p.add_argument("--jsonl", type=pathlib.Path, default=None, help="write one JSON object per text here instead of printing")


def decoder(meta: dict):
    """A function from token ids to their text for the LM of a generation's ``meta``.

    Parameters
    ----------
    meta : dict
        A generation's meta (its ``lm`` names the LM, :func:`sims.lm.door.lm_of`).

    Returns
    -------
    callable
        :meth:`sims.lm.door.LM.decode`: the tokenizer's text, or the ids joined by spaces where the LM has
        no tokenizer.
    """
    from sims.lm.door import lm_of

    return lm_of(meta).decode


def run(args) -> int:
    """Print each text of ``args.file`` (prompt, reply and the key's decision), or export them as JSONL.

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
        If ``--jsonl`` cannot be written, an ``--index`` is outside the file's texts, or the key or the rate
        is out of range.
    """
    from sims.cli import detect
    from sims.core.record import Generation

    writable_file("jsonl", args.jsonl)
    gen = Generation.load(args.file)
    n = gen.n
    rows = list(range(n)) if args.index is None else args.index
    bad = [i for i in rows if not 0 <= i < n]
    if bad:
        raise ValueError(f"--index must be in [0, {n - 1}] (the file holds {n} texts); got {bad[0]}")
    key = str(gen.meta["key"]) if args.key is None else args.key
    doc = detect.decisions(args.file, key, args.fpr)
    decode = decoder(gen.meta)
    records = [dict(index=i, prompt=decode(gen.prompt(i)), text=decode(gen.text(i)), ids=[int(t) for t in gen.text(i)],
                    log10_p=doc["texts"][i]["log10_p"], watermarked=doc["texts"][i]["watermarked"]) for i in rows]
    if args.jsonl is not None:
        with open(args.jsonl, "w", encoding="utf-8") as f:
            for r in records:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
        print(json.dumps(dict(out=str(args.jsonl), texts=len(records))))
        return 0
    m = gen.meta
    print(f"# {args.file}: lm {m['lm']}, algo {m['algo']}, {n} texts; key {key}, fpr {float(args.fpr):g}")
    for r in records:
        verdict = "watermarked" if r["watermarked"] else "not watermarked"
        print(f"\n## text {r['index']}: {verdict} (log10 p = {r['log10_p']:.2f}, {len(r['ids'])} tokens)")
        print(f"prompt: {r['prompt']}")
        print(f"reply:  {r['text']}")
    return 0
