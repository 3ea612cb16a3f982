"""The naive (peeking) detector's thresholds by hand at gamma 0.25, alpha 0.1 (a survivor of make mutate's
sampled run on sims/detect/anytime/peeking.py skipped n = 2)."""

from __future__ import annotations

import math

from sims.detect.anytime.peeking import naive_thresholds


def test_naive_thresholds_from_two_tokens_on():
    """n = 2: P(S >= 2) = 1/16 <= 0.1; n = 3: P(S >= 2) = 10/64 > 0.1 >= P(S >= 3) = 1/64; n = 4: P(S >= 2) = 67/256,
    P(S >= 3) = 13/256 <= 0.1.  n <= 1: no threshold (the detectors set p = 1 there)."""
    k = naive_thresholds(4, 0.25, 0.1)
    assert math.isinf(k[0]) and math.isinf(k[1]) and k[2:].tolist() == [2.0, 3.0, 3.0]
