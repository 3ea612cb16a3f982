"""Synthetic LMs and watermarked generation: kernel == NumPy (the records against each algorithm's reference step: test_registry_battery.py)."""

import re

import numpy as np
import pytest

import theory
from sims.core import prf
from sims.core.record import Generation
from sims.lm.synthetic import LM_PRESETS, logits_into, open_synthetic
from sims.watermarks.generate import ALGOS, generate_synthetic


@pytest.mark.parametrize("name", LM_PRESETS)
def test_lm_kernel_equals_numpy_logits(name):
    lm = open_synthetic(name)
    rng = np.random.default_rng(0)
    out = np.empty(lm.vocab_size)
    for _ in range(5):
        ctx = rng.integers(0, lm.vocab_size, size=4)
        logits_into(lm.vocab_size, lm.order, lm.seed, lm.params, lm.levels, lm.base, ctx, out)
        assert np.array_equal(out, lm.logits(ctx))


def test_dualga_lambda_follows_algorithm():
    lm = open_synthetic("news", vocab_size=3000)
    g = generate_synthetic(lm, "dualga", n=1, T=50, seed=0, key=1, Delta=0.3, eta=0.5)
    lam = g.lam[0]
    assert lam[0] == pytest.approx(theory.delta_star(0.3, theory.gamma_star(0.3)))
    expect = np.clip(lam[:-1] + 0.5 * (0.3 - g.dg[0, :-1]), 0, 15)
    assert np.allclose(lam[1:], expect, rtol=0, atol=1e-12)


def test_ems_is_marginally_distortion_free():
    """Example ems: over keys, EMS draws the next token from p. Seed 0, 4000 keys, one fixed
    context of the tiny LM; chi-square goodness of fit at alpha = 1e-3."""
    from scipy.stats import chisquare

    lm = open_synthetic("tiny")
    prompts = np.array([[3]])
    counts = np.zeros(lm.vocab_size)
    for key in range(4000):
        counts[generate_synthetic(lm, "ems", n=1, T=1, seed=0, key=key, prompts=prompts).tokens[0, 0]] += 1
    p = lm.probs(prompts[0])
    assert chisquare(counts, 4000 * p).pvalue > 1e-3


def test_same_seed_same_text_and_save_load(tmp_path):
    lm = open_synthetic("news", vocab_size=1000)
    a = generate_synthetic(lm, "dualga", n=3, T=20, seed=5, key=7)
    b = generate_synthetic(lm, "dualga", n=3, T=20, seed=5, key=7)
    assert np.array_equal(a.tokens, b.tokens)
    a.save(tmp_path / "g.npz")
    c = Generation.load(tmp_path / "g.npz")
    assert np.array_equal(c.tokens, a.tokens) and c.meta == a.meta


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: open_synthetic("wiki"), "lm must be one of ('news', 'lfqa', 'loopy', 'tiny', 'smollm2-fit') or a fitted .npz file; got 'wiki'"),
        (lambda: generate_synthetic(open_synthetic("tiny"), "kgw", n=1, T=1, seed=0, key=0), "algo must be one of"),
        (lambda: generate_synthetic(open_synthetic("tiny"), "srl", n=0, T=1, seed=0, key=0), "n and T must be in [1, inf); got n=0, T=1"),
        (lambda: generate_synthetic(open_synthetic("tiny"), "srl", n=1, T=1, seed=0, key=0, gamma=1.2), "gamma must be in (0, 1); got 1.2"),
        (lambda: generate_synthetic(open_synthetic("tiny"), "dualga", n=1, T=1, seed=0, key=0, eta=0.0), "eta must be in (0, inf); got 0.0"),
        (lambda: generate_synthetic(open_synthetic("tiny"), "srl", n=1, T=1, seed=0, key=0, prompts=np.array([[9]])), "prompt token ids must be in [0, 5]"),
    ],
)
def test_bad_input(call, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        call()


def test_all_algorithms_run():
    lm = open_synthetic("tiny")
    for algo in ALGOS:
        g = generate_synthetic(lm, algo, n=2, T=5, seed=0, key=3)
        assert g.tokens.shape == (2, 5) and np.all(np.isfinite(g.kl))


@pytest.mark.parametrize("tau", [1.0, 0.7])
def test_ems_picks_the_argmax_of_its_keyed_scores(tau):
    """Each EMS token is argmax_k log(r_k) / p_k^(1/tau), recomputed with NumPy from the key."""
    lm = open_synthetic("news", vocab_size=5000)
    gen = generate_synthetic(lm, "ems", n=2, T=12, seed=4, key=21, tau=tau)
    for i in range(2):
        seq = np.concatenate([gen.prompts[i], gen.tokens[i]])
        P = gen.prompts.shape[1]
        for t in range(12):
            lg = lm.logits(seq[: P + t])
            r = prf.uniforms(prf.context_hash(21, seq[P + t - 1 : P + t], prf.EMS), np.arange(lm.vocab_size))
            assert gen.tokens[i, t] == np.argmax(np.log(r) / np.exp((lg - lg.max()) / tau))


def test_a_colour_without_mass_is_never_drawn():
    """If rounding makes the coin pick a colour whose total mass is 0, the other colour is drawn."""
    from sims.watermarks.generate import _colour

    assert _colour(True, 0.3, 0.7) and not _colour(False, 0.3, 0.7)
    assert not _colour(True, 0.0, 1.0) and _colour(False, 1.0, 0.0)
