"""Watermark stealing (sims.experiments.steal) and the spoof test (sims.detect.spoof)."""

import json

import numpy as np
import pytest
from scipy.stats import fisher_exact

from sims.cli.main import main as cli
from sims.core.record import Generation
from sims.detect import spoof as spoof_test
from sims.experiments import steal
from sims.lm.synthetic import get_lm

V = 128  # small vocabulary: every window is seen often with a few thousand texts


@pytest.fixture(scope="module")
def haul():
    """Seed 0, SRL gamma 0.25 delta 4, h = 1: 2000 stolen + 2000 base texts of 16 tokens, 200 held out."""
    return steal.make_haul(get_lm("news", vocab_size=V), "srl", n_max=2000, T=16, n_eval=200, gamma=0.25, delta=4.0)


def test_estimate_improves_with_n_and_beats_chance(haul):
    """Deterministic (seed 0): balanced accuracy on 200 x 16 held-out pairs rises with N; at N = 2000
    (~250 observations per window) it is far above 0.5 (0.5 = no knowledge)."""
    small = steal.estimate_accuracy(steal.estimate_green(haul.wm, haul.base, n_stolen=50), haul.wm.meta["key"], 0.25, haul.held_out)
    big = steal.estimate_accuracy(steal.estimate_green(haul.wm, haul.base, n_stolen=2000), haul.wm.meta["key"], 0.25, haul.held_out)
    assert big["accuracy"] > 0.75 and big["precision"] > 0.6
    assert big["accuracy"] > small["accuracy"] + 0.1
    assert big["coverage"] == 1.0


def test_spoof_and_scrub_succeed_only_with_knowledge(haul):
    """200 spoofed texts of 16 tokens at p <= 1e-4: most pass with the stolen lists, none without a boost."""
    r = steal.attack_point(haul, 2000)
    assert r["spoof_success"] > 0.5
    assert r["scrub_success"] > r["scrub_blind_success"]
    assert 0 < r["scrub_edit_rate"] <= 0.5
    est = steal.estimate_green(haul.wm, haul.base, n_stolen=2000)
    plain = steal.spoof(haul.lm, est, haul.wm.meta, n=200, T=16, seed=1, boost=0.0)
    from sims.detect.scores import score

    assert np.mean(score(plain).log10_p <= -4) == 0.0


def test_scrub_edits_only_believed_green_tokens(haul):
    est = steal.estimate_green(haul.wm, haul.base, n_stolen=2000)
    out, rate = steal.scrub(haul.lm, est, haul.targets, seed=3, budget=1.0)
    from sims.core import windows

    changed = out.tokens != haul.targets.tokens
    assert np.array_equal(changed.sum(axis=1), np.round(rate * 16))
    first = np.argmax(changed, axis=1)  # before the first edit the contexts are the original ones
    rows = np.flatnonzero(changed.any(axis=1))
    names = windows.window_names(haul.targets.tokens, haul.targets.prompts, 1)
    assert np.all(est.predict(names[rows, first[rows]], haul.targets.tokens[rows, first[rows]]))
    assert not np.any(est.predict(windows.window_names(out.tokens, out.prompts, 1), out.tokens) & changed)


def test_spoof_test_matches_fisher_exact():
    """The p-value is Fisher's one-sided exact test on the 2x2 table (frequent/rare x green/red)."""
    rng = np.random.default_rng(0)
    toks, prompts = rng.integers(0, V, size=(30, 40)), rng.integers(0, V, size=(30, 1))
    ref = spoof_test.WindowCounts.from_texts(rng.integers(0, V, size=(50, 20)), rng.integers(0, V, size=(50, 1)), 1)
    r = spoof_test.spoof_test(toks, prompts, 7, 0.25, ref, min_count=9)
    for i in range(30):
        table = [[r.g_f[i], r.n_f[i] - r.g_f[i]], [r.g_r[i], r.n_r[i] - r.g_r[i]]]
        assert r.log10_p[i] == pytest.approx(np.log10(fisher_exact(table, alternative="greater")[1]), abs=1e-9)


@pytest.mark.parametrize("pairs", [False, True])
def test_spoof_test_size_on_key_independent_text(pairs):
    """Seed 1, 4000 uniform texts of 64 tokens (colours i.i.d. Bernoulli(gamma)): rejection rate at
    level 0.05 is at most 0.05 + 3 standard errors (the conditional test is exact, conservative)."""
    rng = np.random.default_rng(1)
    toks, prompts = rng.integers(0, V, size=(4000, 64)), rng.integers(0, V, size=(4000, 1))
    ref = spoof_test.WindowCounts.from_texts(rng.integers(0, V, size=(2000, 20)), rng.integers(0, V, size=(2000, 1)), 1, pairs=pairs)
    assert ref.pairs == pairs and ref.counts.sum() == 40000 and (ref.names.size > V) == pairs
    rate = np.mean(spoof_test.spoof_test(toks, prompts, 11, 0.25, ref).log10_p <= np.log10(0.05))
    assert rate <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / 4000)


def test_bad_input(haul):
    with pytest.raises(ValueError, match="n_stolen"):
        steal.estimate_green(haul.wm, haul.base, n_stolen=2001)
    with pytest.raises(ValueError, match="n_stolen"):
        steal.estimate_green(haul.wm, haul.held_out, n_stolen=500)
    with pytest.raises(ValueError, match="key"):
        steal.estimate_accuracy(steal.estimate_green(haul.wm, n_stolen=10), "secret", 0.25, haul.held_out)
    with pytest.raises(ValueError, match="key"):
        steal.estimate_accuracy(steal.estimate_green(haul.wm, n_stolen=10), 2**64, 0.25, haul.held_out)
    other = Generation(haul.base.tokens + V, haul.base.prompts, *(np.zeros(haul.base.tokens.shape) for _ in range(5)),
                       meta={**haul.base.meta, "vocab_size": 2 * V})
    with pytest.raises(ValueError, match="another vocabulary"):
        steal.estimate_green(haul.wm, other, n_stolen=10)
    with pytest.raises(ValueError, match="another vocabulary"):
        steal.spoof(get_lm("news", vocab_size=2 * V), steal.estimate_green(haul.wm, n_stolen=10), haul.wm.meta, n=2, T=4, seed=0)


def test_cli_prints_the_three_numbers(capsys):
    rc = cli(["steal", "--lm", "news", "--vocab-size", "64", "--algo", "srl", "--gamma", "0.25", "--delta", "2", "--n-stolen", "100",
              "--T", "16", "--n-eval", "20", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["n_stolen"] == 100 and out["vocab_size"] == 64
    for k in ("spoof_success", "scrub_success", "green_estimate_accuracy"):
        assert 0.0 <= out[k] <= 1.0
    assert cli(["steal", "--n-stolen", "0"]) == 2
