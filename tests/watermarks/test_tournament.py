"""Tournament sampling (SynthID-Text): the closed-form layer map against literal tournaments, the
kernel against the NumPy reference, exact records, unbiasedness over keys, the repeated-context mask."""

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from sims.core import prf
from sims.lm.synthetic import loop_lm, open_synthetic
from sims.watermarks import tournament as tn

LM = open_synthetic("news", vocab_size=64)


@pytest.mark.parametrize("K", [2, 3])
def test_closed_form_matches_literal_tournaments(K):
    """Monte Carlo: 20000 literal tournaments (seed 0; V = 6, m = 3, fixed g-values) vs the closed
    form q_t, chi-square goodness of fit at level 1e-3 (fails with probability 1e-3 if correct)."""
    rng = np.random.default_rng(0)
    p = np.array([0.35, 0.25, 0.15, 0.12, 0.08, 0.05])
    words = np.array([0b101, 0b010, 0b111, 0b001, 0b100, 0b000], dtype=np.uint64)
    q, _, _, _ = tn.tournament_step(p, words, 3, K)
    draws = tn.play_tournament(p, tn.g_values(words, 3), K, rng, 20000)
    counts = np.bincount(draws, minlength=6)
    assert stats.chisquare(counts, 20000 * q).pvalue > 1e-3
    assert abs(q.sum() - 1.0) < 1e-14
    assert not np.allclose(q, p, atol=0.02)  # the tournament does tilt


def test_two_candidates_is_unbiased_over_keys_and_more_is_not():
    """Exact enumeration of every g-value assignment (V = 3, m = 2: 2**6 keys): the mean of q over
    Bernoulli(1/2) g-values is p for K = 2 (to rounding), not for K = 3."""
    p = np.array([0.6, 0.3, 0.1])
    for K, unbiased in ((2, True), (3, False)):
        mean_q = np.zeros(3)
        for bits in itertools.product([0, 1], repeat=6):
            words = np.array([bits[2 * k] + 2 * bits[2 * k + 1] for k in range(3)], dtype=np.uint64)
            mean_q += tn.tournament_step(p, words, 2, K)[0] / 64
        assert np.allclose(mean_q, p, rtol=0, atol=1e-15) == unbiased


@pytest.mark.parametrize("K", [2, 5])
def test_step_records_are_kl_and_mean_g_drift(K):
    """kl = sum q log(q/p) and dg = mean over layers of q(g_l = 1) - p(g_l = 1), G = p's mean g."""
    rng = np.random.default_rng(1)
    p = rng.dirichlet(np.ones(50))
    words = prf.token_bits(np.uint64(12345), np.arange(50))
    q, kl, G, dg = tn.tournament_step(p, words, 7, K)
    g = tn.g_values(words, 7)
    assert kl == pytest.approx(float(np.sum(q * np.log(q / p))), rel=1e-12)
    assert G == pytest.approx(float(np.mean(p @ g)), rel=1e-14)
    assert dg == pytest.approx(float(np.mean((q - p) @ g)), rel=1e-12)
    assert dg > 0 and kl > 0


def test_layer_factors_limits():
    """f(0), f(1) at G = 0 and G = 1 and their normalisation G f1 + (1 - G) f0 = 1."""
    for K in (2, 3, 8):
        for G in (1e-300, 1e-9, 0.3, 0.999999):
            f0, f1 = tn.layer_factors(G, K)
            assert G * f1 + (1 - G) * f0 == pytest.approx(1.0, abs=1e-14)
        assert tn.layer_factors(0.0, K)[1] == K
        assert tn.layer_factors(1.0, K) == (0.0, 1.0)


@pytest.mark.parametrize(("mode", "mask"), [("non-distortionary", True), ("distortionary", True), ("non-distortionary", False)])
def test_kernel_equals_reference(mode, mask):
    """The Numba generator against the NumPy reference on fixed seeds: identical tokens, records
    to 1e-12."""
    g = tn.generate_tournament(LM, n=3, T=25, seed=4, key=77, m=6, h=2, mode=mode, mask_repeated=mask)
    tok, rec = tn.generate_tournament_reference(LM, g.prompts, 25, 4, 77, 6, 2, g.meta["candidates"], mask)
    assert np.array_equal(tok, g.tokens)
    for j, name in enumerate(("kl", "G", "dg", "entropy")):
        assert np.allclose(rec[j], getattr(g, name), rtol=0, atol=1e-12), name
    assert np.all(np.isnan(g.lam))
    assert g.meta["algo"] == "synthid" and g.meta["m"] == 6 and g.meta["candidates"] == (2 if mode == "non-distortionary" else 4)


def test_repeated_context_mask_leaves_steps_unwatermarked():
    """On a looping LM: every step whose context was seen before in the text has kl = dg = 0, the
    others have kl > 0; the number of masked steps is the number of repeated contexts."""
    lm = loop_lm(vocab_size=64, p_loop=0.9)
    g = tn.generate_tournament(lm, n=2, T=60, seed=0, key=3, m=4, h=1)
    for i in range(2):
        text = np.concatenate([g.prompt(i), g.text(i)])
        P = g.prompts.shape[1]
        ctxs = [int(text[P + t - 1]) for t in range(60)]
        repeated = np.array([c in ctxs[:t] for t, c in enumerate(ctxs)])
        assert repeated.sum() > 10
        assert np.all(g.kl[i, repeated] == 0) and np.all(g.dg[i, repeated] == 0)
        assert np.all(g.kl[i, ~repeated] > 0)


def test_more_layers_more_drift_and_distortion():
    """Averaged over 8 texts x 40 tokens, the summed drift m DG and KL grow from m = 1 to m = 10 and
    the distortionary mode (K = 4) tilts more than K = 2 at the same m; the per-layer mean DG falls
    with m (later layers find less entropy left: why the mean score weakens with many layers)."""
    res = {}
    for m, mode in ((1, "non-distortionary"), (10, "non-distortionary"), (10, "distortionary")):
        g = tn.generate_tournament(LM, n=8, T=40, seed=2, key=9, m=m, h=2, mode=mode)
        res[m, mode] = (g.kl.mean(), m * g.dg.mean())
    assert res[1, "non-distortionary"][1] < res[10, "non-distortionary"][1] < res[10, "distortionary"][1]
    assert res[10, "non-distortionary"][1] / 10 < res[1, "non-distortionary"][1]
    assert res[1, "non-distortionary"][0] < res[10, "non-distortionary"][0] < res[10, "distortionary"][0]


def test_g_values_bits_and_bad_input():
    words = tn.g_words(5, np.array([[1, 2], [3, 4]]), np.array([7, 8]))
    g = tn.g_values(words, 64)
    assert np.array_equal((g.astype(np.uint64) << np.arange(64, dtype=np.uint64)).sum(axis=1).astype(np.uint64), words)
    assert int(tn.popcount64(words[0])) == int(g[0].sum())
    for kw, msg in ((dict(m=0), "m must"), (dict(m=65), "m must"), (dict(h=0), "h must"), (dict(mode="x"), "mode must"),
                    (dict(mode="distortionary", candidates=2), "candidates"), (dict(candidates=3), "candidates")):
        with pytest.raises(ValueError, match=msg):
            tn.generate_tournament(LM, n=1, T=2, seed=0, key=1, **kw)
    with pytest.raises(ValueError, match="key must"):
        tn.generate_tournament(LM, n=1, T=2, seed=0, key=-1)
    assert math.isfinite(tn.generate_tournament(LM, n=1, T=3, seed=0, key=1, m=64).kl.sum())
