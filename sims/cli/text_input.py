"""The raw texts of ``sims detect --text`` read, tokenised and coloured, and display pieces of token ids.

Shared by :mod:`sims.cli.detect` (one key, fixed length) and :mod:`sims.cli.detect_anytime`
(``--sequential``, several keys).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys

import numpy as np

from sims.core import defaults
from sims.core import seeding as seeding_mod

#: The schemes ``sims detect --text`` scores: the package's green lists, and transformers' lefthash, SynthID and selfhash
#: watermarks.
SCHEMES = ("wmstats", "transformers-lefthash", "transformers-synthid", "transformers-selfhash")


def read_texts(source: str, generated: list | None = None) -> list[str]:
    """Texts of ``--text``: ``-`` (stdin, one text), ``.jsonl`` (one ``{"text": ...}`` per line), else one text per file.

    Parameters
    ----------
    source : str
        ``-``, a ``.jsonl`` file or any other text file (read as UTF-8).
    generated : list or None, optional
        If a list, receives each JSONL text's ``"ids"`` field (the token ids an LM generated, as ``sims
        show --jsonl`` writes them), or None where a line has none.

    Returns
    -------
    list of str
        The texts, none empty.

    Raises
    ------
    ValueError
        If the file does not exist or is not UTF-8, a JSONL line is not an object with a string ``text``,
        a JSONL file holds no text, or a text is blank.
    """
    generated = [] if generated is None else generated
    if source == "-":
        texts = [sys.stdin.read()]
    else:
        path = pathlib.Path(source)
        if not path.is_file():
            raise ValueError(f"--text must be an existing file or -; got {source!r}")
        try:
            raw = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise ValueError(f"--text {source}: not UTF-8 text") from None
        if path.suffix != ".jsonl":
            texts = [raw]
        else:
            texts = []
            for i, line in enumerate(raw.splitlines(), 1):
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise ValueError(f"--text {source} line {i}: not JSON ({exc.msg})") from None
                if not isinstance(obj, dict) or not isinstance(obj.get("text"), str):
                    raise ValueError(f"--text {source} line {i}: expected an object {{\"text\": \"...\"}}")
                texts.append(obj["text"])
                generated.append(obj.get("ids"))
            if not texts:
                raise ValueError(f"--text {source}: no texts (expected one {{\"text\": ...}} per line)")
    for i, t in enumerate(texts):
        if not t.strip():
            raise ValueError(f"--text {source}: text {i} is empty")
    return texts


def retokenization_note(rows: list[np.ndarray], generated: list) -> str | None:
    """One line saying how many tokens of each text re-encoded to other ids than the LM generated.

    Decoded text need not re-encode to the sampled ids: a tokenizer merges or splits pieces its own way.

    Parameters
    ----------
    rows : list of numpy.ndarray
        The re-encoded token ids of each text.
    generated : list
        The ids each text was generated with (:func:`read_texts`), or None for a text without them.

    Returns
    -------
    str or None
        The note (at most three texts named), or None when every text with ids re-encoded to them exactly.
    """
    import difflib

    diffs = []
    for i, (row, ids) in enumerate(zip(rows, generated)):
        if ids is None:
            continue
        same = sum(b.size for b in difflib.SequenceMatcher(None, list(map(int, row)), list(map(int, ids)), autojunk=False).get_matching_blocks())
        if same != len(row) or same != len(ids):
            diffs.append(f"text {i}: {len(ids)} generated ids -> {len(row)} re-encoded, {max(len(row), len(ids)) - same} differ")
    if not diffs:
        return None
    return (f"note: {len(diffs)} of {sum(g is not None for g in generated)} texts re-encode to other token ids than the LM generated "
            f"({'; '.join(diffs[:3])}{'; ...' if len(diffs) > 3 else ''}); the counts below are of the re-encoded ids")


def text_input(args) -> argparse.Namespace:
    """The texts of ``--text`` normalised and tokenised with the tokenizer of ``--lm``.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed options of ``sims detect`` (``text``, ``lm``, ``scheme``, ``gamma``, ``h``, ``seeding``,
        ``normalize``); ``args.normalization`` is set (:func:`normalized`).

    Returns
    -------
    argparse.Namespace
        ``rows`` (token ids per text), ``pieces`` (their display pieces), ``lengths`` (scored tokens per
        text), ``V`` (the vocabulary size), ``gamma``, ``h`` and ``c`` (context tokens per text: ``h``, or
        ``h - 1`` for transformers' selfhash).

    Raises
    ------
    ValueError
        If the scheme is unknown, ``--lm`` is missing or has no tokenizer, gamma is outside (0, 1), ``h`` is
        too small for the scheme, ``--seeding`` is given with a transformers scheme, or the texts cannot be
        read (:func:`read_texts`).
    """
    from sims.lm.real.model import load_tokenizer
    from sims.torch_backend.detect_text import lm_vocab_size, tokenize

    if args.scheme not in SCHEMES:
        raise ValueError(f"scheme must be one of {SCHEMES}; got {args.scheme!r}")
    if args.lm is None:
        raise ValueError("--lm is required with --text (its tokenizer turns the text into tokens): 'smollm2' or a model folder")
    gamma = defaults.GAMMA if args.gamma is None else args.gamma
    if not 0.0 < gamma < 1.0:
        raise ValueError(f"gamma must be in (0, 1); got {gamma!r}")
    if getattr(args, "seeding", None) not in (None, "lefthash") and args.scheme != "wmstats":
        raise ValueError(f"--seeding seeds the package's green lists (--scheme wmstats); got --scheme {args.scheme!r} --seeding {args.seeding!r}")
    h = defaults.H if args.h is None else args.h
    if h < (0 if args.scheme == "wmstats" else 1):  # h = 0 (Unigram's one green list): the package's own lists
        raise ValueError(f"h must be an integer in [{0 if args.scheme == 'wmstats' else 1}, inf) for --scheme {args.scheme}; got {h!r}")
    generated: list = []
    texts = normalized(args, read_texts(args.text, generated))
    tok = load_tokenizer(args.lm)
    if tok is None:
        raise ValueError(f"lm {args.lm!r} has no tokenizer (a random test model): --text needs 'smollm2' or a model folder with one")
    rows, pieces = tokenize(texts, tok)
    note = retokenization_note(rows, generated)
    if note:
        print(note, file=sys.stderr)
    V = lm_vocab_size(args.lm, tok) if args.scheme in ("transformers-lefthash", "transformers-selfhash") else len(tok)
    c = h - 1 if args.scheme == "transformers-selfhash" else h  # selfhash's window ends at the scored token: h - 1 tokens of context
    return argparse.Namespace(rows=rows, pieces=pieces, lengths=np.array([max(0, len(r) - c) for r in rows]), V=V, gamma=gamma, h=h, c=c)

def marks_under_key(args, t, key: int):
    """Green and scored marks of the texts ``t`` under ``key``, and the null green probability.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed options of ``sims detect`` (``scheme``, ``dedup``, ``seeding``, ``lm``).
    t : argparse.Namespace
        The tokenised texts (:func:`text_input`).
    key : int
        The detection key.

    Returns
    -------
    green, scored : numpy.ndarray
        (n, T) boolean marks per token.
    g_eff : float
        The probability a token is green under the null (transformers' schemes: ``floor(V gamma) / V``).

    Raises
    ------
    ValueError
        If a token id is not below the vocabulary size (tokenizer and model disagree).
    """
    from sims.detect.documents.text_marks import redgreen_text_marks
    from sims.torch_backend.detect_text import lefthash_marks

    hi = max(int(r.max()) for r in t.rows if r.size)
    if hi >= t.V:
        raise ValueError(f"token ids must be below the LM's vocab_size {t.V} (tokenizer and model disagree); got {hi}")
    if args.scheme in ("transformers-lefthash", "transformers-selfhash"):
        from sims.torch_backend.selfhash_transformers import selfhash_marks

        marks = selfhash_marks if args.scheme == "transformers-selfhash" else lefthash_marks
        green, scored = marks(t.rows, t.V, t.gamma, key, t.h, dedup=args.dedup)
        return green, scored, int(t.V * t.gamma) / t.V
    seeding = getattr(args, "seeding", None) or "lefthash"
    if seeding == "semantic":  # a real LM's semantic lists are seeded by its own embedding clusters (LM.cluster_table)
        from sims.lm.door import get_lm

        seeding = seeding_mod.with_clusters(seeding, get_lm(args.lm).cluster_table())
    green, scored, _, g_eff = redgreen_text_marks(t.rows, key, gamma=t.gamma, h=t.h, vocab_size=t.V, dedup=args.dedup, seeding=seeding)
    return green, scored, g_eff


def normalized(args, texts: list[str]) -> list[str]:
    """``texts`` through :func:`sims.core.unicode_text.normalize_text` unless ``--no-normalize``.

    Zero-width removal, NFKC and the homoglyph map; what changed is kept in ``args.normalization`` for the
    document (``applied``, characters changed in all and by each pass, per text).

    Parameters
    ----------
    args : argparse.Namespace
        Parsed options (``normalize``); ``args.normalization`` is set.
    texts : list of str
        The texts read.

    Returns
    -------
    list of str
        The normalised texts (``texts`` itself with ``--no-normalize``).
    """
    if not getattr(args, "normalize", True):
        args.normalization = dict(applied=False)
        return texts
    from sims.core.unicode_text import normalize_text

    pairs = [normalize_text(t) for t in texts]
    counts = {k: sum(c[k] for _, c in pairs) for k in ("zero_width", "nfkc", "homoglyph", "total")}
    args.normalization = dict(applied=True, characters_changed=counts.pop("total"), **counts, per_text=[c["total"] for _, c in pairs])
    return [t for t, _ in pairs]


def text_fields(args) -> dict:
    """The document's fields of ``--text`` beyond the scores.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed options, after :func:`normalized`.

    Returns
    -------
    dict
        :func:`seeding_field` and ``normalization`` (whether the texts were normalised, characters changed in
        all and by each pass, per text) where it was recorded.
    """
    norm = getattr(args, "normalization", None)
    return {**seeding_field(args), **({} if norm is None else {"normalization": norm})}


def seeding_field(args) -> dict:
    """The document's ``seeding`` field of ``--text``.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed options (``seeding``).

    Returns
    -------
    dict
        ``{"seeding": scheme}`` where ``--seeding`` is other than lefthash, else empty.
    """
    seeding = getattr(args, "seeding", None)
    return {} if seeding in (None, "lefthash") else {"seeding": seeding}


def piece_maker(meta: dict):
    """A function from token ids to display pieces for the LM of a generation's ``meta``.

    Parameters
    ----------
    meta : dict
        A generation's meta.

    Returns
    -------
    make : callable
        Token ids -> display pieces: the words each token adds for an LM with a tokenizer
        (:func:`sims.torch_backend.detect_text.id_text_pieces`), else the ids
        (:func:`sims.detect.documents.html.id_pieces`).
    ids : bool
        Whether the pieces are ids.
    """
    from sims.detect.documents.html import id_pieces
    from sims.lm.door import lm_of

    tok = lm_of(meta).tokenizer
    if tok is None:
        return id_pieces, True
    from sims.torch_backend.detect_text import id_text_pieces

    return (lambda ids: id_text_pieces(ids, tok)), False
