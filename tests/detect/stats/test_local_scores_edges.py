"""Edge rows of the local score (sims.detect.stats.local_scores): texts of 0, 1 and 2 scored tokens (at most one is
flagged with p = 1, two get the exact tail), and the gamma check of a generation's record."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sims.core.record import Generation
from sims.detect.stats import local_scores as LS
from sims.detect.stats import scores

V, KEY, GAMMA, RHO = 1000, 3, 0.25, 0.7


def _colours(tokens, prompts):
    return scores.token_scores(tokens, prompts, KEY, stat="green", gamma=GAMMA, h=1, vocab_size=V)[0] > 0.5


def test_one_token_is_flagged_with_p_one_two_get_the_exact_tail():
    """Every id of 0..39 after context 5, one token per text: each flagged, p = 1, its score a if green else 0.
    Then two green tokens (found by search): not flagged, H = 2a, P(H_2 >= 2a) = g^2 (only green-green reaches
    2a). Kills ``flagged = n <= 1`` -> ``n < 1`` and ``Hrun.shape[1] == 0`` -> ``== 1`` (a one-token text scored 0)."""
    tokens, prompts = np.arange(40)[:, None], np.full((40, 1), 5)
    r = LS.score_local(tokens, prompts, KEY, GAMMA, rho=RHO, vocab_size=V)
    _, _, _, _, g, (a, b) = LS.local_segments(tokens, prompts, KEY, GAMMA, rho=RHO, vocab_size=V)
    green = _colours(tokens, prompts)[:, 0]
    assert 0 < green.sum() < 40 and r.too_short.all() and (r.log10_p == 0.0).all()
    np.testing.assert_array_equal(r.score, np.where(green, a, 0))
    # two greens in a row: t1 green after context 5, t2 green after context t1
    t1 = int(np.flatnonzero(green)[0])
    nxt = _colours(np.arange(40)[:, None], np.full((40, 1), t1))[:, 0]
    t2 = int(np.flatnonzero(nxt)[0])
    two = LS.score_local(np.array([[t1, t2]]), np.array([[5]]), KEY, GAMMA, rho=RHO, vocab_size=V)
    assert not two.too_short[0] and two.score[0] == 2 * a
    assert two.log10_p[0] == pytest.approx(2 * math.log10(g), rel=1e-12)


def test_empty_texts_score_zero():
    r = LS.score_local(np.zeros((2, 0), dtype=np.int64), np.full((2, 1), 5), KEY, GAMMA, rho=RHO, vocab_size=V)
    assert r.too_short.all() and (r.score == 0).all() and (r.log10_p == 0).all() and (r.n_scored == 0).all()


def _gen(algo):
    rng = np.random.default_rng(1)
    z = np.zeros((2, 20))
    meta = dict(lm="news", vocab_size=V, algo=algo, key=KEY, h=1, gamma=GAMMA, delta=2.0, green_kind="bernoulli")
    return Generation(rng.integers(0, V, size=(2, 20)), rng.integers(0, V, size=(2, 1)), z, z, z, z, z, meta)


def test_gamma_must_match_a_watermarked_record():
    """A detector gamma other than the record's is refused for a watermark's texts, allowed for plain text
    (algo none: any gamma is a valid null). Kills ``!= "none"`` -> ``== "none"``."""
    with pytest.raises(ValueError, match=r"gamma must equal the generation's gamma 0.25 .*got 0.3"):
        LS.score_local_generation(_gen("srl"), gamma=0.3)
    r = LS.score_local_generation(_gen("none"), gamma=0.3)
    assert r.n_scored.tolist() == [20, 20]


@pytest.mark.parametrize("gamma", [1.0, 1.5, 0.0])
def test_null_tail_refuses_gamma_outside_the_open_unit_interval(gamma):
    """Kills the range check's upper end 1.0 -> 2.0 (gamma 1.5 would pass)."""
    with pytest.raises(ValueError, match=rf"gamma must be in \(0, 1\); got {gamma}"):
        LS.local_logsf(2, 2, gamma, 1, 1)


def test_best_segment_is_the_first_of_equal_ones():
    """Colours G R R G, weights (1, 1): the segments [0, 1) and [3, 4) both reach the local score 1; the kernel
    reports the first (kills ``u > best`` -> ``u >= best``, which moves to the last)."""
    from sims.detect.stats import _local_kernels as LK

    bits, scored = np.array([[1.0, 0.0, 0.0, 1.0]]), np.ones((1, 4), dtype=np.bool_)
    H, start, stop = np.zeros((1, 4), dtype=np.int64), np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64)
    LK.local_running(bits, scored, 1, 1, H, start, stop)
    assert H.tolist() == [[1, 1, 1, 1]] and (start[0], stop[0]) == (0, 1)
