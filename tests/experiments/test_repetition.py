"""Repetition ground truth, the lambda monitor, and the study on an LM that loops."""

import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from sims.experiments.repetition import NGRAM, monitor, precision_recall, repeated_ngram_mask, repetition_rate, study, tune_monitor
from sims.lm.synthetic import loop_lm
from sims.watermarks.generate import generate_synthetic

ALPHA = 1e-6  # level of the test that the monitor's flags carry information about repetition


def _mask_reference(tokens, n):
    """Brute force: s is repeated iff some window [t-n+1, t] containing s equals an earlier window."""
    out = np.zeros(tokens.shape, dtype=bool)
    for i, row in enumerate(tokens):
        L = int(np.sum(row >= 0))
        for t in range(n - 1, L):
            if any(np.array_equal(row[t - n + 1 : t + 1], row[u - n + 1 : u + 1]) for u in range(n - 1, t)):
                out[i, t - n + 1 : t + 1] = True
    return out


def _monitor_reference(lam, level, rise, window):
    out = np.zeros(lam.shape, dtype=bool)
    for i in range(lam.shape[0]):
        for t in range(lam.shape[1]):
            lo = np.min(lam[i, max(0, t - window) : t + 1])
            out[i, t] = lam[i, t] >= level or lam[i, t] - lo >= rise
    return out


@st.composite
def token_texts(draw):
    """Small vocabularies so that n-grams repeat; rows padded with -1 at the end like attacked texts."""
    n_texts, T, V = draw(st.integers(1, 3)), draw(st.integers(1, 25)), draw(st.integers(1, 4))
    tok = np.array(draw(st.lists(st.integers(0, V - 1), min_size=n_texts * T, max_size=n_texts * T))).reshape(n_texts, T)
    for i in range(n_texts):
        tok[i, draw(st.integers(0, T)) :] = -1
    return tok


@st.composite
def lam_traces(draw):
    n_texts, T = draw(st.integers(1, 3)), draw(st.integers(1, 30))
    steps = draw(st.lists(st.floats(-1.0, 1.0), min_size=n_texts * T, max_size=n_texts * T))
    return np.clip(np.cumsum(np.array(steps).reshape(n_texts, T), axis=1) + 2.0, 0.0, 15.0)


@given(token_texts(), st.integers(1, 5))
def test_mask_matches_brute_force(tok, n):
    assert np.array_equal(repeated_ngram_mask(tok, n), _mask_reference(tok, n))


@given(lam_traces(), st.floats(0.0, 15.0), st.floats(0.0, 3.0), st.integers(1, 10))
def test_monitor_matches_brute_force(lam, level, rise, window):
    assert np.array_equal(monitor(lam, level=level, rise=rise, window=window), _monitor_reference(lam, level, rise, window))


def test_hand_made_examples():
    tok = np.array([[1, 2, 3, 4, 1, 2, 3, 4, 9, -1], [1, 2, 3, 5, 1, 2, 3, 6, 7, 8]])
    want = np.zeros(tok.shape, dtype=bool)
    want[0, 4:8] = True
    assert NGRAM == 4
    assert np.array_equal(repeated_ngram_mask(tok), want)
    assert repetition_rate(tok) == pytest.approx(4 / 19)  # padding is not a position
    lam = np.array([[1.0, 1.0, 1.0, 1.3, 1.6, 1.9, 2.2, 1.0, np.nan, 9.0]])
    flags = monitor(lam, level=8.0, rise=0.85, window=3)
    assert flags.tolist() == [[False, False, False, False, False, True, True, False, False, True]]
    assert precision_recall(flags, want[:1]) == pytest.approx((2 / 3, 2 / 4))  # flags 5, 6, 9; truth 4..7
    assert precision_recall(np.array([True, True, False, False]), np.array([True, False, True, False])) == (0.5, 0.5)


def test_monitor_finds_loops_on_a_fresh_seed():
    """Tuned on seed 0, the monitor's flags on seed 1 overlap the repeated 4-grams far more than
    flags placed independently of them would: one-sided hypergeometric test at ALPHA
    (loop LM, DualGA Delta = 0.2, 16 texts x 300 tokens)."""
    lm = loop_lm()
    train = generate_synthetic(lm, "dualga", n=16, T=300, seed=0, key=3, Delta=0.2)
    test = generate_synthetic(lm, "dualga", n=16, T=300, seed=1, key=3, Delta=0.2)
    tuned = tune_monitor(train.lam, repeated_ngram_mask(train.tokens))
    flags = monitor(test.lam, level=tuned["level"], rise=tuned["rise"], window=tuned["window"])
    truth = repeated_ngram_mask(test.tokens)
    tp = int(np.sum(flags & truth))
    assert 0 < truth.sum() < truth.size and flags.any()
    p_value = stats.hypergeom.sf(tp - 1, truth.size, int(truth.sum()), int(flags.sum()))
    assert p_value < ALPHA


def test_study_reports_every_part():
    res = study(n=4, T=60, caps=(15.0, 2.0))
    assert set(res["repetition"]) == {"none", "srl", "dualga", "ems", "uw-delta", "atw"}
    assert all(0.0 <= v <= 1.0 for v in res["repetition"].values())
    assert set(res["monitor"]["test_seed1"]) == {"precision", "recall", "base_rate"}
    assert [d["M"] for d in res["mitigation"]] == [15.0, 2.0]
    assert {"repetition", "kl_per_token", "realized_dg", "median_log10_p", "tpr_at_1e_4"} <= set(res["mitigation"][1])


def test_cap_bounds_lambda():
    g = generate_synthetic(loop_lm(), "dualga", n=4, T=200, seed=0, key=3, Delta=0.2, M=2.0)
    assert np.nanmax(g.lam) <= 2.0


def test_bad_input():
    with pytest.raises(ValueError, match=re.escape("n must be in [1, inf); got 0")):
        repeated_ngram_mask(np.zeros((1, 3), dtype=int), 0)
    with pytest.raises(ValueError, match="tokens must be a 2-d array"):
        repeated_ngram_mask(np.zeros(3, dtype=int))
    with pytest.raises(ValueError, match=re.escape("window must be in [1, inf); got 0")):
        monitor(np.zeros((1, 3)), level=1.0, rise=1.0, window=0)
    with pytest.raises(ValueError, match="lam must be a 2-d array"):
        monitor(np.zeros(3), level=1.0, rise=1.0)
    with pytest.raises(ValueError, match="flags and truth must have the same shape"):
        precision_recall(np.zeros(3, dtype=bool), np.zeros(4, dtype=bool))
    with pytest.raises(ValueError, match=re.escape("p_loop must be in [0, 1]; got 1.5")):
        loop_lm(p_loop=1.5)
