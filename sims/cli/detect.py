"""``python -m sims detect``: was this text watermarked with my key?  A decision per text.

Two inputs::

    python -m sims detect FILE.npz --key K [--dedup] [--fpr 1e-4] [--json] [--html OUT.html]
    python -m sims detect --text FILE.txt|FILE.jsonl|- --lm smollm2|PATH --key K
           [--scheme wmstats|transformers-lefthash] [--gamma G] [--h H] [--dedup] [--json] [--html OUT.html]

``FILE.npz``: texts written by ``python -m sims generate`` / ``attack`` (any algorithm).
``--text``: raw text, tokenised with the tokenizer of ``--lm`` (no special tokens added); a
``.jsonl`` file holds one ``{"text": ...}`` object per line, any other file is ONE text
(blank lines included), ``-`` reads one text from stdin.  The first ``h`` tokens of a raw
text are its context (not scored).  Schemes: ``wmstats`` (the package's green lists: SRL,
DualGA, ATW, hard; ``--gamma``, ``--h``), ``transformers-lefthash`` (transformers'
``WatermarkLogitsProcessor`` with ``seeding_scheme="lefthash"``: ``--key`` is its
``hashing_key``, ``--gamma`` its ``greenlist_ratio``, ``--h`` its ``context_width``, ``--dedup``
its detector's ``ignore_repeated_ngrams``), scored with the exact binomial p-value where
transformers' ``WatermarkDetector`` uses a normal approximation.

Output: a table, or with ``--json`` the document of :mod:`sims.detect.report` (schema
``wmstats.detect`` version 1, stable); ``--html`` also writes the coloured report
(:mod:`sims.detect.report_html`, red-green schemes).  Bad input: one line on stderr, exit 2.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys

import numpy as np

from sims.core import defaults

HELP = "was this text watermarked? a decision per text at a false-positive rate, from an .npz or raw text"
SCHEMES = ("wmstats", "transformers-lefthash")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", nargs="?", type=pathlib.Path, help="a .npz written by `python -m sims generate` (or use --text)")
    p.add_argument("--text", default=None, help="raw text: FILE.txt (one text), FILE.jsonl (one {\"text\": ...} per line) or - (stdin)")
    p.add_argument("--lm", default=None, help="with --text: whose tokenizer, 'smollm2' or a local transformers folder")
    p.add_argument("--scheme", default="wmstats", help=f"with --text: one of {', '.join(SCHEMES)} (default wmstats)")
    p.add_argument("--key", required=True, help="detection key in [0, 2**64) (transformers-lefthash: its hashing_key)")
    p.add_argument("--gamma", type=float, default=None, help=f"green-list ratio (.npz: must equal the file's; --text: default {defaults.GAMMA})")
    p.add_argument("--h", type=int, default=None, help=f"with --text: context width (default {defaults.H})")
    p.add_argument("--vocab-size", type=int, default=None, help=".npz: detector's vocabulary size; must equal the file's")
    p.add_argument("--algo", default=None, help=".npz: detector to use (default: the file's algorithm)")
    p.add_argument("--dedup", action="store_true", help="score each (context, token) pair once")
    p.add_argument("--score", default=None, help=".npz: a score family of sims.detect.score_families (e.g. lr, ems-opt, ems-trgof)")
    p.add_argument("--fpr", default=str(defaults.FPR), help=f"false-positive rate of the decision, in (0, 1) (default {defaults.FPR:g})")
    p.add_argument("--json", action="store_true", help="the JSON document (schema wmstats.detect/1) instead of a table")
    p.add_argument("--html", type=pathlib.Path, default=None, help="also write a coloured HTML report here")


def _int_in(name: str, value: str, lo: int, hi: int) -> int:
    try:
        v = int(value)
    except ValueError:
        v = None
    if v is None or not lo <= v < hi:
        raise ValueError(f"{name} must be an integer in [{lo}, {'2**64' if hi == 2**64 else hi}); got {value!r}")
    return v


def read_texts(source: str) -> list[str]:
    """Texts of ``--text``: ``-`` (stdin, one text), ``.jsonl`` (one ``{"text": ...}`` per line), else one text per file."""
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
            if not texts:
                raise ValueError(f"--text {source}: no texts (expected one {{\"text\": ...}} per line)")
    for i, t in enumerate(texts):
        if not t.strip():
            raise ValueError(f"--text {source}: text {i} is empty")
    return texts


def _padded(rows: list[np.ndarray], start: int) -> np.ndarray:
    T = max([0, *(len(r) - start for r in rows)])
    out = np.full((len(rows), T), -1, dtype=np.int64)
    for i, r in enumerate(rows):
        out[i, : max(0, len(r) - start)] = r[start:]
    return out


def _score_text(args, key: int, fpr: float):
    """Document and marked texts of ``--text``."""
    from sims.detect import report, scores
    from sims.detect.report_html import MarkedText
    from sims.torch_backend.detect_text import lefthash_marks, lm_vocab_size, tokenize
    from sims.torch_backend.model import load_tokenizer

    if args.scheme not in SCHEMES:
        raise ValueError(f"scheme must be one of {SCHEMES}; got {args.scheme!r}")
    if args.lm is None:
        raise ValueError("--lm is required with --text (its tokenizer turns the text into tokens): 'smollm2' or a model folder")
    gamma = defaults.GAMMA if args.gamma is None else args.gamma
    if not 0.0 < gamma < 1.0:
        raise ValueError(f"gamma must be in (0, 1); got {gamma!r}")
    h = defaults.H if args.h is None else args.h
    if h < 1:
        raise ValueError(f"h must be an integer in [1, inf); got {h!r}")
    texts = read_texts(args.text)
    tok = load_tokenizer(args.lm)
    if tok is None:
        raise ValueError(f"lm {args.lm!r} has no tokenizer (a random test model): --text needs 'smollm2' or a model folder with one")
    rows, pieces = tokenize(texts, tok)
    lefthash = args.scheme == "transformers-lefthash"
    V = lm_vocab_size(args.lm, tok) if lefthash else len(tok)
    hi = max(int(r.max()) for r in rows if r.size)
    if hi >= V:
        raise ValueError(f"token ids must be below the LM's vocab_size {V} (tokenizer and model disagree); got {hi}")
    lengths = np.array([max(0, len(r) - h) for r in rows])
    if lefthash:
        green, scored = lefthash_marks(rows, V, gamma, key, h, dedup=args.dedup)
        g_eff = int(V * gamma) / V
    else:
        tokens = _padded(rows, h)
        prompts = np.stack([np.pad(r[:h], (h - min(h, len(r)), 0)) for r in rows])  # a text of <= h tokens has nothing to score
        kw = dict(stat="green", gamma=gamma, h=h, vocab_size=V, lengths=lengths)
        g_all, _ = scores.token_scores(tokens, prompts, key, **kw)
        _, scored = scores.token_scores(tokens, prompts, key, dedup=args.dedup, **kw)
        green = g_all > 0.5
        g_eff = report.null_green_probability(gamma, "bernoulli", V)
    res, prefix = report.redgreen_from_marks(green, scored, lengths, g_eff)
    text_rows = report.text_rows(res, fpr, n_tokens=lengths, prefix_log10p=prefix, gamma=g_eff)
    doc = report.document(text_rows, input=args.text, scheme=args.scheme, algo="redgreen", statistic=report.STATISTICS["redgreen"],
                          key=key, gamma=gamma, h=h, dedup=args.dedup, vocab_size=V, fpr=fpr, lm=args.lm)
    marked = [MarkedText(text_rows[i], pieces[i][:h], pieces[i][h:], green[i, : lengths[i]], scored[i, : lengths[i]], prefix[i, : lengths[i]])
              for i in range(len(rows))]
    return doc, marked


def _score_npz(args, key: int, fpr: float, want_marks: bool):
    """Document and marked texts of an .npz of generations."""
    from sims.cli.lms import is_synthetic
    from sims.core.record import Generation
    from sims.detect import report, scores
    from sims.detect.report_html import MarkedText, id_pieces
    from sims.lm.synthetic import lm_from_meta

    if args.text is not None:
        raise ValueError("give either FILE.npz or --text, not both")
    for name in ("lm", "h"):
        if getattr(args, name) is not None:
            raise ValueError(f"--{name} applies to --text only (an .npz carries its own)")
    if args.scheme != "wmstats":
        raise ValueError(f"scheme must be 'wmstats' for an .npz of this package's generations; got {args.scheme!r}")
    gen = Generation.load(args.file)
    m = gen.meta
    if args.vocab_size is not None and args.vocab_size != m["vocab_size"]:
        raise ValueError(f"--vocab-size must equal the generation's vocab_size {m['vocab_size']} (vocabulary mismatch); got {args.vocab_size}")
    algo = args.algo or m["algo"]
    if args.score is not None:  # issue 31: the families of sims.detect.score_families
        from sims.detect.score_families import score_generation

        res = score_generation(gen, args.score, key=key, gamma=args.gamma, dedup=args.dedup, algo=algo)
    elif is_synthetic(m["lm"]):
        lm = lm_from_meta(m) if algo in scores.KEYED_ORDER_ALGOS else None
        res = scores.score(gen, lm, dedup=args.dedup, key=key, gamma=args.gamma, algo=algo)
    else:  # a real LM's texts: ITS / UW read its teacher-forced probabilities
        from sims.torch_backend.real_lm import score as score_real

        res = score_real(gen, dedup=args.dedup, key=key, gamma=args.gamma, algo=algo)
    gamma = m["gamma"] if args.gamma is None else args.gamma
    kind = m.get("green_kind", defaults.GREEN_KIND)
    kw = dict(h=m["h"], vocab_size=m["vocab_size"], lengths=gen.lengths)
    redgreen = algo in scores.REDGREEN_ALGOS
    family = "redgreen" if redgreen else ("keyed" if algo in scores.KEYED_ORDER_ALGOS else algo)
    prefix, g_eff = None, None
    if (redgreen or algo == "ems") and args.score is None:
        stat = "green" if redgreen else "ems"
        prefix = scores.prefix_log10p(gen.tokens, gen.prompts[:, -m["h"]:], key, stat=stat, gamma=gamma if redgreen else None, green_kind=kind,
                                      dedup=args.dedup, **kw)
    pad = gen.tokens < 0
    n_tokens = np.where(pad.any(axis=1), pad.argmax(axis=1), gen.tokens.shape[1])
    if gen.lengths is not None:
        n_tokens = np.minimum(n_tokens, gen.lengths)
    if redgreen:
        g_eff = report.null_green_probability(gamma, kind, m["vocab_size"])
    text_rows = report.text_rows(res, fpr, n_tokens=n_tokens, prefix_log10p=prefix, gamma=g_eff)
    doc = report.document(text_rows, input=str(args.file), scheme="wmstats", algo=algo, statistic=args.score or report.STATISTICS[family], key=key,
                          gamma=gamma, h=m["h"], dedup=args.dedup, vocab_size=m["vocab_size"], fpr=fpr)
    if not want_marks:
        return doc, None
    if not redgreen:
        raise ValueError(f"--html colours red-green detections (algo one of {scores.REDGREEN_ALGOS}); got algo {algo!r}")
    green = scores.token_scores(gen.tokens, gen.prompts[:, -m["h"]:], key, gamma=gamma, green_kind=kind, **kw)[0] > 0.5
    scored = scores.token_scores(gen.tokens, gen.prompts[:, -m["h"]:], key, gamma=gamma, green_kind=kind, dedup=args.dedup, **kw)[1]
    marked = []
    for i, r in enumerate(text_rows):
        L = r["n_tokens"]
        marked.append(MarkedText(r, id_pieces(gen.prompts[i][gen.prompts[i] >= 0]), id_pieces(gen.tokens[i, :L]), green[i, :L], scored[i, :L], prefix[i, :L]))
    return doc, marked


def _table(doc: dict) -> None:
    col = "green" if doc["statistic"] == "green count" else "score"
    print(f"# {doc['input']}: scheme {doc['scheme']}, algo {doc['algo']}, gamma {doc['gamma']}, h {doc['h']}, dedup {doc['dedup']}, fpr {doc['fpr']:g}")
    print(f"{'text':>5} {'tokens':>6} {'scored':>6} {col:>9} {'z':>7} {'log10_p':>8} {'to_detect':>9}  {'watermarked':<11} decision")
    for r in doc["texts"]:
        z = "n/a" if r["z"] is None else f"{r['z']:.2f}"
        ttd = "-" if r["tokens_to_detect"] is None else str(r["tokens_to_detect"])
        yes = "yes" if r["watermarked"] else "no"
        print(f"{r['index']:5d} {r['n_tokens']:6d} {r['n_scored']:6d} {r['score']:9.2f} {z:>7} {r['log10_p']:8.2f} {ttd:>9}  {yes:<11} {r['decision']}")


def run(args) -> int:
    from sims.detect.report import check_fpr
    from sims.detect.report_html import render

    key = _int_in("key", args.key, 0, 2**64)
    try:
        fpr = check_fpr(float(args.fpr))
    except ValueError:
        raise ValueError(f"fpr must be in (0, 1); got {args.fpr!r}") from None
    if (args.file is None) == (args.text is None):
        raise ValueError("give either FILE.npz or --text FILE.txt|FILE.jsonl|- (exactly one)")
    if args.text is not None:
        doc, marked = _score_text(args, key, fpr)
    else:
        doc, marked = _score_npz(args, key, fpr, args.html is not None)
    if args.html is not None:
        args.html.write_text(render(doc, marked, ids=args.text is None), encoding="utf-8")
    if args.json:
        print(json.dumps(doc))
    else:
        _table(doc)
    return 0
