"""Attacks: they do what they say, keep a record, and refuse bad input."""

import dataclasses
import re

import numpy as np
import pytest

import theory
from sims.detect.families import detectors
from sims.experiments.attacks import KINDS, attack
from sims.lm.synthetic import open_synthetic
from sims.watermarks.generate import generate_synthetic

LM = open_synthetic("lfqa", vocab_size=3000)


@pytest.fixture(scope="module")
def gen():
    """The module's shared text, built on first use (at import, every xdist worker compiled the generator while collecting)."""
    return generate_synthetic(LM, "dualga", n=6, T=100, seed=0, key=5, Delta=0.3)


@pytest.mark.parametrize("kind", KINDS)
def test_attacks_record_and_weaken_detection(gen, kind):
    a = attack(gen, kind, 0.3, seed=1, lm=LM)
    assert a.meta["attacks"] == [dict(kind=kind, rate=0.3, seed=1, n_changed=a.meta["attacks"][0]["n_changed"])]
    assert a.meta["attacks"][0]["n_changed"] > 0
    before = np.median(detectors.score(gen, LM).log10_p)
    after = np.median(detectors.score(a, LM).log10_p)
    assert after > before


def test_lengths(gen):
    assert np.all((attack(gen, "deletion", 0.2, 0).tokens >= 0).sum(axis=1) == 80)
    assert np.all((attack(gen, "insertion", 0.2, 0).tokens >= 0).sum(axis=1) == 120)


def test_worst_case_deletion_respects_the_rehash_aware_bound(gen):
    """Deleting l*T green tokens would move the green excess e to (e - l + l gamma)/(1 - l)
    (Prop. adv_robust) if colours were fixed; with context hashing every deletion also
    re-colours its successor, so the guaranteed excess is (e - 2l + l gamma)/(1 - l)."""
    gamma, l = gen.meta["gamma"], 0.1
    g0 = detectors.score(gen, LM)
    a = attack(gen, "worst_deletion", l, 0)
    g1 = detectors.score(a, LM)
    e0 = g0.score / g0.n_scored - gamma
    e1 = g1.score / g1.n_scored - gamma
    paper = np.array([theory.robust_delta("deletion", e, gamma, l, 100) for e in e0])
    aware = np.array([theory.robust_delta("deletion", e, gamma, l, 100, rehash="scattered") for e in e0])
    assert np.all(e1 >= aware - 1e-12)
    assert np.all(np.abs(e1 - paper) <= l / (1 - l) + 1e-12)  # only successors' colours moved


def test_bad_input(gen):
    with pytest.raises(ValueError, match=re.escape("rate must be in [0, 1]; got 1.5")):
        attack(gen, "deletion", 1.5, 0)
    with pytest.raises(ValueError, match="kind must be one of"):
        attack(gen, "shuffle", 0.1, 0)
    with pytest.raises(ValueError, match="an attacked text is empty"):
        attack(gen, "deletion", 1.0, 0)
    with pytest.raises(ValueError, match="lm must be"):  # without lm= the record's LM is opened (sims.lm.door.lm_of)
        attack(dataclasses.replace(gen, meta=dict(gen.meta, lm="nope")), "entropy", 0.1, 0)


def test_synonym_keeps_each_token_in_its_cluster_and_spares_semantic_seeds():
    """The synonym attack swaps round(0.3 T) tokens per text, each for a token of its own cluster; the semantic seeding
    (h = 4) keeps every successor's seed, so its green count falls by about the swapped tokens' own greens only, while
    window hashing loses their successors' too (6 texts x 100 tokens, seeds 0 and 1: median log10 p)."""
    from sims.core import seeding

    kw = dict(n=6, T=100, seed=0, key=5, delta=2.0, alpha=0.0, h=4)
    sem, win = (generate_synthetic(LM, "atw", seeding=s, **kw) for s in ("semantic", "lefthash"))
    a = attack(sem, "synonym", 0.3, seed=1)
    changed = a.tokens != sem.tokens
    assert np.all(changed.sum(axis=1) <= 30) and changed.sum() >= 6 * 30 - 3  # a swap may draw the same token (1 in ~47)
    np.testing.assert_array_equal(seeding.clusters(a.tokens), seeding.clusters(sem.tokens))
    lost = {name: np.median(detectors.score(attack(g, "synonym", 0.3, seed=1)).log10_p) - np.median(detectors.score(g).log10_p)
            for name, g in (("semantic", sem), ("window", win))}
    assert lost["window"] > lost["semantic"] + 2  # decades of p: the window-hashed texts lose much more
