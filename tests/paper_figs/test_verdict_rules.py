"""The verdict rules of the reproduction report (paper_figs/criteria.py) at their boundaries, and the interval they read.

A matched comparison's verdict flips exactly where an interval's end crosses 0; a claim's verdict never counts crossing
curves (mixed) as worse, and only the paper's own metric and matching can refute.  The interval of a level is two-sided
at confidence 1 - alpha / K: tested against the replicates' quantiles computed here, so a one-sided interval fails.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from paper_figs import _matched as mt
from paper_figs import criteria as cr

MATCHED = (cr.BETTER, cr.TIED, cr.WORSE, cr.MIXED, cr.NA)


def test_matched_flips_exactly_at_zero():
    up, down = math.nextafter(0.0, 1.0), math.nextafter(0.0, -1.0)
    assert cr.matched([0.0], [1.0]) == cr.TIED and cr.matched([up], [1.0]) == cr.BETTER
    assert cr.matched([-1.0], [0.0]) == cr.TIED and cr.matched([-1.0], [down]) == cr.WORSE
    assert cr.matched([up, -1.0], [1.0, down]) == cr.MIXED
    assert cr.matched([up, -1.0], [1.0, 0.0]) == cr.BETTER  # one better level, the other touching 0: better
    assert cr.matched([np.nan, up], [np.nan, 1.0]) == cr.BETTER  # a level without an interval counts as tied
    with pytest.raises(ValueError, match="one shape"):
        cr.matched([0.1], [0.2, 0.3])


@pytest.mark.parametrize("own", [True, False])
def test_claim_verdict_over_every_pair_of_comparisons(own):
    """Every combination of two comparators' verdicts, against the rule written out independently."""
    for a, b in itertools.product(MATCHED, repeat=2):
        live = [v for v in (a, b) if v != cr.NA]
        if not live:
            want = cr.NA
        elif cr.WORSE in live:
            want = cr.REFUTED if own else cr.NOT_REPRODUCED
        elif cr.MIXED in live:
            want = cr.MIXED
        else:
            want = cr.REPRODUCED if all(v == cr.BETTER for v in live) else cr.NOT_REPRODUCED
        assert cr.claim_verdict({"A": a, "B": b}, own=own) == want, (a, b)


def test_mixed_is_never_refuted():
    """Crossing curves are their own verdict: a rule that counted mixed as worse would refute here."""
    assert cr.claim_verdict({"SRL gamma=0.1": cr.MIXED, "EMS": cr.BETTER}, own=True) == cr.MIXED
    assert cr.no_worse({"SRL gamma=0.1": cr.MIXED, "ATW": cr.BETTER}, own=True) == cr.MIXED
    assert cr.better_than(cr.MIXED) == cr.MIXED and cr.worse_than(cr.MIXED) == cr.MIXED


def test_only_the_papers_own_matching_refutes():
    assert cr.claim_verdict({"SRL (best gamma)": cr.WORSE}, own=True) == cr.REFUTED
    assert cr.claim_verdict({"SRL (best gamma)": cr.WORSE}, own=False) == cr.NOT_REPRODUCED


def test_no_worse_needs_one_better_and_no_worse():
    assert cr.no_worse({"a": cr.BETTER, "b": cr.TIED}, own=True) == cr.REPRODUCED
    assert cr.no_worse({"a": cr.TIED, "b": cr.TIED}, own=True) == cr.NOT_REPRODUCED
    assert cr.no_worse({"a": cr.BETTER, "b": cr.WORSE}, own=True) == cr.REFUTED
    assert cr.no_worse({"a": cr.BETTER, "b": cr.WORSE}, own=False) == cr.NOT_REPRODUCED
    assert cr.no_worse({"a": cr.NA}, own=True) == cr.NA


def _flat_curve(values: np.ndarray, metric: str = "strength") -> list:
    """A two-point curve whose metric is ``values[r]`` at both points in replicate r (so at every level in between)."""
    R = values.size
    pt = lambda kl: {"kl": np.full(R, kl), "dg": np.full(R, np.nan), "tpr_1e-4": np.zeros(R), "tpr_1e-6": np.zeros(R),  # noqa: E731
                     "strength": np.zeros(R), metric: values.astype(float)}
    return [[pt(0.01), pt(1.0)]]


@pytest.mark.parametrize("k", [1, 5])
def test_interval_is_two_sided_at_one_minus_alpha_over_k(k):
    """The difference at every level is the replicate's value v_r (both curves flat), so each level's interval must be the
    alpha / (2K) and 1 - alpha / (2K) quantiles of v over the replicates (row 0, the point estimate, left out).  Seed 3,
    400 replicates of a normal law: the check is exact arithmetic on them, not a statistical test."""
    v = np.random.default_rng(3).normal(0.2, 1.0, 401)
    out = mt.compare(_flat_curve(v), _flat_curve(np.zeros(401)), "strength", k, 0.05)
    q = 0.05 / k / 2
    assert np.allclose(out["lo"], np.quantile(v[1:], q), rtol=0, atol=1e-12)
    assert np.allclose(out["hi"], np.quantile(v[1:], 1 - q), rtol=0, atol=1e-12)
    assert np.allclose(out["diff"], v[0])


def test_an_interval_below_zero_is_worse():
    """Both directions are tested: a rule that only looks for an interval above 0 would call this tied."""
    v = np.random.default_rng(4).normal(-3.0, 0.5, 401)
    assert mt.compare(_flat_curve(v), _flat_curve(np.zeros(401)), "strength", 3, 0.05)["verdict"] == cr.WORSE
    assert mt.compare(_flat_curve(-v), _flat_curve(np.zeros(401)), "strength", 3, 0.05)["verdict"] == cr.BETTER


def test_matched_flips_exactly_at_the_margin():
    """A TPR difference counts only beyond its resolution (one text in n): at the margin tied, just past it not."""
    m = 1 / 300
    assert cr.matched([m], [1.0], m) == cr.TIED and cr.matched([math.nextafter(m, 1.0)], [1.0], m) == cr.BETTER
    assert cr.matched([-1.0], [-m], m) == cr.TIED and cr.matched([-1.0], [math.nextafter(-m, -1.0)], m) == cr.WORSE
    with pytest.raises(ValueError, match="margin"):
        cr.matched([0.1], [0.2], -0.01)


def test_a_saturated_tpr_difference_below_one_text_is_tied():
    """An interpolated 0.9997 beside a measured 1.0 in every replicate: significant without a margin, tied with one text's."""
    a, b = np.full(401, 0.9997), np.ones(401)
    assert mt.compare(_flat_curve(a, "tpr_1e-4"), _flat_curve(b, "tpr_1e-4"), "tpr_1e-4", 3, 0.05)["verdict"] == cr.WORSE
    assert mt.compare(_flat_curve(a, "tpr_1e-4"), _flat_curve(b, "tpr_1e-4"), "tpr_1e-4", 3, 0.05, margin=1 / 300)["verdict"] == cr.TIED


def test_a_margin_per_level_counts_each_level_against_its_own():
    """Level 1's interval clears its margin, level 2's does not: better; swap the margins: tied."""
    lo, hi = [0.05, 0.05], [0.2, 0.2]
    assert cr.matched(lo, hi, [0.04, 0.1]) == cr.BETTER and cr.matched(lo, hi, [0.1, 0.1]) == cr.TIED
    assert cr.matched([-0.2, -0.2], [-0.05, -0.05], [0.1, 0.04]) == cr.WORSE
