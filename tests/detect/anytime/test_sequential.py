"""Anytime-valid detection: kernels equal their NumPy references, the stream equals the batch,
and the false-positive rate under optional stopping is at most alpha (Ville) while the naive
"stop at the first prefix with p <= alpha" rule fails the same check."""

from __future__ import annotations

import math

import numpy as np
import pytest

import sims
from sims.detect.anytime import peeking, sequential
from sims.detect.families import detectors
from sims.detect.families.stream import SequentialDetector
from sims.detect.stats import scores
from sims.lm.synthetic import lm_step_probs

KEY = 15485863
V = 1000


@pytest.fixture(scope="module")
def lm():
    return sims.get_lm("news", vocab_size=V)


@pytest.fixture(scope="module")
def texts(lm):
    """Null texts, SRL texts of three strengths and EMS texts (news preset, V = 1000, seeds 0-4), 100 tokens."""
    gens = [sims.generate(lm, "none", n=30, T=100, seed=0, key=KEY), sims.generate(lm, "ems", n=30, T=100, seed=4, key=KEY)]
    gens += [sims.generate(lm, "srl", n=30, T=100, seed=s, key=KEY, delta=d) for s, d in ((1, 0.5), (2, 1.0), (3, 2.0))]
    return np.concatenate([g.tokens for g in gens]), np.concatenate([g.prompts[:, -1:] for g in gens])


def test_thresholds_are_the_first_crossing():
    """thr[n] is the smallest count k with ln E(k, n) >= ln(1/alpha) (red-green, exact), and a
    bracket end within 1e-12 of the root for the continuous EMS mixture."""
    mix = sequential.bernoulli_mixture(0.3)
    thr = sequential.linear_thresholds(mix, 300, 1e-4)
    bound = math.log(1e4)
    for n in range(301):
        if np.isfinite(thr[n]):
            assert mix.log_e(thr[n], n) >= bound and (thr[n] == 0 or mix.log_e(thr[n] - 1, n) < bound)
        else:
            assert mix.log_e(n, n) < bound
    emix = sequential.exponential_mixture()
    ethr = sequential.linear_thresholds(emix, 300, 1e-6)
    assert np.all(emix.log_e(ethr[1:], np.arange(1, 301)) >= math.log(1e6))
    assert np.all(emix.log_e(ethr[1:] * (1 - 1e-9), np.arange(1, 301)) < math.log(1e6))


@pytest.mark.parametrize("dedup", [False, True])
@pytest.mark.parametrize("stat", ["green", "ems"])
def test_kernel_equals_numpy_reference(texts, stat, dedup):
    """The fused Numba scan (threshold table) gives the NumPy reference's first crossing and
    final log e-value (the mixture evaluated after every token) on null and watermarked texts."""
    toks, prompts = texts
    alpha = 1e-3
    gamma = 0.25 if stat == "green" else None
    f = sequential.sequential_redgreen if stat == "green" else sequential.sequential_ems
    res = f(toks, prompts, KEY, *([gamma] if gamma else []), alpha=alpha, vocab_size=V, dedup=dedup)
    values, scored = scores.token_scores_reference(toks, prompts, KEY, stat=stat, gamma=gamma, vocab_size=V, dedup=dedup)
    g_eff = scores._stat_code("green", 0.25, "bernoulli", V)[3]
    mix = sequential.bernoulli_mixture(g_eff) if stat == "green" else sequential.exponential_mixture()
    path = sequential.log_e_path(values, scored, mix)
    np.testing.assert_array_equal(res.stop, sequential.first_crossing(path, alpha))
    np.testing.assert_allclose(res.log_e, path[:, -1], rtol=1e-12, atol=1e-9)
    assert 0 < res.detected.sum() < len(res.stop)  # both outcomes exercised


def test_siphash_path_equals_reference(texts):
    toks, prompts = texts
    res = sequential.sequential_redgreen(toks, prompts, bytes(range(16)), 0.25, alpha=1e-2, vocab_size=V, prf="siphash")
    values, scored = scores.token_scores(toks, prompts, bytes(range(16)), gamma=0.25, vocab_size=V, dedup=True, prf="siphash")
    path = sequential.log_e_path(values, scored, sequential.bernoulli_mixture(scores._stat_code("green", 0.25, "bernoulli", V)[3]))
    np.testing.assert_array_equal(res.stop, sequential.first_crossing(path, 1e-2))


@pytest.mark.parametrize("algo,kw", [("srl", dict(delta=2.0)), ("ems", {}), ("autocov", dict(Delta=0.2)), ("its", {}), ("uw-gamma", {})])
def test_stream_equals_batch(lm, algo, kw):
    """SequentialDetector fed in chunks of 1 to 17 tokens (a pure-NumPy loop: the reference of the
    AutoCov and keyed-order kernels) ends in the state of the batch scan of the whole text."""
    gen = sims.generate(lm, algo, n=4, T=60, seed=5, key=KEY, **kw)
    res = detectors.sequential_score(gen, lm, alpha=1e-3)
    probs = lm_step_probs(lm, gen)
    cuts = np.random.default_rng(0).integers(1, 18, size=60).cumsum()
    for i in range(4):
        det = SequentialDetector(KEY, algo=algo, context=gen.prompts[i], gamma=gen.meta["gamma"], vocab_size=V, alpha=1e-3)
        P = probs(i)
        for a, b in zip(np.r_[0, cuts], np.minimum(cuts, 60)):
            if a < b:
                state = det.update(gen.tokens[i, a:b], P[a:b] if algo in scores.KEYED_ORDER_ALGOS else None)
        assert state.tokens_seen == 60 and state.n_scored == res.n_scored[i]
        assert state.stop == res.stop[i] and state.log_e == pytest.approx(res.log_e[i], rel=1e-9, abs=1e-9)
        assert state.detected == (state.max_log_e >= math.log(1e3)) and state.log10_p <= 0
    assert res.detected.any()


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="alpha must be in"):
        sequential.check_alpha(1.0)
    with pytest.raises(ValueError, match="grid must be"):
        sequential.bernoulli_mixture(0.25, grid=[0.5, 1.0])
    with pytest.raises(ValueError, match="context must hold"):
        SequentialDetector(1, context=[])
    with pytest.raises(ValueError, match="probs must be given"):
        SequentialDetector(1, algo="its", context=[3]).update(np.array([1, 2]))


# Validity under optional stopping.  Simulated null texts: seed 0, n = 50,000 texts of 200
# distinct pairs, gamma = 0.25, alpha = 0.01; verdict by peeking.exceeds_level (one-sided
# Clopper-Pearson lower bound at 99.9 % confidence above alpha).  A valid rule fails the
# check with probability <= 0.1 %; the naive rule (flag at the first prefix with exact
# p <= alpha) has false-positive rate ~ 0.067 here and must fail it.
N_SIM, T_SIM, ALPHA_SIM = 50_000, 200, 0.01


def test_anytime_valid_and_naive_prefix_rule_fails():
    r = peeking.null_crossings(N_SIM, T_SIM, 0.25, ALPHA_SIM, seed=0)
    k_any, k_naive, k_fixed = int((r["anytime_stop"] > 0).sum()), int((r["naive_stop"] > 0).sum()), int(r["fixed"].sum())
    assert not peeking.exceeds_level(k_any, N_SIM, ALPHA_SIM)
    assert not peeking.exceeds_level(k_fixed, N_SIM, ALPHA_SIM)
    assert peeking.exceeds_level(k_naive, N_SIM, ALPHA_SIM)  # the broken rule is caught
    assert k_naive >= 3 * k_fixed  # peeking multiplies the false positives (~10x here)


def test_simulator_matches_real_null_texts(lm):
    """Real null texts (algo 'none', news V=1000, seed 3, n = 3,000, T = 120, dedup): the colours of
    their first 100 scored pairs give the simulator's crossing rates (two-proportion z-test,
    |z| < 3.29: 99.9 % level), for the naive rule and the e-process at alpha = 0.05; the real
    rates also pass / fail the validity check as the simulated ones do."""
    n, m, alpha = 3000, 100, 0.05
    gen = sims.generate(lm, "none", n=n, T=120, seed=3, key=KEY)
    values, scored = scores.token_scores(gen.tokens, gen.prompts[:, -1:], KEY, gamma=0.25, vocab_size=V, dedup=True)
    assert scored.sum(axis=1).min() >= m
    colours = np.stack([values[i, scored[i]][:m] for i in range(n)])
    g_eff = scores._stat_code("green", 0.25, "bernoulli", V)[3]
    k = np.cumsum(colours, axis=1)
    any_k = sequential.linear_thresholds(sequential.bernoulli_mixture(g_eff), m, alpha)[1:]
    naive_k = peeking.naive_thresholds(m, g_eff, alpha)[1:]
    real = {"anytime": (k >= any_k).any(axis=1).mean(), "naive": (k >= naive_k).any(axis=1).mean()}
    sim = peeking.null_crossings(100_000, m, g_eff, alpha, seed=4)
    simr = {"anytime": (sim["anytime_stop"] > 0).mean(), "naive": (sim["naive_stop"] > 0).mean()}
    for rule in real:
        p = (real[rule] * n + simr[rule] * 100_000) / (n + 100_000)
        z = (real[rule] - simr[rule]) / math.sqrt(p * (1 - p) * (1 / n + 1 / 100_000))
        assert abs(z) < 3.29, (rule, real[rule], simr[rule])
    assert not peeking.exceeds_level(round(real["anytime"] * n), n, alpha)
    assert peeking.exceeds_level(round(real["naive"] * n), n, alpha)


def test_sequential_on_real_null_texts_is_valid(lm):
    """The batch detector itself on real null texts of every linear family: news V=1000, seed 6,
    n = 3,000, T = 120, alpha = 0.05, 99.9 % Clopper-Pearson check; a detector that stops at the
    first prefix with p <= alpha (tokens' prefix_log10p) fails it."""
    n, alpha = 3000, 0.05
    gen = sims.generate(lm, "none", n=n, T=120, seed=6, key=KEY)
    for algo in ("srl", "ems", "autocov"):
        res = detectors.sequential_score(gen, alpha=alpha, algo=algo, gamma=0.25)
        assert not peeking.exceeds_level(int(res.detected.sum()), n, alpha), algo
    pre = scores.prefix_log10p(gen.tokens, gen.prompts[:, -1:], KEY, gamma=0.25, dedup=True, vocab_size=V)
    assert peeking.exceeds_level(int((np.nanmin(pre, axis=1) <= math.log10(alpha)).sum()), n, alpha)


def test_grid_keeps_the_stated_share_of_the_kelly_rate():
    """The module docstring's claim: the best bet of GRID grows at >= 98 % of KL(Ber(gamma+Delta) || Ber(gamma))
    for Delta / (1 - gamma) in [0.01, 0.5] and >= 95 % up to 0.95, gamma in [0.1, 0.6] (exact, no sampling)."""
    from theory.sequential import DEFAULT_GRID, bet_growth, kl_bernoulli

    np.testing.assert_array_equal(DEFAULT_GRID, sequential.GRID)  # theory's bounds are about the detector's grid
    for g in (0.1, 0.25, 0.4, 0.467, 0.6):
        lam = sequential.GRID / g  # bet j: lambda_j = f_j / gamma
        for fs in np.geomspace(0.01, 0.95, 200):
            p = g + fs * (1 - g)
            share = bet_growth(lam, g, p).max() / kl_bernoulli(p, g)
            assert share >= (0.98 if fs <= 0.5 else 0.95), (g, fs, share)
