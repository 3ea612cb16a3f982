"""The watermarked-share estimator on texts spliced from DualGA and plain parts (known truth)."""

import numpy as np
import pytest

from sims.detect.stats.proportion import share_interval, share_of_texts
from sims.lm.synthetic import open_synthetic
from sims.watermarks.generate import generate_synthetic

KEY, DELTA, T = 5, 0.3, 400


@pytest.fixture(scope="module")
def parts():
    lm = open_synthetic("news")
    wm = generate_synthetic(lm, "dualga", n=150, T=T, seed=1, key=KEY, Delta=DELTA)
    plain = generate_synthetic(lm, "none", n=150, T=T, seed=2, key=KEY, gamma=wm.meta["gamma"])
    return wm, plain


@pytest.mark.parametrize("share", [0.0, 0.25, 0.5, 0.8, 1.0])
def test_spliced_texts_coverage_and_bias(parts, share):
    """150 texts of 400 tokens: the plain text's first (1 - share) T tokens, then DualGA's tokens
    from the same position on (the first of them gets a fresh colour: its context is plain, so the
    truth counts it as unwatermarked).  The 95 % intervals cover the truth in at least 90 % of the
    texts (one-sided binomial slack at 99.9 %: 150 x 0.95 - 3.1 sd = 134) and the mean estimate is
    within 0.04 of the truth."""
    wm, plain = parts
    cut = int(round((1 - share) * T))
    tokens = np.concatenate([plain.tokens[:, :cut], wm.tokens[:, cut:]], axis=1)
    prompts = plain.prompts[:, -1:] if cut > 0 else wm.prompts[:, -1:]
    truth = max(0, T - cut - (1 if 0 < cut < T else 0)) / T
    est, lo, hi = share_of_texts(tokens, prompts, KEY, wm.meta["gamma"], DELTA, vocab_size=wm.meta["vocab_size"])
    assert np.sum((lo <= truth) & (truth <= hi)) >= 134
    assert abs(est.mean() - truth) < 0.04


def test_share_interval_edges_and_input():
    est, lo, hi = share_interval([0, 100], [100, 100], 0.25, 0.5)
    assert est[0] == 0.0 and lo[0] == 0.0 and hi[1] == 1.0 and est[1] == 1.0
    with pytest.raises(ValueError, match="Delta must be in"):
        share_interval(1, 10, 0.5, 0.6)
    with pytest.raises(ValueError, match="0 <= k <= n"):
        share_interval(11, 10, 0.25, 0.3)
