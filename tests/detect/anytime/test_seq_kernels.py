"""Kernels of sims.detect.anytime._kernels on hand-made inputs: the AutoCov mixture's log e-value deep in the
tail (log space, against scipy's logsumexp: never an underflowed -inf) and prefix_extremes reading its
tables at the running (scored, green) counts."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import logsumexp

from sims.detect.anytime import _kernels as SK


def test_markov_log_e_of_a_long_red_run_is_finite_and_exact():
    """One text of 3000 red tokens (each after a red one), gamma 1/4, bets q = 0.3, 0.5, 0.9: the red mixture's
    log e-value is ln mean_j ((1 - q_j) / (1 - gamma))^3000, about -207 (the terms span -207 to -6045).
    Kills the log-sum-exp shift ``k up + (n - k) dn`` -> ``k up - (n - k) dn`` (every term then underflows: -inf)."""
    q = np.array([0.3, 0.5, 0.9])
    dn = np.log((1 - q) / 0.75)
    final, peak, stops = SK.markov_crossings(np.zeros((1, 3000)), np.ones((1, 3000), dtype=np.bool_), np.array([3000]), 0.25, q, q, 10.0)
    want = logsumexp(3000 * dn) - math.log(3)
    assert want < -200 and final[0] == pytest.approx(want, rel=1e-12) and peak[0] == 0.0 and stops[0] == -1


def test_prefix_extremes_read_the_tables_at_the_running_counts():
    """Colours G R G (the third not scored) then G: the scored prefixes are (n, k) = (1, 1), (2, 1), (3, 2); with
    tables whose (n, k) entry is -(10 n + k) and 10 n + k the extremes are -32 and 32 (kills a green count
    starting at 1, which reads (3, 3))."""
    values = np.array([[1.0, 0.0, 1.0, 1.0]])
    scored = np.array([[True, True, False, True]])
    n, k = np.meshgrid(np.arange(6), np.arange(6), indexing="ij")
    low, high = SK.prefix_extremes(values, scored, np.array([4]), -(10.0 * n + k), 10.0 * n + k)
    assert low.tolist() == [-32.0] and high.tolist() == [32.0]
    low, high = SK.prefix_extremes(values, scored, np.array([0]), -(10.0 * n + k), 10.0 * n + k)
    assert low.tolist() == [0.0] and high.tolist() == [0.0]  # nothing scored
