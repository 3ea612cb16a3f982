"""Boundary rows at every threshold comparison of sims/detect/: a row exactly at the level on each
side, so that making a comparison strict (``<=`` to ``<``, ``>=`` to ``>``) or loosening it fails a test.

Each equality below is exact in floating point: the level is computed by the same operations the
code uses (``math.log10(fpr)``, ``np.log10(K - i)``, the kernel's own running value), and the test
asserts the equality before relying on it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from sims.detect import multiple
from sims.detect.anytime import _kernels as SK
from sims.detect.anytime import peeking, sequential
from sims.detect.documents import detect_json
from sims.detect.stats import scores
from sims.detect.stats.marks import null_green_probability, redgreen_from_marks
from sims.detect.stats.nulls import binom_logsf
from sims.detect.stats.scores import DetectResult

LN10 = math.log(10.0)


# ------------------------------------------------------------------ decide / text_rows


def _res(n, lp, too_short=False):
    return DetectResult(np.array([n]), np.array([0.0]), np.array([np.nan]), np.array([lp]), np.array([too_short]))


def test_decide_at_the_level_and_one_ulp_above():
    lvl = math.log10(1e-4)
    assert detect_json.decide(_res(50, lvl), 1e-4) == ["watermarked"]
    assert detect_json.decide(_res(50, np.nextafter(lvl, 0.0)), 1e-4) == ["not watermarked"]


def test_too_short_for_this_fpr_flips_at_n_log10_gamma_equal_to_the_level():
    """gamma = 0.1: n log10(gamma) = -n exactly; at fpr 1e-4 four tokens can reach p = 1e-4
    (not too short), three cannot (too short)."""
    assert 4 * math.log10(0.1) == math.log10(1e-4)
    assert detect_json.decide(_res(4, -3.0), 1e-4, gamma=0.1) == ["not watermarked"]
    assert detect_json.decide(_res(3, -2.9), 1e-4, gamma=0.1) == ["too short for this fpr"]
    assert detect_json.decide(_res(1, 0.0, too_short=True), 1e-4, gamma=0.1) == ["too short to score"]


# ------------------------------------------------------------------ prefix functions


def test_tokens_to_detect_counts_a_prefix_exactly_at_the_threshold():
    lp = np.array([[0.0, -4.0, -4.0, -4.0], [0.0, -5.0, np.nextafter(-4.0, 0.0), -4.0], [0.0, -3.0, -4.0, np.nan]])
    got = scores.tokens_to_detect(lp, threshold=-4.0)
    assert got.tolist()[:2] == [2.0, 4.0] and got[2] == 3.0


def test_tokens_to_detect_needs_every_longer_prefix_below():
    got = scores.tokens_to_detect(np.array([[-5.0, -3.0, -5.0], [-5.0, -5.0, -3.0]]), threshold=-4.0)
    assert got[0] == 3.0 and math.isnan(got[1])


def _green_first_text(key, gamma, V=500):
    """A text (h = 1) whose first two tokens are green, then random tokens."""
    rng = np.random.default_rng(3)
    prompt = np.array([[7]])
    cand = np.arange(V)[None, :]
    g0 = scores.token_scores(cand.T, np.full((V, 1), 7), key, gamma=gamma, vocab_size=V)[0][:, 0]
    t0 = int(np.flatnonzero(g0 > 0.5)[0])
    g1 = scores.token_scores(cand.T, np.full((V, 1), t0), key, gamma=gamma, vocab_size=V)[0][:, 0]
    t1 = int(np.flatnonzero(g1 > 0.5)[0])
    tokens = np.concatenate([[t0, t1], rng.integers(0, V, 30)])[None, :]
    return tokens, prompt


@pytest.mark.parametrize("stat", ["green", "ems"])
def test_prefix_log10p_is_one_until_two_tokens_are_scored(stat):
    """[i, 0] (one scored token) is log10 p = 0 by convention; [i, 1] is the exact tail: a
    first token that is green (or any EMS score) makes a one-token p-value below 1, so
    ``n <= 1`` made ``n < 1`` (or ``n <= 2``) changes a value."""
    from scipy.stats import binom
    from scipy.stats import gamma as gamma_dist

    key, gamma, V = 11, 0.25, 500
    tokens, prompt = _green_first_text(key, gamma, V)
    lp = scores.prefix_log10p(tokens, prompt, key, stat=stat, gamma=gamma if stat == "green" else None, vocab_size=V)
    values, _ = scores.token_scores(tokens, prompt, key, stat=stat, gamma=gamma if stat == "green" else None, vocab_size=V)
    s = np.cumsum(values[0])
    n = np.arange(1, tokens.shape[1] + 1)
    if stat == "green":
        g_eff = null_green_probability(gamma, "bernoulli", V)
        want = np.log10(binom.sf(np.rint(s) - 1, n, g_eff))
    else:
        want = np.log10(gamma_dist.sf(s, n))
    want[0] = 0.0
    assert lp[0, 0] == 0.0 and lp[0, 1] < -0.5
    np.testing.assert_allclose(lp[0], want, rtol=1e-10, atol=1e-12)


def test_redgreen_score_of_one_and_two_scored_tokens():
    """A one-token text is too short to test (p = 1); a two-token text of two greens is not, p = gamma^2."""
    key, gamma, V = 11, 0.25, 500
    tokens, prompt = _green_first_text(key, gamma, V)
    one = scores.score_redgreen(tokens[:, :1], prompt, key, gamma, vocab_size=V)
    two = scores.score_redgreen(tokens[:, :2], prompt, key, gamma, vocab_size=V)
    g_eff = null_green_probability(gamma, "bernoulli", V)
    assert one.too_short.tolist() == [True] and one.log10_p[0] == 0.0
    assert two.too_short.tolist() == [False] and two.log10_p[0] == pytest.approx(2 * math.log10(g_eff), rel=1e-12)
    w = scores.windowed_log10p(tokens[:, :2], prompt, key, gamma, window=2, vocab_size=V)
    assert w[0] == pytest.approx(2 * math.log10(g_eff), rel=1e-12)
    w1 = scores.windowed_log10p(tokens[:, :2], prompt, key, gamma, window=1, vocab_size=V, bonferroni=False)
    assert w1[0] == 0.0  # windows of one token are never scored


def test_marks_and_ems_scores_of_one_and_two_scored_tokens():
    """redgreen_from_marks (raw-text detection) and score_ems: p = 1 and too_short while at most one
    token is scored; the exact tail from two on."""
    g = 0.25
    green = np.array([[True, True, False]])
    res, prefix = redgreen_from_marks(green, np.array([[True, False, False]]), np.array([3]), g)
    assert res.too_short.tolist() == [True] and res.log10_p[0] == 0.0 and prefix[0].tolist() == [0.0, 0.0, 0.0]
    res, prefix = redgreen_from_marks(green, np.ones((1, 3), dtype=bool), np.array([3]), g)
    assert res.too_short.tolist() == [False] and res.log10_p[0] == pytest.approx(math.log10(g * g * (3 - 2 * g)), rel=1e-12)
    assert prefix[0, 0] == 0.0 and prefix[0, 1] == pytest.approx(2 * math.log10(g), rel=1e-12)
    key, V = 11, 500
    tokens, prompt = _green_first_text(key, g, V)
    one = scores.score_ems(tokens[:, :1], prompt, key, vocab_size=V)
    two = scores.score_ems(tokens[:, :2], prompt, key, vocab_size=V)
    assert one.too_short.tolist() == [True] and one.log10_p[0] == 0.0
    assert two.too_short.tolist() == [False] and two.log10_p[0] < 0.0


def test_naive_thresholds_take_a_tail_exactly_at_the_level():
    """k[n] = smallest k with ln P(Bin(n, gamma) >= k) <= ln alpha: at alpha = that tail itself
    (an exact round trip, asserted) the threshold is that k, a hair below it k + 1."""
    gamma, n, k = 0.5, 6, 5
    tail = float(binom_logsf(np.arange(n + 1), n, gamma)[k])
    alpha = math.exp(tail)
    assert math.log(alpha) == tail
    assert peeking.naive_thresholds(n, gamma, alpha)[n] == k
    assert peeking.naive_thresholds(n, gamma, alpha * (1 - 1e-12))[n] == k + 1
    assert np.isinf(peeking.naive_thresholds(n, gamma, 0.3)[:2]).all()  # n <= 1: p = 1


def test_exceeds_level_is_strict():
    from scipy.stats import beta

    lo = float(beta.ppf(1.0 - 0.999, 5, 100 - 5 + 1))
    assert not peeking.exceeds_level(5, 100, lo) and peeking.exceeds_level(5, 100, np.nextafter(lo, 0.0))


# ------------------------------------------------------------------ sequential crossings


def test_linear_thresholds_are_the_least_crossing_count():
    """thr[n] is the least integer k <= n with ln E(k, n) >= ln(1/alpha), by brute force over k."""
    mix = sequential.bernoulli_mixture(0.25)
    alpha = 1e-3
    thr = sequential.linear_thresholds(mix, 60, alpha)
    bound = math.log(1 / alpha)
    for n in range(61):
        ks = np.arange(n + 1)
        ok = np.flatnonzero(mix.log_e(ks, np.full(n + 1, n)) >= bound)
        assert thr[n] == (ok[0] if ok.size else np.inf), n


@pytest.mark.parametrize("n, k", [(2, 2), (4, 3), (5, 3)])
def test_linear_thresholds_count_a_mixture_exactly_at_the_bound(n, k):
    """alpha = 1 / E(k, n) (its log an exact round trip, asserted): ln E(k, n) equals the bound, so
    k crosses; thr[n] = k, where a strict comparison would give k + 1 (or inf at k = n)."""
    mix = sequential.bernoulli_mixture(0.25)
    le = float(mix.log_e(float(k), float(n)))
    alpha = math.exp(-le)
    assert math.log(1.0 / alpha) == le
    assert sequential.linear_thresholds(mix, n, alpha)[n] == k


def test_crossing_kernels_stop_when_the_count_equals_the_threshold():
    """All-green texts: the count is n, and the stop is the first n with n >= thr[n] (equality
    there, asserted); a table one higher at that n moves the stop, one lower at n - 1 too."""
    mix = sequential.bernoulli_mixture(0.25)
    thr = sequential.linear_thresholds(mix, 40, 1e-4)
    n_star = int(np.flatnonzero(np.arange(41) >= thr)[0])
    assert thr[n_star] == n_star and n_star > 2
    values, scored = np.ones((1, 40)), np.ones((1, 40), dtype=bool)
    lengths = np.array([40])
    assert SK.value_crossings(values, scored, lengths, thr)[2].tolist() == [n_star]
    up = thr.copy()
    up[n_star] += 1
    assert SK.value_crossings(values, scored, lengths, up)[2][0] > n_star
    down = thr.copy()
    down[n_star - 1] = n_star - 1
    assert SK.value_crossings(values, scored, lengths, down)[2].tolist() == [n_star - 1]


def test_continuous_crossing_at_the_table_value():
    """EMS-like values: a running sum that lands exactly on the table value crosses there."""
    values = np.array([[0.5, 1.0, 0.25, 2.0]])
    thr = np.array([np.inf, 9.0, 1.5, 1.75, 9.0])  # sums 0.5, 1.5, 1.75, 3.75
    got = SK.value_crossings(values, np.ones((1, 4), dtype=bool), np.array([4]), thr)[2]
    assert got.tolist() == [2]
    thr[2] = np.nextafter(1.5, 2.0)
    assert SK.value_crossings(values, np.ones((1, 4), dtype=bool), np.array([4]), thr)[2].tolist() == [3]


def test_scan_crossings_match_value_crossings_on_real_texts():
    """The PRF-hashing scan and the value scan stop at the same token (both compare >= the table)."""
    rng = np.random.default_rng(5)
    tokens = rng.integers(0, 50, size=(40, 120))
    prompts = tokens[:, :1] * 0 + 3
    key, gamma = 9, 0.25
    res = sequential.sequential_redgreen(tokens, prompts, key, gamma, vocab_size=50, alpha=0.05, dedup=False)
    values, scored = scores.token_scores(tokens, prompts, key, gamma=gamma, vocab_size=50)
    thr = sequential.linear_thresholds(sequential.bernoulli_mixture(null_green_probability(gamma, "bernoulli", 50)), 120, 0.05)
    want = SK.value_crossings(values, scored, np.full(40, 120), thr)[2]
    path = sequential.log_e_path(values, scored, sequential.bernoulli_mixture(null_green_probability(gamma, "bernoulli", 50)))
    assert (want > 0).any() and res.stop.tolist() == want.tolist()
    assert sequential.first_crossing(path, 0.05).tolist() == want.tolist()


def test_first_crossing_at_exactly_the_bound():
    alpha = 0.01
    b = math.log(1 / alpha)
    path = np.array([[0.0, b, b + 1], [0.0, np.nextafter(b, 0.0), b]])
    assert sequential.first_crossing(path, alpha).tolist() == [2, 3]


def test_markov_and_hit_crossings_stop_at_a_value_equal_to_the_bound():
    """The AutoCov and keyed-order kernels: with the bound set to the kernel's own e-value after
    t tokens (exact), the stop is t; one ulp above, later (or never)."""
    vals = (np.arange(30)[None, :] % 2 == 0).astype(float)  # green, red, green, ...: every step is evidence
    scored = np.ones((1, 30), dtype=bool)
    q_red, q_green = sequential.autocov_grids(0.25)
    e = SK.markov_crossings(vals, scored, np.array([12]), 0.25, q_red, q_green, np.inf)[0][0]
    peak = SK.markov_crossings(vals, scored, np.array([11]), 0.25, q_red, q_green, np.inf)[1][0]
    assert e > peak  # the path reaches a new high at token 12
    assert SK.markov_crossings(vals, scored, np.array([30]), 0.25, q_red, q_green, e)[2].tolist() == [12]
    assert SK.markov_crossings(vals, scored, np.array([30]), 0.25, q_red, q_green, np.nextafter(e, np.inf))[2][0] != 12
    hits = np.ones(20, dtype=bool)
    probs = np.full(20, 0.3)
    c = np.array([0.1, 0.5, 0.9])
    e = SK.hit_crossings(hits, probs, 7, c, np.inf)[0]
    assert SK.hit_crossings(hits, probs, 20, c, e)[2] == 7
    assert SK.hit_crossings(hits, probs, 20, c, np.nextafter(e, np.inf))[2] == 8


def test_streaming_detector_flags_at_the_bound():
    """sims.detect.families.stream: the detector flags when its log e-value equals its bound."""
    from sims.detect.families.stream import SequentialDetector

    key, gamma, V = 11, 0.25, 500
    tokens, prompt = _green_first_text(key, gamma, V)

    def stop(bound=None):
        d = SequentialDetector(key, algo="srl", context=prompt[0], gamma=gamma, vocab_size=V, alpha=0.5)
        if bound is not None:
            d.bound = bound
        return d, d.update(tokens[0, :2])

    d, st = stop()
    e = st.log_e
    assert e > 0 and float(d.mix.log_e(2.0, 2)) == e  # two greens
    assert stop(e)[1].stop == 2 and stop(np.nextafter(e, np.inf))[1].stop < 0


# ------------------------------------------------------------------ multiple testing


def test_holm_rejects_p_values_exactly_at_their_step_levels():
    a = 1e-3
    step = [math.log10(a) - float(np.log10(3.0 - i)) for i in range(3)]
    lp = np.array(step)[:, None]
    assert multiple.holm(lp, a)[:, 0].tolist() == [True, True, True]
    for i in range(3):
        up = lp.copy()
        up[i] = np.nextafter(step[i], 0.0)
        assert multiple.holm(up, a)[:, 0].tolist() == [j < i for j in range(3)], i


def test_holm_adjusted_values_at_the_level_mark_the_key():
    """keys_document marks a key when its Holm-adjusted p is <= fpr; the adjusted value of a
    key at its step level is the level itself (equal)."""
    a = 1e-3
    lp = np.array([[math.log10(a) - math.log10(2.0)], [-1.0]])
    adj = multiple.holm_adjusted_log10p(lp)
    assert adj[0, 0] == pytest.approx(math.log10(a), abs=1e-15) and adj[1, 0] == pytest.approx(-1.0)
    assert multiple.holm(lp, a)[:, 0].tolist() == [True, False]


def test_benjamini_hochberg_at_each_step_level():
    a, N = 0.05, 4
    lvl = math.log10(a) + np.log10(np.arange(1, N + 1) / N)
    assert multiple.benjamini_hochberg(lvl, a).all()
    lp = lvl.copy()
    lp[-1] = np.nextafter(lvl[-1], 0.0)  # the largest p one ulp above its level: the rest still pass at step 3
    assert multiple.benjamini_hochberg(lp, a).tolist() == [True, True, True, False]
    c = np.sum(1.0 / np.arange(1, N + 1))
    by = math.log10(a / c) + np.log10(np.arange(1, N + 1) / N)
    assert multiple.benjamini_hochberg(by, a, arbitrary=True).all()
    assert not multiple.benjamini_hochberg(np.nextafter(by, 0.0), a, arbitrary=True).any()


def test_e_bh_at_each_step_level():
    a, N = 0.05, 4
    lvl = math.log(N / a) - np.log(np.arange(1, N + 1))
    assert multiple.e_bh(lvl, a).all()
    le = lvl.copy()
    le[-1] = np.nextafter(lvl[-1], -np.inf)
    assert multiple.e_bh(le, a).tolist() == [True, True, True, False]
    assert not multiple.e_bh(np.nextafter(lvl, -np.inf), a).any()


def test_score_redgreen_keys_one_scored_token_is_p_one():
    key, gamma, V = 11, 0.25, 500
    tokens, prompt = _green_first_text(key, gamma, V)
    lp, green, n = multiple.score_redgreen_keys(tokens[:, :1], prompt, [key, key + 1], gamma, vocab_size=V, dedup=False)
    assert green[0, 0] == 1 and n[0, 0] == 1 and lp[0, 0] == 0.0
    lp2, _, _ = multiple.score_redgreen_keys(tokens[:, :2], prompt, [key], gamma, vocab_size=V, dedup=False)
    assert lp2[0, 0] == pytest.approx(2 * math.log10(null_green_probability(gamma, "bernoulli", V)), rel=1e-12)
