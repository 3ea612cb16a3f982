"""EWD's entropy-weighted green count (sims.detect.stats.ewd_scores): the exact lattice tail against the enumeration of
every outcome, the binomial tail and the tilted lattice recursion; the null's size at 1e-4 and 1e-6 computed exactly
for the weights of real null texts; Monte Carlo uniformity of null p-values; detection and refusals."""

import math
from fractions import Fraction
from itertools import product

import numpy as np
import pytest
from scipy import stats

import sims
from sims.detect.families.score_families import get_score, score_generation
from sims.detect.stats import ewd_scores
from sims.detect.stats.entropies import spike_entropies, spike_modulus
from sims.detect.stats.ewd_scores import EWD_LEVELS, lattice_logsf, score_ewd
from sims.detect.stats.lr_scores import weighted_bernoulli_logsf
from sims.detect.stats.marks import null_green_probability

REL = 1e-11  # enumeration and binomial: the log-space convolution rounds once per token (n <= 2000, each ~2e-16 relative; seen 1.3e-12)
REL_TILT = 1e-9  # against the tilted recursion: its bisected tilt (60 halvings) and FFT-free sums, both in floating point
LM = sims.get_lm("news", vocab_size=2000)
KEY, NULL_KEY = 7, 1007


def _enumerated_tail(k, s, g) -> Fraction:
    """P(sum k_t X_t >= s) over all 2^n outcomes, in exact rational arithmetic (g as its binary float)."""
    g = Fraction(g)
    total = Fraction(0)
    for x in product((0, 1), repeat=len(k)):
        if sum(a * b for a, b in zip(k, x)) >= s:
            ones = sum(x)
            total += g**ones * (1 - g) ** (len(k) - ones)
    return total


@pytest.mark.parametrize("seed", range(6))
def test_lattice_tail_equals_the_enumeration_of_every_outcome(seed):
    """n = 11 random weights in [0, K] (zeros included), every s from 0 to sum k + 1, g in {0.25, 0.5, 0.1 (not dyadic)}."""
    rng = np.random.default_rng(seed)
    k = rng.integers(0, EWD_LEVELS + 1, size=11)
    k[rng.integers(0, 11)] = 0
    g = (0.25, 0.5, 0.1)[seed % 3]
    for s in range(0, int(k.sum()) + 2):
        exact = _enumerated_tail(k.tolist(), s, g)
        got = lattice_logsf(k, s, g)
        if exact == 0:
            assert got == -math.inf, s
        else:
            want = math.log(exact.numerator) - math.log(exact.denominator)
            assert got == pytest.approx(want, rel=REL, abs=1e-13), (s, got, want)


@pytest.mark.parametrize("c, n, g", [(1, 50, 0.25), (3, 400, 0.25), (7, 2000, 0.5), (32, 600, 0.1)])
def test_equal_weights_give_the_binomial_tail_far_into_it(c, n, g):
    """All weights equal c: P(c Bin(n, g) >= s) = P(Bin(n, g) >= ceil(s / c)), the log-sum-exp of scipy's binom.logpmf
    (its logsf underflows to -inf below 1e-308), from the middle of the law to tails of 1e-6, 1e-30 and 1e-600."""
    from scipy.special import logsumexp

    k = np.full(n, c)
    deepest = 0.0
    for j in sorted({int(n * g), int(n * g) + 3 * int(math.sqrt(n)), int(0.8 * n), n}):
        s = c * j - (c - 1) // 2  # a threshold between lattice points where c > 1
        want = float(logsumexp(stats.binom.logpmf(np.arange(math.ceil(s / c), n + 1), n, g)))
        assert lattice_logsf(k, s, g) == pytest.approx(want, rel=REL, abs=1e-13), (j, want)
        deepest = min(deepest, want)
    assert deepest < math.log(1e-30)


@pytest.mark.parametrize("seed", range(4))
def test_lattice_tail_equals_the_tilted_recursion(seed):
    """Random weights (n = 300, K = 32) against sims.detect.stats.lr_scores.weighted_bernoulli_logsf, an independent exact
    computation (exponential tilting, then a linear-space lattice recursion), from the mean to the last point."""
    rng = np.random.default_rng(100 + seed)
    k = rng.integers(0, EWD_LEVELS + 1, size=300)
    g = 0.25
    total = int(k.sum())
    for s in (int(g * total), int(0.4 * total), int(0.7 * total), total - 5, total):
        assert lattice_logsf(k, s, g) == pytest.approx(weighted_bernoulli_logsf(k, s, g), rel=REL_TILT), s


def test_lattice_tail_refuses_bad_input_naming_it():
    with pytest.raises(ValueError, match=r"g must be in \(0, 1\); got 1.0"):
        lattice_logsf([1, 2], 1, 1.0)
    with pytest.raises(ValueError, match="k must hold nonnegative integers; got min -1"):
        lattice_logsf([1, -1], 1, 0.5)
    with pytest.raises(ValueError, match=r"levels must be an integer in \[1, inf\); got 0"):
        ewd_scores.ewd_weights(np.ones((1, 2)), np.ones((1, 2), dtype=bool), 0)
    with pytest.raises(ValueError, match=r"delta must be in \(0, inf\]; got 0.0"):
        spike_modulus(0.25, 0.0)


def test_spike_modulus_is_kirchenbauers():
    """z = (1 - gamma)(e^delta - 1) / (1 + (e^delta - 1) gamma): 1.8449 at gamma 0.25, delta 2 (by hand: 0.75 x 6.3891 / 2.5973),
    0 at a vanishing boost, and the hard list's (1 - gamma) / gamma = 3 as the limit delta -> inf."""
    assert spike_modulus(0.25, 2.0) == pytest.approx(0.75 * math.expm1(2.0) / (1.0 + 0.25 * math.expm1(2.0)), rel=1e-15)
    assert spike_modulus(0.25, 2.0) == pytest.approx(1.8449, abs=1e-4)
    assert spike_modulus(0.25, 1e-9) == pytest.approx(0.75e-9, rel=1e-6)
    assert spike_modulus(0.25, math.inf) == 3.0 and spike_modulus(0.25, 40.0) == pytest.approx(3.0, rel=1e-15)


def test_weights_are_the_rounded_spike_entropy_scaled_to_the_texts_range():
    """k_t = round(K (S_t - min S) / (max S - min S)) on the scored tokens, 0 elsewhere, K on a text of equal entropies;
    the spike entropy is sum p / (1 + z p) and lies in [1/(1+z), 1]."""
    gen = sims.generate(LM, "srl", n=2, T=30, seed=1, key=KEY)
    z = spike_modulus(gen.meta["gamma"], gen.meta["delta"])
    spike = spike_entropies(gen, LM, z)
    assert (spike >= 1.0 / (1.0 + z) - 1e-12).all() and (spike <= 1.0 + 1e-12).all()
    p = LM.probs_along(np.concatenate([gen.prompts[0], gen.tokens[0]]), gen.prompts.shape[1], 30)[4]
    assert spike[0, 4] == pytest.approx(float((p / (1 + z * p)).sum()), rel=1e-12)
    scored = np.ones(spike.shape, dtype=bool)
    scored[:, ::3] = False
    k = ewd_scores.ewd_weights(spike, scored, EWD_LEVELS)
    low = np.array([spike[i][scored[i]].min() for i in range(2)])[:, None]
    high = np.array([spike[i][scored[i]].max() for i in range(2)])[:, None]
    np.testing.assert_array_equal(k, np.where(scored, np.rint(EWD_LEVELS * (spike - low) / (high - low)), 0))
    assert [(int(k[i][scored[i]].min()), int(k[i][scored[i]].max())) for i in range(2)] == [(0, EWD_LEVELS)] * 2
    flat = ewd_scores.ewd_weights(np.full((1, 4), 0.7), np.array([[True, True, False, True]]), EWD_LEVELS)
    np.testing.assert_array_equal(flat, [[EWD_LEVELS, EWD_LEVELS, 0, EWD_LEVELS]])  # equal entropies: the green count


@pytest.fixture(scope="module")
def null_gen():
    """300 srl texts of 40 tokens (news, V = 2000, seed 11) marked with KEY: scored under NULL_KEY they are null texts."""
    return sims.generate(LM, "srl", n=300, T=40, seed=11, key=KEY)


@pytest.mark.parametrize("a", [1e-4, 1e-6])
def test_the_null_size_at_deep_levels_is_at_most_the_level_exactly(null_gen, a):
    """Given a text, its weights are fixed and its kept colours i.i.d. Bernoulli(g) (the null), so the test's size is the
    lattice tail at the smallest s whose p-value is <= a: computed exactly (log space) for the weights of 60 null texts, it
    is <= a, and the next lattice point down would exceed a (the level is attained as closely as the lattice allows)."""
    from sims.detect.stats.scores import token_marks

    gen, m = null_gen, null_gen.meta
    _, scored, _ = token_marks(gen.tokens[:60], gen.prompts[:60, -m["h"]:], NULL_KEY, gamma=m["gamma"], h=m["h"], dedup=True,
                               vocab_size=m["vocab_size"], lengths=gen.lengths[:60])
    spike = spike_entropies(gen, LM, spike_modulus(m["gamma"], m["delta"]))[:60]
    k = ewd_scores.ewd_weights(spike, scored)
    g = null_green_probability(m["gamma"], "bernoulli", m["vocab_size"])
    for i in range(60):
        w = k[i][scored[i]]
        total = int(w.sum())
        if lattice_logsf(w, total, g) > math.log(a):
            continue  # this text cannot reach the level: the test never rejects it
        lo, hi = 0, total  # smallest s with log P(S >= s) <= log a: bisection (the tail decreases in s)
        while lo < hi:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if lattice_logsf(w, mid, g) <= math.log(a) else (mid + 1, hi)
        assert lattice_logsf(w, lo, g) <= math.log(a) + 1e-12
        assert lattice_logsf(w, lo - 1, g) > math.log(a)


def test_null_p_values_are_valid_monte_carlo(null_gen):
    """Seed 11, 300 null texts of 40 tokens scored under NULL_KEY with dedup: #(p <= a) is not above Binomial(300, a)
    (one-sided exact binomial test at 1e-3, Bonferroni over a in 0.01, 0.1, 0.5)."""
    res = score_ewd(null_gen, LM, key=NULL_KEY, dedup=True)
    assert np.isfinite(res.log10_p).all() and (res.log10_p <= 0).all()
    p = 10.0 ** res.log10_p
    for a in (0.01, 0.1, 0.5):
        x = int((p <= a).sum())
        assert stats.binomtest(x, 300, a, alternative="greater").pvalue > 1e-3 / 3, (a, x)


def test_ewd_detects_its_watermark_and_is_offered_as_a_score():
    """srl, dualga and sweet texts of 150 tokens are detected at 1e-4 under their key by `--score ewd`; the score applies to
    the Bernoulli red-green algorithms (not DiPmark's partition lists, nor EMS)."""
    for algo in ("srl", "dualga", "sweet"):
        gen = sims.generate(LM, algo, n=3, T=150, seed=2, key=KEY)
        res = score_generation(gen, "ewd", LM, dedup=True)
        assert res.watermarked.all(), (algo, res.log10_p)
        assert (score_generation(gen, "ewd", LM, key=NULL_KEY, dedup=True).log10_p > -4).all()
    assert "ewd" in sims.detect.families.score_families.score_names("srl")
    with pytest.raises(ValueError, match="score 'ewd' does not apply to algo 'dipmark'"):
        get_score("ewd", "dipmark")
    with pytest.raises(ValueError, match="score 'ewd' does not apply to algo 'ems'"):
        get_score("ewd", "ems")


def test_ewd_refuses_partition_lists_and_a_missing_lm():
    gen = sims.generate(LM, "srl", n=1, T=10, seed=0, key=KEY, green_kind="partition")
    with pytest.raises(ValueError, match="the EWD score needs Bernoulli green lists"):
        score_ewd(gen, LM)
    gen = sims.generate(LM, "srl", n=1, T=10, seed=0, key=KEY)
    with pytest.raises(ValueError, match="pass lm for algo 'srl'"):
        score_ewd(gen, None)
    with pytest.raises(ValueError, match="algo must be one of .* for the EWD score; got 'ems'"):
        score_ewd(gen, LM, algo="ems")


def test_prefix_p_values_are_the_cut_texts_scores():
    """ewd_prefix_log10p's column for a prefix of L tokens is score_ewd of the texts cut at L (the weights rescaled over
    the prefix's own scored tokens), with and without dedup; its last column is the whole text's."""
    import dataclasses

    gen = sims.generate(LM, "srl", n=4, T=60, seed=2, key=KEY, delta=2.0)
    lengths = [15, 30, 45, 60]
    for dedup in (False, True):
        lp = ewd_scores.ewd_prefix_log10p(gen, LM, lengths, dedup=dedup)
        assert lp.shape == (4, 4) and np.array_equal(lp[:, -1], score_ewd(gen, LM, dedup=dedup).log10_p)
        for j, L in enumerate(lengths[:-1]):
            cut = dataclasses.replace(gen, tokens=gen.tokens[:, :L].copy(), lengths=np.minimum(gen.lengths, L),
                                      **{f: getattr(gen, f)[:, :L] for f in ("kl", "G", "dg", "entropy", "lam")})
            assert np.array_equal(lp[:, j], score_ewd(cut, LM, dedup=dedup).log10_p), (dedup, L)
        assert (lp[:, -1] < lp[:, 0]).all()  # the watermark's evidence grows with the prefix
