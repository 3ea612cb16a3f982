"""The refinement of matched curves (paper_figs/_refine.py): the interpolated parameter against an exact inverse, the
segments at their smallest answers, proposals skipping settled segments, and the residual check against a known truth."""

from __future__ import annotations

import numpy as np
import pytest

from paper_figs import _refine as rf


def test_interpolated_param_inverts_a_log_linear_curve_exactly():
    """KL = exp(a + b * param) is linear in log KL, so the interpolation must return (log level - a) / b (to DIGITS)."""
    a, b = -5.0, 1.7
    par = np.array([0.5, 1.0, 2.0, 3.0])
    kl = np.exp(a + b * par)
    for level in (kl[0] * 1.01, np.sqrt(kl[1] * kl[2]), kl[3] * 0.99):
        exact = (np.log(level) - a) / b
        assert rf.interpolated_param(kl, par, level) == pytest.approx(exact, rel=10 ** (1 - rf.DIGITS))


def test_segments_at_their_smallest_answers():
    kl = np.array([0.01, 0.1, 1.0])
    assert rf.segments(kl, []) == {}
    assert rf.segments(kl, [0.01, 1.0, 0.001, 2.0]) == {}  # on an end point or outside: nothing to run
    assert rf.segments(kl, [0.1 * np.exp(rf.NEAR / 2)]) == {}  # within NEAR of a measured point
    one = rf.segments(kl, [0.1 * np.exp(2 * rf.NEAR)])
    assert list(one) == [1] and one[1].size == 1
    two = rf.segments(kl, [0.02, 0.05, 0.5])
    assert sorted(two) == [0, 1] and two[0].size == 2


def _point(kl, metric_by_text, param, R=201, seed=0):
    """A point whose per-replicate stats are bootstrap means of per-text values (the same weights for every point: paired)."""
    w = np.random.default_rng(seed).multinomial(metric_by_text.size, np.full(metric_by_text.size, 1 / metric_by_text.size), size=R).astype(float)
    w[0] = 1.0
    mean = w @ metric_by_text / w.sum(axis=1)
    nan = np.full(R, np.nan)
    return dict(algo="srl", params=dict(gamma=0.5, delta=param), stats=dict(kl=np.full(R, kl), dg=nan, **{"tpr_1e-4": nan, "tpr_1e-6": nan},
                                                                            strength=mean))


def test_propose_one_run_per_unsettled_segment():
    pts = [_point(k, np.zeros(10), p) for k, p in ((0.01, 0.5), (0.1, 1.0), (1.0, 2.0))]
    props = rf.propose(pts, np.array([0.02, 0.05, 0.5]), settled=set())
    assert [p["segment"] for p in props] == [(0.5, 1.0), (1.0, 2.0)]
    assert all(p["segment"][0] < p["params"]["delta"] < p["segment"][1] for p in props)
    assert rf.propose(pts, np.array([0.02, 0.5]), settled={(0.5, 2.0)}) == []  # sub-segments of a settled segment are settled
    assert rf.axis("uw-gamma", {}) is None and rf.propose([dict(pts[0], algo="uw-gamma")] * 2, np.array([0.05]), set()) == []


def test_check_accepts_a_point_on_the_line_and_rejects_one_off_it():
    """Texts share noise (seed 1, 300 texts): a midpoint equal to the average of its neighbours' per-text values lies on the
    interpolation exactly (residual 0, accepted); one shifted by 1.0 per text lies 1.0 off, far outside a paired 95 % interval
    whose half-width is about 2 x 0.3 / sqrt(300)."""
    noise = np.random.default_rng(1).normal(0.0, 0.3, 300)
    lo, hi = _point(0.01, 1.0 + noise, 0.5), _point(1.0, 3.0 + noise, 2.0)
    on = _point(0.1, 2.0 + noise, 1.0)  # log KL midway: the line says 2.0 there
    c = rf.check([lo, hi], on)
    assert c["ok"] and c["metrics"]["strength"]["residual"] == pytest.approx(0.0, abs=1e-12)
    off = rf.check([lo, hi], _point(0.1, 3.0 + noise, 1.0))
    assert not off["ok"] and off["metrics"]["strength"]["residual"] == pytest.approx(1.0)
    assert set(c["metrics"]) == {"strength"}  # nan metrics are skipped


def test_summary_keeps_the_leaf_checks():
    """A failed check whose run split its segment is superseded by its halves' later checks; a settled one stays."""
    parent = dict(curve="SRL", segment=[0.5, 2.0], params={}, ok=False, metrics={"strength": dict(residual=0.9)})
    child = dict(curve="SRL", segment=[0.5, 1.2], params={}, ok=True, metrics={"strength": dict(residual=-0.1)})
    other = dict(curve="DualGA", segment=[0.1, 0.3], params={}, ok=False, metrics={"strength": dict(residual=0.3)})
    same_range_other_curve = dict(curve="ATW", segment=[0.5, 2.0], params={}, ok=True, metrics={"strength": dict(residual=0.05)})
    s = rf.summary([parent, other, same_range_other_curve, child])
    assert s["segments"] == 3 and s["unsettled"] == 1
    assert s["largest"]["strength"]["residual"] == pytest.approx(0.3) and s["largest"]["strength"]["curve"] == "DualGA"
    assert rf.summary([child, parent])["segments"] == 2  # a check is superseded only by a later one


def test_error_at_reads_the_smallest_checked_segment_holding_each_level():
    """Points at delta 0.5 / 1 / 2 (KL 0.01 / 0.1 / 1): a failed check of [0.5, 2] (residual 0.4) then a check of [0.5, 1]
    (residual -0.05): levels in (0.01, 0.1) read 0.05, in (0.1, 1) the parent's 0.4, outside every checked segment and
    next to a measured point 0."""
    pts = [_point(k, np.zeros(10), p) for k, p in ((0.01, 0.5), (0.1, 1.0), (1.0, 2.0))]
    checks = [dict(curve="SRL", segment=[0.5, 2.0], metrics={"strength": dict(residual=0.4)}),
              dict(curve="SRL", segment=[0.5, 1.0], metrics={"strength": dict(residual=-0.05)})]
    got = rf.error_at(checks, pts, [0.05, 0.5, 2.0, 0.005, 0.1 * np.exp(rf.NEAR / 2)], "strength")
    np.testing.assert_allclose(got, [0.05, 0.4, 0.0, 0.0, 0.0])  # the last: within NEAR of the measured point at KL 0.1
    np.testing.assert_array_equal(rf.error_at(checks, pts, [0.05], "tpr_1e-4"), [0.0])  # no check on that metric
