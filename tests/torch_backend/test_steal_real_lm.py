"""Stealing on a real LM (torch backend): the attacker's texts, the green-list estimate's accuracy
against the owner's keyed lists (SplitMix64 or SipHash), and ``python -m sims steal --lm <real LM>``."""

import json

import numpy as np
import pytest

pytest.importorskip("torch")

from sims import steal  # noqa: E402
from sims.cli.main import main as cli  # noqa: E402
from sims.steal import steal_texts  # noqa: E402


def test_estimate_on_random_llama_with_a_siphash_key():
    """random-llama, SRL gamma 0.25 delta 4, SipHash key, 16 texts of 24 tokens (seed 0).  Scored on the
    stolen texts themselves, the pairs estimated green (383 of the 384 positions: without base texts
    every pair seen scores above 0) are truly green at the watermarked texts' green rate (> 0.6;
    measured 0.93), far above gamma = 0.25, what SplitMix64 with the key's low word gives (measured
    0.24; asserted < 0.45): with 384 positions the binomial sd is < 0.025, so either bound fails by
    chance with probability < 1e-9.  The held-out texts are base texts with the held-out seed offset."""
    key = bytes(range(3, 19))
    wm, base, held = steal_texts("random-llama", "srl", n=16, n_eval=4, T=24, key=key, prf="siphash", gamma=0.25, delta=4.0)
    assert base is None and wm.tokens.shape == (16, 24) and held.tokens.shape == (4, 24)
    assert wm.meta["prf"] == held.meta["prf"] == "siphash" and held.meta["algo"] == "none"
    assert held.meta["seed"] == steal.EVAL_SEED_OFFSET
    on_stolen = steal.estimate_curve(wm, wm, [16, 4])
    assert [p["n_stolen"] for p in on_stolen] == [4, 16]
    assert on_stolen[1]["green_estimate_precision"] > 0.6 and on_stolen[1]["window_coverage"] == 1.0
    truth = steal.estimate_accuracy(steal.estimate_green(wm, n_stolen=16), int.from_bytes(key, "little"), 0.25, wm, prf_name="siphash")
    assert truth["precision"] == on_stolen[1]["green_estimate_precision"]
    low = steal.estimate_accuracy(steal.estimate_green(wm, n_stolen=16), int.from_bytes(key[:8], "little"), 0.25, wm)  # SplitMix64
    assert low["precision"] < 0.45
    (pt,) = steal.estimate_curve(wm, held, [16])
    assert 0.0 <= pt["green_estimate_accuracy"] <= 1.0 and 0.0 <= pt["window_coverage"] <= 1.0
    with pytest.raises(ValueError, match="prf_name must be"):
        steal.estimate_accuracy(steal.estimate_green(wm, n_stolen=4), 1, 0.25, wm, prf_name="md5")


def test_cli_steal_on_a_real_lm_prints_one_point_per_n(capsys):
    rc = cli(["steal", "--lm", "random-llama", "--algo", "srl", "--delta", "4", "--n-stolen", "6", "3", "--T", "8", "--n-eval", "2",
              "--no-base", "--json"])
    points = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert rc == 0 and [p["n_stolen"] for p in points] == [3, 6]
    assert all(p["lm"] == "random-llama" and p["vocab_size"] == 512 and 0.0 <= p["green_estimate_accuracy"] <= 1.0 for p in points)
    assert cli(["steal", "--lm", "random-llama", "--vocab-size", "64", "--n-stolen", "3"]) == 2


@pytest.mark.slow  # SmolLM2 on 2 CPU cores: 40 texts of 32 tokens, ~1-3 min
def test_smollm2_estimate_finds_green_pairs():
    """SmolLM2, SRL gamma 0.25 delta 2, 32 stolen texts of 32 tokens (seed 0): the pairs estimated green,
    scored on the stolen texts, are truly green well above gamma (> 0.4; 0.53 measured on the first 32 tokens
    of the same texts from a T = 64 run, 1024 positions, binomial sd 0.016). Not run in this session (CPU cap)."""
    wm, _, held = steal_texts("smollm2", "srl", n=32, n_eval=8, T=32, gamma=0.25, delta=2.0)
    (pt,) = steal.estimate_curve(wm, wm, [32])
    assert pt["green_estimate_precision"] > 0.4
    (pt,) = steal.estimate_curve(wm, held, [32])
    assert 0.0 <= pt["green_estimate_accuracy"] <= 1.0 and np.isfinite(pt["green_estimate_precision"])
