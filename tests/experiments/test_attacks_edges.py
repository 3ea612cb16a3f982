"""The attacks beyond test_attacks*.py (the survivors of make mutate's sampled run on this module):
the worst edit of a 3-token substring against exhaustive search (its red block's fall-back search of
the second-to-last token, windows ending at the text's end), the paraphrase's spans of 4 tokens, and
the colour oracle at rate 1 turning every green token."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import sims
from sims.detect.stats import scores
from sims.experiments import attacks
from sims.lm.synthetic import open_synthetic
from sims.watermarks.generate import generate_synthetic

TINY = open_synthetic("tiny")


def _green_count(gen, i, rows):
    rows = np.asarray(rows, dtype=np.int64)
    pr = np.repeat(gen.prompts[i : i + 1], len(rows), axis=0)
    return scores.score_redgreen(rows, pr, gen.meta["key"], gen.meta["gamma"], vocab_size=TINY.vocab_size, h=1).score


@pytest.mark.parametrize("gamma, seed", [(0.5, 0), (0.75, 2)])
def test_worst_edit_of_three_tokens_reaches_the_least_green_count(gamma, seed):
    """tiny LM (V = 6), 10 texts of T = 6, h = 1, key 5, SRL delta 1.5; every 3-token substring edit
    (4 windows x 6^3 strings) scored: the oracle's green count is the least."""
    T, M = 6, 3
    gen = generate_synthetic(TINY, "srl", n=10, T=T, seed=seed, key=5, gamma=gamma, delta=1.5)
    att = attacks.attack(gen, "worst_edit", M / T, 0)
    for i in range(gen.tokens.shape[0]):
        row = gen.tokens[i]
        edits = []
        for s in range(T - M + 1):
            for sub in itertools.product(range(TINY.vocab_size), repeat=M):
                new = row.copy()
                new[s : s + M] = sub
                edits.append(new)
        best = _green_count(gen, i, edits).min()
        assert _green_count(gen, i, [att.tokens[i]])[0] == best, i


def test_paraphrase_resamples_spans_of_four_tokens():
    """news LM V = 1000, 30 texts, seed 1: at 4 tokens a text one span, every changed position within 4
    consecutive ones (and some text changes its first and fourth); at rate 1 on 6 tokens two spans,
    so some text changes more than 4 positions."""
    lm = sims.get_lm("news", vocab_size=1000)
    gen = sims.generate(lm, "srl", n=30, T=20, seed=1, key=3, delta=2.0)
    att = attacks.attack(gen, "paraphrase", 4 / 20, 0, lm=lm)
    spread = []
    for i in range(30):
        d = np.flatnonzero(att.tokens[i] != gen.tokens[i])
        if d.size:
            spread.append(d[-1] - d[0])
    assert max(spread) == 3
    short = sims.generate(lm, "srl", n=30, T=6, seed=2, key=3, delta=2.0)
    att = attacks.attack(short, "paraphrase", 1.0, 0, lm=lm)
    assert max(int(np.sum(att.tokens[i] != short.tokens[i])) for i in range(30)) > 4


def test_colour_oracle_at_rate_one_turns_every_green_token():
    """news LM V = 500, 4 texts x 30 tokens, seed 0: every position green in the original text holds,
    after the attack, the most probable red token of its new context."""
    lm = sims.get_lm("news", vocab_size=500)
    gen = sims.generate(lm, "srl", n=4, T=30, seed=0, key=3, delta=2.0)
    att = attacks.attack(gen, "color", 1.0, 0, lm=lm)
    for i in range(4):
        prompt, row, new = gen.prompts[i], gen.tokens[i], att.tokens[i]
        seq = np.concatenate([prompt, row])
        green = [bool(attacks._green(gen, seq[: len(prompt) + t], row[t])) for t in range(len(row))]
        assert any(green)
        for t in np.flatnonzero(green):
            assert new[t] == attacks._most_probable_red(gen, lm, np.concatenate([prompt, new[:t]])), (i, t)


def test_worst_edit_of_a_text_whose_greens_are_all_at_its_end():
    """A tiny-LM text (V = 6, gamma 0.5, key 5) rewritten red everywhere but its last 2 tokens: the
    worst 2-token edit leaves no green (the first five tokens untouched)."""
    import copy

    gen = generate_synthetic(TINY, "srl", n=1, T=8, seed=0, key=5, gamma=0.5, delta=1.5)
    prompt, row = gen.prompts[0], gen.tokens[0].copy()
    for t in range(len(row)):  # token t red for t < 6, green for the last two (first such id)
        ctx = np.concatenate([prompt, row[:t]])
        colours = attacks._green(gen, ctx, np.arange(TINY.vocab_size))
        want = t >= len(row) - 2
        row[t] = int(np.flatnonzero(colours == want)[0])
    crafted = copy.copy(gen)
    crafted.tokens = row[None, :]
    assert _green_count(crafted, 0, [row])[0] == 2
    att = attacks.attack(crafted, "worst_edit", 2 / 8, 0)
    assert _green_count(crafted, 0, [att.tokens[0]])[0] == 0
    assert np.array_equal(att.tokens[0][:5], row[:5])


class _PointMass:
    """An LM whose next token is always ``token`` (wraps nothing else: the paraphrase asks only next_probs)."""

    def __init__(self, vocab_size: int, token: int):
        self.p = np.zeros(vocab_size)
        self.p[token] = 1.0

    def next_probs(self, context):
        return self.p


def test_paraphrase_span_never_starts_past_the_last_full_span():
    """Texts of exactly SPAN tokens at rate 1, 20 seeds: the one span must start at 0 and so resample
    every token; with a point-mass LM on a token absent from the text, every token is that token.
    (A start range one too wide starts at 1 with probability 1/2 per seed and leaves token 0 as it was.)"""
    lm = sims.get_lm("news", vocab_size=500)
    gen = sims.generate(lm, "srl", n=3, T=attacks.SPAN, seed=4, key=3, delta=2.0)
    absent = int(np.setdiff1d(np.arange(500), gen.tokens)[0])
    for seed in range(20):
        att = attacks.attack(gen, "paraphrase", 1.0, seed, lm=_PointMass(500, absent))
        assert np.all(att.tokens[:, : attacks.SPAN] == absent), seed
