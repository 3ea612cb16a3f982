"""tab_null_fpr: every detector of Table exp_performance, UW's keyed-order tests included, on its own
fresh nulls (a synthetic preset) or on one shared sample (a real LM); counts reused on a rerun."""

import pytest

from paper_figs import criteria as cr
from paper_figs import tab_null_fpr as tn


def test_detectors_cover_uw_in_their_own_group():
    dets = tn.detectors()
    assert [a for _, a, _ in dets][-2:] == ["uw-delta", "uw-gamma"]
    assert [tn.group(a) for _, a, _ in dets] == ["exact"] * 9 + ["uw"] * 2


def test_synthetic_nulls_per_detector_and_reuse():
    """news: 6 nulls x 12 tokens per exact detector, 3 per UW detector, each under its own seed; a
    planted previous count for one detector is taken as is (a rerun adds only what is missing)."""
    name = tn.detectors()[0][0]
    planted = {"0.01": 5, "0.001": 4, "0.0001": 3}  # impossible for 6 honest nulls at 1e-4: shows it was not recomputed
    dets = tn.null_counts("news", 6, 12, 3, {("news", name, 10_000, 6, 12): planted}, log=lambda s: None)
    assert [d["n"] for d in dets] == [6] * 9 + [3] * 2 and [d["seed"] for d in dets] == list(range(10_000, 10_011))
    assert dets[0]["rejections"] == planted and not any(d["shared"] for d in dets)
    assert all(0 <= d["rejections"]["0.0001"] <= d["rejections"]["0.01"] <= d["n"] for d in dets[1:])


def test_real_lm_scores_one_shared_sample():
    """A real LM (the random test Llama): one null sample of n texts, scored by all eleven detectors
    (UW with the model's probabilities); the family test counts each detector once, Bonferroni over 11."""
    pytest.importorskip("torch")
    dets = tn.null_counts("random-llama", 4, 6, 99, log=lambda s: None)
    assert len(dets) == 11 and all(d["shared"] and d["n"] == 4 and d["seed"] == 10_000 for d in dets)
    t = tn._tests(dets)["0.01"]
    assert t["tests"] == 11 and t["shared"] and t["T"] == 6
    assert t["p_adjusted"] == pytest.approx(min(1.0, 11 * min(cr.binom_sf(d["rejections"]["0.01"], 4, 0.01) for d in dets)))
    assert t["detectable"] > 0.1 and cr.fpr_kept(t) in (cr.NA, cr.REFUTED)  # 4 nulls cannot vouch for 1e-2
