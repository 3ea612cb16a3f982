"""Permute-and-Flip watermark (:mod:`sims.watermarks.pf`): the rule by hand, its key-averaged law, its detector.

The registry battery (tests/watermarks/test_registry_battery.py) compares the Numba step and the torch
processor with the reference step at every step; here the reference itself is checked against hand
computations, the key-averaged law against the exact integral and a Monte Carlo over keys, and the
detector (the EMS family's sum, PF's score) for its statistic, its power and its null.
"""

import itertools
import math

import numpy as np
import pytest
from scipy import stats

import sims
from sims.core import prf
from sims.detect.families import detectors
from sims.detect.stats.marks import ems_from_marks
from sims.watermarks import pf, registry

P4 = np.array([0.5, 0.3, 0.15, 0.05])
R4 = np.array([0.9, 0.2, 0.05, 0.5])


def test_the_rule_by_hand():
    """argmax_k log(p_k)/tau - log r_k on four tokens:
    tau = 1:    -0.588, 0.405, 1.099, -2.303 -> token 2;
    tau = 1/4:  -2.667, -3.207, -4.592, -11.29 -> token 0 (a low temperature follows p)."""
    assert pf.pf_token(P4, R4, 1.0) == 2
    assert pf.pf_token(P4, R4, 0.25) == 0
    assert pf.pf_token(P4, np.array([0.5, 0.5, 0.5, 0.5]), 1.0) == 0  # equal noise: the mode


def test_the_keyed_uniforms_are_one_minus_the_ems_streams():
    window, V = np.array([17]), 300
    r_ems = prf.uniforms(prf.context_hash(5, window, prf.EMS), np.arange(V))
    np.testing.assert_array_equal(pf.pf_uniforms(5, window, V), 1.0 - r_ems)
    q, states = pf.ref_pf(np.full(V, 1.0 / V), window, 0, 5, (0.0, False), dict(tau=1.0))
    assert q.sum() == 1.0 and q[np.argmin(1.0 - r_ems)] == 1.0 and len(states) == V  # flat p: the smallest r wins


def test_the_detector_sums_minus_log_r_of_the_tokens():
    """The EMS family's score of a PF text is PF's statistic sum_t -log r_{y_t} (recomputed from
    :func:`sims.watermarks.pf.pf_uniforms`), its log10 p the Gamma(n, 1) tail (news, V = 2000, 2 texts x 30
    tokens, seed 0, key 42, h = 1, no dedup)."""
    lm = sims.get_lm("news", vocab_size=2000)
    gen = sims.generate(lm, "pf", n=2, T=30, seed=0, key=42)
    res = detectors.score(gen, lm, dedup=False)
    for i in range(2):
        seq = np.concatenate([gen.prompts[i, -1:], gen.tokens[i]])
        s = sum(-math.log(pf.pf_uniforms(42, seq[t : t + 1], 2000)[seq[t + 1]]) for t in range(30))
        assert res.score[i] == pytest.approx(s, rel=1e-12)
        assert res.log10_p[i] == pytest.approx(stats.gamma.logsf(s, 30) / math.log(10), rel=1e-9)


def test_pf_texts_are_detected():
    """Power: news (V = 2000), 20 texts x 100 tokens at tau = 1, seed 1, key 9: every text below 1e-6 with
    its key, none below 1e-4 with another key (3)."""
    lm = sims.get_lm("news", vocab_size=2000)
    gen = sims.generate(lm, "pf", n=20, T=100, seed=1, key=9)
    assert (detectors.score(gen, lm, key=9).log10_p < -6).all()
    assert (detectors.score(gen, lm, key=3).log10_p > -4).all()


def _exact_law(p, tau):
    """PF's law by expanding prod_{i != k} (1 - s w_i) and integrating each monomial over [0, 1] (small V)."""
    w = np.exp((np.log(p) - np.log(p).max()) / tau)
    q = np.zeros(len(p))
    for k in range(len(p)):
        rest = [w[i] for i in range(len(p)) if i != k]
        for m in range(len(rest) + 1):
            q[k] += (-1) ** m * sum(math.prod(c) for c in itertools.combinations(rest, m)) / (m + 1)
        q[k] *= w[k]
    return q


@pytest.mark.parametrize("tau", [1.0, 0.7, 2.5])
def test_the_key_averaged_law_equals_the_exact_integral(tau):
    """Six tokens (p from seed 0): the quadrature equals the expanded polynomial integral within 1e-12, and sums to 1
    before normalising."""
    p = np.random.default_rng(0).dirichlet(np.ones(6))
    exact = _exact_law(p, tau)
    assert exact.sum() == pytest.approx(1.0, abs=1e-13)
    np.testing.assert_allclose(pf.pf_law(p, tau), exact, rtol=0, atol=1e-12)


def test_the_key_averaged_law_of_large_vocabularies():
    """A flat p of 50,000 tokens is kept (symmetry); a peaked one (Dirichlet(0.05), seed 1) agrees at 24 and 64 nodes
    per panel within 1e-12."""
    np.testing.assert_allclose(pf.pf_law(np.full(50_000, 2e-5)), 2e-5, rtol=1e-12)
    p = np.random.default_rng(1).dirichlet(np.full(50_000, 0.05))
    np.testing.assert_allclose(pf.pf_law(p, 0.8), pf.pf_law(p, 0.8, nodes=64), rtol=0, atol=1e-12)


def test_the_key_averaged_law_against_a_monte_carlo_over_keys():
    """Seed 2: 60,000 random keys, one context, 12 tokens of p (Dirichlet(1), seed 3), tau = 0.8.  Each token's
    count lies within the two-sided 99.9 % band of Binomial(60,000, q_k) (Bonferroni over the 12 tokens); p itself,
    the law of sampling, is rejected by the same test (the band is narrow enough to tell the two apart)."""
    V, N, tau, window = 12, 60_000, 0.8, np.array([4])
    p = np.random.default_rng(3).dirichlet(np.ones(V))
    keys = np.random.default_rng(2).integers(0, 2**63, size=N)
    counts = np.bincount([pf.pf_token(p, pf.pf_uniforms(int(k), window, V), tau) for k in keys], minlength=V)
    z_crit = stats.norm.isf(1e-3 / (2 * V))

    def worst(q):
        return float(np.max(np.abs(counts - N * q) / np.sqrt(N * q * (1 - q))))

    assert worst(pf.pf_law(p, tau)) < z_crit
    assert worst(p) > z_crit


def test_the_law_checks_its_arguments():
    with pytest.raises(ValueError, match="tau must be in \\(0, inf\\); got 0.0"):
        pf.pf_law(P4, 0.0)
    with pytest.raises(ValueError, match="nodes must be in \\[2, inf\\); got 1"):
        pf.pf_law(P4, 1.0, nodes=1)


@pytest.mark.parametrize("level", [1e-4, 1e-6])
def test_the_null_tail_holds_its_level_in_log_space(level):
    """P_H0(p <= level) = level for the Gamma(n, 1) tail of n = 50 unit exponentials (PF's marks under H0), by
    importance sampling: seed 4, 40,000 sums of Exp(rate theta) marks, theta = n / c (c the level's critical value),
    weighted by the likelihood ratio theta^-n e^-(1 - theta) S; the estimate is within 4.5 of its standard errors
    (confidence > 99.999 %) and within 5 % of the level.  The p-values are the detector's own
    (:func:`sims.detect.stats.marks.ems_from_marks`), compared in log10."""
    n, N = 50, 40_000
    c = stats.gamma.isf(level, n)
    theta = n / c
    x = np.random.default_rng(4).exponential(1.0 / theta, size=(N, n))
    res, _ = ems_from_marks(x, np.ones((N, n), dtype=bool), np.full(N, n))
    S = x.sum(axis=1)
    w = np.exp(-n * math.log(theta) - (1.0 - theta) * S) * (res.log10_p <= math.log10(level))
    est, se = w.mean(), w.std(ddof=1) / math.sqrt(N)
    assert abs(est - level) < 4.5 * se and abs(est / level - 1) < 0.05


def test_null_p_values_over_many_keys():
    """Real PF texts under keys that did not mark them: news (V = 2000), 400 texts x 30 tokens (seed 5, key 1),
    dedup, scored under 2,500 other keys (1,000,000 p-values, :func:`sims.detect.families.detectors.score_keys`).
    #(p <= 1e-4) lies in the two-sided 99.9 % band of Binomial(10^6, 1e-4) and #(p <= 1e-6) is not above the
    one-sided 99.9 % bound of Binomial(10^6, 1e-6)."""
    lm = sims.get_lm("news", vocab_size=2000)
    gen = sims.generate(lm, "pf", n=400, T=30, seed=5, key=1)
    lp, _ = detectors.score_keys(gen, np.arange(2, 2502))
    N = lp.size
    k4, k6 = int((lp <= -4).sum()), int((lp <= -6).sum())
    assert stats.binom.ppf(5e-4, N, 1e-4) <= k4 <= stats.binom.isf(5e-4, N, 1e-4)
    assert k6 <= stats.binom.isf(1e-3, N, 1e-6)


def test_the_record():
    rec = registry.get("pf")
    assert (rec.code, rec.params, rec.family, rec.point_mass, rec.distortion_free) == (15, ("tau",), "ems", True, False)
