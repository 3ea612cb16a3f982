"""``python -m sims detect --sequential`` and ``--key K1,K2,...`` / ``--key-file``: the library's answers, printed."""

from __future__ import annotations

import json

import numpy as np
import pytest

import sims
from sims.cli.main import main
from sims.detect import multiple
from sims.detect.families import detectors

KEY = 15485863


@pytest.fixture(scope="module")
def npz(tmp_path_factory):
    """Four SRL texts of 60 tokens (news preset, V = 1000, seed 0) and their file."""
    gen = sims.generate(sims.get_lm("news", vocab_size=1000), "srl", n=4, T=60, seed=0, key=KEY, delta=2.0)
    path = tmp_path_factory.mktemp("detect") / "srl.npz"
    gen.save(path)
    return gen, path


def run_cli(capsys, *argv):
    rc = main(["detect", *map(str, argv)])
    out, err = capsys.readouterr()
    return rc, out, err


def test_sequential_document(npz, capsys):
    gen, path = npz
    rc, out, _ = run_cli(capsys, path, "--key", KEY, "--sequential", "--dedup", "--fpr", "1e-3", "--json")
    doc = json.loads(out)
    res = detectors.sequential_score(gen, alpha=1e-3, dedup=True)
    assert rc == 0 and doc["schema"] == "wmstats.detect-sequential" and doc["alpha"] == 1e-3 and doc["family"] == "redgreen"
    for r, s in zip(doc["texts"], res.stop):
        assert r["first_flagged"] == (int(s) if s > 0 else None) and r["watermarked"] == (s > 0)
    assert any(r["watermarked"] for r in doc["texts"])
    rc, out, _ = run_cli(capsys, path, "--key", KEY, "--sequential")
    assert rc == 0 and "first_flagged" in out.splitlines()[1] and len(out.splitlines()) == 6


def test_many_keys_document(npz, capsys, tmp_path):
    gen, path = npz
    keys = [1, 2, KEY, 4]
    rc, out, _ = run_cli(capsys, path, "--key", ",".join(map(str, keys)), "--dedup", "--json", "--fpr", "1e-3")
    doc = json.loads(out)
    lp, _, _ = multiple.score_redgreen_keys(gen.tokens, gen.prompts[:, -1:], keys, 0.25, vocab_size=1000)
    marked = multiple.holm(lp, 1e-3)
    assert rc == 0 and doc["keys"] == keys
    for i, r in enumerate(doc["texts"]):
        assert np.allclose(r["log10_p_per_key"], lp[:, i])
        assert r["marked_by"] == (",".join(str(keys[k]) for k in np.flatnonzero(marked[:, i])) or None)
    assert any(r["marked_by"] == str(KEY) for r in doc["texts"])
    kf = tmp_path / "keys.txt"
    kf.write_text("# my keys\n1\n2\n" + str(KEY) + "\n4\n")
    rc, out2, _ = run_cli(capsys, path, "--key-file", kf, "--dedup", "--json", "--fpr", "1e-3")
    assert rc == 0 and json.loads(out2) == doc


@pytest.mark.parametrize("argv,message", [(["--key", "1,1"], "keys must be distinct"), (["--key", "1,x"], "key must be an integer"),
                                          ([], "give --key K"), (["--key", "1,2", "--sequential"], "--sequential tests one key"),
                                          (["--key-file", "/nonexistent"], "--key-file must be an existing file")])
def test_bad_keys_are_named(npz, capsys, argv, message):
    rc, out, err = run_cli(capsys, npz[1], *argv)
    assert rc == 2 and out == "" and message in err
