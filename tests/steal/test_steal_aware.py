"""The scheme-aware stealing attacker (sims.steal.aware): its anchors, its per-pair posterior against
the binomial likelihood, its min-hash anchor weights, its spoofing kernel against the NumPy rule (and on a case
where it must evaluate each candidate under self-hash's own seed), and its power over the window attacker."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binom, binomtest, fisher_exact

from sims import steal
from sims.core import defaults, windows
from sims.core import seeding as seeding_mod
from sims.lm.synthetic import open_synthetic
from sims.steal import aware as sa
from sims.watermarks.generate import sample_prompts

LM = open_synthetic("news", vocab_size=1024)


def _haul(seeding: str, h: int, n_max: int, n_eval: int = 100):
    return steal.generate_stealing_texts(LM, "srl", n_max=n_max, T=32, n_eval=n_eval, h=h, gamma=0.25, delta=2.0, seeding=seeding)


def test_anchors():
    toks = np.array([[5, 6, 7]])
    prompts = np.array([[1, 2, 3]])
    assert sa.anchors(toks, prompts, 2, "skipgram")[0, :, 0].tolist() == [3, 4, 6]  # the token 2 back, named id + 1
    assert sa.anchors(toks, prompts, 2, "minhash")[0].tolist() == [[3, 4], [4, 6], [6, 7]]
    assert sa.anchors(toks, prompts, 2, "selfhash")[0, :, 2].tolist() == [0, 0, 0]  # self
    np.testing.assert_array_equal(sa.anchors(toks, prompts, 2, "lefthash")[..., 0], windows.window_names(toks, prompts, 2))
    with pytest.raises(ValueError, match="seeding must be one of"):
        sa.anchors(toks, prompts, 2, "sumhash")


def test_pair_posterior_is_the_binomial_posterior():
    """q(a, y) = gamma Bin(w; n, theta_g) / (gamma Bin(w; n, theta_g) + (1 - gamma) Bin(w; n, theta_r)), theta_c =
    W rho_c / (W rho_c + B), computed here with scipy's pmf; gamma where the pair or its anchor has no evidence."""
    gamma, delta = 0.25, 2.0
    rr = 1 / (1 + (math.exp(delta) - 1) * gamma)
    w, b = np.array([0, 1, 3, 0, 7, 2]), np.array([0, 0, 1, 4, 2, 9])
    W, B = np.array([50, 40, 300, 80, 1000, 500]), np.array([60, 45, 280, 70, 900, 520])
    tg, tr = W * math.exp(delta) * rr / (W * math.exp(delta) * rr + B), W * rr / (W * rr + B)
    pg, pr = gamma * binom.pmf(w, w + b, tg), (1 - gamma) * binom.pmf(w, w + b, tr)
    np.testing.assert_allclose(sa.pair_posterior(w, b, W, B, gamma, delta), pg / (pg + pr), rtol=1e-12)
    assert sa.pair_posterior(0, 0, 10, 10, gamma, delta) == pytest.approx(gamma)
    assert sa.pair_posterior(3, 0, 10, 0, gamma, delta) == pytest.approx(gamma)  # anchor absent from the base haul


def test_minhash_weights_known_case():
    """An anchor whose followers have the same counts in both hauls weighs 0; one whose watermarked followers
    pile on one token weighs phi = (X^2 - df) / n, X^2 the two-sample chi-square (scipy's)."""
    from scipy.stats import chi2_contingency

    w = np.array([5, 5, 5, 30, 2, 2])
    b = np.array([5, 5, 5, 10, 10, 10])
    starts = np.array([0, 3, 6])
    x2 = chi2_contingency(np.stack([w[3:], b[3:]]), correction=False)[0]
    np.testing.assert_allclose(sa.minhash_weights(w, b, starts), [0.0, (x2 - 2) / (w[3:] + b[3:]).sum()], rtol=1e-12)


def test_minhash_weights_learn_the_keyed_order():
    """Min-hash, h = 2, 3000 stolen texts (seed 0): on the held-out windows of two distinct tokens, the token of
    larger weight is the one of smaller keyed hash (the seed) more often than not (one-sided binomial test, alpha 1e-3)."""
    haul = _haul("minhash", 2, 3000)
    est = sa.estimate_aware(haul.wm, haul.base, n_stolen=3000)
    win = windows.windows(haul.held_out.tokens, haul.held_out.prompts, 2).reshape(-1, 2)
    win = win[win[:, 0] != win[:, 1]]
    om = np.full(LM.vocab_size, est.unseen_weight)
    om[est.names.astype(np.int64) - 1] = est.weights
    ah = seeding_mod.token_hashes(haul.wm.meta["key"], np.arange(LM.vocab_size))
    right = int(((om[win[:, 0]] > om[win[:, 1]]) == (ah[win[:, 0]] < ah[win[:, 1]])).sum())
    assert binomtest(right, len(win), 0.5, alternative="greater").pvalue < 1e-3, (right, len(win))


def test_forger_picks_the_self_hash_green_token():
    """A known case: the estimate holds only the (self, y) anchors, with posterior 1 for the tokens green under
    self-hash after the text's window (key defaults.KEY) and 0 for the others; the window tokens are unseen and
    weigh 0.  With a boost of 50 the forger's first token is self-hash green in each of 16 texts -- which it can
    only find by evaluating each candidate under its own seed (the self anchor is y itself).  The base LM alone
    (boost 0) picks a self-hash green token less often, and the left-hash list of the same window (the window's
    seed) differs, so neither the LM nor the window explains the result."""
    V, P, gamma = LM.vocab_size, 4, 0.25
    meta = dict(algo="srl", vocab_size=V, key=defaults.KEY, gamma=gamma, delta=2.0, h=2, seeding="selfhash")
    picked, base_picked, differ = [], [], []
    for seed in range(16):
        x = sample_prompts(LM, 1, seed, P)[0, -2:]
        G = seeding_mod.green_mask(defaults.KEY, x, V, gamma, "selfhash")
        differ.append(np.mean(G != seeding_mod.green_mask(defaults.KEY, x, V, gamma, "lefthash")))
        z = np.zeros(V, dtype=np.int64)
        est = sa.AwareEstimate("selfhash", 2, V, 1, gamma, np.array([sa.SELF]), np.array([0, V]), np.ones(1), 0.0, np.arange(V), z, z,
                               G.astype(np.float64))
        for boost, out in ((50.0, picked), (0.0, base_picked)):
            sp = sa.spoof_aware(LM, est, meta, n=1, T=1, seed=seed, boost=boost, prompt_len=P)
            assert sp.prompts[0, -2:].tolist() == x.tolist()
            out.append(bool(G[sp.tokens[0, 0]]))
    assert all(picked)
    assert sum(base_picked) < 16 and min(differ) > 0.2


@pytest.mark.parametrize("seeding", ["skipgram", "minhash", "selfhash"])
def test_kernel_follows_the_numpy_rule(seeding):
    """With a boost of 1000 and threshold 1/2 the spoofer samples a token of P(x, y) > 1/2 wherever the NumPy rule
    (green_probability_reference, over every candidate) finds one, and only then."""
    haul = _haul(seeding, 2, 200, n_eval=10)
    est = sa.estimate_aware(haul.wm, haul.base, n_stolen=200)
    sp = sa.spoof_aware(LM, est, haul.wm.meta, n=12, T=16, seed=5, boost=1000.0, threshold=0.5)
    n, T = sp.tokens.shape
    any_green = np.zeros((n, T), dtype=bool)
    for y in range(LM.vocab_size):
        any_green |= sa.green_probability_reference(est, sp.tokens, sp.prompts, candidates=np.full((n, T), y)) > 0.5
    chosen = sa.green_probability_reference(est, sp.tokens, sp.prompts) > 0.5
    np.testing.assert_array_equal(chosen, any_green)
    assert any_green.mean() > 0.2  # the check is not vacuous


def test_aware_forges_selfhash_with_fewer_texts():
    """Self-hash over h = 2, SRL gamma 0.25 delta 2, news V = 1024, 32-token texts, 3000 stolen texts,
    100 spoofs (seed 0, the haul's seeds): the aware attacker's spoof success at p <= 1e-4 exceeds the
    window attacker's (one-sided Fisher exact test at alpha = 0.01), and so does its balanced accuracy
    on the 100 held-out texts (3200 positions) by more than 0.03."""
    haul = _haul("selfhash", 2, 3000)
    u = steal.attack_point(haul, 3000)
    a = sa.attack_point_aware(haul, 3000)
    k_a, k_u = round(a["spoof_success"] * 100), round(u["spoof_success"] * 100)
    assert fisher_exact([[k_a, 100 - k_a], [k_u, 100 - k_u]], alternative="greater").pvalue < 0.01, (k_a, k_u)
    assert a["green_estimate_accuracy"] > u["green_estimate_accuracy"] + 0.03


def test_best_boost_count_is_the_brute_force_optimum():
    """On 50 random cases (seed 7, V = 12) the adaptive forger's k maximises its expected green share over every
    k = 0..V of its candidates sorted by P (computed here with NumPy's softmax)."""
    g = np.random.default_rng(7)
    for _ in range(50):
        logits, P, boost = g.normal(size=12) * 2, g.uniform(size=12), g.uniform(0.5, 6)
        rank = np.empty(12, dtype=np.int64)
        k = sa.best_boost_count(logits, P, boost, rank)
        np.testing.assert_array_equal(rank, np.argsort(-P, kind="stable"))
        share = []
        for j in range(13):
            b = logits.copy()
            b[rank[:j]] += boost
            r = np.exp(b - b.max())
            share.append((r / r.sum()) @ P)
        assert share[k] == pytest.approx(max(share), rel=1e-12), (k, int(np.argmax(share)))


def test_estimate_aware_rejects_bad_input():
    haul = _haul("selfhash", 2, 20, n_eval=5)
    with pytest.raises(ValueError, match=r"n_stolen must be in \[1, 20\]"):
        sa.estimate_aware(haul.wm, haul.base, n_stolen=21)
    with pytest.raises(ValueError, match="gamma must be in"):
        sa.estimate_aware(haul.wm, haul.base, gamma=1.0)
    with pytest.raises(ValueError, match="delta must be in"):
        sa.estimate_aware(haul.wm, haul.base, delta=-1.0)
    with pytest.raises(ValueError, match="base must be a Generation"):
        sa.estimate_aware(haul.wm, None)
