"""EXP's detectors (sims.detect.stats.exp_scores): the marks read the key sequence at t mod n, dedup drops
exactly the repeated (t mod n, token) pairs, exp-edit's kernel equals its NumPy twin, both nulls hold
(Monte Carlo with stated bounds), exp-edit beats the plain sum under deletions and insertions (sign test),
and both run from the command line."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.stats import binom

import sims  # noqa: F401  (registers the families)
from sims.core import prf
from sims.core.keys import position_hashes
from sims.detect.families import detectors, score_families
from sims.detect.stats import _edit_kernels as EK
from sims.detect.stats import exp_scores as X
from sims.detect.stats.marks import ems_from_marks
from sims.experiments.attacks import attack
from sims.lm.synthetic import open_synthetic
from sims.watermarks.generate import generate_synthetic


@pytest.fixture(scope="module")
def small():
    return open_synthetic("news", vocab_size=500)


def test_marks_read_the_key_sequence_at_t_mod_n(small):
    """exp_n = 5, 23 tokens: token t's mark is -ln(1 - xi_{t mod 5, y_t}), and the family's sum is their sum."""
    gen = generate_synthetic(small, "exp", n=2, T=23, seed=1, key=9, exp_n=5)
    values, scored = X.position_marks(gen.tokens, np.array([23, 23]), 9, 5, dedup=False, vocab_size=500)
    for i in range(2):
        for t in range(23):
            want = -np.log1p(-prf.uniforms(position_hashes(9, t % 5, 1_000_000), np.array([gen.tokens[i, t]]))[0])
            assert values[i, t] == want
    assert scored.all()
    res = detectors.score(gen, small)
    assert np.allclose(res.score, values.sum(axis=1), rtol=1e-12)


def test_dedup_drops_exactly_the_repeated_position_token_pairs(small):
    """dedup scores each (t mod n, y_t) pair of a text once: nothing dropped when T <= n, else the brute-force
    first occurrences."""
    gen = generate_synthetic(small, "exp", n=3, T=60, seed=2, key=9, exp_n=4)
    _, scored = X.position_marks(gen.tokens, np.full(3, 60), 9, 4, dedup=True, vocab_size=500)
    for i in range(3):
        seen, want = set(), []
        for t in range(60):
            want.append((t % 4, int(gen.tokens[i, t])) not in seen)
            seen.add((t % 4, int(gen.tokens[i, t])))
        assert scored[i].tolist() == want
    assert not scored.all()  # exp_n = 4 repeats pairs
    assert (detectors.score(gen, small).n_scored == 60).all()  # the family dedups only when asked
    assert detectors.score(gen, small, dedup=True).n_scored.tolist() == scored.sum(axis=1).tolist()
    _, scored_256 = X.position_marks(gen.tokens, np.full(3, 60), 9, 256, dedup=True, vocab_size=500)
    assert scored_256.all()


def test_edit_kernel_equals_its_numpy_twin():
    r = np.random.default_rng(0)
    for _ in range(20):
        L, W, n = int(r.integers(1, 20)), int(r.integers(0, 6)), int(r.integers(1, 30))
        y, gap = r.integers(0, 50, L), float(r.random())
        obs, counts = np.empty(L), np.zeros(L, dtype=np.int64)
        EK.exp_exceedances(y, np.uint64(11), np.array([5, 6], dtype=np.uint64), n, W, gap, obs, counts)
        np.testing.assert_allclose(obs, X.exp_edit_reference(y, 11, n, W, gap), rtol=1e-12, atol=1e-12)
        want = sum((X.exp_edit_reference(y, k, n, W, gap) >= obs).astype(int) for k in (5, 6))
        assert counts.tolist() == want.tolist()


def test_band_zero_is_the_plain_sum(small):
    gen = attack(generate_synthetic(small, "exp", n=2, T=30, seed=3, key=9, exp_n=8), "substitution", 0.3, seed=2)
    _, S = X.exp_edit_prefix_log10p(gen, band=0, gap=1.0, resamples=9)
    assert np.allclose(S, detectors.score(gen, small).score, rtol=1e-12)


def test_nulls_hold(small):
    """Null texts (sampled from p: news, V = 500, seed 4), text i scored under its own key 1000 + i (the
    guarantees are over a random key).  Plain sum (exact Gamma): 600 texts of 40 tokens; exp-edit (19 fresh
    keys, resampling seed 0): 300 texts of 40 tokens, p-hat uniform on {1/20, ..., 1}.  The counts at
    p <= 0.05 (and 0.25, 0.5 for the plain sum) must lie in the exact binomial 99.9 % interval."""
    gen = generate_synthetic(small, "none", n=600, T=40, seed=4, key=9)
    p = np.empty(600)
    for i in range(600):
        v, s = X.position_marks(gen.tokens[i : i + 1], np.array([40]), 1000 + i, 256, dedup=True, vocab_size=500)
        p[i] = 10 ** ems_from_marks(v, s, np.array([40]))[0].log10_p[0]
    for a in (0.05, 0.25, 0.5):
        k = int(np.sum(p <= a))
        assert binom.ppf(0.0005, 600, a) <= k <= binom.isf(0.0005, 600, a), (a, k)
    sub = generate_synthetic(small, "none", n=300, T=40, seed=4, key=9)
    lp, _ = X.exp_edit_prefix_log10p(sub, key=1000 + np.arange(300), algo="exp", resamples=19)
    k = int(np.sum(10 ** lp[:, -1] <= 0.05 + 1e-12))
    assert binom.ppf(0.0005, 300, 0.05) <= k <= binom.isf(0.0005, 300, 0.05), k


@pytest.mark.parametrize("kind", ["deletion", "insertion"])
def test_edit_beats_the_plain_sum_under_edits(small, kind):
    """EXP texts (news, V = 500, 40 x 100 tokens, seed 5, key 9), 20 % deletions / insertions (attack seed 2):
    at level 0.01, exp-edit (199 fresh keys) detects texts the plain sum misses and never the reverse; the
    one-sided sign test on the discordant texts gives p = 2^-b <= 1e-3 (b >= 10)."""
    gen = attack(generate_synthetic(small, "exp", n=40, T=100, seed=5, key=9), kind, 0.2, seed=2)
    edit = X.score_exp_edit(gen, resamples=199).log10_p <= -2 + 1e-9
    plain = detectors.score(gen, small).log10_p <= -2
    b, c = int(np.sum(edit & ~plain)), int(np.sum(plain & ~edit))
    assert c == 0 and b >= 10, (b, c)


def test_registered_and_usable_from_the_cli(tmp_path, capsys):
    from sims.cli.main import main

    assert score_families.score_names("exp") == ("exp-edit",)
    with pytest.raises(ValueError, match="score 'exp-edit' does not apply to algo 'ems'"):
        score_families.get_score("exp-edit", "ems")
    path = tmp_path / "exp.npz"
    assert main(["generate", "--lm", "news", "--algo", "exp", "--exp_n", "64", "--n", "2", "--T", "40", "--seed", "1", "--key", "7",
                 "--out", str(path)]) == 0
    capsys.readouterr()
    assert main(["detect", str(path), "--key", "7", "--json"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert all(t["log10_p"] < -5 for t in plain["texts"])
    assert main(["detect", str(path), "--key", "7", "--score", "exp-edit", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [round(t["log10_p"], 6) for t in doc["texts"]] == [-4.0, -4.0]  # 1 / (9999 + 1): every fresh key scores lower


def test_the_stream_reads_the_key_sequence_length_it_is_given():
    """EXP text of exp_n = 16 fed to the stream in chunks of 7 with ``exp_n=16`` ends in the batch e-process's state; at the
    registry's default (256) it reads other key vectors; ``exp_n`` is refused for an algorithm without a key sequence."""
    from sims.detect.families import detectors
    from sims.detect.families.stream import SequentialDetector

    lm = sims.get_lm("news", vocab_size=500)
    gen = sims.generate(lm, "exp", n=3, T=60, seed=2, key=11, exp_n=16)
    batch = detectors.sequential_score(gen, lm, alpha=1e-2, dedup=False)
    for i in range(gen.n):
        own = SequentialDetector(11, algo="exp", context=gen.prompts[i], vocab_size=500, alpha=1e-2, dedup=False, exp_n=16)
        dflt = SequentialDetector(11, algo="exp", context=gen.prompts[i], vocab_size=500, alpha=1e-2, dedup=False)
        for c in range(0, 60, 7):
            state = own.update(gen.tokens[i, c:c + 7])
            d = dflt.update(gen.tokens[i, c:c + 7])
        assert (state.n_scored, state.stop) == (batch.n_scored[i], batch.stop[i])
        assert state.log_e == pytest.approx(batch.log_e[i], rel=1e-12, abs=1e-12)
        assert d.log_e != pytest.approx(state.log_e)
    with pytest.raises(ValueError, match="exp_n is a position-keyed algorithm's key-sequence length .* algo 'srl' takes none"):
        SequentialDetector(11, algo="srl", context=gen.prompts[0], vocab_size=500, exp_n=16)


def test_prefix_curve_and_tokens_to_detect(small):
    """EXP's prefix curve is the exact Gamma(n_t, 1) tail of the running sum of its position marks (scipy, per prefix
    from the second token,
    news V = 500, 3 x 40 tokens, key sequence of 16 so positions wrap, seed 2), and ``sims evaluate``'s tokens to
    detect is the first prefix from which it stays at or below 1e-4."""
    from scipy.stats import gamma as gamma_law

    from sims.detect import families
    from sims.experiments.evaluate import redgreen_ttd

    gen = generate_synthetic(small, "exp", n=3, T=40, seed=2, key=9, exp_n=16)
    curve = families.of("exp").prefix_curve(gen, 9, gamma=None, dedup=False)
    for i in range(3):
        u = prf.uniforms(position_hashes(9, np.arange(40), 16), gen.tokens[i])
        s = np.cumsum(-np.log1p(-u))
        want = gamma_law.logsf(s, np.arange(1, 41)) / np.log(10)
        want[0] = 0.0  # the EMS sum's rule: one scored token is too short to test (p = 1), as the fixed-length score
        np.testing.assert_allclose(curve[i], want, rtol=1e-9, atol=1e-12)
        below = curve[i] <= -4
        first = next((t + 1 for t in range(40) if below[t:].all()), np.nan)
        np.testing.assert_array_equal(redgreen_ttd(gen)[i], first)
    assert np.isfinite(redgreen_ttd(gen)).all()
