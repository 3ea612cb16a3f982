"""``python -m sims detect --text``: raw text through an LM's tokenizer; transformers' own
lefthash watermark scored with its green counts and the exact binomial p-value."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from scipy.stats import binom  # noqa: E402

from sims.cli.main import main  # noqa: E402
from sims.lm.real.model import load, load_tokenizer  # noqa: E402
from sims.torch_backend.detect_text import detect_text  # noqa: E402

HKEY = 12345


@pytest.fixture(scope="module")
def tiny_folder(tmp_path_factory):
    """The random tiny Llama of ``load("random-llama")`` saved with a word-level tokenizer whose 512
    words ``w0 .. w511`` are its token ids (decode and re-encode round-trip exactly)."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    model, _ = load("random-llama")
    tk = Tokenizer(models.WordLevel({f"w{i}": i for i in range(512)}, unk_token="w0"))
    tk.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    d = tmp_path_factory.mktemp("tinylm")
    model.save_pretrained(d)
    PreTrainedTokenizerFast(tokenizer_object=tk).save_pretrained(d)
    return model, d


def transformers_texts(model, tok, cfg, n_new=50):
    """Two texts watermarked by transformers' WatermarkLogitsProcessor: the last
    ``context_width`` prompt tokens then ``n_new`` sampled tokens (seed 0), and their ids."""
    prompts = torch.tensor([[5, 17, 300, 41], [9, 250, 77, 13]])  # no BOS (id 1): WatermarkDetector would strip it
    torch.manual_seed(0)
    out = model.generate(prompts, watermarking_config=cfg, do_sample=True, max_new_tokens=n_new, min_new_tokens=n_new, pad_token_id=0)
    ids = out[:, prompts.shape[1] - cfg.context_width :]
    return [tok.decode(r) for r in ids], ids


def run_json(capsys, *argv) -> dict:
    rc = main(["detect", *map(str, argv), "--json"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    return json.loads(out)


@pytest.mark.parametrize("context_width,dedup", [(1, False), (1, True), (2, True)])
def test_transformers_lefthash_counts_and_exact_p(tiny_folder, tmp_path, capsys, context_width, dedup):
    """Green counts and scored tokens equal WatermarkDetector's; p is the exact binomial tail
    (scipy), not transformers' normal approximation."""
    from transformers import WatermarkDetector, WatermarkingConfig

    model, folder = tiny_folder
    tok = load_tokenizer(str(folder))
    cfg = WatermarkingConfig(greenlist_ratio=0.25, bias=2.0, hashing_key=HKEY, seeding_scheme="lefthash", context_width=context_width)
    texts, ids = transformers_texts(model, tok, cfg)
    src = tmp_path / "t.jsonl"
    src.write_text("".join(json.dumps({"text": t}) + "\n" for t in texts))
    argv = ["--text", src, "--lm", folder, "--key", HKEY, "--scheme", "transformers-lefthash", "--h", context_width] + (["--dedup"] if dedup else [])
    doc = run_json(capsys, *argv)
    theirs = WatermarkDetector(model_config=model.config, device="cpu", watermarking_config=cfg, ignore_repeated_ngrams=dedup)(ids, return_dict=True)
    rows = doc["texts"]
    assert [r["n_scored"] for r in rows] == list(theirs.num_tokens_scored)
    assert [r["score"] for r in rows] == list(theirs.num_green_tokens)
    for r in rows:
        exact = math.log10(binom.sf(r["score"] - 1, r["n_scored"], 0.25))
        assert r["log10_p"] == pytest.approx(exact, rel=1e-12, abs=1e-13)
        assert r["watermarked"] and r["n_tokens"] == 50
    # the same texts under another hashing key: the null
    argv[argv.index("--key") + 1] = HKEY + 1
    assert not any(r["watermarked"] for r in run_json(capsys, *argv)["texts"])


def test_wmstats_scheme_equals_detect_text(tiny_folder, tmp_path, capsys):
    """--scheme wmstats scores raw text as detect_text does (context = first h tokens), per text."""
    _, folder = tiny_folder
    tok = load_tokenizer(str(folder))
    rng = np.random.default_rng(0)
    texts = [" ".join(f"w{i}" for i in rng.integers(0, 512, size=n)) for n in (40, 5)]
    (tmp_path / "a.jsonl").write_text("".join(json.dumps({"text": t}) + "\n" for t in texts))
    for h, dedup in ((1, False), (2, True)):
        doc = run_json(capsys, "--text", tmp_path / "a.jsonl", "--lm", folder, "--key", 7, "--h", h, *(["--dedup"] if dedup else []))
        ref = detect_text(texts, tok, 7, 0.25, h=h, dedup=dedup)
        assert [r["score"] for r in doc["texts"]] == list(ref.score)
        assert [r["n_scored"] for r in doc["texts"]] == list(ref.n_scored)
        assert [r["log10_p"] for r in doc["texts"]] == list(ref.log10_p)
        assert doc["texts"][1]["decision"] == "too short for this fpr" and doc["scheme"] == "wmstats"


def test_html_of_raw_text_joins_back_to_the_text(tiny_folder, tmp_path, capsys):
    import html.parser

    _, folder = tiny_folder
    text = "w5 w17  w300\nw41 w9 w9 w9 w9"
    (tmp_path / "t.txt").write_text(text)
    main(["detect", "--text", str(tmp_path / "t.txt"), "--lm", str(folder), "--key", "3", "--dedup", "--html", str(tmp_path / "r.html")])
    capsys.readouterr()

    class Spans(html.parser.HTMLParser):
        def __init__(self):
            super().__init__()
            self.cls, self.pieces = None, []

        def handle_starttag(self, tag, attrs):
            self.cls = dict(attrs).get("class", "") if tag == "span" else None

        def handle_data(self, data):
            if self.cls and self.cls.startswith("tok"):
                self.pieces.append((self.cls, data))

        def handle_endtag(self, tag):
            self.cls = None

    p = Spans()
    page = (tmp_path / "r.html").read_text()
    p.feed(page[page.index('<section class="text"'):])  # past the legend
    assert "".join(d for _, d in p.pieces) == text
    assert p.pieces[0][0] == "tok ctx" and [c.startswith("tok dup") for c, _ in p.pieces].count(True) == 2  # (w9, w9) twice more


def test_bad_lm_inputs(tiny_folder, tmp_path, capsys):
    import shutil

    _, folder = tiny_folder
    small = tmp_path / "small"
    shutil.copytree(folder, small)
    cfg = json.loads((small / "config.json").read_text())
    (small / "config.json").write_text(json.dumps({**cfg, "vocab_size": 100}))  # a tokenizer bigger than the model
    (tmp_path / "t.txt").write_text("w5 w300 w7")
    for lm, msg in ((small, "token ids must be below the LM's vocab_size 100"), ("tiny", "lm must be 'smollm2', one of"),
                    (tmp_path / "nowhere", "lm must be 'smollm2', one of")):
        rc = main(["detect", "--text", str(tmp_path / "t.txt"), "--lm", str(lm), "--key", "1", "--scheme", "transformers-lefthash"])
        err = capsys.readouterr().err
        assert rc == 2 and err.count("\n") == 1 and msg in err, err


@pytest.mark.slow
def test_smollm2_transformers_watermark_detected(tmp_path, capsys):
    """SmolLM2-135M-Instruct watermarked by transformers (lefthash, bias 2, 80 tokens, seed 0):
    our counts on the re-tokenised text equal WatermarkDetector's, p < 1e-4 with the key, not without."""
    from transformers import WatermarkDetector, WatermarkingConfig

    model, tok = load("smollm2")
    cfg = WatermarkingConfig(greenlist_ratio=0.25, bias=2.0, hashing_key=HKEY, seeding_scheme="lefthash", context_width=1)
    prompt = tok("The history of the bicycle", return_tensors="pt")["input_ids"]
    torch.manual_seed(0)
    out = model.generate(prompt, watermarking_config=cfg, do_sample=True, max_new_tokens=80, min_new_tokens=80)
    text = tok.decode(out[0, prompt.shape[1]:])
    (tmp_path / "t.txt").write_text(text)
    doc = run_json(capsys, "--text", tmp_path / "t.txt", "--lm", "smollm2", "--key", HKEY, "--scheme", "transformers-lefthash")
    ids = torch.tensor([tok(text, add_special_tokens=False)["input_ids"]])
    theirs = WatermarkDetector(model_config=model.config, device="cpu", watermarking_config=cfg)(ids, return_dict=True)
    r = doc["texts"][0]
    assert (r["n_scored"], r["score"]) == (theirs.num_tokens_scored[0], theirs.num_green_tokens[0]) and r["watermarked"]
    doc = run_json(capsys, "--text", tmp_path / "t.txt", "--lm", "smollm2", "--key", HKEY + 1, "--scheme", "transformers-lefthash")
    assert not doc["texts"][0]["watermarked"]


def test_a_real_lms_texts_read_as_words_and_retokenisation_is_reported(tiny_folder, tmp_path, capsys):
    """``show`` decodes a real LM's texts, ``detect --html`` colours words (not ids), and
    ``detect --text`` on ``show --jsonl``'s export says how many tokens re-encoded differently."""
    _, folder = tiny_folder
    gen = tmp_path / "g.npz"
    assert main(["generate", "--lm", str(folder), "--algo", "srl", "--delta", "4", "--n", "2", "--T", "30", "--out", str(gen), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["show", str(gen), "--quiet"]) == 0
    shown = capsys.readouterr().out
    assert "reply:  w" in shown and "watermarked (log10 p" in shown
    assert main(["detect", str(gen), "--key", "15485863", "--html", str(tmp_path / "r.html"), "--quiet"]) == 0
    page = (tmp_path / "r.html").read_text()
    assert '">w' in page
    export = tmp_path / "t.jsonl"
    assert main(["show", str(gen), "--jsonl", str(export), "--quiet"]) == 0
    rows = [json.loads(line) for line in export.read_text().splitlines()]
    assert rows[0]["text"].split() == [f"w{i}" for i in rows[0]["ids"]]
    capsys.readouterr()
    assert main(["detect", "--text", str(export), "--lm", str(folder), "--key", "15485863", "--json", "--quiet"]) == 0
    out, err = capsys.readouterr()
    assert len(json.loads(out)["texts"]) == 2 and err == ""  # the word tokenizer round-trips: no note
    rows[1]["ids"] = rows[1]["ids"][:5] + [0] + rows[1]["ids"][5:]  # as if the LM had sampled one more token that decodes to nothing
    export.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["detect", "--text", str(export), "--lm", str(folder), "--key", "15485863", "--quiet"]) == 0
    err = capsys.readouterr().err
    assert err.startswith("note: 1 of 2 texts re-encode to other token ids") and "text 1: 31 generated ids -> 30 re-encoded, 1 differ" in err
