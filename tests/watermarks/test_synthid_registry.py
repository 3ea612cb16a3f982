"""SynthID tournament sampling as a registry algorithm, end to end: ``sims generate --algo synthid``
-> ``sims detect`` (the registry's "tournament" detector family), the library calls
(``sims.generate``, ``scores.score``, ``evaluate``, ``attack``) and the parameter refusals.

Deterministic (fixed seeds and keys): news LM (V = 32000), m = 30 layers, 3 texts x 50 tokens;
watermarked texts reach log10 p < -15 there, so the 1e-4 decision is far from chance, and the
null texts (seed 5) score log10 p > -2.
"""

import json

import numpy as np
import pytest

import sims
from sims.cli.main import main
from sims.core.record import Generation
from sims.detect.families import detectors
from sims.lm.synthetic import open_synthetic
from sims.watermarks import registry

KEY = 15485863


def _detect(path, capsys, *extra):
    assert main(["detect", str(path), "--key", str(KEY), "--fpr", "1e-4", "--json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


def test_cli_generate_then_detect_flags_synthid_and_not_a_null_text(tmp_path, capsys):
    wm, null = tmp_path / "wm.npz", tmp_path / "null.npz"
    base = ["--lm", "news", "--n", "3", "--T", "50", "--key", str(KEY)]
    assert main(["generate", "--algo", "synthid", "--m", "30", *base, "--out", str(wm)]) == 0
    assert main(["generate", "--algo", "none", *base, "--seed", "5", "--out", str(null)]) == 0
    capsys.readouterr()
    meta = Generation.load(wm).meta
    assert (meta["algo"], meta["m"], meta["candidates"], meta["mask_repeated"]) == ("synthid", 30, 2, True)
    doc = _detect(wm, capsys)
    assert doc["algo"] == "synthid" and doc["statistic"] == "mean g-value sum"
    assert all(r["watermarked"] and r["log10_p"] < -10 for r in doc["texts"])
    weighted = _detect(wm, capsys, "--stat", "weighted")
    assert weighted["statistic"] == "weighted g-value sum" and all(r["watermarked"] for r in weighted["texts"])
    assert [r["score"] for r in weighted["texts"]] != [r["score"] for r in doc["texts"]]
    doc0 = _detect(null, capsys, "--algo", "synthid")
    assert not any(r["watermarked"] for r in doc0["texts"]) and min(r["log10_p"] for r in doc0["texts"]) > -4
    assert main(["detect", str(null), "--key", str(KEY), "--stat", "weighted"]) == 2  # a red-green detector has no stat
    assert "stat chooses a tournament detector's score" in capsys.readouterr().err


def test_a_foreign_tournament_parameter_is_refused_naming_synthid(tmp_path, capsys):
    assert main(["generate", "--lm", "tiny", "--algo", "srl", "--m", "3", "--out", str(tmp_path / "x.npz")]) == 2
    assert "algo 'srl' takes no parameter 'm' (got m=3.0); m is a parameter of ('synthid',)" in capsys.readouterr().err
    assert main(["generate", "--lm", "tiny", "--algo", "synthid", "--gamma", "0.5", "--out", str(tmp_path / "x.npz")]) == 2
    assert "takes no parameter 'gamma'" in capsys.readouterr().err
    for bad in (["--m", "0"], ["--m", "2.5"], ["--candidates", "1"], ["--mask_repeated", "3"]):
        assert main(["generate", "--lm", "tiny", "--algo", "synthid", *bad, "--out", str(tmp_path / "x.npz")]) == 2
        assert f"{bad[0][2:]} must be an integer in [" in capsys.readouterr().err


def test_library_calls_go_through_the_record():
    """sims.generate with the registry's parameters equals generate_tournament; score's mean (default)
    and weighted statistics equal score_tournament's; another key, dedup or a stat for a red-green
    algorithm are handled by the family dispatch."""
    from sims.detect.stats.tournament_scores import score_tournament
    from sims.watermarks.tournament import generate_tournament

    lm = open_synthetic("lfqa", vocab_size=2000)
    gen = sims.generate(lm, "synthid", n=3, T=40, seed=2, key=7, h=2, m=12, candidates=4, mask_repeated=0)
    ref = generate_tournament(lm, n=3, T=40, seed=2, key=7, m=12, h=2, mode="distortionary", candidates=4, mask_repeated=False)
    np.testing.assert_array_equal(gen.tokens, ref.tokens)
    np.testing.assert_array_equal(gen.kl, ref.kl)
    for stat in ("mean", "weighted"):
        got = detectors.score(gen, stat=None if stat == "mean" else stat)
        np.testing.assert_array_equal(got.log10_p, score_tournament(gen, stat=stat).log10_p)
    assert (detectors.score(gen).log10_p < -4).all() and (detectors.score(gen, key=8).log10_p > -4).all()
    with pytest.raises(ValueError, match="dedup and gamma do not apply"):
        detectors.score(gen, dedup=True)
    with pytest.raises(ValueError, match="stat chooses a tournament detector's score"):
        detectors.score(sims.generate(lm, "srl", n=1, T=5, seed=0, key=1), stat="weighted")
    with pytest.raises(ValueError, match="has no green list"):
        sims.generate(lm, "synthid", n=1, T=5, seed=0, key=1, green_kind="partition")
    assert registry.get("synthid").family == "tournament" and "synthid" not in registry.names(family="redgreen")


def test_evaluate_and_attack_read_the_record():
    """evaluate names the tournament detector and scores its null texts with the generation's m;
    a 10 % substitution attack (seed 0) leaves the texts detected at 1e-4."""
    from sims.experiments.attacks import attack
    from sims.experiments.evaluate import evaluate

    lm = open_synthetic("lfqa", vocab_size=2000)
    res = evaluate(lm, "synthid", n=3, T=40, seed=1, m=20)
    assert res["detector"].startswith("tournament mean g-value") and res["params"]["m"] == 20
    assert res["tpr_at_1e-4"] == 1.0 and res["empirical_fpr_at_1e-4"] == 0.0
    gen = sims.generate(lm, "synthid", n=3, T=40, seed=1, key=3, m=20)
    hit = attack(gen, "substitution", 0.1, 0, lm=lm)
    assert hit.meta["algo"] == "synthid" and (hit.tokens != gen.tokens).any()
    assert (detectors.score(hit).log10_p < -4).all()
