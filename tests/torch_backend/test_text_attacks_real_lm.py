"""``sims detect --text`` against the text attacks on SmolLM2 text: the homoglyph and zero-width attacks
change the tokens (the p-value of the raw attacked text rises toward the null) and the default Unicode
normalisation gives back the clean text's p-value exactly; typos stay; the document reports the change.

The texts (tests/torch_backend/data/smollm2_srl_key4242.jsonl): ``python -m sims generate --lm smollm2
--algo srl --delta 2 --n 3 --T 64 --seed 0 --key 4242`` then ``sims show --jsonl``.  Only SmolLM2's
tokenizer is read (cached copy, offline)."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

pytest.importorskip("torch")

from sims.cli.main import main  # noqa: E402
from sims.core.unicode_text import normalize_text  # noqa: E402
from sims.experiments.text_attacks import attack_text  # noqa: E402
from sims.lm.real.model import cache_dir  # noqa: E402

pytestmark = pytest.mark.skipif(not (cache_dir() / "smollm2-135m-instruct" / "config.json").exists(), reason="SmolLM2's converted copy is not cached")
DATA = pathlib.Path(__file__).parent / "data" / "smollm2_srl_key4242.jsonl"
KEY = 4242


def texts() -> list[str]:
    return [json.loads(line)["text"] for line in DATA.read_text(encoding="utf-8").splitlines()]


def detect(capsys, tmp_path, rows: list[str], *extra) -> dict:
    src = tmp_path / "t.jsonl"
    src.write_text("".join(json.dumps({"text": t}) + "\n" for t in rows), encoding="utf-8")
    rc = main(["detect", "--text", str(src), "--lm", "smollm2", "--key", str(KEY), "--json", "--quiet", *extra])
    out, err = capsys.readouterr()
    assert rc == 0, err
    return json.loads(out)


@pytest.mark.parametrize("kind", ["homoglyph", "zero-width"])
def test_normalisation_recovers_the_clean_p_value(capsys, tmp_path, kind):
    clean = texts()
    rng = np.random.default_rng(0)
    attacked = [attack_text(t, kind, 1.0, rng)[0] for t in clean]
    assert all(a != c for a, c in zip(attacked, clean)) and [normalize_text(a)[0] for a in attacked] == [normalize_text(c)[0] for c in clean]
    base = detect(capsys, tmp_path, clean)
    assert all(r["watermarked"] for r in base["texts"])  # at 1e-4: log10 p of -10.2, -7.9, -5.5
    fixed = detect(capsys, tmp_path, attacked)
    assert [r["log10_p"] for r in fixed["texts"]] == [r["log10_p"] for r in base["texts"]]  # exactly: the same tokens
    norm = fixed["normalization"]
    assert norm["applied"] and norm["characters_changed"] == sum(norm["per_text"]) > 0
    assert norm["homoglyph" if kind == "homoglyph" else "zero_width"] == norm["characters_changed"]
    raw = detect(capsys, tmp_path, attacked, "--no-normalize")
    assert raw["normalization"] == {"applied": False}
    # every word attacked: the raw attacked texts lose the watermark (each p-value up by 4 orders at least, none flagged)
    for r, b in zip(raw["texts"], base["texts"]):
        assert r["log10_p"] > b["log10_p"] + 4 and not r["watermarked"]


def test_typos_are_not_undone(capsys, tmp_path):
    clean = texts()
    rng = np.random.default_rng(1)
    typo = [attack_text(t, "typo", 0.5, rng)[0] for t in clean]
    base, hit = detect(capsys, tmp_path, clean), detect(capsys, tmp_path, typo)
    assert hit["normalization"]["characters_changed"] == 0
    assert all(h["log10_p"] > b["log10_p"] for h, b in zip(hit["texts"], base["texts"]))


def test_table_reports_the_normalisation(capsys, tmp_path):
    src = tmp_path / "a.txt"
    src.write_text(attack_text(texts()[0], "homoglyph", 0.5, np.random.default_rng(2))[0], encoding="utf-8")
    assert main(["detect", "--text", str(src), "--lm", "smollm2", "--key", str(KEY), "--quiet"]) == 0
    out = capsys.readouterr().out
    n = normalize_text(src.read_text(encoding="utf-8"))[1]["homoglyph"]
    assert f"# unicode normalisation: {n} characters changed" in out and n > 0
