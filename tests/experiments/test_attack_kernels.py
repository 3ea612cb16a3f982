"""The key-holding attacks' kernel (:mod:`sims.experiments._attack_kernels`) against the NumPy green lists of
:mod:`sims.core.seeding`, and the entropy attack and the score oracle under every seeding scheme: each token they
place is red under the scheme that coloured the text (before issue 32's full runs they coloured by left-hash only)."""

from __future__ import annotations

import numpy as np
import pytest

import sims
from paper_figs._oracle import oracle_contributions, score_oracle
from sims.core import prf, seeding
from sims.experiments import attacks
from sims.experiments._attack_kernels import most_probable_outside

LM = sims.get_lm("news", vocab_size=500)


def _red(gen, context, token) -> bool:
    """NumPy reference colour: the PRF word of (seed, token) under the generation's scheme at or above gamma's threshold."""
    w = np.asarray(context, dtype=np.int64)[-gen.meta["h"]:]
    u = seeding.words(gen.meta["key"], w, np.array(token), gen.meta.get("seeding", seeding.DEFAULT))
    return bool((u >> np.uint64(11)) >= np.uint64(prf.green_threshold(gen.meta["gamma"])))


@pytest.mark.parametrize("scheme", seeding.SEEDINGS)
def test_kernel_is_the_argmax_over_the_red_tokens(scheme):
    """30 random (p, window, key), V = 1500, h = 4, seed 0: the kernel's token is np.argmax with the scheme's greens set to -1."""
    rng = np.random.default_rng(0)
    for _ in range(30):
        p, w, key = rng.dirichlet(np.full(1500, 0.1)), rng.integers(0, 1500, 4), int(rng.integers(0, 2**63))
        ref = np.where(seeding.green_mask(key, w, 1500, 0.25, scheme), -1.0, p)
        assert most_probable_outside(p, key, w, gamma=0.25, scheme=scheme) == int(np.argmax(ref))


def test_kernel_ems_excludes_the_uniforms_at_or_above_one_half():
    """EMS: the tokens whose keyed uniform is >= 1/2 are excluded (30 random cases, V = 1500, seed 1); all keyed -> 0."""
    rng = np.random.default_rng(1)
    for _ in range(30):
        p, w, key = rng.dirichlet(np.full(1500, 0.1)), rng.integers(0, 1500, 2), int(rng.integers(0, 2**63))
        q = p.copy()
        q[prf.uniforms(prf.context_hash(key, w, prf.EMS), np.arange(1500)) >= 0.5] = -1.0
        assert most_probable_outside(p, key, w, stream=prf.EMS) == int(np.argmax(q))
    assert most_probable_outside(np.ones(50), 3, np.array([1, 2]), gamma=1 - 1e-12) == 0


@pytest.fixture(scope="module", params=seeding.SEEDINGS)
def seeded(request):
    return sims.generate(LM, "srl", n=3, T=40, seed=0, key=11, delta=2.0, gamma=0.25, h=4, seeding=request.param)


def test_entropy_attack_places_red_tokens_under_the_scheme(seeded):
    """news V = 500, SRL h = 4, 3 x 40 tokens, rate 0.5: every attacked position holds a red token of its final context."""
    att = attacks.attack(seeded, "entropy", 0.5, seed=1, lm=LM)
    for i in range(3):
        seq = np.concatenate([seeded.prompts[i], att.tokens[i]])
        P = seeded.prompts.shape[1]
        for t in np.argsort(-seeded.entropy[i], kind="stable")[:20]:
            assert _red(seeded, seq[: P + t], seq[P + t]), (seeded.meta.get("seeding"), i, t)


def test_score_oracle_places_red_tokens_under_the_scheme(seeded):
    """As above for the score oracle at rate 0.5: its 20 top-ranked positions per text turn red, and the detector's
    green count falls below the unattacked text's at every scheme."""
    contrib = oracle_contributions(seeded, LM)
    att = score_oracle(seeded, LM, 0.5, contrib=contrib)
    P = seeded.prompts.shape[1]
    for i in range(3):
        seq = np.concatenate([seeded.prompts[i], att.tokens[i]])
        for t in np.argsort(-contrib[i], kind="stable")[:20]:
            assert _red(seeded, seq[: P + t], seq[P + t]), (seeded.meta.get("seeding"), i, t)
    assert np.all(sims.score(att).score < sims.score(seeded).score)


def test_colour_of_a_text_follows_its_seeding_scheme(seeded):
    """attacks._green (the colour oracle's colours) equals seeding.green_mask under the text's own scheme
    for the whole vocabulary after each text's last window."""
    h, key, V = 4, 11, LM.vocab_size
    for i in range(3):
        ctx = np.concatenate([seeded.prompts[i], seeded.tokens[i]])
        want = seeding.green_mask(key, ctx[-h:], V, 0.25, seeded.meta.get("seeding", seeding.DEFAULT))
        assert np.array_equal(attacks._green(seeded, ctx, np.arange(V)), want), (seeded.meta.get("seeding"), i)
