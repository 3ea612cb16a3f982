"""sims.detect.stats.tournament_scores' weighted tail at the ends of its support (the survivors of make
mutate's sampled run on this module): no token at all, and the largest sum n sum(w)."""

import math

import numpy as np
import pytest

from sims.detect.stats import tournament_scores as ts


@pytest.mark.parametrize("m", [1, 3, 7])
def test_weighted_tail_at_the_ends_of_the_support(m):
    w = ts.synthid_weights(m)
    W = int(w.sum())
    # no scored token: the sum is 0, so P(S >= s) is 1 for s <= 0 and 0 above
    assert ts.weighted_logsf(0, 0, w) == 0.0 and ts.weighted_logsf(-3, 0, w) == 0.0
    assert ts.weighted_logsf(1, 0, w) == -math.inf
    for n in (1, 4):
        # the largest sum needs every g-value 1: P = rate^(n m); one above it is impossible
        for rate in (0.5, 0.3):
            assert ts.weighted_logsf(n * W, n, w, rate) == pytest.approx(n * m * math.log(rate), rel=1e-12)
        assert ts.weighted_logsf(n * W + 1, n, w) == -math.inf
    got = ts.weighted_logsf(np.array([0, 1, 0]), np.array([0, 0, 2]), w)
    np.testing.assert_array_equal(got, [0.0, -math.inf, 0.0])
