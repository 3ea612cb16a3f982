"""proofs_check.check_power_plan.diagnose_dedup: its realised detections agree between the package's dedup detector
and the count against the critical count of each text's scored tokens, and the planned green count of the scored
tokens matches the realised one on a setting the planner passes (seed 777, 64 texts, 4 standard errors)."""

import math

import pytest

from proofs_check import check_power_plan as C


def test_diagnose_dedup_is_consistent_on_a_passing_setting():
    d = C.diagnose_dedup(0, n=64, seed=777)  # DualGA Delta 0.2 on loopy at 1e-6: T = 147
    assert d["realised"] == d["realised_by_count"]  # sims detect --dedup's p-values vs the count at k*(N_i)
    assert all(0.0 <= d[k] <= 1.0 for k in ("planner", "planner_on_texts", "realised", "planner_on_texts_plain", "realised_plain"))
    assert d["realised_green_scored"] <= d["scored"] <= d["T"]
    # the per-text count's variance is at most N / 4
    assert abs(d["planned_green_scored"] - d["realised_green_scored"]) <= 4 * math.sqrt(d["scored"] / 4 / 64)
    with pytest.raises(ValueError, match="attack 'substitution:0.1'"):
        C.diagnose_dedup(1, n=2)
