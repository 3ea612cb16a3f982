"""Many keys (Holm, FWER) and many texts (BH / e-BH, FDR): the rules equal their definitions
written as loops, and the error rates measured under the null are within their bounds while the
uncorrected rules fail the same checks."""

from __future__ import annotations

import math

import numpy as np
import pytest

import sims
from sims.detect import multiple
from sims.detect.anytime import peeking, sequential
from sims.detect.stats.nulls import LN10, binom_logsf


def _holm_loop(p, alpha):
    K = len(p)
    out = np.zeros(K, dtype=bool)
    for rank, k in enumerate(np.argsort(p, kind="stable")):
        if p[k] > alpha / (K - rank):
            break
        out[k] = True
    return out


def _bh_loop(p, alpha):
    N = len(p)
    order = np.argsort(p, kind="stable")
    k = max([i + 1 for i in range(N) if p[order[i]] <= alpha * (i + 1) / N], default=0)
    out = np.zeros(N, dtype=bool)
    out[order[:k]] = True
    return out


def test_rules_equal_their_definitions():
    """Seed 0: 200 random families of 1 to 40 p-values (log-uniform down to 1e-6)."""
    rng = np.random.default_rng(0)
    for _ in range(200):
        p = 10.0 ** -rng.uniform(0, 6, size=rng.integers(1, 41))
        a = float(rng.choice([0.01, 0.05, 0.2]))
        np.testing.assert_array_equal(multiple.holm(np.log10(p), a), _holm_loop(p, a))
        np.testing.assert_array_equal(multiple.holm_adjusted_log10p(np.log10(p)) <= math.log10(a), _holm_loop(p, a))
        np.testing.assert_array_equal(multiple.benjamini_hochberg(np.log10(p), a), _bh_loop(p, a))
        H = np.sum(1.0 / np.arange(1, p.size + 1))
        np.testing.assert_array_equal(multiple.benjamini_hochberg(np.log10(p), a, arbitrary=True), _bh_loop(p, a / H))
        e = 1.0 / p  # e-BH on e = 1/p is BH
        np.testing.assert_array_equal(multiple.e_bh(np.log(e), a), _bh_loop(p, a))
    lp = np.log10(10.0 ** -rng.uniform(0, 6, size=(30, 7)))
    np.testing.assert_array_equal(multiple.holm(lp, 0.05), np.stack([_holm_loop(10**lp[:, j], 0.05) for j in range(7)], axis=1))


@pytest.fixture(scope="module")
def null_texts():
    """2,000 unwatermarked texts of 50 tokens (news, V = 1000, seed 7)."""
    return sims.generate(sims.get_lm("news", vocab_size=1000), "none", n=2000, T=50, seed=7, key=1)


@pytest.mark.parametrize("K", [10, 100, 1000])
def test_fwer_over_keys(null_texts, K):
    """Null texts scored with keys 1..K (dedup), alpha = 0.05, n = 2,000 texts: Holm's family-wise
    error passes the 99.9 % one-sided Clopper-Pearson check (peeking.exceeds_level); testing every
    key at alpha (no correction) fails it."""
    g = null_texts
    lp, _, _ = multiple.score_redgreen_keys(g.tokens, g.prompts[:, -1:], range(1, K + 1), 0.25, vocab_size=1000)
    fw = int(multiple.holm(lp, 0.05).any(axis=0).sum())
    raw = int((lp <= math.log10(0.05)).any(axis=0).sum())
    assert not peeking.exceeds_level(fw, 2000, 0.05)
    assert peeking.exceeds_level(raw, 2000, 0.05)


def test_fdr_on_mixtures():
    """Seed 1, 2,000 corpora of N = 100 texts of 100 scored tokens, 20 watermarked (green
    probability gamma + 0.1 = 0.35) and 80 plain (0.25), level 0.1: the realised FDR of BH
    (exact p-values) and e-BH (final e-values of the anytime test) has mean below 0.1 (one-sided
    99.9 % normal bound on the mean of 2,000 i.i.d. proportions); flagging every p <= 0.1 does not."""
    rng = np.random.default_rng(1)
    R, N, n1, T, a = 2000, 100, 20, 100, 0.1
    truth = np.arange(N) < n1
    k = rng.binomial(T, np.where(truth, 0.35, 0.25), size=(R, N))
    lp = binom_logsf(k, T, 0.25) / LN10
    le = sequential.bernoulli_mixture(0.25).log_e(k, T)
    fdp = {"bh": [], "ebh": [], "raw": []}
    for r in range(R):
        for name, rej in (("bh", multiple.benjamini_hochberg(lp[r], a)), ("ebh", multiple.e_bh(le[r], a)), ("raw", lp[r] <= math.log10(a))):
            fdp[name].append((rej & ~truth).sum() / max(1, rej.sum()))
    for name in fdp:
        x = np.asarray(fdp[name])
        lower = x.mean() - 3.09 * x.std(ddof=1) / math.sqrt(R)
        assert (lower > a) == (name == "raw"), (name, x.mean())


@pytest.mark.parametrize("dedup", [False, True])
def test_multi_key_kernel_equals_score_redgreen(null_texts, dedup):
    """One pass over every key gives score_redgreen's counts and p-values key by key (repetitive
    texts of the loopy LM included, so dedup drops tokens)."""
    loopy = sims.generate(sims.get_lm("loopy", vocab_size=200), "srl", n=20, T=80, seed=2, key=3, delta=2.0)
    for g in (null_texts, loopy):
        toks, pr, V = g.tokens[:200], g.prompts[:200, -1:], g.meta["vocab_size"]
        keys = [3, 1, 2**64 - 1, 12345]
        lp, green, n = multiple.score_redgreen_keys(toks, pr, keys, 0.25, vocab_size=V, dedup=dedup)
        for j, k in enumerate(keys):
            r = sims.score_redgreen(toks, pr, k, 0.25, vocab_size=V, dedup=dedup)
            np.testing.assert_array_equal(green[j], r.green)
            np.testing.assert_array_equal(n[j], r.n_scored)
            np.testing.assert_allclose(lp[j], r.log10_p, rtol=1e-12, atol=1e-12)
