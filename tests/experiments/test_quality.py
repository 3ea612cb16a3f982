"""Quality numbers (sims.experiments.quality, sims.lm.logprobs): hand-computed values on tiny texts,
the vectorised paths against naive ones, the synthetic LM's exact log-probabilities against its
NumPy softmax, and their mean against the generator's exact entropy records."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

import sims
from sims.experiments.quality import distinct_n, perplexity, quality, repetition_rates, self_bleu, t_interval
from sims.experiments.repetition import repeated_ngram_mask
from sims.lm.logprobs import token_logprobs, token_logprobs_reference

EXACT = 1e-12  # float64 sums of a few terms, or the same numbers by two paths
Z999 = 3.29  # two-sided 99.9% normal quantile: Monte Carlo checks below fail by chance 1 time in 1000


def test_distinct_n_by_hand():
    x = np.array([[1, 2, 1, 2, 3]])
    assert distinct_n(x, 1).tolist() == [3 / 5]  # {1, 2, 3} of 5
    assert distinct_n(x, 2).tolist() == [3 / 4]  # 12 21 12 23
    assert distinct_n(x, 3).tolist() == [1.0]  # 121 212 123
    padded = np.array([[1, 2, 1, -1, -1], [7, 7, 7, 7, 7]])
    assert distinct_n(padded, 1).tolist() == [2 / 3, 1 / 5]
    assert np.isnan(distinct_n(padded, 4)[0]) and distinct_n(padded, 4)[1] == 1 / 2
    # a gram of one text does not count as seen in another
    assert distinct_n(np.array([[1, 2], [1, 2]]), 2).tolist() == [1.0, 1.0]


def test_self_bleu_by_hand():
    assert self_bleu(np.array([[4, 5, 6, 7, 8]] * 2)).tolist() == [1.0, 1.0]  # identical texts
    disjoint = self_bleu(np.array([[1, 2, 3, 4, 5], [6, 7, 8, 9, 10]]))
    want = math.exp(np.mean([math.log(0.1 / 5), math.log(0.1 / 4), math.log(0.1 / 3), math.log(0.1 / 2)]))
    assert disjoint == pytest.approx([want, want], rel=EXACT)
    long = self_bleu(np.stack([np.arange(60), np.arange(60) + 100]))
    assert np.all(long < 0.005)  # disjoint texts: about epsilon / T
    # hyp 1 2 3 4 vs ref 1 2 3 5: matches 3/4, 2/3, 1/2 and none of order 4 (smoothed 0.1 / 1)
    b = self_bleu(np.array([[1, 2, 3, 4], [1, 2, 3, 5]]))
    assert b[0] == pytest.approx(math.exp((math.log(3 / 4) + math.log(2 / 3) + math.log(1 / 2) + math.log(0.1)) / 4), rel=EXACT)
    # clipping: 1 1 1 1 against 1 2 3 4 matches one unigram, not four
    c = self_bleu(np.array([[1, 1, 1, 1], [1, 2, 3, 4]]))
    assert c[0] == pytest.approx(math.exp((math.log(1 / 4) + math.log(0.1 / 3) + math.log(0.1 / 2) + math.log(0.1)) / 4), rel=EXACT)
    # brevity penalty: a text of 3 tokens against one of 5 (its prefix): exp(1 - 5/3), precisions 1
    d = self_bleu(np.array([[1, 2, 3, -1, -1], [1, 2, 3, 4, 5]]))
    assert d[0] == pytest.approx(math.exp(1 - 5 / 3), rel=EXACT)
    # the longer text against the shorter: no penalty; its orders 1..3 match 3/5, 2/4, 1/3, order 4: 0.1/2
    assert d[1] == pytest.approx(math.exp((math.log(3 / 5) + math.log(2 / 4) + math.log(1 / 3) + math.log(0.1 / 2)) / 4), rel=EXACT)
    with pytest.raises(ValueError, match="at least 2 texts"):
        self_bleu(np.array([[1, 2, 3]]))


def naive_self_bleu(rows, max_n=4, eps=0.1):
    """Self-BLEU from its definition with Counters, text by text."""
    out = []
    for i, hyp in enumerate(rows):
        refs = [r for j, r in enumerate(rows) if j != i]
        logs = []
        for n in range(1, min(max_n, len(hyp)) + 1):
            c = Counter(tuple(hyp[k : k + n]) for k in range(len(hyp) - n + 1))
            ref_max = Counter()
            for r in refs:
                for g, v in Counter(tuple(r[k : k + n]) for k in range(len(r) - n + 1)).items():
                    ref_max[g] = max(ref_max[g], v)
            m = sum(min(v, ref_max[g]) for g, v in c.items())
            logs.append(math.log((m if m else eps) / sum(c.values())))
        r = min((abs(len(x) - len(hyp)), len(x)) for x in refs)[1]
        bp = 1.0 if len(hyp) > r else math.exp(1 - r / len(hyp))
        out.append(bp * math.exp(sum(logs) / len(logs)))
    return np.array(out)


def test_vectorised_paths_equal_naive_ones():
    """Random texts of 3 symbols and ragged lengths (seed 0): self-BLEU, distinct-n and the
    repetition rate equal their definitions computed text by text."""
    rng = np.random.default_rng(0)
    x = rng.integers(0, 3, size=(12, 25))
    lengths = rng.integers(1, 26, size=12)
    x[np.arange(25)[None, :] >= lengths[:, None]] = -1
    rows = [r[r >= 0].tolist() for r in x]
    np.testing.assert_allclose(self_bleu(x), naive_self_bleu(rows), rtol=1e-12)
    for n in (1, 2, 3):
        want = [len(set(tuple(r[k : k + n]) for k in range(len(r) - n + 1))) / (len(r) - n + 1) if len(r) >= n else np.nan for r in rows]
        np.testing.assert_allclose(distinct_n(x, n), want, rtol=1e-12)
    mask = repeated_ngram_mask(x, 4)  # the ground truth of sims.experiments.repetition (a loop over tokens)
    np.testing.assert_allclose(repetition_rates(x), mask.sum(axis=1) / lengths, rtol=1e-12)
    assert repetition_rates(np.array([[1, 2, 3, 1, 2, 3, 1, 2]]), n=2).tolist() == [5 / 8]


def test_perplexity_by_hand():
    assert perplexity(np.zeros((2, 7))).tolist() == [1.0, 1.0]  # a deterministic LM
    assert perplexity(np.log([[0.5, 0.5], [1.0, 0.25]])).tolist() == pytest.approx([2.0, 2.0], rel=EXACT)
    assert perplexity(np.log([[0.5, 0.125]]), lengths=[1]).tolist() == pytest.approx([2.0], rel=EXACT)  # past the length: ignored
    with pytest.raises(ValueError, match="<= 0"):
        perplexity(np.array([[0.1]]))


def test_t_interval_by_hand():
    m, lo, hi = t_interval([1.0, 2.0, 3.0], 0.95)
    assert m == 2.0 and hi - m == pytest.approx(4.302652729911275 / math.sqrt(3), rel=1e-9)  # t_{0.975, 2}
    assert math.isnan(t_interval([5.0])[1])


@pytest.mark.parametrize("name", ["tiny", "news", "smollm2-fit"])
def test_synthetic_logprobs_equal_the_numpy_softmax(name):
    lm = sims.get_lm(name, **({"vocab_size": 3000} if name == "news" else {}))
    gen = sims.generate(lm, "srl", n=3, T=25, seed=2, delta=2.0)
    lengths = np.array([25, 10, 0])
    a = token_logprobs(lm.synthetic, gen.prompts, gen.tokens, lengths)
    b = token_logprobs_reference(lm.synthetic, gen.prompts, gen.tokens, lengths)
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)  # nan past the lengths on both
    assert np.isnan(a[1, 10:]).all() and np.isfinite(a[0]).all()
    np.testing.assert_allclose(lm.token_logprobs(gen), token_logprobs_reference(lm.synthetic, gen.prompts, gen.tokens), rtol=1e-12)


def test_unwatermarked_logprob_mean_is_the_entropy():
    """Unwatermarked texts of ``news`` (V = 2000), seed 3, 40 x 100 tokens: the mean of -log p(y_t) equals
    the mean exact entropy H(p_t) of the generator's records within 3.29 standard errors (99.9%),
    the standard error from the per-text means of the difference (texts independent)."""
    lm = sims.get_lm("news", vocab_size=2000)
    gen = sims.generate(lm, "none", n=40, T=100, seed=3)
    d = (-lm.token_logprobs(gen) - gen.entropy).mean(axis=1)
    assert abs(d.mean()) <= Z999 * d.std(ddof=1) / math.sqrt(d.size)
    # and a watermark raises the perplexity under the unwatermarked LM: E_q[-log p] = H(q) + KL(q || p) > H(p) here
    q = quality(sims.generate(lm, "srl", n=40, T=100, seed=3, delta=4.0), lm, null=gen)
    assert q["perplexity_ci95"][0] > q["null_perplexity_ci95"][1]


def test_evaluate_reports_quality():
    out = sims.evaluate("tiny", "srl", n=5, T=40, seed=0, delta=2.0, return_arrays=True)
    for k in ("perplexity", "null_perplexity", "distinct_1", "distinct_2", "distinct_3", "self_bleu", "repetition_rate"):
        lo, hi = out[k + "_ci95"]
        assert lo <= out[k] <= hi, k
    assert out["perplexity"] == pytest.approx(float(np.mean(out["arrays"]["perplexity"])), rel=EXACT) and out["perplexity"] >= 1.0
