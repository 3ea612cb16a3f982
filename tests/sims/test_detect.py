"""Detectors: exact null tails, the empirical FPR they promise, kernel == NumPy, CLIs."""

import json
import re
import subprocess
import sys

import mpmath as mp
import numpy as np
import pytest

from sims import detect, nulls
from sims.evaluate import clopper_pearson, evaluate
from sims.generate import generate
from sims.lm import get_lm

mp.mp.dps = 50


@pytest.mark.parametrize("k, n, g", [(60, 200, 0.25), (200, 200, 0.25), (150, 1000, 0.1), (1000, 1000, 0.5), (3, 10, 0.25), (2000, 2000, 0.01)])
def test_binomial_tail_matches_50_digits_far_in_the_tail(k, n, g):
    ref = mp.log(mp.nsum(lambda j: mp.binomial(n, j) * mp.mpf(g) ** j * (1 - mp.mpf(g)) ** (n - j), [k, n]))
    assert nulls.binom_logsf(k, n, g) == pytest.approx(float(ref), rel=1e-12)


@pytest.mark.parametrize("s, n", [(10.0, 5), (300.0, 100), (2000.0, 200), (50000.0, 10)])
def test_gamma_tail_matches_50_digits(s, n):
    ref = mp.log(mp.gammainc(n, s, mp.inf, regularized=True))
    assert nulls.gamma_logsf(s, n) == pytest.approx(float(ref), rel=1e-12)


def test_kernel_green_counts_equal_numpy_reference():
    rng = np.random.default_rng(0)
    toks = rng.integers(0, 5000, size=(20, 100))
    prom = rng.integers(0, 5000, size=(20, 3))
    for h in (1, 3):
        res = detect.score_redgreen(toks, prom, 77, 0.25, vocab_size=5000, h=h)
        ref = detect.green_indicators(toks, prom, 77, 0.25, h).sum(axis=1)
        assert np.array_equal(res.score, ref) and np.all(res.n_scored == 100)


def test_dedup_counts_each_context_token_pair_once():
    toks = np.array([[5, 5, 5, 5, 6, 5]])
    res = detect.score_redgreen(toks, np.array([[5]]), 1, 0.5, vocab_size=10, dedup=True)
    assert res.n_scored[0] == 3  # (5,5), (5,6), (6,5)


def test_false_positive_rate_is_what_the_exact_test_promises():
    """H0: tokens independent of the key. Seed 0, 200000 texts of 100 uniform tokens, gamma 0.25.
    With Bernoulli green lists the count is exactly Binomial(100, 0.25): the test at level 1e-3
    must not reject more often than 1e-3 (its 99.9% Clopper-Pearson lower end <= 1e-3), and
    must not be grossly conservative (upper end >= 1e-3 / 3; the discrete test's exact size
    at this n is P(Bin >= 41) = 6.1e-4)."""
    rng = np.random.default_rng(0)
    toks = rng.integers(0, 32000, size=(200000, 100))
    prom = rng.integers(0, 32000, size=(200000, 1))
    res = detect.score_redgreen(toks, prom, 4242, 0.25, vocab_size=32000)
    k = int(np.sum(res.log10_p <= -3.0))
    lo, hi = clopper_pearson(k, toks.shape[0], 0.999)
    assert lo <= 1e-3 and hi >= 1e-3 / 3


def test_tokens_to_detect():
    lp = np.array([[-1, -5, -3, -5, -6], [-5, -5, -5, -5, -5], [0, 0, 0, 0, 0]], dtype=float)
    ttd = detect.tokens_to_detect(lp, -4.0)
    assert ttd[0] == 4 and ttd[1] == 1 and np.isnan(ttd[2])


def test_watermarks_are_detected_and_strangers_are_not():
    lm = get_lm("lfqa", vocab_size=4000)
    for algo in ("srl", "dualga", "ems", "its", "uw-delta", "uw-gamma", "autocov"):
        g = generate(lm, algo, n=4, T=150, seed=1, key=11, Delta=0.3, delta=2.0)
        assert np.all(detect.score(g, lm).log10_p < -4.0), algo
    g = generate(lm, "dualga", n=20, T=150, seed=1, key=11, Delta=0.3)
    assert np.median(detect.score(g, lm, key=12).log10_p) > -2.0


def test_evaluate_reports_the_papers_quantities():
    out = evaluate("lfqa", "dualga", n=24, T=120, seed=0, Delta=0.3)
    for key in ("kl_per_token", "realized_dg", "tpr_at_1e-4", "tpr_at_1e-6", "empirical_fpr_at_1e-4", "median_log10_p", "z_mean", "tokens_to_detect_median", "mean_entropy"):
        assert key in out
    assert out["realized_dg"] == pytest.approx(0.3, abs=0.02)
    assert out["tpr_at_1e-4"] == 1.0 and out["empirical_fpr_at_1e-4"] <= 1 / 24


def test_bad_input():
    with pytest.raises(ValueError, match=re.escape("tokens ids must be in [0, 9]")):
        detect.score_redgreen(np.array([[12]]), np.array([[1]]), 1, 0.25, vocab_size=10)
    with pytest.raises(ValueError, match=re.escape("gamma must be in (0, 1); got 0.0")):
        detect.score_redgreen(np.array([[1]]), np.array([[1]]), 1, 0.0, vocab_size=10)
    res = detect.score_redgreen(np.full((1, 3), -1), np.array([[1]]), 1, 0.25, vocab_size=10)
    assert res.flagged[0] and res.log10_p[0] == 0.0


def test_cli_generate_then_detect(tmp_path):
    f = tmp_path / "g.npz"
    subprocess.run([sys.executable, "-m", "sims", "generate", "--lm", "lfqa", "--algo", "srl", "--delta", "3", "--n", "2", "--T", "60", "--out", str(f)], check=True, capture_output=True)
    out = subprocess.run([sys.executable, "-m", "sims", "detect", str(f), "--key", "15485863", "--json"], check=True, capture_output=True, text=True).stdout
    rows = json.loads(out)["texts"]
    assert len(rows) == 2 and all(r["log10_p"] < -4 for r in rows)
