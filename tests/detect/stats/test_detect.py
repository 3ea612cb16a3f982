"""Detectors: kernel == NumPy reference, planted watermarks, dedup, exact FPR, prefixes, windows, bad input."""

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sims.core import prf
from sims.detect.families import detectors
from sims.detect.stats import scores as detect
from sims.detect.stats.nulls import LN10, binom_logsf
from sims.experiments.evaluate import clopper_pearson
from sims.lm.synthetic import open_synthetic
from sims.watermarks import registry
from sims.watermarks.generate import generate_synthetic

EMS_ULP = 1e-15  # numba's log1p and numpy's differ by 1 ulp on some EMS summands
V = 5000


@st.composite
def token_layouts(draw):
    """Texts of random ids with optional -1 padding (a deletion attack's layout) and small
    vocabularies (so (context, token) pairs repeat and dedup matters)."""
    n = draw(st.integers(1, 6))
    T = draw(st.integers(0, 40))
    h = draw(st.integers(1, 3))
    vocab = draw(st.sampled_from([3, 7, 50, V]))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    toks = rng.integers(0, vocab, size=(n, T))
    for i in range(n):
        cut = draw(st.integers(0, T))
        toks[i, cut:] = -1 if draw(st.booleans()) else toks[i, cut:]
    return toks, rng.integers(0, vocab, size=(n, h + draw(st.integers(0, 2)))), h, vocab, int(rng.integers(2**63))


@settings(max_examples=40)
@given(token_layouts(), st.booleans(), st.sampled_from([0.1, 0.25, 0.5]))
def test_kernel_equals_numpy_reference(layout, dedup, gamma):
    """Green indicators bit for bit, EMS summands to 1 ulp, scored masks equal; dedup in the
    reference is on the tuple of actual token ids (the kernel hashes the pair)."""
    toks, prompts, h, vocab, key = layout
    for stat in ("green", "ems"):
        a, sa = detect.token_scores(toks, prompts, key, stat=stat, gamma=gamma, h=h, dedup=dedup, vocab_size=vocab)
        b, sb = detect.token_scores_reference(toks, prompts, key, stat=stat, gamma=gamma, h=h, dedup=dedup, vocab_size=vocab)
        assert np.array_equal(sa, sb)
        assert np.array_equal(a, b) if stat == "green" else np.allclose(a, b, rtol=EMS_ULP, atol=0)
    res = detect.score_redgreen(toks, prompts, key, gamma, h=h, dedup=dedup, vocab_size=vocab)
    g, s = detect.token_scores_reference(toks, prompts, key, gamma=gamma, h=h, dedup=dedup)
    assert np.array_equal(res.n_scored, s.sum(axis=1)) and np.array_equal(res.green, g.sum(axis=1))


def test_partition_green_lists_equal_reference_and_generation():
    """green_kind="partition": exactly floor(gamma V) green tokens per context, as prf.green_mask says."""
    rng = np.random.default_rng(1)
    toks, prompts = rng.integers(0, 300, size=(4, 30)), rng.integers(0, 300, size=(4, 2))
    a, _ = detect.token_scores(toks, prompts, 5, gamma=0.3, h=2, green_kind="partition", vocab_size=300)
    b, _ = detect.token_scores_reference(toks, prompts, 5, gamma=0.3, h=2, green_kind="partition", vocab_size=300)
    assert np.array_equal(a, b)
    lm = open_synthetic("lfqa", vocab_size=400)
    g = generate_synthetic(lm, "hard", n=3, T=40, seed=0, key=9, gamma=0.3, green_kind="partition")
    assert detect.green_indicators(g.tokens, g.prompts, 9, 0.3, green_kind="partition", vocab_size=400).all()


def plant_green(n, T, key, gamma, seed, h=1, frac=1.0):
    """Texts whose tokens are green on purpose (with probability ``frac`` per position):
    at each position draw random ids until one is green in the key's list of that context."""
    rng = np.random.default_rng(seed)
    prompts = rng.integers(0, V, size=(n, h))
    seq = np.concatenate([prompts, np.zeros((n, T), dtype=np.int64)], axis=1)
    for i in range(n):
        for t in range(T):
            ctx = prf.context_hash(key, seq[i, t : t + h], prf.GREEN)
            y = int(rng.integers(V))
            while rng.random() < frac and not prf.is_green(ctx, y, gamma):
                y = int(rng.integers(V))
            seq[i, h + t] = y
    return seq[:, h:], prompts


def test_planted_green_text_gets_the_exact_all_green_p_value():
    toks, prompts = plant_green(3, 60, key=123, gamma=0.25, seed=0)
    res = detect.score_redgreen(toks, prompts, 123, 0.25, vocab_size=V)
    assert np.all(res.green == 60) and np.all(res.n_scored == 60)
    assert np.allclose(res.log10_p, 60 * np.log10(0.25), rtol=1e-12)  # P(Bin(60, .25) >= 60) = .25^60
    assert np.allclose(res.z, 60 * 0.75 / np.sqrt(60 * 0.25 * 0.75))
    stranger = detect.score_redgreen(toks, prompts, 124, 0.25, vocab_size=V)
    assert np.all(stranger.log10_p > -4)


def test_alternating_colours_drive_autocov_negative():
    """Plant green, red, green, ... : N_t N_{t+1} = -gamma(1-gamma) every step, so
    Z_T = -(T-1) / sqrt(T) exactly."""
    rng = np.random.default_rng(3)
    T, key, g = 50, 77, 0.4
    prompts = rng.integers(0, V, size=(2, 1))
    seq = np.concatenate([prompts, np.zeros((2, T), dtype=np.int64)], axis=1)
    for i in range(2):
        for t in range(T):
            ctx = prf.context_hash(key, seq[i, t : t + 1], prf.GREEN)
            y = int(rng.integers(V))
            while bool(prf.is_green(ctx, y, g)) != (t % 2 == 0):
                y = int(rng.integers(V))
            seq[i, t + 1] = y
    res = detect.score_autocov(seq[:, 1:], prompts, key, g, vocab_size=V)
    assert np.allclose(res.z, -(T - 1) / np.sqrt(T), rtol=1e-12) and np.all(res.log10_p < -4)


def test_dedup_autocov_is_the_statistic_of_the_kept_colours_with_an_exact_null():
    """AutoCov with dedup (issue 43): S_T, Z_T and the exact p-value of the colours of the first occurrences of
    their (context, token) pairs, in text order; on one repetitive key-independent text, over 3000 keys, the
    p-value is valid at every level (P(p <= a) <= a: the kept colours are i.i.d. Bernoulli(gamma))."""
    from sims.detect.stats.nulls import autocov_logcdf

    rng = np.random.default_rng(11)
    V, gamma = 12, 0.25
    toks = rng.integers(0, V, size=(1, 150))  # 150 tokens over 12 ids at h = 1: most pairs repeat
    prompts = toks[:, :1]
    g_eff = detect._stat_code("green", gamma, "bernoulli", V)[3]
    res = detect.score_autocov(toks, prompts, 5, gamma, vocab_size=V, h=1, dedup=True)
    x, scored = detect.token_scores(toks, prompts, 5, gamma=gamma, vocab_size=V, h=1, dedup=True)
    k = x[0, scored[0]]
    T, N = k.size, k - g_eff
    assert 2 <= T < 150 and res.n_scored[0] == T
    assert np.isclose(res.score[0], np.sum(N[:-1] * N[1:]) / T, rtol=1e-12, atol=1e-15)
    assert np.isclose(res.z[0], np.sqrt(T) * res.score[0] / (g_eff * (1 - g_eff)), rtol=1e-12)
    want = autocov_logcdf(np.array([int(np.sum(k[:-1] * k[1:]))]), np.array([int(k.sum())]), np.array([int(k[0])]), np.array([int(k[-1])]),
                          np.array([T]), g_eff)[0] / np.log(10)
    assert np.isclose(res.log10_p[0], want, rtol=1e-12)
    keys = rng.integers(0, 2**62, size=3000)
    p = np.array([10 ** detect.score_autocov(toks, prompts, int(key), gamma, vocab_size=V, h=1, dedup=True).log10_p[0] for key in keys])
    for a in (0.01, 0.05, 0.2, 0.5):
        assert np.mean(p <= a) <= a + 3 * np.sqrt(a * (1 - a) / keys.size), a


def test_dedup_counts_each_context_token_pair_once():
    toks = np.array([[5, 5, 5, 5, 6, 5]])
    res = detect.score_redgreen(toks, np.array([[5]]), 1, 0.5, vocab_size=10, dedup=True)
    assert res.n_scored[0] == 3  # (5,5), (5,6), (6,5)
    assert detect.score_redgreen(toks, np.array([[5]]), 1, 0.5, vocab_size=10).n_scored[0] == 6


def test_false_positive_rate_is_what_the_exact_test_promises():
    """H0: tokens independent of the key. Seed 0, 200000 texts of 100 uniform tokens, gamma 0.25,
    dedup on. The green count is exactly Binomial(n, 0.25), so the rejection rate at level
    1e-3 must not exceed 1e-3: its 99.9% Clopper-Pearson interval must reach down to 1e-3 or
    below (test at alpha = 5e-4, one-sided); and the test is not grossly conservative (upper
    end >= 1e-3 / 3; the discrete test's exact size at n = 100 is P(Bin >= 41) = 6.1e-4)."""
    rng = np.random.default_rng(0)
    toks = rng.integers(0, 32000, size=(200000, 101))
    res = detect.score_redgreen(toks[:, 1:], toks[:, :1], 4242, 0.25, vocab_size=32000, dedup=True)
    k = int(np.sum(res.log10_p <= -3.0))
    lo, hi = clopper_pearson(k, toks.shape[0], 0.999)
    assert lo <= 1e-3 and hi >= 1e-3 / 3


def test_repetition_inflates_the_false_positive_rate_without_dedup():
    """A text that repeats one token repeats one (context, token) pair: without dedup its 200
    tokens share one colour, so over keys it is all green with probability gamma and the test
    at level 1e-4 rejects ~25 % of the time; with dedup one pair is scored (flagged, p = 1).
    2000 keys; the 99.9% Clopper-Pearson interval of the non-dedup rate must exclude 1e-4."""
    toks, prompts = np.full((1, 200), 7), np.array([[7]])
    rej = [detect.score_redgreen(toks, prompts, key, 0.25, vocab_size=10).log10_p[0] <= -4 for key in range(2000)]
    lo, _ = clopper_pearson(int(np.sum(rej)), 2000, 0.999)
    assert lo > 0.2
    dd = detect.score_redgreen(np.repeat(toks, 3, axis=0), np.repeat(prompts, 3, axis=0), 3, 0.25, vocab_size=10, dedup=True)
    assert np.all(dd.n_scored == 1) and np.all(dd.too_short) and np.all(dd.log10_p == 0.0)


def test_prefix_p_values_end_at_the_full_score_and_tokens_to_detect():
    toks, prompts = plant_green(4, 80, key=5, gamma=0.25, seed=2, frac=0.6)
    for dedup in (False, True):
        for stat in ("green", "ems"):
            pref = detect.prefix_log10p(toks, prompts, 5, stat=stat, gamma=0.25, dedup=dedup, vocab_size=V)
            full = (detect.score_redgreen(toks, prompts, 5, 0.25, dedup=dedup) if stat == "green" else detect.score_ems(toks, prompts, 5, dedup=dedup)).log10_p
            assert np.allclose(pref[:, -1], full, rtol=1e-12)
    pref = detect.prefix_log10p(toks, prompts, 5, gamma=0.25)
    ttd = detect.tokens_to_detect(pref, -4.0)
    for i in range(4):
        t = int(ttd[i])
        assert np.all(pref[i, t - 1 :] <= -4) and (t == 1 or pref[i, t - 2] > -4)


def test_tokens_to_detect_definition():
    nan = np.nan
    lp = np.array([[-1, -5, -3, -5, -6], [-5, -5, -5, -5, -5], [0, 0, 0, 0, 0], [-1, -5, -6, nan, nan], [-5, -5, -5, -5, -1]])
    ttd = detect.tokens_to_detect(lp, -4.0)
    assert ttd[0] == 4 and ttd[1] == 1 and np.isnan(ttd[2]) and ttd[3] == 2 and np.isnan(ttd[4])


def test_windowed_detection_finds_a_planted_segment_with_a_valid_p_value():
    rng = np.random.default_rng(4)
    green, prompts = plant_green(1, 40, key=8, gamma=0.25, seed=4)
    toks = np.concatenate([rng.integers(0, V, size=(1, 300)), green], axis=1)  # context of token 300 is random
    win = detect.windowed_log10p(toks, prompts, 8, 0.25, window=40, vocab_size=V)
    raw = detect.windowed_log10p(toks, prompts, 8, 0.25, window=40, vocab_size=V, bonferroni=False)
    assert raw[0] <= 39 * np.log10(0.25) and win[0] == pytest.approx(raw[0] + np.log10(301))
    assert detect.windowed_log10p(toks, prompts, 8, 0.25, window=340)[0] == pytest.approx(detect.score_redgreen(toks, prompts, 8, 0.25).log10_p[0])


def test_generated_watermarks_are_detected_and_strangers_are_not():
    lm = open_synthetic("lfqa", vocab_size=2000)
    for algo in ("srl", "dualga", "ems", "its", "uw-delta", "uw-gamma", "autocov", "hard"):
        takes = registry.get(algo).params  # each algorithm gets the parameters it takes (a foreign one is refused)
        g = generate_synthetic(lm, algo, n=4, T=150, seed=1, key=11, **{k: v for k, v in dict(Delta=0.3, delta=2.0).items() if k in takes})
        assert np.all(detectors.score(g, lm).log10_p < -4.0), algo
    g = generate_synthetic(lm, "dualga", n=20, T=150, seed=1, key=11, Delta=0.3)
    assert np.median(detectors.score(g, lm, key=12).log10_p) > -2.0


def _keyed_order_reference(gen, lm, algo):
    """Hits and null hit probabilities of ITS / UW, step by step in NumPy (the kernel's oracle)."""
    from sims.core import rng
    from sims.core.keys import ITS_STREAM, keyed_order

    key, h, V = gen.meta["key"], gen.meta["h"], gen.meta["vocab_size"]
    perm = keyed_order(key, V)
    P = gen.prompts.shape[1]
    out = []
    for i in range(gen.n):
        seq = np.concatenate([gen.prompts[i], gen.tokens[i]])
        hits, pi = 0, []
        for t in range(gen.tokens.shape[1]):
            p = lm.probs(seq[: P + t])
            sctx = prf.context_hash(key, seq[P + t - h : P + t], prf.STEP)
            reverse = algo == "uw-gamma" and prf.uniforms(sctx, np.array([V + 1]))[0] < 0.5
            order = perm[::-1] if reverse else perm
            cum = np.cumsum(p[order])
            r = int(np.flatnonzero(order == seq[P + t])[0])
            lo, hi = (cum[r - 1] if r else 0.0), cum[r]
            if algo == "uw-gamma":
                hits += hi > 0.5
                pi.append(p[order][cum >= 0.5].sum())
            else:
                u = rng.uniforms(rng.stream_key(key, ITS_STREAM), [t])[0] if algo == "its" else prf.uniforms(sctx, np.array([V]))[0]
                hits += lo < u <= hi
                pi.append(p[seq[P + t]])
        out.append((hits, np.array(pi)))
    return out


@pytest.mark.parametrize("algo", ["its", "uw-delta", "uw-gamma"])
def test_keyed_order_kernel_matches_a_step_by_step_reference(algo):
    """The Numba scan (and the LM's kernel probabilities) against NumPy, on watermarked texts and
    on a stranger's key, hits exactly and log p to 1e-9 relative."""
    lm = open_synthetic("news", vocab_size=300)
    g = generate_synthetic(lm, algo, n=3, T=60, seed=2, key=5)
    seq = np.concatenate([g.prompts[0], g.tokens[0]])
    P = g.prompts.shape[1]
    np.testing.assert_allclose(lm.probs_along(seq, P, 60), np.stack([lm.probs(seq[: P + t]) for t in range(60)]), rtol=1e-12, atol=1e-300)
    for key in (5, 6):
        g.meta["key"] = key
        res = detectors.score(g, lm)
        for i, (hits, pi) in enumerate(_keyed_order_reference(g, lm, algo)):
            assert res.score[i] == hits, (algo, key, i)
            assert res.log10_p[i] == pytest.approx(detect._poisson_binomial_logsf(hits, pi) / LN10, rel=1e-9, abs=1e-12)
    g.meta["key"] = 5


def test_short_texts_are_flagged_with_p_one():
    prompts = np.array([[1], [1], [1]])
    toks = np.array([[-1, -1, -1], [4, -1, -1], [4, 4, 2]])
    for res in (detect.score_redgreen(toks, prompts, 1, 0.25, vocab_size=10), detect.score_ems(toks, prompts, 1, vocab_size=10),
                detect.score_autocov(toks, prompts, 1, 0.25, vocab_size=10)):
        assert list(res.too_short) == [True, True, False] and res.log10_p[0] == 0.0 and res.log10_p[1] == 0.0
    res = detect.score_redgreen(toks[2:], prompts[2:], 1, 0.25, lengths=np.array([1]))
    assert res.too_short[0] and res.n_scored[0] == 1


def test_bad_input():
    one = np.array([[1]])
    with pytest.raises(ValueError, match=re.escape("tokens ids must be in [0, 9]")):
        detect.score_redgreen(np.array([[12]]), one, 1, 0.25, vocab_size=10)
    with pytest.raises(ValueError, match=re.escape("tokens ids must be in [0, 9] (-1 pads); got min -2")):
        detect.score_redgreen(np.array([[-2]]), one, 1, 0.25, vocab_size=10)
    with pytest.raises(ValueError, match=re.escape("prompts ids must be in [0, 9]")):
        detect.score_ems(one, np.array([[10]]), 1, vocab_size=10)
    with pytest.raises(ValueError, match=re.escape("gamma must be in (0, 1); got 0.0")):
        detect.score_redgreen(one, one, 1, 0.0, vocab_size=10)
    with pytest.raises(ValueError, match="prompts must hold at least h=2"):
        detect.score_redgreen(one, one, 1, 0.25, h=2)
    with pytest.raises(ValueError, match=re.escape("h must be an integer in [0, inf)")):  # h = 0 is Unigram's width
        detect.score_redgreen(one, one, 1, 0.25, h=-1)
    with pytest.raises(ValueError, match="must hold integer token ids"):
        detect.score_redgreen(np.array([[1.5]]), one, 1, 0.25)
    with pytest.raises(ValueError, match="lengths must be in"):
        detect.score_redgreen(one, one, 1, 0.25, lengths=np.array([2]))
    with pytest.raises(ValueError, match="vocab_size must be given for green_kind='partition'"):
        detect.score_redgreen(one, one, 1, 0.25, green_kind="partition")
    with pytest.raises(ValueError, match="key must be in"):
        detect.score_redgreen(one, one, -1, 0.25)
    lm = open_synthetic("lfqa", vocab_size=500)
    g = generate_synthetic(lm, "srl", n=1, T=5, seed=0, key=1, gamma=0.25)
    with pytest.raises(ValueError, match="gamma mismatch"):
        detectors.score(g, lm, gamma=0.5)
    with pytest.raises(ValueError, match="vocabulary mismatch"):
        detectors.score(g, open_synthetic("lfqa", vocab_size=501))
    with pytest.raises(ValueError, match="algo must be one of"):
        detectors.score(g, lm, algo="nope")


def test_log10_p_is_exact_far_below_1e300():
    toks, prompts = plant_green(1, 800, key=2, gamma=0.25, seed=5)
    res = detect.score_redgreen(toks, prompts, 2, 0.25)
    assert res.log10_p[0] == pytest.approx(800 * np.log10(0.25), rel=1e-12) and res.log10_p[0] < -480
    assert res.log10_p[0] == pytest.approx(binom_logsf(800, 800, 0.25) / LN10)


def test_parallel_and_serial_counting_kernels_agree():
    """Inputs of >= PARALLEL_MIN_TOKENS tokens take the parallel kernel; it must give the same
    counts as the serial one and the NumPy reference (on a slice)."""
    rng = np.random.default_rng(6)
    n = detect.PARALLEL_MIN_TOKENS // 100 + 1
    toks, prompts = rng.integers(0, 300, size=(n, 100)), rng.integers(0, 300, size=(n, 1))
    for dedup in (False, True):
        par = detect.score_redgreen(toks, prompts, 21, 0.25, dedup=dedup)
        ser = detect.score_redgreen(toks[:50], prompts[:50], 21, 0.25, dedup=dedup)
        g, s = detect.token_scores_reference(toks[:50], prompts[:50], 21, gamma=0.25, dedup=dedup)
        assert np.array_equal(par.green[:50], ser.green) and np.array_equal(par.n_scored[:50], ser.n_scored)
        assert np.array_equal(ser.green, g.sum(axis=1)) and np.array_equal(ser.n_scored, s.sum(axis=1))


def test_autocov_exact_null_keeps_its_level():
    """H0: seed 7, 100000 texts of 60 uniform tokens, gamma 0.4: the exact lower-tail test of
    Z_T rejects at level 1e-2 and 1e-3 no more often than the level (99.9% Clopper-Pearson
    lower end <= level), and not grossly less (upper end >= level / 3)."""
    rng = np.random.default_rng(7)
    toks = rng.integers(0, 32000, size=(100_000, 61))
    lp = detect.score_autocov(toks[:, 1:], toks[:, :1], 99, 0.4, vocab_size=32000).log10_p
    for a in (1e-2, 1e-3):
        lo, hi = clopper_pearson(int(np.sum(lp <= np.log10(a))), lp.size, 0.999)
        assert lo <= a and hi >= a / 3
