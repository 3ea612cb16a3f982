"""The share estimators at their parameter boundaries and on a hand-computed text (survivors of make
mutate's sampled run on sims/detect/stats/proportion.py)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from sims.detect.stats import proportion


@pytest.mark.parametrize("level", [0.0, 1.0])
def test_a_level_of_zero_or_one_is_refused_by_both_intervals(level):
    msg = re.escape(f"level must be in (0, 1); got {level!r}")
    with pytest.raises(ValueError, match=msg):
        proportion.share_interval(5, 10, 0.25, 0.3, level=level)
    with pytest.raises(ValueError, match=msg):
        proportion.ems_share_interval([[1.0, 2.0]], [[True, True]], 3.0, level=level)


def test_ems_share_is_the_mean_score_on_the_line_from_1_to_mu1():
    """mu1 = 3: mean score 2 (scores 1 and 3) is half-way, share 0.5; s = sqrt(2), n = 2, z(0.5 + 0.6827 / 2) ~ 1:
    the interval is 2 -+ z s / sqrt 2 = 2 -+ z on the score line, (2 -+ z - 1) / 2 on the share line."""
    from scipy.stats import norm

    est, lo, hi = proportion.ems_share_interval([[1.0, 3.0], [0.5, 1.5]], [[True, True], [True, True]], 3.0, level=0.6)
    z = norm.ppf(0.8)
    assert est[0] == pytest.approx(0.5, abs=1e-15) and lo[0] == pytest.approx((1.0 - z) / 2) and hi[0] == pytest.approx((1.0 + z) / 2)
    # mean score 1 (a plain text's): share 0, the lower end clipped to 0; s = sqrt(1/2), upper (1 + z / 2 - 1) / 2
    assert est[1] == 0.0 and lo[1] == 0.0 and hi[1] == pytest.approx(z / 4)


def test_ems_share_is_clipped_to_one_above_mu1():
    """Texts scoring above the watermarked mean mu1 are all watermarked: the estimate and both ends stop at 1
    (kills the clip's upper end 1.0 -> 2.0)."""
    v = np.full((1, 40), 5.0)
    v[0, ::2] = 4.0  # mean 4.5, sd ~0.5: the whole interval lies above mu1 = 2
    est, lo, hi = proportion.ems_share_interval(v, np.ones_like(v, dtype=bool), mu1=2.0)
    assert est[0] == lo[0] == hi[0] == 1.0
