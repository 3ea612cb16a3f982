"""peek_pvalues reads a caller's bet grid (sims.detect.anytime.peeking): the anytime value with a one-bet grid equals the
NumPy twin's with that grid and differs from the default grid's."""

from __future__ import annotations

import numpy as np

from sims.detect.anytime import peeking


def test_a_given_grid_is_used():
    """Six texts (seed 2, 40 colours each, green rate 0.6), gamma 1/4, grid (0.9,): equal to the reference with that
    grid, not to the default (kills ``_cached_tables(...) if grid is None`` -> ``is not None``, which ignores it)."""
    rng = np.random.default_rng(2)
    v = (rng.random((6, 40)) < 0.6).astype(np.float64)
    s, L = np.ones(v.shape, dtype=np.bool_), np.full(6, 40)
    peek, any1 = peeking.peek_pvalues(v, s, L, 0.25, grid=[0.9])
    ref_peek, ref_any = peeking.peek_pvalues_reference(v, s, L, 0.25, grid=[0.9])
    np.testing.assert_allclose(any1, ref_any, rtol=1e-12)
    np.testing.assert_allclose(peek, ref_peek, rtol=1e-12)
    assert not np.allclose(any1, peeking.peek_pvalues(v, s, L, 0.25)[1])


def test_naive_threshold_is_infinite_where_no_count_reaches_the_level():
    """After 2 tokens at gamma 0.25 even 2 greens have p = 0.0625 > 1e-4: no count detects (inf), and the first
    length where one does asks for every token green (kills ``np.arange(n + 1)`` -> ``n + 2``, whose count n + 1
    has an empty tail and would be taken as the threshold)."""
    k = peeking.naive_thresholds(10, 0.25, 1e-4)
    assert np.isinf(k[:7]).all()  # 0.25^6 = 2.4e-4 > 1e-4
    assert k[7] == 7  # 0.25^7 = 6.1e-5
