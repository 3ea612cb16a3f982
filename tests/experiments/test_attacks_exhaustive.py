"""The oracle attacks of Prop. adv_robust against exhaustive search on tiny texts.

Texts of T = 8 tokens of a vocabulary of V = 6 (the ``tiny`` preset), h = 1: every edit of a
contiguous substring of m tokens into any of the V^m strings, and every insertion of a block of m
tokens at any of the T + 1 places, is scored by the package's detector; the oracle must reach the
least green count of them all (the worst case the proof constructs: the greenest substring turned
red with the token after it, a red block placed before a green token it turns red).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from sims.detect.stats import scores
from sims.experiments.attacks import attack
from sims.lm.synthetic import open_synthetic
from sims.watermarks.generate import generate_synthetic

T, M = 8, 2
LM = open_synthetic("tiny")
V = LM.vocab_size


def _gen(seed: int, gamma: float):
    return generate_synthetic(LM, "srl", n=12, T=T, seed=seed, key=5, gamma=gamma, delta=1.5)


def _greens(gen, rows) -> np.ndarray:
    """Green count of each candidate text of ``rows`` (equal length), all after text i's prompt."""
    rows = np.asarray(rows, dtype=np.int64)
    prompts = np.repeat(gen.prompts[:1], len(rows), axis=0)
    return scores.score_redgreen(rows, prompts, gen.meta["key"], gen.meta["gamma"], vocab_size=V, h=gen.meta["h"]).score


def _one(gen, i, rows):
    sub = gen.prompts[i : i + 1]
    rows = np.asarray(rows, dtype=np.int64)
    return scores.score_redgreen(rows, np.repeat(sub, len(rows), axis=0), gen.meta["key"], gen.meta["gamma"], vocab_size=V, h=gen.meta["h"]).score


def _all_edits(row: np.ndarray) -> list[np.ndarray]:
    out = []
    for s in range(T - M + 1):
        for sub in itertools.product(range(V), repeat=M):
            new = row.copy()
            new[s : s + M] = sub
            out.append(new)
    return out


def _all_insertions(row: np.ndarray) -> list[np.ndarray]:
    return [np.concatenate([row[:s], sub, row[s:]]) for s in range(T + 1) for sub in itertools.product(range(V), repeat=M)]


@pytest.mark.parametrize("gamma, seed", [(0.5, 0), (0.25, 1), (0.75, 2)])
def test_worst_edit_reaches_the_least_green_count_over_all_substring_edits(gamma, seed):
    gen = _gen(seed, gamma)
    att = attack(gen, "worst_edit", M / T, 0)
    got = _one_each(gen, att.tokens)
    for i in range(gen.tokens.shape[0]):
        row = gen.tokens[i]
        changed = np.flatnonzero(att.tokens[i] != row)
        assert changed.size <= M and (changed.size == 0 or changed[-1] - changed[0] < M)  # one substring of m tokens
        best = _one(gen, i, _all_edits(row)).min()
        assert got[i] == best, (i, got[i], best)


@pytest.mark.parametrize("gamma, seed", [(0.5, 0), (0.25, 1), (0.75, 2)])
def test_worst_insertion_reaches_the_least_green_count_over_all_block_insertions(gamma, seed):
    gen = _gen(seed, gamma)
    att = attack(gen, "worst_insertion", M / T, 0)
    got = _one_each(gen, att.tokens)
    for i in range(gen.tokens.shape[0]):
        row = gen.tokens[i]
        new = att.tokens[i][att.tokens[i] >= 0]
        assert new.size == T + M
        best = _one(gen, i, _all_insertions(row)).min()
        assert got[i] == best, (i, got[i], best)


def _one_each(gen, tokens) -> np.ndarray:
    return scores.score_redgreen(tokens, gen.prompts, gen.meta["key"], gen.meta["gamma"], vocab_size=V, h=gen.meta["h"]).score


def test_worst_edit_of_the_whole_text_turns_every_token_red():
    """rate 1: the one window is the whole text (it ends at the text's end, no successor to re-colour); with
    gamma 0.5 every context of the tiny LM has red tokens, so the least green count, 0, is reached in every text."""
    gen = _gen(0, 0.5)
    att = attack(gen, "worst_edit", 1.0, 0)
    assert att.tokens.shape == gen.tokens.shape and (_one_each(gen, att.tokens) == 0).all()
