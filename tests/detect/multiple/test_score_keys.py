"""Many keys for every detector family (sims.detect.families.detectors.score_keys) equal the one-key detectors."""

import numpy as np
import pytest

import sims
from sims.detect import multiple
from sims.detect.families import detectors


@pytest.mark.parametrize("algo,kw,dedup", [("ems", {}, True), ("synthid", dict(m=5), False), ("autocov", dict(Delta=0.3), False),
                                           ("its", {}, False), ("srl", dict(delta=4.0), True)])
def test_score_keys_equals_key_by_key(algo, kw, dedup):
    lm = sims.get_lm("loopy")
    gen = sims.generate(lm, algo, n=3, T=60, seed=2, key=5, **kw)
    keys = [4, 5, 9]
    lp, n = detectors.score_keys(gen, keys, lm, dedup=dedup)
    ref = [detectors.score(gen, lm, key=k, dedup=dedup) for k in keys]
    np.testing.assert_allclose(lp, np.stack([r.log10_p for r in ref]), rtol=1e-10, atol=1e-12)
    assert (n == np.stack([r.n_scored for r in ref])).all()
    assert multiple.holm(lp, 1e-3)[1].all() and not multiple.holm(lp, 1e-3)[[0, 2]].any()
