"""Seeded outputs of every algorithm and every detector, hashed, to check that a refactoring changes no number.

Generates a few short texts with each registered algorithm on the ``news`` preset, scores them with
every detector the package has (the default score, every registered score family, the anytime-valid
e-processes, many keys, the streaming detector, prefix curves) and runs ``python -m sims detect`` on
an ``.npz`` (table, JSON, ``--dedup``, ``--sequential``, several keys, ``--score``, ``--html``) and on
raw text (``--text`` through a word-level tokenizer folder, where ``transformers`` is installed).
Each output becomes a SHA-256 of its arrays' dtype, shape and bytes (or of its text), keyed by what
produced it::

    python -m bench.identity_check --save before.json     # on the unchanged code
    python -m bench.identity_check --compare before.json  # after a change: every entry identical

``--compare`` prints the entries that differ, appear or disappear and exits 1 if there is any.
An entry whose producer raised records the exception's type and message (so a refusal is checked too).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import hashlib
import io
import json
import pathlib
import sys
import tempfile

import numpy as np

N, T, SEED, KEY = 3, 64, 0, 7
NOT_OUTPUTS = ("fpr",)  # a result's field that is an input echoed (the decision's level), not hashed


def digest(obj) -> str:
    """SHA-256 of an array, a dataclass of arrays, a string or a nested list / dict of them."""
    h = hashlib.sha256()

    def feed(x):
        if dataclasses.is_dataclass(x) and not isinstance(x, type):  # its values in field order, not the names (a rename is no change)
            for f in dataclasses.fields(x):
                if f.name not in NOT_OUTPUTS:
                    feed(getattr(x, f.name))
        elif isinstance(x, np.ndarray):
            h.update(f"{x.dtype}{x.shape}".encode())
            h.update(np.ascontiguousarray(x).tobytes())
        elif isinstance(x, dict):
            for k in sorted(x, key=str):
                h.update(repr(k).encode())
                feed(x[k])
        elif isinstance(x, (list, tuple)):
            h.update(f"seq{len(x)}".encode())
            for v in x:
                feed(v)
        elif isinstance(x, (float, np.floating)):
            h.update(np.float64(x).tobytes())
        else:
            h.update(repr(x).encode())

    feed(obj)
    return h.hexdigest()


def record(out: dict, name: str, fn):
    """``out[name]`` = the digest of ``fn()``, or the exception it raised."""
    try:
        out[name] = digest(fn())
    except Exception as exc:  # noqa: BLE001 (a refusal is an output too)
        out[name] = f"raised {type(exc).__name__}: {exc}"


def cli(argv: list[str]) -> str:
    """stdout, stderr and exit status of ``python -m sims`` with ``argv``."""
    from sims.cli.main import main

    so, se = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(so), contextlib.redirect_stderr(se):
        try:
            rc = main(argv)
        except SystemExit as exc:
            rc = exc.code
    return f"rc={rc}\n{so.getvalue()}\n--stderr--\n{se.getvalue()}"


def tokenizer_folder(d: pathlib.Path, V: int) -> pathlib.Path | None:
    """A folder holding a word-level tokenizer whose words ``w0 .. w{V-1}`` are their ids (and a config, no weights), or None without transformers."""
    try:
        from tokenizers import Tokenizer, models, pre_tokenizers
        from transformers import LlamaConfig, PreTrainedTokenizerFast
    except ImportError:
        return None
    LlamaConfig(vocab_size=V, hidden_size=8, intermediate_size=8, num_hidden_layers=1, num_attention_heads=1).save_pretrained(d)
    tk = Tokenizer(models.WordLevel({f"w{i}": i for i in range(V)}, unk_token="w0"))
    tk.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    PreTrainedTokenizerFast(tokenizer_object=tk).save_pretrained(d)
    return d


def outputs() -> dict:
    import sims
    from sims.detect.documents import detect_json
    from sims.detect.stats import scores

    try:  # the score families' table (sims.detect.families.score_families), or the registry that held it before
        from sims.detect.families.score_families import get_score, score_names
    except ImportError:
        from sims.watermarks.registry import get_score, score_names
    try:  # the dispatchers' home (sims.detect.families.detectors), or the modules that held them before it
        from sims.detect.families.detectors import score, score_keys, sequential_score
    except ImportError:
        from sims.detect.anytime.sequential import sequential_score
        from sims.detect.multiple import score_keys
        from sims.detect.stats.scores import score
    from sims.detect.families.score_families import score_generation
    from sims.detect.families.sequential_scores import SEQUENTIAL_SCORES, sequential_score_family
    from sims.detect.families.stream import SequentialDetector
    from sims.watermarks import registry

    out: dict = {}
    lm = sims.get_lm("news")
    gens = {}
    for algo in registry.names():
        gen = sims.generate(lm, algo, n=N, T=T, seed=SEED, key=KEY)
        gens[algo] = gen
        out[f"generate/{algo}"] = digest([gen.tokens, gen.prompts, gen.lengths, json.dumps(gen.meta, sort_keys=True, default=str)])
    for algo, gen in gens.items():
        for dedup in (False, True):
            record(out, f"score/{algo}/dedup={dedup}", lambda: score(gen, lm, dedup=dedup))
            record(out, f"score-none-as/{algo}/dedup={dedup}", lambda: score(gens["none"], lm, dedup=dedup, algo=algo))
            record(out, f"score-otherkey/{algo}/dedup={dedup}", lambda: score(gen, lm, dedup=dedup, key=KEY + 1))
            for name in score_names(algo):
                record(out, f"family/{name}/{algo}/dedup={dedup}", lambda: score_generation(gen, name, lm, dedup=dedup))
            record(out, f"sequential/{algo}/dedup={dedup}", lambda: sequential_score(gen, lm, alpha=1e-2, dedup=dedup))
            record(out, f"keys/{algo}/dedup={dedup}", lambda: score_keys(gen, [KEY - 1, KEY, KEY + 1], lm, dedup=dedup))
            for name in SEQUENTIAL_SCORES:
                if algo in get_score(name).algos:
                    record(out, f"sequential-family/{name}/{algo}/dedup={dedup}",
                           lambda: sequential_score_family(gen, name, alpha=1e-2, dedup=dedup))
        if algo == "synthid":
            record(out, f"score/{algo}/weighted", lambda: score(gen, lm, stat="weighted"))
        for stat in ("green", "ems"):
            record(out, f"prefix/{algo}/{stat}", lambda: scores.prefix_log10p(gen.tokens, gen.prompts[:, -1:], KEY, stat=stat,
                                                                              gamma=gen.meta["gamma"] if stat == "green" else None,
                                                                              vocab_size=gen.meta["vocab_size"], dedup=True))
        record(out, f"windowed/{algo}", lambda: scores.windowed_log10p(gen.tokens, gen.prompts[:, -1:], KEY, gen.meta["gamma"], window=16,
                                                                       vocab_size=gen.meta["vocab_size"]))

        def stream():
            m = gen.meta
            det = SequentialDetector(KEY, algo=algo, context=gen.prompts[0], gamma=m.get("gamma"), vocab_size=m["vocab_size"], alpha=1e-2)
            seq = np.concatenate([gen.prompts[0], gen.tokens[0]])
            probs = lm.probs_along(seq, gen.prompts.shape[1], T)
            states = []
            for c in range(0, T, 16):
                keyed = registry.get(algo).family == "keyed"
                states.append(dataclasses.astuple(det.update(gen.tokens[0, c:c + 16], probs[c:c + 16] if keyed else None)))
            return states

        record(out, f"stream/{algo}", stream)
        res = score(gen, lm) if registry.get(algo).family != "keyed" else None
        if res is not None:
            record(out, f"report/decide/{algo}", lambda: detect_json.decide(res, 1e-2, gen.meta["gamma"]))

    from sims.detect.stats import local_scores, lr_scores

    for algo, gen in gens.items():
        record(out, f"lr_delta/{algo}", lambda: lr_scores.lr_delta(gen.meta))
        record(out, f"local_rho/{algo}", lambda: local_scores.local_rho(gen.meta))

    with tempfile.TemporaryDirectory() as d:
        d = pathlib.Path(d)
        for algo in ("srl", "dualga", "autocov", "ems", "its", "synthid", "none"):
            f = d / f"{algo}.npz"
            gens[algo].save(f)
            base = ["detect", str(f), "--key", str(KEY)]
            for extra in ([], ["--json"], ["--json", "--dedup"], ["--json", "--fpr", "0.01"], ["--json", "--sequential", "--dedup"],
                          ["--json", "--key", f"{KEY - 1},{KEY},{KEY + 1}"]):
                out[f"cli/{algo}/{' '.join(extra)}"] = digest(cli(base + extra).replace(str(d), "DIR"))
            for name in score_names(algo):
                out[f"cli/{algo}/--score {name}"] = digest(cli(base + ["--json", "--score", name]).replace(str(d), "DIR"))
        for name, kw in (("siphash", dict(prf="siphash")), ("minhash", dict(seeding="minhash", h=3))):  # the green lists' other keyings
            f = d / f"srl-{name}.npz"
            sims.generate(lm, "srl", n=N, T=T, seed=SEED, key=KEY, **kw).save(f)
            for extra in (["--json"], ["--json", "--dedup"]):
                out[f"cli/srl-{name}/{' '.join(extra)}"] = digest(cli(["detect", str(f), "--key", str(KEY), *extra]).replace(str(d), "DIR"))
        html = d / "r.html"
        text = cli(["detect", str(d / "srl.npz"), "--key", str(KEY), "--dedup", "--html", str(html)]) + html.read_text()
        out["cli/srl/--html"] = digest(text.replace(str(d), "DIR"))
        folder = tokenizer_folder(d / "tok", lm.vocab_size)
        if folder is not None:  # the SRL texts (and one unwatermarked) as words, their last prompt token the context
            txt = d / "t.jsonl"
            rows = [np.concatenate([g.prompts[i, -1:], g.tokens[i]]) for g in (gens["srl"], gens["none"]) for i in range(2)]
            txt.write_text("".join(json.dumps({"text": " ".join(f"w{i}" for i in r)}) + "\n" for r in rows))
            for extra in ([], ["--dedup"], ["--seeding", "minhash", "--h", "3"], ["--sequential", "--dedup"], ["--key", "5,6,7"]):
                out[f"cli-text/{' '.join(extra)}"] = digest(cli(["detect", "--text", str(txt), "--lm", str(folder), "--key", "7", "--json", *extra])
                                                            .replace(str(d), "DIR"))
            text = cli(["detect", "--text", str(txt), "--lm", str(folder), "--key", "7", "--html", str(html)]) + html.read_text()
            out["cli-text/--html"] = digest(text.replace(str(d), "DIR"))
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--save", type=pathlib.Path)
    g.add_argument("--compare", type=pathlib.Path)
    args = p.parse_args(argv)
    out = outputs()
    if args.save:
        args.save.write_text(json.dumps(out, indent=1, sort_keys=True))
        print(f"{len(out)} outputs saved to {args.save}")
        return 0
    before = json.loads(args.compare.read_text())
    bad = [k for k in sorted(set(before) | set(out)) if before.get(k) != out.get(k)]
    for k in bad:
        print(f"DIFFERS {k}: {before.get(k, '(absent)')[:120]} -> {out.get(k, '(absent)')[:120]}")
    print(f"{len(out)} outputs, {len(before)} before: {len(bad)} differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
