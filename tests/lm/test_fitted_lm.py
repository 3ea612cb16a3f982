"""The fitted preset ``smollm2-fit`` (:mod:`sims.lm.fitted`): exact kernels, and its statistics
against SmolLM2's stored ones (``sims/lm/data/smollm2-stats.npz``, ``smollm2-reference.json``:
64 texts x 200 sampled tokens of lfqa answers; 64 texts x 200 tokens per watermark
configuration).  Nothing here runs SmolLM2."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from sims.experiments import lm_validation as val
from sims.lm import fitted
from sims.lm import synthetic as syn
from sims.lm.synthetic import lm_from_meta, open_synthetic
from sims.watermarks.generate import generate_synthetic


@pytest.fixture(scope="module")
def lm():
    return open_synthetic("smollm2-fit")


@pytest.fixture(scope="module")
def reference():
    return val.load_reference("smollm2")


def test_preset_everywhere(lm):
    assert "smollm2-fit" in syn.LM_PRESETS and lm.fitted and lm.vocab_size == 49152
    assert lm_from_meta(dict(lm="smollm2-fit", vocab_size=49152, lm_seed=0)).params.tobytes() == lm.params.tobytes()
    with pytest.raises(ValueError, match="vocab_size"):
        open_synthetic("smollm2-fit", vocab_size=1000)
    with pytest.raises(ValueError, match="fitted .npz"):
        open_synthetic("no-such-file.npz")


def test_kernel_matches_reference_and_records(lm):
    """The Numba step and the NumPy reference give the same logits, bit for bit, and the recorded
    entropy is that of the reference distribution (seed 0, 3 texts, 3 steps each)."""
    g = generate_synthetic(lm, "dualga", n=3, T=12, seed=0, key=5)
    out = np.empty(lm.vocab_size)
    for i in range(3):
        for t in (0, 5, 11):
            ctx = np.concatenate([g.prompts[i], g.tokens[i, :t]])
            syn.logits_into(lm.vocab_size, lm.order, lm.seed, lm.params, lm.levels, lm.base, ctx, out)
            ref = lm.logits(ctx)
            np.testing.assert_array_equal(out, ref)
            p = lm.probs(ctx)
            assert abs(-np.sum(p * np.log(p)) - g.entropy[i, t]) < 1e-10


def test_latent_level_is_uniform(lm):
    """Phi(Z) is uniform over contexts of different texts and positions (KS test, 4000 contexts,
    seed 1, level 1e-3), and the per-text part is shared by texts with the same first tokens."""
    rng = np.random.default_rng(1)
    xs = []
    for _ in range(4000):
        ctx = rng.integers(0, lm.vocab_size, rng.integers(2, 60))
        xs.append(syn.latent_uniform(lm.order, lm.seed, lm.params, ctx, rng.random(), rng.random()))
    assert stats.kstest(xs, "uniform").pvalue > 1e-3
    a = syn.latent_uniform(lm.order, lm.seed, lm.params, np.array([5, 6, 7, 8]), 0.3, 0.6)
    b = syn.latent_uniform(lm.order, lm.seed, lm.params, np.array([5, 6, 9, 9]), 0.3, 0.6)
    c = syn.latent_uniform(lm.order, lm.seed, lm.params, np.array([5, 7, 7, 8]), 0.3, 0.6)
    assert a == b and a != c


def test_level_stats_exact():
    """The tabulated level statistics equal a brute-force softmax over the vocabulary."""
    from scipy import special

    betas = np.array([0.9, 2.0, 12.0])
    H, C = fitted._level_stats(betas, 6.0, 3000, n_ctx=1, seed=3)
    rng = np.random.default_rng([3, 99])
    toks, vals = rng.integers(0, 3000, syn.N_BUMPS), 6.0 * (rng.random(syn.N_BUMPS) - 0.5)
    lg = betas[:, None] * syn.zipf_base(3000, 3)[None, :]
    for j in range(syn.N_BUMPS):
        lg[:, toks[j]] = np.maximum(lg[:, toks[j]], betas * vals[j])
    p = special.softmax(lg, axis=1)
    np.testing.assert_allclose(H, -special.xlogy(p, p).sum(axis=1), rtol=1e-10)
    np.testing.assert_allclose(C, (p * p).sum(axis=1), rtol=1e-10)


def test_distributions_match_smollm2(lm, reference):
    """128 synthetic texts x T (seed 0) against SmolLM2's stored texts (64 x 200):

    * per-text mean entropy: KS distance below the two-sample 5 % critical value
      1.358 sqrt((n + m) / (n m)) (0.208 for (64, 128) samples), and the sd of the text means
      within 25 %;
    * mean per-token entropy within 0.15 nats;
    * entropy autocorrelation at lags 1-10 within 0.1 each (the real ACF's standard error
      from 64 texts is about 0.03);
    * G_t under 4 random keys at gamma 0.25 and 0.5: KS distance below 0.08.
    """
    real, _ = reference
    n, m = real["entropy"].shape[0], 128
    d = val.compare_distributions(real, val.token_statistics(lm, m, real["entropy"].shape[1], seed=0))
    r, s = d["real"], d["synthetic"]
    assert d["ks_text_mean_entropy"] < 1.358 * np.sqrt((n + m) / (n * m))
    assert abs(s["text_mean_entropy_sd"] / r["text_mean_entropy_sd"] - 1) < 0.25
    assert abs(s["mean_entropy"] - r["mean_entropy"]) < 0.15
    assert np.max(np.abs(np.array(s["acf"][:10]) - np.array(r["acf"][:10]))) < 0.1
    assert d["ks_G25"] < 0.08 and d["ks_G50"] < 0.08


def test_watermarks_match_smollm2(lm, reference):
    """SRL and DualGA on 96 synthetic texts x T (seed 0, key 15485863) against SmolLM2's
    stored runs (64 texts x 200 tokens each): realised DG and KL per token within 3 combined standard errors
    plus 15 % of the real value (the model tolerance), TPR at FPR 1e-4 within 3 combined
    standard errors plus 0.1."""
    _, ref = reference
    wm_real = ref["summary"]
    T = ref["T"]
    wm_fit = val.watermark_summary(lm, wm_real, 96, T, seed=0)
    for name, r in wm_real.items():
        f = wm_fit[name]
        for key, se in (("realized_dg", "dg_se"), ("kl_per_token", "kl_se")):
            tol = 3 * np.hypot(r[se], f[se]) + 0.15 * abs(r[key])
            assert abs(f[key] - r[key]) <= tol, (name, key, f[key], r[key], tol)
        tol = 3 * np.hypot(r["tpr_se"], f["tpr_se"]) + 0.1
        assert abs(f["tpr_at_1e-4"] - r["tpr_at_1e-4"]) <= tol, (name, f["tpr_at_1e-4"], r["tpr_at_1e-4"])
