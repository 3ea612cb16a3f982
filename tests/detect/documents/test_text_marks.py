"""Raw texts' red-green marks (sims.detect.documents.text_marks): padding, the context split, colours equal the
package's own detector, dedup, and the null probability."""

from __future__ import annotations

import numpy as np
import pytest

from sims.detect.documents.text_marks import padded_texts, redgreen_text_marks
from sims.detect.stats import scores
from sims.detect.stats.marks import null_green_probability

V, KEY = 50, 11


def test_padded_texts():
    rows = [np.array([1, 2, 3, 4, 5]), np.array([6, 7]), np.array([], dtype=np.int64)]
    out = padded_texts(rows, 1)
    assert out.dtype == np.int64 and out.tolist() == [[2, 3, 4, 5], [7, -1, -1, -1], [-1, -1, -1, -1]]
    assert padded_texts([np.array([1])], 1).shape == (1, 0) and padded_texts([np.array([1, 2])], 0).tolist() == [[1, 2]]


@pytest.mark.parametrize("h", [1, 2])
def test_marks_equal_the_detector_and_dedup_drops_repeats(h):
    """Three texts (seed 4: 30 ids of 50, then one repeating a single pair, then one of exactly h ids): colours
    and lengths as scores.token_scores gives them on the split (context = the first h ids); dedup leaves the
    repeated pair scored once; a text of h ids has nothing to score."""
    rng = np.random.default_rng(4)
    rows = [rng.integers(0, V, 30), np.full(12, 3), rng.integers(0, V, h)]
    green, scored, lengths, g = redgreen_text_marks(rows, KEY, gamma=0.25, h=h, vocab_size=V)
    assert lengths.tolist() == [30 - h, 12 - h, 0] and green.shape == scored.shape == (3, 30 - h)
    want = scores.token_scores(np.array([rows[0][h:]]), np.array([rows[0][:h]]), KEY, stat="green", gamma=0.25, h=h, vocab_size=V)[0][0] > 0.5
    np.testing.assert_array_equal(green[0], want)
    assert scored[0].all() and scored[1, : 12 - h].all() and not scored[1, 12 - h :].any() and not scored[2].any()
    _, dd, _, _ = redgreen_text_marks(rows, KEY, gamma=0.25, h=h, vocab_size=V, dedup=True)
    assert dd[1].sum() == 1 and dd[0].sum() == len(set(zip(*(rows[0][j : 30 - h + j] for j in range(h + 1)))))
    np.testing.assert_array_equal(green, redgreen_text_marks(rows, KEY, gamma=0.25, h=h, vocab_size=V, dedup=True)[0])  # colours kept
    assert g == null_green_probability(0.25, "bernoulli", V)


def test_short_rows_get_a_left_padded_context_and_bad_input_is_named():
    green, scored, lengths, _ = redgreen_text_marks([np.array([5]), np.array([1, 2, 3])], KEY, gamma=0.5, h=2, vocab_size=V)
    assert lengths.tolist() == [0, 1] and not scored[0].any() and scored[1, 0]
    with pytest.raises(ValueError, match=r"gamma must be in \(0, 1\); got 1.0"):
        redgreen_text_marks([np.array([1, 2])], KEY, gamma=1.0, h=1, vocab_size=V)
    with pytest.raises(ValueError, match=r"h must be an integer in \[0, inf\); got -1"):
        redgreen_text_marks([np.array([1, 2])], KEY, gamma=0.25, h=-1, vocab_size=V)
