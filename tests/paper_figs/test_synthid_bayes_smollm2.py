"""The SmolLM2 Bayesian-detector table's interval (paper_figs.synthid_bayes_smollm2.py)."""

import pytest
from scipy.stats import binomtest

from paper_figs.synthid_bayes_smollm2 import clopper_pearson


@pytest.mark.parametrize("k,n", [(0, 24), (7, 200), (2, 20), (24, 24), (1, 1)])
def test_clopper_pearson_equals_scipy_exact_interval(k, n):
    ci = binomtest(k, n).proportion_ci(0.95, method="exact")
    assert clopper_pearson(k, n) == pytest.approx((ci.low, ci.high), abs=1e-12)


def test_clopper_pearson_bad_input():
    with pytest.raises(ValueError, match="k must be in"):
        clopper_pearson(3, 2)
