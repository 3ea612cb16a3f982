"""The LR score's exact null tail (sims.detect.stats.lr_scores.weighted_bernoulli_logsf) deep in the tail, in
log space against closed forms and 50-digit mpmath (never against an underflowed 0): the exponential
tilt is what keeps the lattice recursion's numbers representable there."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from sims.detect.stats import lr_scores as lr
from sims.detect.stats.nulls import binom_logsf

REL = 1e-9  # relative tolerance on ln p (float64 log-space sums)


def test_tail_below_the_smallest_double_equals_its_closed_form():
    """600 weights (seed 3, 50 of them 1, the rest in [2, 64]), gamma = 1/4: S >= sum k only if every
    colour is green, ln P = 600 ln(1/4) = -831.8 (P ~ 1e-361, below the smallest double); S >= sum k - 1
    also when exactly one weight-1 token is red: ln(g^600 + 50 g^599 (1 - g)), by mpmath.  Kills the
    bisection's ``0.5 * (lo + hi)`` -> ``0.5 * (lo - hi)`` (tilt 0: the untilted recursion underflows to -inf)."""
    mpmath.mp.dps = 50
    k = np.concatenate([np.ones(50, dtype=np.int64), np.random.default_rng(3).integers(2, 65, size=550)])
    g = mpmath.mpf(1) / 4
    total = int(k.sum())
    assert lr.weighted_bernoulli_logsf(k, total, 0.25) == pytest.approx(600 * math.log(0.25), rel=REL)
    want = float(mpmath.log(g**600 + 50 * g**599 * (1 - g)))
    assert lr.weighted_bernoulli_logsf(k, total - 1, 0.25) == pytest.approx(want, rel=REL)


@pytest.mark.parametrize("n, s", [(1000, 700), (1000, 990), (3000, 2000)])
def test_equal_weights_deep_tail_is_the_binomial_tail(n, s):
    """Weights all 3: P(3 Bin(n, 1/4) >= 3 s) is the binomial tail, ln P from -370 to -1250 (log-space binom_logsf,
    itself tested against mpmath in tests/detect/stats/test_nulls.py)."""
    got = lr.weighted_bernoulli_logsf(np.full(n, 3, dtype=np.int64), 3 * s, 0.25)
    want = binom_logsf(s, n, 0.25)
    assert want < -300 and got == pytest.approx(want, rel=REL)


def test_trivial_tails_and_bad_input():
    k = np.array([0, 2, 5], dtype=np.int64)
    assert lr.weighted_bernoulli_logsf(k, 0, 0.3) == 0.0
    assert lr.weighted_bernoulli_logsf(k, 7, 0.3) == pytest.approx(2 * math.log(0.3), rel=1e-12)  # both nonzero weights green
    assert lr.weighted_bernoulli_logsf(k, 8, 0.3) == -math.inf
    with pytest.raises(ValueError, match=r"gamma must be in \(0, 1\); got 1.0"):
        lr.weighted_bernoulli_logsf(k, 3, 1.0)
    with pytest.raises(ValueError, match="k must hold nonnegative integers; got min -1"):
        lr.weighted_bernoulli_logsf(np.array([-1, 2]), 1, 0.3)


def test_weights_refuse_a_zero_boost():
    """delta = 0 is no watermark (every weight 0): refused (kills ``not delta > 0.0`` -> ``not delta >= 0.0``)."""
    with pytest.raises(ValueError, match=r"delta must be in \(0, inf\]; got 0.0"):
        lr.lr_weights(np.array([0.2]), np.array([0.3]), 0.0)


def test_lr_delta_of_each_algorithm():
    """SRL: its delta; DualGA: its certainty-equivalent lam1; hard: inf; anything else refused."""
    assert lr.lr_delta(dict(algo="srl", delta=2.0, lam1=9.0)) == 2.0
    assert lr.lr_delta(dict(algo="dualga", delta=2.0, lam1=1.5)) == 1.5
    assert lr.lr_delta(dict(algo="hard", delta=2.0, lam1=1.5)) == math.inf
    with pytest.raises(ValueError, match="algo must be one of .* got 'ems'"):
        lr.lr_delta(dict(algo="ems", delta=2.0, lam1=1.5))


def test_lr_algorithms_are_the_records_with_lr_score():
    from sims.watermarks import registry

    assert set(lr.LR_ALGOS) == {a for a in registry.names() if registry.get(a).lr_score} == {"srl", "dualga", "hard"}
