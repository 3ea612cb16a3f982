"""Synthetic LMs and watermarked generation: kernel == NumPy, exact per-token records."""

import math
import re

import numpy as np
import pytest

import theory
from sims.core import prf
from sims.core.keys import keyed_order
from sims.core.record import Generation
from sims.watermarks.generate import ALGOS, generate
from sims.lm.synthetic import LM_PRESETS, get_lm, logits_into


@pytest.mark.parametrize("name", LM_PRESETS)
def test_lm_kernel_equals_numpy_logits(name):
    lm = get_lm(name)
    rng = np.random.default_rng(0)
    out = np.empty(lm.vocab_size)
    for _ in range(5):
        ctx = rng.integers(0, lm.vocab_size, size=4)
        logits_into(lm.vocab_size, lm.order, lm.seed, lm.params, lm.levels, lm.base, ctx, out)
        assert np.array_equal(out, lm.logits(ctx))


def _replay(lm, gen, i, t):
    """p_t and the green list at step t of text i, recomputed with the NumPy reference."""
    seq = np.concatenate([gen.prompts[i], gen.tokens[i]])
    P = gen.prompts.shape[1]
    p = lm.probs(seq[: P + t])
    h = gen.meta["h"]
    green = prf.green_mask(prf.context_hash(gen.meta["key"], seq[P + t - h : P + t]), lm.vocab_size, gen.meta["gamma"])
    return p, green


@pytest.mark.parametrize("algo", ["srl", "dualga", "atw", "hard", "ems", "its", "uw-delta", "uw-gamma", "autocov", "none"])
def test_records_are_exact(algo):
    """The kernel's G, entropy and KL equal a NumPy recomputation from the full distribution."""
    lm = get_lm("lfqa", vocab_size=2000)
    gen = generate(lm, algo, n=2, T=30, seed=3, key=99, delta=2.0, Delta=0.3)
    for i in range(2):
        for t in (0, 7, 29):
            p, green = _replay(lm, gen, i, t)
            G = p[green].sum()
            assert gen.G[i, t] == pytest.approx(G, rel=1e-12, abs=1e-15)
            assert gen.entropy[i, t] == pytest.approx(theory.entropy(p), rel=1e-10)
            y = gen.tokens[i, t]
            if algo in ("srl", "dualga", "atw"):
                d = gen.lam[i, t] if algo == "dualga" else (2.0 if algo == "srl" or gen.entropy[i, t] > 2.0 else 0.0)
                q = p * np.exp(d * green)
                q /= q.sum()
                assert gen.kl[i, t] == pytest.approx(np.sum(q * np.log(q / p)), rel=1e-9, abs=1e-14)
                assert gen.dg[i, t] == pytest.approx(q[green].sum() - G, rel=1e-9, abs=1e-14)
            elif algo == "uw-gamma":
                P = gen.prompts.shape[1]
                window = np.concatenate([gen.prompts[i], gen.tokens[i]])[P + t - 1 : P + t]
                order = keyed_order(99, lm.vocab_size)
                reverse = prf.uniforms(prf.context_hash(99, window, prf.STEP), np.array([lm.vocab_size + 1]))[0] < 0.5
                order = order[::-1] if reverse else order
                cum = np.cumsum(p[order])
                q = np.zeros_like(p)
                q[order] = 2.0 * (np.maximum(cum, 0.5) - np.maximum(np.concatenate([[0.0], cum[:-1]]), 0.5))
                m = q > 0
                assert gen.kl[i, t] == pytest.approx(np.sum(q[m] * np.log(q[m] / p[m])), rel=1e-9, abs=1e-14)
                assert gen.dg[i, t] == pytest.approx(q[green].sum() - G, rel=1e-9, abs=1e-12)
            elif algo in ("ems", "its", "uw-delta"):
                assert gen.kl[i, t] == pytest.approx(-math.log(p[y]), rel=1e-12)
            elif algo == "hard":
                assert green[y] and gen.kl[i, t] == pytest.approx(-math.log(G), rel=1e-12)
            elif algo == "none":
                assert gen.kl[i, t] == 0.0


def test_dualga_lambda_follows_algorithm():
    lm = get_lm("news", vocab_size=3000)
    g = generate(lm, "dualga", n=1, T=50, seed=0, key=1, Delta=0.3, eta=0.5)
    lam = g.lam[0]
    assert lam[0] == pytest.approx(theory.delta_star(0.3, theory.gamma_star(0.3)))
    expect = np.clip(lam[:-1] + 0.5 * (0.3 - g.dg[0, :-1]), 0, 15)
    assert np.allclose(lam[1:], expect, rtol=0, atol=1e-12)


def test_ems_is_marginally_distortion_free():
    """Example ems: over keys, EMS draws the next token from p. Seed 0, 4000 keys, one fixed
    context of the tiny LM; chi-square goodness of fit at alpha = 1e-3."""
    from scipy.stats import chisquare

    lm = get_lm("tiny")
    prompts = np.array([[3]])
    counts = np.zeros(lm.vocab_size)
    for key in range(4000):
        counts[generate(lm, "ems", n=1, T=1, seed=0, key=key, prompts=prompts).tokens[0, 0]] += 1
    p = lm.probs(prompts[0])
    assert chisquare(counts, 4000 * p).pvalue > 1e-3


def test_same_seed_same_text_and_save_load(tmp_path):
    lm = get_lm("news", vocab_size=1000)
    a = generate(lm, "dualga", n=3, T=20, seed=5, key=7)
    b = generate(lm, "dualga", n=3, T=20, seed=5, key=7)
    assert np.array_equal(a.tokens, b.tokens)
    a.save(tmp_path / "g.npz")
    c = Generation.load(tmp_path / "g.npz")
    assert np.array_equal(c.tokens, a.tokens) and c.meta == a.meta


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: get_lm("wiki"), "lm must be one of ('news', 'lfqa', 'loopy', 'tiny', 'smollm2-fit') or a fitted .npz file; got 'wiki'"),
        (lambda: generate(get_lm("tiny"), "kgw", n=1, T=1, seed=0, key=0), "algo must be one of"),
        (lambda: generate(get_lm("tiny"), "srl", n=0, T=1, seed=0, key=0), "n and T must be in [1, inf); got n=0, T=1"),
        (lambda: generate(get_lm("tiny"), "srl", n=1, T=1, seed=0, key=0, gamma=1.2), "gamma must be in (0, 1); got 1.2"),
        (lambda: generate(get_lm("tiny"), "dualga", n=1, T=1, seed=0, key=0, eta=0.0), "eta must be in (0, inf); got 0.0"),
        (lambda: generate(get_lm("tiny"), "srl", n=1, T=1, seed=0, key=0, prompts=np.array([[9]])), "prompt token ids must be in [0, 5]"),
    ],
)
def test_bad_input(call, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        call()


def test_all_algorithms_run():
    lm = get_lm("tiny")
    for algo in ALGOS:
        g = generate(lm, algo, n=2, T=5, seed=0, key=3)
        assert g.tokens.shape == (2, 5) and np.all(np.isfinite(g.kl))


@pytest.mark.parametrize("tau", [1.0, 0.7])
def test_ems_picks_the_argmax_of_its_keyed_scores(tau):
    """Each EMS token is argmax_k log(r_k) / p_k^(1/tau), recomputed with NumPy from the key."""
    lm = get_lm("news", vocab_size=5000)
    gen = generate(lm, "ems", n=2, T=12, seed=4, key=21, tau=tau)
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
