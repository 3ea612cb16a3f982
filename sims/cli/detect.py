"""``python -m sims detect``: was this text watermarked with my key?  A decision per text.

Two inputs::

    python -m sims detect FILE.npz --key K [--dedup] [--fpr 1e-4] [--json] [--html OUT.html]
    python -m sims detect --text FILE.txt|FILE.jsonl|- --lm smollm2|PATH --key K
           [--scheme wmstats|transformers-lefthash] [--gamma G] [--h H] [--seeding S] [--dedup] [--json] [--html OUT.html]

``FILE.npz``: texts written by ``python -m sims generate`` / ``attack`` (any algorithm).
``--text``: raw text, tokenised with the tokenizer of ``--lm`` (no special tokens added); a
``.jsonl`` file holds one ``{"text": ...}`` object per line, any other file is ONE text
(blank lines included), ``-`` reads one text from stdin.  Before tokenising, a raw text is
normalised (:func:`sims.core.unicode_text.normalize_text`: zero-width characters removed, NFKC, Cyrillic
and Greek look-alike letters mapped to ASCII; ``--no-normalize`` turns it off), and the document's
``normalization`` field says how many characters changed.  The first ``h`` tokens of a raw
text are its context (not scored).  Schemes: ``wmstats`` (the package's green lists: SRL,
DualGA, ATW, hard; ``--gamma``, ``--h``, ``--seeding``: :mod:`sims.core.seeding`), ``transformers-lefthash`` (transformers'
``WatermarkLogitsProcessor`` with ``seeding_scheme="lefthash"``: ``--key`` is its
``hashing_key``, ``--gamma`` its ``greenlist_ratio``, ``--h`` its ``context_width``, ``--dedup``
its detector's ``ignore_repeated_ngrams``), scored with the exact binomial p-value where
transformers' ``WatermarkDetector`` uses a normal approximation; ``transformers-selfhash`` likewise for
``seeding_scheme="selfhash"`` (its first ``context_width - 1`` tokens are context; ``--dedup`` counts each
(seed, token) pair once: :mod:`sims.torch_backend.selfhash_transformers`).

Output: a table, or with ``--json`` the document of :mod:`sims.detect.documents.detect_json` (schema
``wmstats.detect`` version 1, stable); ``--html`` also writes the coloured report
(:mod:`sims.detect.documents.html`, red-green schemes).  Bad input: one line on stderr, exit 2.
"""

from __future__ import annotations

import argparse
import json
import pathlib

from sims.cli.checks import SEED, int_in, integer, writable_file
from sims.cli.text_input import SCHEMES, marks_under_key, piece_maker, text_fields, text_input
from sims.core import defaults

#: The subcommand's one-line summary (``python -m sims --help`` and this subcommand's description).
HELP = "was this text watermarked? a decision per text at a false-positive rate, from an .npz or raw text"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add the options of ``python -m sims detect`` to ``p``.

    The positional ``file`` (a generation ``.npz``) or ``--text`` (raw text) with ``--lm`` (its tokenizer)
    and ``--scheme``; ``--key`` (one key, or ``K1,K2,...`` tested with Holm's step-down) or ``--key-file``;
    ``--sequential`` (anytime-valid detection); ``--gamma``, ``--h``, ``--seeding`` (raw text's green
    lists); ``--vocab-size``, ``--algo``, ``--score`` and ``--stat`` (an ``.npz``'s detector); ``--dedup``;
    ``--no-normalize``; ``--fpr``; ``--json``; ``--html`` (the coloured report); ``--table-seed`` and
    ``--table-size`` (the transformers SynthID scheme).

    Parameters
    ----------
    p : argparse.ArgumentParser
        The subcommand's parser (or a plain one, :func:`build_arguments`); modified in place.
    """
    p.add_argument("file", nargs="?", type=pathlib.Path, help="a .npz written by `python -m sims generate` (or use --text)")
    p.add_argument("--text", default=None, help="raw text: FILE.txt (one text), FILE.jsonl (one {\"text\": ...} per line) or - (stdin)")
    p.add_argument("--lm", default=None, help="with --text: whose tokenizer, 'smollm2' or a local transformers folder")
    p.add_argument("--scheme", default="wmstats", help=f"with --text: one of {', '.join(SCHEMES)} (default wmstats)")
    p.add_argument("--key", default=None, help="detection key in [0, 2**64) (transformers-lefthash: its hashing_key); K1,K2,... tests every key (Holm)")
    p.add_argument("--key-file", type=pathlib.Path, default=None, help="a file of keys, one per line, tested as --key K1,K2,...")
    p.add_argument("--sequential", action="store_true", help="anytime-valid detection: first token flagged per text (--dedup: exact null)")
    p.add_argument("--gamma", type=float, default=None, help=f"green-list ratio (.npz: must equal the file's; --text: default {defaults.GAMMA})")
    p.add_argument("--h", type=integer(0), default=None, help=f"with --text: context width (default {defaults.H})")
    p.add_argument("--seeding", default=None, help="with --text --scheme wmstats: the green lists' seeding scheme, lefthash (default), selfhash, "
                   "minhash, skipgram or semantic (sims.core.seeding; a real LM's semantic lists follow its own embedding clusters; an .npz carries its own)")
    p.add_argument("--vocab-size", type=integer(2), default=None, help=".npz: detector's vocabulary size; must equal the file's")
    p.add_argument("--algo", default=None, help=".npz: detector to use (default: the file's algorithm)")
    p.add_argument("--dedup", action="store_true", help="score each (context, token) pair once")
    p.add_argument("--no-normalize", dest="normalize", action="store_false",
                   help="with --text: tokenise the text as given (default: remove zero-width characters, NFKC, map Cyrillic / Greek "
                        "look-alikes to ASCII, and report how many characters changed)")
    p.add_argument("--score", default=None,
                   help=".npz: a detector score family of the registry (green, green-local, lr, ems-ars, ems-log, ems-opt, ems-hc, "
                        "ems-trgof, hits, its-edit, ems-edit, exp-edit)")
    p.add_argument("--fpr", default=str(defaults.FPR), help=f"false-positive rate of the decision, in (0, 1) (default {defaults.FPR:g})")
    p.add_argument("--json", action="store_true", help="the JSON document (schema wmstats.detect/1) instead of a table")
    p.add_argument("--html", type=pathlib.Path, default=None, help="also write a coloured HTML report here")
    p.add_argument("--table-seed", type=SEED, default=0, help="transformers-synthid: its sampling_table_seed (default 0)")
    p.add_argument("--table-size", type=integer(1), default=2**16, help="transformers-synthid: its sampling_table_size (default 65536)")
    p.add_argument("--stat", choices=("mean", "weighted"), default=None,
                   help=".npz of a tournament algorithm (synthid): its mean g-value score (default) or the weighted one")


def _score_text(args, key: int, fpr: float):
    """Document and marked texts of ``--text``."""
    from sims.detect.documents import decision

    t = text_input(args)
    if args.scheme == "transformers-synthid":  # --key K1,K2,..; --h = ngram_len - 1 (sims.torch_backend.synthid_transformers)
        from sims.torch_backend.synthid_transformers import text_document

        return text_document(args, fpr, t.rows), None
    green, scored, g_eff = marks_under_key(args, t, key)
    return decision.marks_document(green, scored, t.lengths, g_eff=g_eff, fpr=fpr, context_pieces=[p[: t.c] for p in t.pieces],
                                   text_pieces=[p[t.c :] for p in t.pieces], input=args.text, scheme=args.scheme, key=key, gamma=t.gamma, h=t.h,
                                   dedup=args.dedup, vocab_size=t.V, lm=args.lm, **text_fields(args))


def _load_npz(args):
    """The generation of ``FILE.npz`` and the detector to use, the arguments checked against it."""
    from sims.core.record import Generation

    if args.text is not None:
        raise ValueError("give either FILE.npz or --text, not both")
    for name in ("lm", "h", "seeding"):
        if getattr(args, name) is not None:
            raise ValueError(f"--{name} applies to --text only (an .npz carries its own)")
    if args.scheme != "wmstats":
        raise ValueError(f"scheme must be 'wmstats' for an .npz of this package's generations; got {args.scheme!r}")
    gen = Generation.load(args.file, records=False)  # detection reads the texts, not the per-token records
    m = gen.meta
    if args.vocab_size is not None and args.vocab_size != m["vocab_size"]:
        raise ValueError(f"--vocab-size must equal the generation's vocab_size {m['vocab_size']} (vocabulary mismatch); got {args.vocab_size}")
    return gen, args.algo or m["algo"]


def _score_npz(args, key: int, fpr: float, want_marks: bool):
    """Document and marked texts of an .npz of generations."""
    from sims.detect import families
    from sims.detect.documents import decision
    from sims.lm.door import lm_of

    gen, algo = _load_npz(args)
    m = gen.meta
    if args.score is not None:  # issue 31: the families of sims.detect.families.score_families
        from sims.detect.families.score_families import get_score, score_generation

        lm = lm_of(m) if get_score(args.score, algo).needs_lm else None  # the likelihood-ratio score reads the LM's probabilities
        res = score_generation(gen, args.score, lm, key=key, gamma=args.gamma, dedup=args.dedup, algo=algo)
        prefix = marks = None
    else:  # the family's answer from one hashing pass; ITS / UW read the LM's probabilities (a real LM's teacher-forced softmax)
        family = families.of(algo)
        lm = lm_of(m) if family.needs_lm else None
        res, prefix, marks = family.answer(gen, lm, algo=algo, key=key, dedup=args.dedup, gamma=args.gamma, stat=args.stat)
    pieces, ids = piece_maker(m) if want_marks else (None, True)
    doc, marked = decision.generation_document(gen, res, key=key, fpr=fpr, dedup=args.dedup, input=str(args.file), gamma=args.gamma, algo=algo,
                                               want_marks=want_marks, pieces=pieces,
                                               statistic=args.score or ("weighted g-value sum" if args.stat == "weighted" else None), prefix=prefix,
                                               marks=marks)
    return doc, marked, ids


def decisions(file: pathlib.Path, key: str, fpr: str) -> dict:
    """The detection document of an .npz (``sims detect FILE.npz --key KEY --fpr FPR --json``).

    Parameters
    ----------
    file : pathlib.Path
        A generation ``.npz``.
    key : str or int
        The detection key, in [0, 2**64).
    fpr : str or float
        The false-positive rate of the decision, in (0, 1).

    Returns
    -------
    dict
        The document of :mod:`sims.detect.documents.detect_json` (schema ``wmstats.detect`` version 1).

    Raises
    ------
    ValueError
        If the key or the rate is out of range or the file's arguments do not agree.
    """
    from sims.detect.stats.marks import check_fpr

    args = build_arguments([str(file), "--key", str(key), "--fpr", str(fpr)])
    return _score_npz(args, int_in("key", args.key, 0, 2**64), check_fpr(float(args.fpr)), False)[0]


def build_arguments(argv: list[str]) -> argparse.Namespace:
    """This subcommand's arguments parsed from ``argv`` (a plain parser with :func:`add_arguments`).

    Parameters
    ----------
    argv : list of str
        The subcommand's arguments, without ``python -m sims detect``.

    Returns
    -------
    argparse.Namespace
        The parsed options, defaults filled in.
    """
    p = argparse.ArgumentParser()
    add_arguments(p)
    return p.parse_args(argv)


def _sequential(args, key: int, fpr: float) -> dict:
    """The ``--sequential`` document of an .npz (ITS / UW read the LM's probabilities)."""
    from sims.detect import families
    from sims.detect.documents import decision
    from sims.detect.families import detectors
    from sims.lm.door import lm_of

    gen, algo = _load_npz(args)
    lm = lm_of(gen.meta) if families.of(algo).needs_lm else None
    if args.score is not None:  # a registered score family's e-process (sims.detect.families.sequential_scores)
        from sims.detect.families.sequential_scores import sequential_score_family

        res = sequential_score_family(gen, args.score, alpha=fpr, dedup=args.dedup, key=key, gamma=args.gamma, algo=algo)
        return dict(decision.sequential_document(gen, res, key=key, dedup=args.dedup, input=str(args.file), algo=algo), score=args.score)
    res = detectors.sequential_score(gen, lm, alpha=fpr, dedup=args.dedup, key=key, gamma=args.gamma, algo=algo)
    return decision.sequential_document(gen, res, key=key, dedup=args.dedup, input=str(args.file), algo=algo)


def _many_keys(args, keys: list[int], fpr: float) -> dict:
    """The many-keys document of an .npz (every detector family; keyed orders on synthetic LMs' texts)."""
    from sims.detect import families
    from sims.detect.documents import decision
    from sims.lm.kind import is_real
    from sims.lm.synthetic import lm_from_meta

    gen, algo = _load_npz(args)
    needs_lm = families.of(algo).needs_lm
    if needs_lm and is_real(gen.meta["lm"]):
        raise ValueError(f"several keys detect algo {algo!r} on synthetic LMs' texts only (it reads the model's probabilities)")
    lm = lm_from_meta(gen.meta) if needs_lm else None
    return decision.keys_document(gen, keys, fpr=fpr, dedup=args.dedup, input=str(args.file), gamma=args.gamma, lm=lm, algo=algo)


def _table(doc: dict) -> None:
    col = "green" if doc["statistic"] == "green count" else "score"
    print(f"# {doc['input']}: scheme {doc['scheme']}, algo {doc['algo']}, gamma {doc['gamma']}, h {doc['h']}, dedup {doc['dedup']}, fpr {doc['fpr']:g}")
    norm = doc.get("normalization")
    if norm is not None:
        print("# unicode normalisation off (--no-normalize)" if not norm["applied"] else
              f"# unicode normalisation: {norm['characters_changed']} characters changed (zero-width removed {norm['zero_width']}, "
              f"NFKC {norm['nfkc']}, homoglyphs {norm['homoglyph']})")
    print(f"{'text':>5} {'tokens':>6} {'scored':>6} {col:>9} {'z':>7} {'log10_p':>8} {'to_detect':>9}  {'watermarked':<11} decision")
    for r in doc["texts"]:
        z = "n/a" if r["z"] is None else f"{r['z']:.2f}"
        ttd = "-" if r["tokens_to_detect"] is None else str(r["tokens_to_detect"])
        yes = "yes" if r["watermarked"] else "no"
        print(f"{r['index']:5d} {r['n_tokens']:6d} {r['n_scored']:6d} {r['score']:9.2f} {z:>7} {r['log10_p']:8.2f} {ttd:>9}  {yes:<11} {r['decision']}")


def _keys(args) -> list[int]:
    """``--key`` (one key or K1,K2,...) and the keys of ``--key-file``."""
    raw = [] if args.key is None else args.key.split(",")
    if args.key_file is not None:
        if not args.key_file.is_file():
            raise ValueError(f"--key-file must be an existing file; got {str(args.key_file)!r}")
        raw += [ln.strip() for ln in args.key_file.read_text(encoding="utf-8").splitlines() if ln.strip() and not ln.startswith("#")]
    if not raw:
        raise ValueError("give --key K (or K1,K2,...) or --key-file FILE")
    keys = [int_in("key", k.strip(), 0, 2**64) for k in raw]
    if len(set(keys)) != len(keys):
        raise ValueError(f"keys must be distinct; got {len(keys) - len(set(keys))} repeated")
    return keys


def _print_rows(doc: dict, cols: list[tuple[str, str, int]]) -> None:
    print(" ".join(f"{name:>{w}}" for name, _, w in cols))
    for r in doc["texts"]:
        print(" ".join(f"{'-' if r[f] is None else (f'{r[f]:.2f}' if isinstance(r[f], float) else r[f]):>{w}}" for _, f, w in cols))


def run(args) -> int:
    """Detect the watermark of ``--key`` in each text and print a decision per text.

    One key on an ``.npz``: the algorithm's detector family (or ``--score``'s family) at ``--fpr``; one key
    on ``--text``: the scheme's red-green marks (SynthID's g-values for ``transformers-synthid``), scored
    with the exact null; ``--sequential`` or several keys go to :mod:`sims.cli.detect_anytime`.  Prints a
    table, or with ``--json`` the document; ``--html`` also writes the coloured report.

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
        On bad input (the exit status is then 2, :func:`sims.cli.main.main`): neither or both of ``FILE.npz``
        and ``--text``, no key, repeated keys, ``--fpr`` outside (0, 1), ``--score`` or ``--stat`` with
        ``--text``, ``--sequential`` with several keys, an ``--html`` that cannot be written, or options that
        do not match the file.
    """
    from sims.detect.documents.html import render
    from sims.detect.stats.marks import check_fpr

    if args.scheme == "transformers-synthid":  # its keys: K1,K2,.. as one argument (sims.torch_backend.synthid_transformers)
        keys, key = [args.key], args.key
    else:
        keys = _keys(args)
        key = keys[0]
    try:
        fpr = check_fpr(float(args.fpr))
    except ValueError:
        raise ValueError(f"fpr must be in (0, 1); got {args.fpr!r}") from None
    if (args.file is None) == (args.text is None):
        raise ValueError("give either FILE.npz or --text FILE.txt|FILE.jsonl|- (exactly one)")
    if args.score is not None and args.text is not None:
        raise ValueError(f"--score {args.score!r} scores an .npz written by `python -m sims generate`; --text is scored by its --scheme's own statistic")
    if args.stat is not None and (args.text is not None or args.sequential or len(keys) > 1):
        raise ValueError("--stat chooses the score of a tournament algorithm's FILE.npz (one key, not --sequential)")
    writable_file("html", args.html)
    if args.sequential and len(keys) > 1:
        raise ValueError("--sequential tests one key; give one --key")
    if args.sequential or len(keys) > 1:  # sims.cli.detect_anytime: --text and --html too
        from sims.cli import detect_anytime

        if args.text is not None:
            (doc, marked), ids = detect_anytime.text_anytime(args, keys, fpr), False
        else:
            doc = _sequential(args, key, fpr) if args.sequential else _many_keys(args, keys, fpr)
            if args.html is not None:
                gen, algo = _load_npz(args)
                marked, ids = detect_anytime.npz_html(args, gen, algo, keys, fpr)
        if args.html is not None:
            args.html.write_text(render(dict(doc, fpr=fpr), marked, ids=ids), encoding="utf-8")
        if args.json:
            print(json.dumps(doc))
            return 0
        print(f"# {doc['input']}: algo {doc['algo']}, dedup {doc['dedup']}, " + (f"alpha {doc['alpha']:g} (anytime-valid)" if args.sequential
              else f"{len(keys)} keys, family-wise error {doc['fwer']:g} (Holm)"))
        if args.sequential:
            _print_rows(doc, [("text", "index", 5), ("tokens", "n_tokens", 6), ("scored", "n_scored", 6), ("log10_e", "log10_e", 8),
                              ("first_flagged", "first_flagged", 13), ("decision", "decision", 16)])
        else:
            _print_rows(doc, [("text", "index", 5), ("tokens", "n_tokens", 6), ("best_key", "best_key", 20), ("log10_p", "log10_p", 8),
                              ("holm_log10_p", "holm_log10_p", 12), ("marked_by", "marked_by", 24)])
        return 0
    if args.text is not None:
        (doc, marked), ids = _score_text(args, key, fpr), False
    else:
        doc, marked, ids = _score_npz(args, key, fpr, args.html is not None)
    if args.html is not None:
        args.html.write_text(render(doc, marked, ids=ids), encoding="utf-8")
    if args.json:
        print(json.dumps(doc))
    else:
        _table(doc)
    return 0
