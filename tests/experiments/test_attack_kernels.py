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


def test_last_window_is_empty_at_context_width_zero():
    """``windows.last``: the last h tokens, none at h = 0 (where ``context[-0:]`` is the whole context)."""
    from sims.core.windows import last

    assert last([5, 6, 7], 0).size == 0
    assert last([5, 6, 7], 2).tolist() == [6, 7]
    assert last([5, 6, 7], 5).tolist() == [5, 6, 7]


def _keyed_colour(gen, context, token) -> bool:
    """Independent colour of one token: Unigram's one fixed list, DiPmark's partition of the context's words."""
    m = gen.meta
    if m["algo"] == "unigram":
        from sims.watermarks.unigram import green_list

        return bool(green_list(m["key"], m["vocab_size"], m["gamma"])[token])
    ctx = prf.context_hash(m["key"], np.asarray(context, dtype=np.int64)[len(context) - m["h"]:], prf.GREEN)
    return bool(prf.green_mask(ctx, m["vocab_size"], m["gamma"], "partition")[token])


@pytest.mark.parametrize("algo", ["unigram", "dipmark"])
def test_key_holding_attacks_read_the_texts_own_green_lists(algo):
    """news V = 500, 3 x 40 tokens, rate 0.5: the entropy attack and the score oracle place tokens red under
    Unigram's fixed list (h = 0) and DiPmark's partition, and the oracle empties the green count of its targets."""
    gen = sims.generate(LM, algo, n=3, T=40, seed=0, key=11)
    V, P = LM.vocab_size, gen.prompts.shape[1]
    for i in range(3):  # the colour oracle's colours over the whole vocabulary after each text
        ctx = np.concatenate([gen.prompts[i], gen.tokens[i]])
        want = np.array([_keyed_colour(gen, ctx, k) for k in range(V)])
        assert np.array_equal(attacks._green(gen, ctx, np.arange(V)), want), (algo, i)
    att = attacks.attack(gen, "entropy", 0.5, seed=1, lm=LM)
    contrib = oracle_contributions(gen, LM)
    orc = score_oracle(gen, LM, 0.5, contrib=contrib)
    for i in range(3):
        for done, order in ((att, np.argsort(-gen.entropy[i], kind="stable")), (orc, np.argsort(-contrib[i], kind="stable"))):
            seq = np.concatenate([gen.prompts[i], done.tokens[i]])
            for t in order[:20]:
                assert not _keyed_colour(gen, seq[: P + t], seq[P + t]), (algo, i, t)
    assert np.all(sims.score(orc).score < sims.score(gen).score)


@pytest.mark.parametrize("algo", ["pf", "gumbelsoft", "exp", "sweet"])
def test_score_oracle_ranks_by_the_familys_marks_and_replaces_them(algo):
    """news V = 500, 3 x 40 tokens (EXP: key sequence of 16, so positions wrap), rate 0.5: the oracle's ranking is the
    detector's own per-token statistic (EMS family: -ln(1 - r) of the context's uniforms; EXP: of xi_{t mod 16};
    SWEET: the green colour at its gated positions, 0 elsewhere), every replaced token contributes below ln 2 (EMS
    and EXP) or is red (SWEET), and the detector's score falls on every text."""
    from sims.core.keys import position_hashes
    from sims.detect.stats.entropies import shannon_entropies
    from sims.detect.stats.gated_scores import entropy_gate

    gen = sims.generate(LM, algo, n=3, T=40, seed=0, key=11, **(dict(exp_n=16) if algo == "exp" else {}))
    P, T, m = gen.prompts.shape[1], 40, gen.meta
    contrib = oracle_contributions(gen, LM)

    def marks(tokens):
        out = np.empty((3, T))
        for i in range(3):
            seq = np.concatenate([gen.prompts[i], tokens[i]])
            for t in range(T):
                if algo == "sweet":
                    out[i, t] = float(prf.is_green(prf.context_hash(11, seq[P + t - m["h"]: P + t], prf.GREEN), seq[P + t], m["gamma"]))
                else:
                    c = position_hashes(11, t, 16) if algo == "exp" else prf.context_hash(11, seq[P + t - m["h"]: P + t], prf.EMS)
                    out[i, t] = -np.log1p(-prf.uniforms(c, seq[P + t]))
        return out

    want = marks(gen.tokens)
    if algo == "sweet":
        want = np.where(entropy_gate(shannon_entropies(gen, LM), m["alpha"]), want, 0.0)
    np.testing.assert_allclose(contrib, want, rtol=1e-12, atol=0)
    att = score_oracle(gen, LM, 0.5, contrib=contrib)
    after = marks(att.tokens)
    for i in range(3):
        top = np.argsort(-contrib[i], kind="stable")[:20]
        assert np.all(after[i, top] < (0.5 if algo == "sweet" else np.log(2.0))), (algo, i)
    assert np.all(sims.score(att, lm=LM).score < sims.score(gen, lm=LM).score)
