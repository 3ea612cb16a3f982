"""The scheme-aware stealing attacker (sims.experiments.steal_aware): its anchors, its spoofing kernel against the
NumPy rule, its reduction to the window attacker under left-hash, and its power over that attacker under skip-gram."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import fisher_exact

from sims.core import windows
from sims.experiments import steal
from sims.experiments import steal_aware as sa
from sims.lm.synthetic import get_lm

LM = get_lm("news", vocab_size=1024)


def _haul(seeding: str, h: int, n_max: int, n_eval: int = 100):
    return steal.make_haul(LM, "srl", n_max=n_max, T=32, n_eval=n_eval, h=h, gamma=0.25, delta=2.0, seeding=seeding)


def test_anchors():
    toks = np.array([[5, 6, 7]])
    prompts = np.array([[1, 2, 3]])
    assert sa.anchors(toks, prompts, 2, "skipgram")[0, :, 0].tolist() == [3, 4, 6]  # the token 2 back, named id + 1
    assert sa.anchors(toks, prompts, 2, "minhash")[0].tolist() == [[3, 4], [4, 6], [6, 7]]
    assert sa.anchors(toks, prompts, 2, "selfhash")[0, :, 2].tolist() == [0, 0, 0]  # self
    np.testing.assert_array_equal(sa.anchors(toks, prompts, 2, "lefthash")[..., 0], windows.window_names(toks, prompts, 2))
    with pytest.raises(ValueError, match="seeding must be one of"):
        sa.anchors(toks, prompts, 2, "sumhash")


def test_lefthash_reduces_to_the_window_attacker():
    """Under left-hash the seed is the window: the aware estimate believes the same pairs green as
    steal.estimate_green, and its spoofing kernel writes the same tokens as steal.spoof (same seed)."""
    haul = _haul("lefthash", 1, 300, n_eval=40)
    est = sa.estimate_aware(haul.wm, haul.base, n_stolen=300)
    old = steal.estimate_green(haul.wm, haul.base, n_stolen=300)
    names = windows.window_names(haul.held_out.tokens, haul.held_out.prompts, 1)
    np.testing.assert_array_equal(sa.believed_green_reference(est, haul.held_out.tokens, haul.held_out.prompts),
                                  old.predict(names, haul.held_out.tokens))
    m = haul.wm.meta
    a = sa.spoof_aware(LM, est, m, n=40, T=32, seed=3, prompt_len=haul.targets.prompts.shape[1])
    b = steal.spoof(LM, old, m, n=40, T=32, seed=3, prompt_len=haul.targets.prompts.shape[1])
    np.testing.assert_array_equal(a.tokens, b.tokens)


@pytest.mark.parametrize("seeding", ["skipgram", "minhash", "selfhash"])
def test_kernel_follows_the_numpy_rule(seeding):
    """With a boost of 1000 the spoofer samples a believed-green token wherever the NumPy rule
    (believed_green_reference, over every candidate) finds one, and only then."""
    haul = _haul(seeding, 2, 200, n_eval=10)
    est = sa.estimate_aware(haul.wm, haul.base, n_stolen=200)
    sp = sa.spoof_aware(LM, est, haul.wm.meta, n=12, T=16, seed=5, boost=1000.0)
    n, T = sp.tokens.shape
    cand = np.broadcast_to(np.arange(LM.vocab_size), (n, T, LM.vocab_size))
    any_green = np.zeros((n, T), dtype=bool)
    for y in range(LM.vocab_size):  # the rule for every candidate (anchors do not depend on it)
        any_green |= sa.believed_green_reference(est, sp.tokens, sp.prompts, candidates=cand[..., y])
    chosen = sa.believed_green_reference(est, sp.tokens, sp.prompts)
    np.testing.assert_array_equal(chosen, any_green)
    assert any_green.mean() > 0.3  # the check is not vacuous


def test_aware_forges_skipgram_with_fewer_texts():
    """Skip-gram over h = 2, SRL gamma 0.25 delta 2, news V = 1024, 32-token texts, 3000 stolen texts,
    100 spoofs (seed 0, the haul's seeds): the aware attacker's spoof success at p <= 1e-4 exceeds the
    window attacker's (one-sided Fisher exact test at alpha = 0.01), and so does its balanced accuracy
    on the 100 held-out texts (3200 positions) by more than 0.03."""
    haul = _haul("skipgram", 2, 3000)
    u = steal.attack_point(haul, 3000)
    a = sa.attack_point_aware(haul, 3000)
    k_a, k_u = round(a["spoof_success"] * 100), round(u["spoof_success"] * 100)
    assert fisher_exact([[k_a, 100 - k_a], [k_u, 100 - k_u]], alternative="greater").pvalue < 0.01, (k_a, k_u)
    assert a["green_estimate_accuracy"] > u["green_estimate_accuracy"] + 0.03
