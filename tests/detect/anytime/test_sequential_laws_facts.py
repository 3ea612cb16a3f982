"""Small exact facts of the null laws (sims.detect.anytime.sequential_laws) that the e-process tests do not pin."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sims.detect.anytime import e_mixtures
from sims.detect.anytime import sequential_laws as SL


def test_support_tops_and_means():
    """Exp(1) is unbounded above (top inf, mean 1), ln Y tops at 0 (mean -1), a lattice at its largest point.
    Kills ``math.inf if self.sign > 0 else 0.0`` -> ``... if not self.sign > 0 ...`` (the two swap) and a
    log-uniform sign -1.0 -> -2.0 (mean -2)."""
    assert SL.exponential_law().top == math.inf and SL.exponential_law().mean == pytest.approx(1.0, rel=1e-15)
    assert SL.log_uniform_law().top == 0.0 and SL.log_uniform_law().mean == pytest.approx(-1.0, rel=1e-15)
    assert SL.log_uniform_law().psi(np.array([0.5, 3.0])) == pytest.approx(-np.log1p([0.5, 3.0]), rel=1e-15)  # E Y^theta = 1 / (1 + theta)
    assert SL.weighted_bernoulli_law(np.array([3, 1])).top == 4.0 and SL.bernoulli_law(0.3).top == 1.0


def test_integer_thresholds_never_exceed_the_top_sum():
    """Weights (3, 1): one token scores at most 4, so no threshold is finite above 4 n; at alpha = 1e-2 the first
    tokens cannot cross at all (inf), later ones can, each threshold an integer <= 4 n."""
    law = SL.weighted_bernoulli_law(np.array([3, 1]))
    thr = e_mixtures.linear_thresholds(SL.tilt_mixture(law), 40, 1e-2)
    n = np.arange(41)
    fin = np.isfinite(thr)
    assert not fin[:2].any() and fin[-1] and np.all(thr[fin] <= 4 * n[fin]) and np.all(thr[fin] == np.rint(thr[fin]))
    # the smallest crossing sum: 4 n itself crosses where the threshold is finite, 4 n does not where it is inf
    mix = SL.tilt_mixture(law)
    assert np.all((mix.log_e(4.0 * n, n) >= math.log(100.0)) == fin)
