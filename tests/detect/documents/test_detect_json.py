"""The detection document's pieces (sims.detect.documents.detect_json) on hand-made results: the fpr check at its ends,
each text row's fields and its tokens_to_detect, the document's key order, the z and the prefix curve of
redgreen_from_marks (padding and unscored tokens), and the null green probability of both green-list kinds."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sims.detect.documents import detect_json
from sims.detect.stats.marks import check_fpr, null_green_probability, redgreen_from_marks
from sims.detect.stats.nulls import binom_logsf
from sims.detect.stats.scores import DetectResult


@pytest.mark.parametrize("bad", [0.0, 1.0, -0.1, "x", None, math.nan])
def test_check_fpr_refuses_the_ends_and_non_numbers(bad):
    with pytest.raises(ValueError, match=r"level must be in \(0, 1\); got"):
        check_fpr(bad, "level")


def test_check_fpr_accepts_the_open_interval():
    assert check_fpr("1e-300") == 1e-300 and check_fpr(np.nextafter(1.0, 0.0)) == np.nextafter(1.0, 0.0)


def test_text_rows_fields_and_tokens_to_detect():
    """Two texts: text 0 watermarked (log10 p -5 <= -4), its prefix curve below -4 from token 3 on; text 1 not, z nan -> None."""
    res = DetectResult(np.array([4, 3]), np.array([4.0, 1.0]), np.array([2.5, np.nan]), np.array([-5.0, -0.5]), np.array([False, False]))
    prefix = np.array([[0.0, -1.0, -4.0, -5.0], [0.0, -0.2, -0.5, np.nan]])
    rows = detect_json.text_rows(res, 1e-4, n_tokens=np.array([5, 3]), prefix_log10p=prefix)
    assert rows[0] == dict(index=0, n_tokens=5, n_scored=4, score=4.0, z=2.5, log10_p=-5.0, tokens_to_detect=3, watermarked=True,
                           decision="watermarked")
    assert rows[1] == dict(index=1, n_tokens=3, n_scored=3, score=1.0, z=None, log10_p=-0.5, tokens_to_detect=None, watermarked=False,
                           decision="not watermarked")
    assert [r["tokens_to_detect"] for r in detect_json.text_rows(res, 1e-4, n_tokens=np.array([5, 3]))] == [None, None]
    doc = detect_json.document(rows, fpr=1e-4, key=3)
    assert list(doc) == ["schema", "version", "fpr", "key", "texts"] and doc["schema"] == "wmstats.detect" and doc["version"] == 1


def test_redgreen_from_marks_z_and_prefix():
    """Colours G G R G (R) of which the 4th is not scored, text length 4 of 5 columns: 2 green of 3 scored ->
    z = (2 - 3 g) / sqrt(3 g (1 - g)), p = P(Bin(3, g) >= 2); the prefix is 0 until two tokens are scored, the
    binomial tail after, nan past the text's end; a text with no scored token has z nan, one with one a finite z."""
    g = 0.25
    green = np.array([[True, True, False, True, False], [True, False, False, False, False]])
    scored = np.array([[True, True, True, False, False], [False] * 5])  # padding is never scored
    res, prefix = redgreen_from_marks(green, scored, np.array([4, 5]), g)
    one, _ = redgreen_from_marks(green[:1], np.array([[True, False, False, False, False]]), np.array([5]), g)
    assert one.too_short[0] and one.log10_p[0] == 0.0 and one.z[0] == pytest.approx((1 - g) / math.sqrt(g * (1 - g)), rel=1e-14)  # one token: a z, no test
    assert res.n_scored.tolist() == [3, 0] and res.score.tolist() == [2.0, 0.0] and res.too_short.tolist() == [False, True]
    assert res.z[0] == pytest.approx((2 - 3 * g) / math.sqrt(3 * g * (1 - g)), rel=1e-14) and np.isnan(res.z[1])
    assert res.log10_p[0] == pytest.approx(binom_logsf(2, 3, g) / math.log(10), rel=1e-14) and res.log10_p[1] == 0.0
    want = [0.0, 2 * math.log10(g), binom_logsf(2, 3, g) / math.log(10), binom_logsf(2, 3, g) / math.log(10)]
    np.testing.assert_allclose(prefix[0, :4], want, rtol=1e-14)
    assert np.isnan(prefix[0, 4]) and (prefix[1] == 0.0).all()


def test_null_green_probability_of_both_kinds():
    """Partition lists: floor(gamma V) / V exactly; Bernoulli lists: gamma rounded down to a multiple of 2^-53."""
    assert null_green_probability(0.3, "partition", 7) == 2 / 7
    g = null_green_probability(0.1, "bernoulli", None)
    assert g <= 0.1 and 0.1 - g < 2.0**-53 and (g * 2.0**53) == math.floor(g * 2.0**53)
