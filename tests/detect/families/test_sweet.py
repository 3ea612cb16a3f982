"""SWEET (registry record ``sweet``) and its entropy-gated detector family (sims.detect.stats.gated_scores): ATW's
generation rule, the gate recomputed from the LM, the exact binomial tail over the gated tokens and its null size at
1e-4 and 1e-6, the e-process, many keys, the stream and the refusals."""

import math

import numpy as np
import pytest
from scipy import stats

import sims
from sims.detect import families
from sims.detect.families import detectors
from sims.detect.stats.entropies import shannon_entropies
from sims.detect.stats.marks import null_green_probability
from sims.watermarks import registry

LM = sims.get_lm("news", vocab_size=2000)
KEY, NULL_KEY = 7, 1007
ALPHA = 2.6  # the entropy threshold (nats) of these tests: about the median of news's H(p_t) at V = 2000 (2.3 to 3.6 nats)
ENTROPY_RTOL = 1e-10  # the generator's O(1) entropy from the LM's tables against -sum p ln p over the materialised p_t


@pytest.fixture(scope="module")
def gen():
    return sims.generate(LM, "sweet", n=6, T=120, seed=3, key=KEY, alpha=ALPHA)


def test_sweet_is_registered_with_its_own_family_and_code():
    rec = registry.get("sweet")
    assert (rec.code, rec.family, rec.params, rec.reference) == (14, "entropy_gated", ("delta", "alpha"), registry.get("atw").reference)
    fam = families.of("sweet")
    assert fam.needs_lm and fam.colours and fam.prefix
    assert "entropy_gated" in families.names()


def test_sweet_generates_by_atws_rule():
    """Same LM, seed, key and parameters: SWEET's texts and exact records are ATW's, token for token (one step function)."""
    kw = dict(n=3, T=60, seed=5, key=KEY, delta=1.5, alpha=ALPHA)
    a, b = sims.generate(LM, "sweet", **kw), sims.generate(LM, "atw", **kw)
    np.testing.assert_array_equal(a.tokens, b.tokens)
    for f in ("kl", "G", "dg", "entropy"):
        np.testing.assert_array_equal(getattr(a, f), getattr(b, f))
    low = a.entropy <= ALPHA
    assert low.any() and (~low).any()
    assert (a.kl[low] == 0).all() and (a.kl[~low] > 0).all()  # the boost only where H(p_t) > alpha


def test_the_gate_is_the_lms_entropy_above_alpha(gen):
    """The detector's recomputed H(p_t) equals the generator's record; the scored tokens are exactly the gated ones
    (without dedup), and the gated green count and its exact binomial tail are scipy's on those tokens."""
    H = shannon_entropies(gen, LM)
    np.testing.assert_allclose(H, gen.entropy, rtol=ENTROPY_RTOL, atol=0)
    res = detectors.score(gen, LM, dedup=False)
    gate = H > ALPHA
    np.testing.assert_array_equal(res.n_scored, gate.sum(axis=1))
    from sims.detect.stats.scores import token_marks

    values, _, _ = token_marks(gen.tokens, gen.prompts[:, -1:], KEY, gamma=gen.meta["gamma"], vocab_size=2000)
    k = ((values > 0.5) & gate).sum(axis=1)
    np.testing.assert_array_equal(res.score, k)
    g = null_green_probability(gen.meta["gamma"], "bernoulli", 2000)
    np.testing.assert_allclose(res.log10_p, stats.binom.logsf(k - 1, res.n_scored, g) / math.log(10), rtol=1e-9)


def test_thresholds_at_the_ends_gate_everything_or_nothing(gen):
    """alpha = 0 gates every position: the family's answer is the plain green count's; a threshold above log V gates none."""
    fam = families.of("sweet")
    zero = sims.generate(LM, "sweet", n=2, T=50, seed=4, key=KEY, alpha=0.0)
    plain = families.get("redgreen").score(zero, LM, algo="sweet", key=KEY, dedup=True, gamma=None, stat=None, params=None)
    gated = fam.score(zero, LM, algo="sweet", key=KEY, dedup=True, gamma=None, stat=None, params=None)
    for a, b in zip((gated.n_scored, gated.score, gated.log10_p), (plain.n_scored, plain.score, plain.log10_p)):
        np.testing.assert_array_equal(a, b)
    none = sims.generate(LM, "sweet", n=2, T=50, seed=4, key=KEY, alpha=math.log(2000) + 1)
    res = fam.score(none, LM, algo="sweet", key=KEY, dedup=True, gamma=None, stat=None, params=None)
    assert (res.n_scored == 0).all() and res.too_short.all() and (res.log10_p == 0).all()


def test_sweet_detects_and_gating_beats_the_plain_count(gen):
    """Under its key every text is detected at 1e-4 and the gated count's p-value is below the plain green count's of the
    same tokens (the low-entropy positions carry no watermark and only dilute it); under another key, not detected."""
    res = detectors.score(gen, LM, dedup=True)
    plain = families.get("redgreen").score(gen, LM, algo="sweet", key=KEY, dedup=True, gamma=None, stat=None, params=None)
    assert res.watermarked.all()
    assert np.median(res.log10_p) < np.median(plain.log10_p)
    assert not detectors.score(gen, LM, dedup=True, key=NULL_KEY).watermarked.any()


@pytest.mark.parametrize("a", [1e-4, 1e-6])
def test_the_null_size_at_deep_levels_is_at_most_the_level_exactly(a):
    """Given the text the gated, kept colours are i.i.d. Bernoulli(g) under the null (key-independent gate), so the size of
    the level-a test of a text with n gated tokens is P(Bin(n, g) >= k_a), k_a the smallest count with p <= a: computed in
    log space (scipy's binom.logsf) for the gated counts of 300 null texts (news, seed 11, 40 tokens, key 1007), <= a."""
    null = sims.generate(LM, "sweet", n=300, T=40, seed=11, key=KEY, alpha=ALPHA)
    res = detectors.score(null, LM, dedup=True, key=NULL_KEY)
    g = null_green_probability(null.meta["gamma"], "bernoulli", 2000)
    for n in np.unique(res.n_scored[~res.too_short]):
        lp = stats.binom.logsf(np.arange(n + 1) - 1, n, g)  # log P(Bin >= k), k = 0..n
        reach = np.flatnonzero(lp <= math.log(a))
        if reach.size:
            assert lp[reach[0]] <= math.log(a) and (reach[0] == 0 or lp[reach[0] - 1] > math.log(a))
    assert (res.log10_p > math.log10(a)).all()  # and no null text reached it


def test_sequential_many_keys_and_stream_agree_with_the_fixed_length_test(gen):
    """The e-process scores the fixed-length test's tokens and sum; key KEY of score_keys is the one-key test; the stream fed
    in chunks of 9 tokens with the LM's distributions ends in the batch e-process's state (texts generated at the record's
    default threshold, the stream's)."""
    seq = detectors.sequential_score(gen, LM, alpha=1e-4)
    fixed = detectors.score(gen, LM, dedup=True)
    np.testing.assert_array_equal(seq.n_scored, fixed.n_scored)
    np.testing.assert_array_equal(seq.score, fixed.score)
    assert seq.detected.all()
    lp, n = detectors.score_keys(gen, [NULL_KEY, KEY], LM)
    np.testing.assert_array_equal(lp[1], fixed.log10_p)
    np.testing.assert_array_equal(n[1], fixed.n_scored)
    from sims.detect.families.stream import SequentialDetector

    dflt = sims.generate(LM, "sweet", n=2, T=60, seed=6, key=KEY)
    batch = detectors.sequential_score(dflt, LM, alpha=1e-2)
    step = LM.step_probs(dflt)
    for i in range(2):
        det = SequentialDetector(KEY, algo="sweet", context=dflt.prompts[i], gamma=dflt.meta["gamma"], vocab_size=2000, alpha=1e-2)
        probs = step(i)
        for c in range(0, 60, 9):
            state = det.update(dflt.tokens[i, c:c + 9], probs[c:c + 9])
        assert (state.n_scored, state.stop) == (batch.n_scored[i], batch.stop[i])
        assert state.log_e == pytest.approx(batch.log_e[i], rel=1e-12, abs=1e-12)


def test_dedup_keeps_each_pair_once_over_the_whole_text_then_gates():
    """On loopy text (``loopy``, V = 4096: repeated (context, token) pairs), dedup's scored tokens are exactly the first
    occurrence of each (previous token, token) pair in the whole text that is also gated, recomputed here token by token."""
    lm = sims.get_lm("loopy")
    gen = sims.generate(lm, "sweet", n=4, T=150, seed=2, key=KEY, alpha=1.0)
    res = detectors.score(gen, lm, dedup=True)
    gate = shannon_entropies(gen, lm) > 1.0
    want = []
    for i in range(gen.n):
        seq, seen, kept = np.concatenate([gen.prompts[i, -1:], gen.tokens[i]]).tolist(), set(), 0
        for t in range(150):
            pair = (seq[t], seq[t + 1])
            kept += pair not in seen and bool(gate[i, t])
            seen.add(pair)
        want.append(kept)
    np.testing.assert_array_equal(res.n_scored, want)
    assert (res.n_scored < detectors.score(gen, lm, dedup=False).n_scored).all()  # the loops repeat pairs


def test_sweet_refuses_detection_without_the_lm(gen):
    with pytest.raises(ValueError, match="algo 'sweet' is detected with the model's probabilities \\(its entropy gate\\): pass lm"):
        detectors.score(gen)
    from sims.detect.families.stream import SequentialDetector

    det = SequentialDetector(KEY, algo="sweet", context=gen.prompts[0], vocab_size=2000)
    with pytest.raises(ValueError, match="probs must be given for algo 'sweet'"):
        det.update(gen.tokens[0, :5])
    from sims.detect.stats.gated_scores import entropy_gate

    with pytest.raises(ValueError, match=r"threshold must be in \[0, inf\); got -1"):
        entropy_gate(np.zeros((1, 2)), -1)
