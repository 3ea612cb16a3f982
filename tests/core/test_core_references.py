"""sims/core beyond the PRF: the counter RNG's stream keys, the per-text word set, the keyed order, the
context windows, the defaults and the real-LM names, each pinned by a written-out reference or an
exact boundary (the mutants of make mutate that the PRF tests did not reach)."""

import numpy as np
import pytest
from numba import njit

from sims.core import defaults, keys, lm_names, prf, rng, windows, wordset

MASK = (1 << 64) - 1


def _mix(z):
    """SplitMix64's finaliser (without the state increment), written out in Python integers."""
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


@pytest.mark.parametrize("seed, stream", [(0, 0), (0, 1), (1, 0), (12345, 7), (2**63 + 5, 99), (2**64 - 1, 2**40)])
def test_stream_key_is_mix_of_seed_xor_stream_times_golden(seed, stream):
    want = _mix(seed ^ ((stream * 0x9E3779B97F4A7C15) & MASK))
    assert int(rng.stream_key(seed, stream)) == want
    assert int(rng.stream_key_nb(np.uint64(seed), np.uint64(stream))) == want


def test_stream_keys_then_uniforms_follow_the_formula():
    key = rng.stream_key(7, 3)
    i = np.array([0, 1, 2, 10**6])
    want = [((_mix((int(key) + int(k) * 0x9E3779B97F4A7C15) & MASK) >> 11) + 0.5) / 2**53 for k in i]
    assert rng.uniforms(key, i).tolist() == want
    assert [rng.uniform_nb(key, k) for k in i] == want
    assert all(0.0 < u < 1.0 for u in want)


@njit(cache=True)
def _insert_all(words, size):
    table = np.zeros(size, dtype=np.uint64)
    has_zero = np.zeros(1, dtype=np.bool_)
    out = np.zeros(words.shape[0], dtype=np.bool_)
    for j in range(words.shape[0]):
        out[j] = wordset.seen_before(table, words[j], has_zero)
    return out, table


def test_seen_before_is_a_set_membership_with_collisions_and_wraparound():
    # low bits equal (all collide in a 16-slot table) and one word in the last slot, so probing wraps to 0
    words = np.array([15, 31, 47, 15, 0, 0, 63, 31, 2**64 - 1, 2**64 - 1, 16, 1], dtype=np.uint64)
    seen, table = _insert_all(words, 16)
    ref, s = [], set()
    for w in words.tolist():
        ref.append(w in s)
        s.add(w)
    assert seen.tolist() == ref
    assert sorted(int(w) for w in table if w) == sorted(w for w in s if w)
    assert table[0] != 0  # 31 collided at slot 15 and wrapped round to slot 0


def test_seen_before_matches_a_python_set_on_random_words():
    g = np.random.default_rng(0)  # seed 0, 400 words drawn from 150 values: many repeats
    words = g.integers(0, 150, size=400).astype(np.uint64) * np.uint64(16)  # low 4 bits 0: heavy clustering
    seen, _ = _insert_all(words, wordset.set_size(400))
    ref, s = [], set()
    for w in words.tolist():
        ref.append(w in s)
        s.add(w)
    assert seen.tolist() == ref


@pytest.mark.parametrize("T, size", [(0, 16), (1, 16), (8, 16), (9, 32), (16, 32), (17, 64), (1000, 2048), (1024, 2048), (1025, 4096)])
def test_set_size_is_the_least_power_of_two_at_least_twice_T_and_16(T, size):
    assert wordset.set_size(T) == size


def test_keyed_order_is_argsort_of_the_step_stream():
    assert keys.keyed_order(42, 8).tolist() == [0, 4, 1, 5, 2, 7, 3, 6]
    ctx = prf.context_hash(7, np.zeros((0,), dtype=np.int64), prf.STEP)
    bits = prf.token_bits(ctx, np.arange(50))
    order = keys.keyed_order(7, 50)
    assert order.dtype == np.int64 and sorted(order.tolist()) == list(range(50))
    assert np.all(np.diff(bits[order].astype(np.float64)) >= 0)
    assert keys.keyed_order(7, 1).tolist() == [0]


def test_windows_hold_the_h_previous_tokens_oldest_first():
    prompts = np.array([[10, 11, 12]])
    tokens = np.array([[1, 2, 3]])
    w = windows.windows(tokens, prompts, 2)
    assert w.tolist() == [[[11, 12], [12, 1], [1, 2]]]
    assert windows.windows(tokens, prompts, 3).tolist() == [[[10, 11, 12], [11, 12, 1], [12, 1, 2]]]
    names = windows.window_names(tokens, prompts, 2)
    assert names.tolist() == prf.context_hash(windows.PUBLIC_KEY, w, windows.WINDOW_STREAM).tolist()
    assert windows.pair_names(names, tokens).tolist() == prf.token_bits(names, tokens).tolist()


@pytest.mark.parametrize("h, match", [(-1, "h must be an integer in \\[0, inf\\); got -1"), (1.5, "got 1.5"), (4, "at least h=4 tokens per text; got 3")])
def test_windows_refuse_bad_h(h, match):
    with pytest.raises(ValueError, match=match):
        windows.windows(np.array([[1, 2]]), np.array([[5, 6, 7]]), h)


def test_public_key_streams_are_the_documented_ones():
    # streams partition the PRF's outputs: watermarks 0..2, the synthetic LMs 7, windows 13, ITS 99
    assert (prf.GREEN, prf.EMS, prf.STEP) == (0, 1, 2)
    assert windows.PUBLIC_KEY == 0 and windows.WINDOW_STREAM == 13 and keys.ITS_STREAM == 99


def test_defaults_are_the_values_the_readme_quotes():
    d = defaults
    assert (d.KEY, d.GAMMA, d.DELTA, d.TARGET_DG, d.ETA, d.TAU, d.ALPHA, d.H, d.FPR) == (15485863, 0.25, 2.0, 0.3, 0.5, 1.0, 2.0, 1, 1e-4)
    assert (d.PRF, d.GREEN_KIND) == ("splitmix64", "bernoulli")
    assert d.M == 15.0


def test_real_lm_names(tmp_path):
    from sims.lm.kind import is_real

    assert is_real("smollm2") and is_real("random-opt")
    assert not is_real("news") and not is_real("smollm2-fit")
    (tmp_path / "config.json").write_text("{}")
    assert is_real(str(tmp_path))
    assert set(lm_names.RANDOM_LMS) < set(lm_names.REAL_LMS) and "smollm2" in lm_names.REAL_LMS


def test_green_is_strictly_below_the_threshold():
    # gamma chosen so that the threshold equals one token's 53 bits exactly: that token is red
    ctx = prf.context_hash(5, np.array([3, 4]))
    tokens = np.arange(40)
    top = prf.token_bits(ctx, tokens) >> np.uint64(11)
    k = int(np.argsort(top)[20])  # a middling token
    gamma = int(top[k]) / 2.0**53
    assert prf.green_threshold(gamma) == int(top[k])
    green = prf.is_green(ctx, tokens, gamma)
    assert not green[k] and green.tolist() == [int(t) < int(top[k]) for t in top]
    assert green.sum() == 20
    assert [bool(prf.is_green_nb(ctx, np.uint64(t), np.uint64(prf.green_threshold(gamma)))) for t in tokens] == green.tolist()


@pytest.mark.parametrize("gamma", [0.0, 1.0, -0.5, float("nan")])
def test_green_threshold_refuses_gamma_outside_the_open_interval(gamma):
    with pytest.raises(ValueError, match="gamma must be in \\(0, 1\\)"):
        prf.green_threshold(gamma)


def test_key_range_is_0_to_2_to_the_64_minus_1():
    assert prf.context_hash(2**64 - 1, np.array([1])).dtype == np.uint64
    assert prf.context_hash(0, np.array([1])) != prf.context_hash(1, np.array([1]))
    for bad in (-1, 2**64):
        with pytest.raises(ValueError, match="key must be in \\[0, 2\\*\\*64\\)"):
            prf.context_hash(bad, np.array([1]))


def test_partition_green_lists_hold_floor_gamma_V_lowest_bits():
    ctx = prf.context_hash(9, np.array([[1], [2]]))
    for V, gamma in [(10, 0.25), (10, 0.3), (7, 0.5), (1, 0.5)]:
        mask = prf.green_mask(ctx, V, gamma, kind="partition")
        n = int(np.floor(gamma * V))
        assert mask.shape == (2, V) and mask.sum(axis=1).tolist() == [n, n]
        bits = prf.token_bits(ctx[:, None], np.arange(V))
        for row in range(2):
            assert set(np.flatnonzero(mask[row])) == set(np.argsort(bits[row], kind="stable")[:n].tolist())
    assert prf.green_mask(ctx, 6, 0.5).tolist() == prf.is_green(ctx[:, None], np.arange(6), 0.5).tolist()
    with pytest.raises(ValueError, match="kind must be 'bernoulli' or 'partition'; got 'exact'"):
        prf.green_mask(ctx, 6, 0.5, kind="exact")


def test_token_mix_and_uniforms_follow_token_bits():
    ctx = prf.context_hash(11, np.array([7, 8, 9]))
    bits = prf.token_bits(ctx, np.arange(30))
    assert prf._mix64(ctx ^ prf.token_mix(30)).tolist() == bits.tolist()
    u = prf.uniforms(ctx, np.arange(30))
    assert u.tolist() == [((int(b) >> 11) + 0.5) / 2**53 for b in bits]
    assert [prf.uniform_nb(ctx, np.uint64(k)) for k in range(30)] == u.tolist()
