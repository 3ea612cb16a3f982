"""paper_figs.criteria beyond the threshold flips (the survivors of make mutate's sampled run on this
module): the nulls-per-detector the FPR test asks for, and a missing correlation record."""

from paper_figs import criteria as cr


def test_n_needed_is_the_first_doubling_of_the_nulls_that_reveals_the_resolution():
    target = cr.FPR_RESOLUTION * cr.FPR_LEVEL
    for n in (200, 1000, 5000):  # 16, 8 and 1 times n
        r = cr.fpr_test([(0, n)])
        k = r["n_needed"] // n
        assert r["n_needed"] == k * n and k & (k - 1) == 0  # n times a power of two (1 where n already suffices)
        assert cr.fpr_test([(0, r["n_needed"])])["detectable"] <= target
        assert (k == 1) == (r["detectable"] <= target)
        if k > 1:
            assert cr.fpr_test([(0, r["n_needed"] // 2)])["detectable"] > target


def test_a_missing_correlation_record_is_not_applicable():
    assert cr.correlated(None) == cr.NA and cr.correlated({}) == cr.NA
    assert cr.correlated({"min": 0.5}) == cr.NA
    assert cr.correlated({"min": 0.5, "line": 0.1}) == cr.REPRODUCED
