"""The watermarked-share estimators beyond DualGA (issue 31): SRL through its mean DG on the LM, EMS
through the method of moments on -ln(1 - Y), on texts spliced from watermarked and plain parts
(known truth)."""

import mpmath
import numpy as np
import pytest

from sims.detect.stats.proportion import ems_share_interval, ems_signal, share_of_texts
from sims.detect.stats.scores import token_scores
from sims.lm.synthetic import open_synthetic
from sims.plan import watermark_signal
from sims.watermarks.generate import generate_synthetic

KEY, N = 5, 120


def _splice(wm, plain, share, T):
    cut = int(round((1 - share) * T))
    tokens = np.concatenate([plain.tokens[:, :cut], wm.tokens[:, cut:]], axis=1)
    prompts = plain.prompts[:, -1:] if cut > 0 else wm.prompts[:, -1:]
    return tokens, prompts, max(0, T - cut - (1 if 0 < cut < T else 0)) / T  # the first watermarked token's context is plain


def test_ems_signal_is_the_50_digit_integral():
    mpmath.mp.dps = 50
    for pi in (0.05, 0.3, 0.9, 1.0):
        want = mpmath.quad(lambda u: -mpmath.log(1 - u ** mpmath.mpf(pi)), [0, 0.5, 1])
        assert abs(ems_signal([pi]) - float(want)) < 1e-12 * float(want), pi
    assert abs(ems_signal([1.0]) - 1.0) < 1e-14  # pi = 1: Y uniform, the null mean
    with pytest.raises(ValueError, match="pi must be"):
        ems_signal([0.0])


@pytest.mark.slow
@pytest.mark.parametrize("share", [0.0, 0.5, 1.0])
def test_srl_spliced_coverage(share):
    """Seed 1 / 2, 120 SRL (delta 2) texts of 300 tokens on news spliced with plain text: the 95 %
    intervals (binomial, mapped through the LM's mean DG) cover the truth in at least 104 texts
    (120 x 0.95 - 3.1 sd at 99.9 %: 106, less 2 for the LM-mean signal) and the mean estimate is within 0.05."""
    T = 300
    lm = open_synthetic("news")
    wm = generate_synthetic(lm, "srl", n=N, T=T, seed=1, key=KEY, delta=2.0)
    plain = generate_synthetic(lm, "none", n=N, T=T, seed=2, key=KEY, gamma=wm.meta["gamma"])
    tokens, prompts, truth = _splice(wm, plain, share, T)
    dg = watermark_signal("srl", lm="news", delta=2.0, key=KEY)
    est, lo, hi = share_of_texts(tokens, prompts, KEY, wm.meta["gamma"], dg, vocab_size=wm.meta["vocab_size"])
    assert np.sum((lo <= truth) & (truth <= hi)) >= 104
    assert abs(est.mean() - truth) < 0.05


@pytest.mark.slow
@pytest.mark.parametrize("share", [0.0, 0.3, 0.7, 1.0])
def test_ems_spliced_coverage(share):
    """Seed 3 / 4, 120 EMS texts of 200 tokens on news spliced with plain text: the 95 % CLT intervals
    cover the truth in at least 104 texts (99.9 % one-sided binomial slack, less 2 for the asymptotic
    interval) and the mean estimate is within 0.05 of the truth."""
    T = 200
    lm = open_synthetic("news")
    wm = generate_synthetic(lm, "ems", n=N, T=T, seed=3, key=KEY)
    plain = generate_synthetic(lm, "none", n=N, T=T, seed=4, key=KEY)
    tokens, prompts, truth = _splice(wm, plain, share, T)
    v, scored = token_scores(tokens, prompts, KEY, stat="ems", h=1, vocab_size=wm.meta["vocab_size"])
    est, lo, hi = ems_share_interval(v, scored, watermark_signal("ems", lm="news", key=KEY))
    assert np.sum((lo <= truth) & (truth <= hi)) >= 104
    assert abs(est.mean() - truth) < 0.05


def test_ems_share_interval_input():
    with pytest.raises(ValueError, match="mu1 must be in"):
        ems_share_interval(np.ones((1, 3)), np.ones((1, 3), bool), 1.0)
    with pytest.raises(ValueError, match="at least 2 scored"):
        ems_share_interval(np.ones((1, 3)), np.array([[True, False, False]]), 2.0)
