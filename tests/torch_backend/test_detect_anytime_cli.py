"""``sims detect --sequential`` and several keys on raw text (--text) and as HTML (--html), with the random
test model's folder (a word-level tokenizer whose words w0..w511 are the token ids; no hub download)."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("torch")

import sims  # noqa: E402
from sims.cli.main import main  # noqa: E402
from sims.detect.anytime import sequential
from sims.detect.stats import scores  # noqa: E402
from tests.torch_backend.test_detect_text_cli import tiny_folder  # noqa: E402, F401

KEY = 77


@pytest.fixture(scope="module")
def texts(tmp_path_factory):
    """Two SRL texts (delta 4, gamma 0.25, h 1, key KEY) of a 512-token synthetic LM written as words, and their ids."""
    gen = sims.generate(sims.get_lm("news", vocab_size=512), "srl", n=2, T=120, seed=0, key=KEY, delta=4.0, gamma=0.25)
    ids = np.concatenate([gen.prompts[:, -1:], gen.tokens], axis=1)
    d = tmp_path_factory.mktemp("texts")
    f = d / "t.jsonl"
    f.write_text("".join(json.dumps({"text": " ".join(f"w{i}" for i in row)}) + "\n" for row in ids))
    return f, ids, gen


def run_json(capsys, *argv) -> dict:
    rc = main(["detect", *map(str, argv), "--json"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    return json.loads(out)


def test_sequential_text_equals_the_eprocess_on_the_ids(tiny_folder, texts, capsys, tmp_path):  # noqa: F811
    f, ids, _ = texts
    html = tmp_path / "s.html"
    doc = run_json(capsys, "--text", f, "--lm", tiny_folder[1], "--key", KEY, "--gamma", 0.25, "--h", 1, "--dedup", "--sequential", "--fpr", 1e-4,
                   "--html", html)
    ref = sequential.sequential_redgreen(ids[:, 1:], ids[:, :1], KEY, 0.25, vocab_size=512, alpha=1e-4)
    assert [r["first_flagged"] for r in doc["texts"]] == ref.stop.tolist() and ref.detected.all()
    page = html.read_text()
    assert page.count('data-decision="watermarked"') == 2 and "<svg" in page
    null = run_json(capsys, "--text", f, "--lm", tiny_folder[1], "--key", KEY + 1, "--gamma", 0.25, "--h", 1, "--dedup", "--sequential", "--fpr", 1e-4)
    assert all(r["first_flagged"] is None for r in null["texts"])


def test_many_keys_text_holm(tiny_folder, texts, capsys, tmp_path):  # noqa: F811
    f, ids, _ = texts
    keys = [3, KEY, 9]
    html = tmp_path / "k.html"
    doc = run_json(capsys, "--text", f, "--lm", tiny_folder[1], "--key", ",".join(map(str, keys)), "--gamma", 0.25, "--h", 1, "--fpr", 1e-3, "--html", html)
    for i, r in enumerate(doc["texts"]):
        assert r["marked_by"] == str(KEY) and r["best_key"] == KEY
        ref = [float(scores.score_redgreen(ids[i : i + 1, 1:], ids[i : i + 1, :1], k, 0.25, vocab_size=512).log10_p[0]) for k in keys]
        np.testing.assert_allclose(r["log10_p_per_key"], ref, rtol=1e-12)
    assert html.read_text().count('data-decision="watermarked"') == 2


def test_npz_html_and_many_keys_for_other_families(texts, capsys, tmp_path):
    _, _, gen = texts
    f = tmp_path / "g.npz"
    gen.save(f)
    html = tmp_path / "n.html"
    doc = run_json(capsys, f, "--key", KEY, "--sequential", "--dedup", "--html", html)
    assert all(r["first_flagged"] for r in doc["texts"]) and html.read_text().count('data-decision="watermarked"') == 2
    ems = sims.generate(sims.get_lm("news"), "ems", n=2, T=80, seed=1, key=5)
    ems.save(tmp_path / "e.npz")
    doc = run_json(capsys, tmp_path / "e.npz", "--key", "4,5,6", "--dedup")
    assert [r["marked_by"] for r in doc["texts"]] == ["5", "5"]
    assert main(["detect", str(tmp_path / "e.npz"), "--key", "4,5", "--html", str(tmp_path / "x.html")]) == 2
    assert "colours red-green tokens" in capsys.readouterr().err
