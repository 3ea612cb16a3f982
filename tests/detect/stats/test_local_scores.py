"""The red-green local score (issue 31's edit-tolerant red-green score): kernel = definition, exact null
tail against 50-digit mpmath (enumeration; run-length recursion deep in the tail) and Monte Carlo (plain
and importance-sampled, to 1e-9), calibration on key-independent text, the spliced segment found, and
the registry / CLI / figure wiring."""

from __future__ import annotations

import itertools
import json
import math

import mpmath
import numpy as np
import pytest
from scipy.stats import beta

import sims  # noqa: F401  (registers the families)
from sims.detect.families import score_families
from sims.detect.families.score_families import score_generation
from sims.detect.stats import _local_kernels as LK
from sims.detect.stats import local_scores as LS
from sims.experiments.splice import splice
from sims.lm.synthetic import open_synthetic
from sims.watermarks.generate import generate_synthetic


@pytest.fixture(scope="module")
def small():
    return open_synthetic("news", vocab_size=500)


def _local_scores_all(x: np.ndarray, a: int, b: int) -> np.ndarray:
    """Local score of every row of 0/1 colours, vectorised from the definition: max_j (c_j - min_{i <= j} c_i)."""
    c = np.concatenate([np.zeros((x.shape[0], 1), dtype=np.int64), np.cumsum(np.where(x > 0, a, -b), axis=1)], axis=1)
    return np.max(c - np.minimum.accumulate(c, axis=1), axis=1)


def test_kernel_equals_the_definition():
    """Random colours with unscored gaps: every prefix's local score is the definition's; the best segment sums to H."""
    rng = np.random.default_rng(4)
    bits = (rng.random((40, 30)) < 0.45).astype(np.float64)
    scored = rng.random((40, 30)) < 0.85
    for a, b in ((7, 4), (1, 2), (4, 5)):
        Hrun = np.zeros(bits.shape, dtype=np.int64)
        start, stop = np.zeros(40, dtype=np.int64), np.zeros(40, dtype=np.int64)
        LK.local_running(bits, scored, a, b, Hrun, start, stop)
        for L in (1, 7, 30):
            assert np.array_equal(Hrun[:, L - 1], LS.local_score_reference(bits[:, :L], scored[:, :L], a, b))
        seg = [np.sum(np.where(bits[i, start[i]:stop[i]] > 0.5, a, -b)[scored[i, start[i]:stop[i]]]) for i in range(40)]
        assert np.array_equal(seg, Hrun[:, -1]) and np.all(Hrun[:, -1] > 0)


@pytest.mark.parametrize("gamma,a,b", [(0.25, 7, 4), (0.39831178505500225, 4, 5), (0.25, 1, 2), (0.5, 1, 1)])
def test_null_tail_equals_enumeration_in_50_digits(gamma, a, b):
    """n = 14: P(H >= k) for every k, summed over all 2^14 colourings in 50-digit mpmath, equals the
    chain's to 1e-12 relative (tails down to gamma^14 = 3.7e-9 at gamma = 0.25); n = 0 and k <= 0 give 1."""
    n = 14
    x = np.array(list(itertools.product((0, 1), repeat=n)), dtype=np.int64)
    H, g = _local_scores_all(x, a, b), x.sum(axis=1)
    mpmath.mp.dps = 50
    gm = mpmath.mpf(gamma)
    ks = np.arange(1, H.max() + 1)
    got = LS.local_logsf(ks, n, gamma, a, b)
    for k, lp in zip(ks, got):
        cnt = np.bincount(g[H >= k], minlength=n + 1)
        exact = mpmath.fsum(int(c) * gm**j * (1 - gm) ** (n - j) for j, c in enumerate(cnt) if c)
        assert abs(lp - float(mpmath.log(exact))) < 1e-12 * max(1.0, abs(lp)), (k, lp, exact)
    assert np.all(LS.local_logsf([0, -3, 5], [10, 10, 0], gamma, a, b) == [0.0, 0.0, -np.inf])


def test_deep_tail_equals_the_run_length_recursion():
    """A red that costs more than the text can gain (b = n + 1) makes H the longest green run, whose
    tail P(run >= r in n) has the classical recursion B_m = B_{m-1} + (1 - g) g^r (1 - B_{m-r-1}) (no
    cancellation), here in 50-digit mpmath: n = 400, runs 5..150 (tails to 1e-88), 1e-10 relative in log."""
    n, gamma = 400, 0.25
    mpmath.mp.dps = 50
    gm = mpmath.mpf(gamma)
    for r in (5, 12, 40, 150):
        B = [mpmath.mpf(0)] * (n + 1)
        B[r] = gm**r
        for m in range(r + 1, n + 1):
            B[m] = B[m - 1] + (1 - gm) * gm**r * (1 - (B[m - r - 1] if m - r - 1 >= 0 else 0))
        got = float(LS.local_logsf(r, n, gamma, 1, n + 1))
        assert abs(got - float(mpmath.log(B[n]))) < 1e-10 * abs(got), r


def _is_estimate(n, gamma, a, b, k, rho, N, seed):
    """Importance-sampled P(H_n >= k): colours drawn green at rate rho, weighted by the likelihood ratio."""
    x = (np.random.default_rng(seed).random((N, n)) < rho).astype(np.int64)
    g = x.sum(axis=1)
    w = np.exp(g * math.log(gamma / rho) + (n - g) * math.log((1 - gamma) / (1 - rho))) * (_local_scores_all(x, a, b) >= k)
    return w.mean(), w.std(ddof=1) / math.sqrt(N)


def test_null_tail_against_monte_carlo():
    """n = 60, gamma = 0.25, weights (7, 4).  Plain Monte Carlo (seed 0, 100000 texts): the count at the k
    with tail nearest 1e-3 lies in its 99.9 % Clopper-Pearson interval.  Importance sampling (colours green
    at 0.6, likelihood-ratio weights; seeds 1, 2; 20000 texts): at the k with tails nearest 1e-6 and 1e-9 the
    estimate is within 3.29 standard errors (99.9 %) of the exact tail, with standard error below 10 %."""
    n, gamma, a, b = 60, 0.25, 7, 4
    ks = np.arange(1, a * n + 1)
    lp = LS.local_logsf(ks, n, gamma, a, b)
    N = 100_000
    x = (np.random.default_rng(0).random((N, n)) < gamma).astype(np.int64)
    H = _local_scores_all(x, a, b)
    k3 = int(ks[np.argmin(np.abs(lp - math.log(1e-3)))])
    c = int(np.sum(H >= k3))
    lo, hi = beta.ppf(0.0005, c, N - c + 1), beta.ppf(0.9995, c + 1, N - c)
    assert lo <= math.exp(lp[k3 - 1]) <= hi, (k3, c, math.exp(lp[k3 - 1]))
    for seed, target in ((1, 1e-6), (2, 1e-9)):
        k = int(ks[np.argmin(np.abs(lp - math.log(target)))])
        p = math.exp(lp[k - 1])
        est, se = _is_estimate(n, gamma, a, b, k, 0.6, 20_000, seed)
        assert se < 0.1 * p and abs(est - p) <= 3.29 * se, (target, k, p, est, se)


def test_weights_and_rho():
    assert LS.local_weights(0.25, 0.5) == (7, 4)  # ln 2 / ln 1.5 = 1.71 ~ 7 / 4
    assert LS.local_weights(0.25, 0.95) == (1, 2)  # 1.335 / 2.708 = 0.49
    assert LS.local_weights(0.25, 0.5, qmax=2) == (1, 1)
    assert LS.local_rho(dict(algo="dualga", gamma=0.4, Delta=0.3)) == pytest.approx(0.7)
    assert LS.local_rho(dict(algo="srl", gamma=0.25, delta=2.0)) == pytest.approx(0.25 * math.e**2 / (0.25 * math.e**2 + 0.75))
    assert LS.local_rho(dict(algo="hard", gamma=0.25)) == LS.RHO_MAX
    for call, msg in ((lambda: LS.local_weights(0.25, 0.2), r"rho must be in \(0.25, 1\); got 0.2"),
                      (lambda: LS.local_weights(1.0, 0.5), r"gamma must be in \(0, 1\); got 1.0"),
                      (lambda: LS.local_weights(0.25, 0.5, qmax=1), r"qmax must be an integer in \[2, inf\); got 1"),
                      (lambda: LS.local_logsf(3, 10, 0.25, 0, 1), r"a must be an integer in \[1, inf\); got 0"),
                      (lambda: LS.local_logsf(2.5, 10, 0.25, 1, 1), "k must hold integers"),
                      (lambda: LS.local_logsf(2, -1, 0.25, 1, 1), "n must be >= 0")):
        with pytest.raises(ValueError, match=msg):
            call()


def test_calibrated_on_key_independent_text(small):
    """400 SRL texts of 40 tokens scored under a key that did not write them: the share with p <= alpha is
    at most alpha + 3.1 binomial sd (99.9 %) at alpha = 0.01, 0.05, 0.2 (the null is exact for distinct
    contexts, conservative with repeats), and not far below it at 0.2 (> alpha - 0.1: the test is not dead)."""
    gen = generate_synthetic(small, "srl", n=400, T=40, seed=21, key=5)
    p = 10 ** score_generation(gen, "green-local", key=6).log10_p
    for alpha in (0.01, 0.05, 0.2):
        assert np.mean(p <= alpha) <= alpha + 3.1 * math.sqrt(alpha * (1 - alpha) / p.size), alpha
    assert np.mean(p <= 0.2) > 0.1


def test_finds_a_watermarked_passage_spliced_into_plain_text():
    """30 texts: 150 plain tokens with 50 DualGA tokens pasted at a random place (seed 3).  The local score's
    best segment overlaps the pasted passage in every text, and its median log10 p is below the green
    count's by more than 1 (the whole-text count dilutes the passage in the plain tokens around it)."""
    lm = open_synthetic("news")
    wm = generate_synthetic(lm, "dualga", n=30, T=50, seed=1, key=5)
    plain = generate_synthetic(lm, "none", n=30, T=150, seed=2, key=5, gamma=wm.meta["gamma"])
    spliced, at = splice(wm, plain, seed=3)
    toks = spliced.tokens
    loc = score_generation(spliced, "green-local")
    green = score_generation(spliced, "green")
    _, _, start, stop, _, _ = LS.local_segments(toks, plain.prompts[:, -1:], 5, wm.meta["gamma"], rho=LS.local_rho(wm.meta), vocab_size=lm.vocab_size)
    assert np.all((start < at + 50) & (stop > at))
    assert np.median(loc.log10_p) < np.median(green.log10_p) - 1.0, (np.median(loc.log10_p), np.median(green.log10_p))


def test_registered_and_usable_from_the_cli_and_fig_scores(tmp_path, capsys, small):
    """``sims detect --score green-local`` prints the family's p-values; fig_scores' whole-text column is its p-value."""
    from paper_figs import fig_scores
    from sims.cli.main import main

    fam = score_families.get_score("green-local")
    assert not fam.needs_lm and not fam.default and "srl" in fam.algos and "dualga" in fam.algos
    with pytest.raises(ValueError, match="score 'green-local' does not apply to algo 'ems'"):
        score_families.get_score("green-local", "ems")
    gen = generate_synthetic(small, "srl", n=3, T=60, seed=1, key=fig_scores.KEY)
    gen.save(tmp_path / "srl.npz")
    want = score_generation(gen, "green-local")
    assert main(["detect", str(tmp_path / "srl.npz"), "--key", str(fig_scores.KEY), "--score", "green-local", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert np.allclose([t["log10_p"] for t in doc["texts"]], want.log10_p) and np.all(want.log10_p < -2)
    rej = fig_scores._prefix_rejects("green-local", gen, None, [10, 20, 60], (1e-2,), small)[1e-2]
    assert np.array_equal(rej[:, -1], want.log10_p <= -2)
    lp = LS.local_prefix_log10p(gen, [10, 20, 60])
    first10 = LS.score_local(gen.tokens[:, :10], gen.prompts[:, -1:], fig_scores.KEY, 0.25, rho=LS.local_rho(gen.meta), vocab_size=500).log10_p
    assert np.array_equal(lp[:, -1], want.log10_p) and np.array_equal(lp[:, 0], first10)
