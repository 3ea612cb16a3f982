"""UW-gamma's null hit probability in sims.detect.stats._kernels.keyed_order_hits at the first straddling token."""

from __future__ import annotations

import numpy as np

from sims.core import rng
from sims.core.keys import ITS_STREAM, keyed_order
from sims.detect.stats import _kernels as K


def test_uw_gamma_hit_probability_when_the_second_token_straddles_one_half():
    """V = 3, masses 0.3, 0.4, 0.3 in the keyed order (symmetric: the reversal coin cannot change it): the CDF
    0.3, 0.7, 1 first reaches 1/2 at the second token, so the null hit probability (the mass of the tokens whose
    interval reaches past 1/2) is 0.7 at every step.  Kills ``cum[straddle - 1] if straddle > 0`` -> ``> 1`` (gives 1)."""
    V, T, key = 3, 5, 7
    perm = keyed_order(key, V)
    pos = np.empty(V, dtype=np.int64)
    pos[perm] = np.arange(V)
    probs = np.empty((T, V))
    probs[:, perm] = [0.3, 0.4, 0.3]
    seq = np.array([0, 1, 2, 0, 1, 2], dtype=np.int64)  # prompt of 1 id, then 5 tokens
    probs_hit, marks = np.empty(T), np.zeros(T, dtype=np.bool_)
    hits = K.keyed_order_hits(probs, seq, 1, 1, np.uint64(key), perm, pos, rng.stream_key(key, ITS_STREAM), K.UW_GAMMA_MODE, probs_hit, marks)
    np.testing.assert_allclose(probs_hit, 0.7, rtol=1e-15)
    assert hits == marks.sum()
