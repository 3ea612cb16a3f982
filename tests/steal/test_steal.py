"""Watermark stealing (sims.steal) and the spoof test (sims.steal.spoof_test)."""

import json

import numpy as np
import pytest
from scipy.stats import spearmanr

from sims import steal
from sims.cli.main import main as cli
from sims.core.record import Generation
from sims.lm.synthetic import open_synthetic
from sims.steal import spoof_test

V = 128  # small vocabulary: every window is seen often with a few thousand texts


@pytest.fixture(scope="module")
def haul():
    """Seed 0, SRL gamma 0.25 delta 4, h = 1: 2000 stolen + 2000 base texts of 16 tokens, 200 held out."""
    return steal.generate_stealing_texts(open_synthetic("news", vocab_size=V), "srl", n_max=2000, T=16, n_eval=200, gamma=0.25, delta=4.0)


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
    from sims.detect.families.detectors import score

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


@pytest.fixture(scope="module")
def haul2():
    """Seed 0, SRL gamma 0.25 delta 2, h = 2, V = 256: 300 stolen + 300 base texts of 100 tokens, 300 targets."""
    return steal.generate_stealing_texts(open_synthetic("news", vocab_size=256), "srl", n_max=300, T=100, n_eval=300, h=2, gamma=0.25, delta=2.0)


def test_spoof_statistic_is_scaled_spearman():
    """Z = sqrt(n - 1) * Spearman's rho of (log reference pair count, colour), mid-ranks for ties."""
    rng = np.random.default_rng(0)
    toks, prompts = rng.integers(0, 16, size=(20, 40)), rng.integers(0, 16, size=(20, 1))
    ref = spoof_test.PairCounts.from_texts(rng.integers(0, 16, size=(50, 30)), rng.integers(0, 16, size=(50, 1)), 1)
    assert ref.counts.sum() == 1500
    z = spoof_test.spoof_statistic(toks, prompts, 7, 0.25, ref)
    from sims.core import windows
    from sims.detect.stats.scores import green_indicators

    x = np.log1p(ref.count(windows.pair_names(windows.window_names(toks, prompts, 1), toks)))
    g = green_indicators(toks, prompts, 7, 0.25)
    for i in range(20):
        assert z[i] == pytest.approx(np.sqrt(39) * spearmanr(x[i], g[i])[0], abs=1e-12)


def test_conformal_p_value_has_its_exact_size(haul2):
    """Seed 2, 1000 random splits of the 600 genuine texts (300 targets, 300 owner's calibration texts) into
    300 calibration and 300 tested: the mean rejection rate at level 0.05 is at most floor(0.05 * 301) / 301
    (its value when each tested text's rank among the 301 is uniform; ties make it smaller) plus 4 Monte
    Carlo standard errors, and within 0.005 of it (z has few ties)."""
    cal = steal.owner_texts(haul2, 300, steal.CALIB_SEED_OFFSET)
    m = haul2.wm.meta
    ref = spoof_test.PairCounts.from_texts(haul2.wm.tokens, haul2.wm.prompts, 2)
    z = np.concatenate([spoof_test.spoof_statistic(g.tokens, g.prompts, m["key"], 0.25, ref, h=2) for g in (haul2.targets, cal)])
    assert np.unique(z).size > 570
    rng = np.random.default_rng(2)
    rates = []
    for _ in range(1000):
        perm = rng.permutation(600)
        lp = spoof_test.conformal_log10_p(z[perm[300:]], np.sort(z[perm[:300]]))
        rates.append(np.mean(lp <= np.log10(0.05)))
    assert 15 / 301 - 0.005 < np.mean(rates) <= 15 / 301 + 4 * np.std(rates) / np.sqrt(1000)


def test_spoof_test_separates_spoofed_from_genuine(haul2):
    """Seed 0, h = 2, N = 300 stolen texts of 100 tokens: the 300-text calibrated test flags most of the
    spoofed texts that the detector flags (power 0.83 of 239 measured; asserted > 0.6) and at most
    3 of the 300 genuine ones at level 0.01 plus 3 binomial standard errors."""
    r = steal.spoof_test_power(haul2, 300, n_calibration=300, level=0.01)
    assert r["spoofed_flagged"] > 150 and r["genuine_flagged"] == 300 and r["n_calibration"] == 300
    assert r["power"] > 0.6
    assert r["fpr"] <= 0.01 + 3 * np.sqrt(0.01 * 0.99 / 300)
    assert r["spoofed_mean_z"] > r["genuine_mean_z"] + 1.5


def test_spoof_test_bad_input(haul2):
    m = haul2.wm.meta
    test = spoof_test.SpoofTest.fit(haul2.wm.tokens, haul2.wm.prompts, haul2.targets.tokens[:10], haul2.targets.prompts[:10], key=m["key"],
                                    gamma=0.25, h=2)
    with pytest.raises(ValueError, match="length 100"):
        test.log10_p(haul2.targets.tokens[:, :50], haul2.targets.prompts)
    with pytest.raises(ValueError, match="h must equal"):
        spoof_test.spoof_statistic(haul2.targets.tokens, haul2.targets.prompts, m["key"], 0.25, test.reference, h=1)
    with pytest.raises(ValueError, match="reference must be a PairCounts"):
        spoof_test.spoof_statistic(haul2.targets.tokens, haul2.targets.prompts, m["key"], 0.25, {}, h=2)
    with pytest.raises(ValueError, match="pads"):
        spoof_test.PairCounts.from_texts(-np.ones((2, 3), dtype=np.int64), np.zeros((2, 2), dtype=np.int64), 2)
    with pytest.raises(ValueError, match="n_reference"):
        steal.spoof_test_power(haul2, 10, n_reference=301)


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
        steal.spoof(open_synthetic("news", vocab_size=2 * V), steal.estimate_green(haul.wm, n_stolen=10), haul.wm.meta, n=2, T=4, seed=0)


def test_cli_prints_the_three_numbers(capsys):
    rc = cli(["steal", "--lm", "news", "--vocab-size", "64", "--algo", "srl", "--gamma", "0.25", "--delta", "2", "--n-stolen", "100",
              "--T", "16", "--n-eval", "20", "--n-calibration", "30", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["n_stolen"] == 100 and out["vocab_size"] == 64
    for k in ("spoof_success", "scrub_success", "green_estimate_accuracy", "spoof_test_fpr", "spoof_test_power"):
        assert 0.0 <= out[k] <= 1.0
    assert out["spoof_test_n_calibration"] <= 30 and out["spoof_test_genuine_flagged"] <= 20 and out["spoof_test_level"] == 0.01
    with pytest.raises(SystemExit) as exc:  # refused by the option's range check, before any work
        cli(["steal", "--n-stolen", "0"])
    assert exc.value.code == 2 and "--n-stolen must be an integer in [1, inf); got '0'" in capsys.readouterr().err


def test_a_fixed_list_is_learned_at_width_zero_and_each_scheme_keeps_its_detector():
    """Unigram (h = 0): one window, so a few hundred texts give the key's one list almost exactly and the spoofs pass
    its detector; SWEET is stolen like ATW and its spoofs are scored by its own family (the entropy gate)."""
    lm = open_synthetic("news", vocab_size=V)
    uni = steal.generate_stealing_texts(lm, "unigram", n_max=300, T=16, n_eval=100, h=0)
    est = steal.estimate_green(uni.wm, uni.base, n_stolen=300)
    assert est.h == 0 and est.names.size == 1
    assert steal.estimate_accuracy(est, uni.wm.meta["key"], 0.5, uni.held_out)["accuracy"] > 0.9
    assert steal.attack_point(uni, 300)["spoof_success"] > 0.5
    with pytest.raises(ValueError, match=r"h must be in \[0, inf\)"):
        steal.estimate_green(uni.wm, h=-1)
    sw = steal.generate_stealing_texts(lm, "sweet", n_max=200, T=16, n_eval=20)
    assert sw.wm.meta["algo"] == "sweet" and set(steal.attack_point(sw, 200)) >= {"spoof_success", "scrub_success"}
