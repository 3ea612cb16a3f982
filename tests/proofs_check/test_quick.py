"""``python -m proofs_check --quick`` passes every check and writes its reports; the runner
turns a crashing or failing module into a failed row and a non-zero exit status."""

import json

import pytest

import proofs_check.check_negative_dlop as negative_dlop
from proofs_check.__main__ import main, modules, render
from proofs_check._check import Check


def test_quick_certificate(tmp_path):
    assert main(["--quick", "--out", str(tmp_path)]) == 0
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["quick"] is True and set(report["module_seconds"]) == set(modules())
    assert report["checks"] and all(c["passed"] for c in report["checks"])
    results = {c["result"] for c in report["checks"]}
    for label in ("prop:KL_decompose", "prop:free_k, prop:free_t", "lemma:Lagrangian_dual", "thm:dualGA_performance_iid",
                  "prop:info_lower_bound", "prop:negative_DLoP", "prop:KL_cvx / eg:ems", "certainty equivalent",
                  "prop:type_I&II", "prop:adv_robust", "AutoCov (Z_T)"):
        assert label in results
    md = (tmp_path / "report.md").read_text()
    assert "| result | quantity | measured | claimed | tolerance | pass |" in md
    assert "## Findings" in md and "three_brick_p" in md


def test_crashing_module_fails_the_run(tmp_path, monkeypatch):
    def boom(quick, rng):
        raise RuntimeError("simulated breakage")

    monkeypatch.setattr(negative_dlop, "run", boom)
    assert main(["--only", "check_negative_dlop", "--out", str(tmp_path)]) == 1
    rows = json.loads((tmp_path / "report.json").read_text())["checks"]
    assert len(rows) == 1 and not rows[0]["passed"] and "RuntimeError" in rows[0]["quantity"]
    assert "## Failed checks" in (tmp_path / "report.md").read_text()


def test_failed_check_sets_exit_status(tmp_path, monkeypatch):
    monkeypatch.setattr(negative_dlop, "run", lambda quick, rng: [Check("x", "y", 1.0, "0", "exact", False, "j")])
    assert main(["--only", "check_negative_dlop", "--out", str(tmp_path)]) == 1


def test_render_escapes_pipes():
    row = Check("r", "max |a - b|", 0.5, "0", "1e-12", True, "j").as_dict()
    line = [ln for ln in render([row], True, 0, 1.0).splitlines() if ln.startswith("| r |")][0]
    assert "max \\|a - b\\|" in line


def test_unknown_module_is_rejected():
    with pytest.raises(SystemExit):
        main(["--only", "check_nonexistent"])


def test_info_lower_bound_fails_when_theory_disagrees_with_the_direct_sum(monkeypatch):
    """Every row of check_info_lower_bound passes, and halving the TV term of
    theory.optimal_test_error fails the row that compares it with the direct sum."""
    import numpy as np

    import proofs_check.check_info_lower_bound as ilb
    import theory

    assert all(c.passed for c in ilb.run(True, np.random.default_rng(0)))
    monkeypatch.setattr(theory, "optimal_test_error", lambda q, p: float(1.0 - 0.25 * np.abs(q - p).sum()))
    failed = [c.quantity for c in ilb.run(True, np.random.default_rng(0)) if not c.passed]
    assert failed == [next(q for q in failed if "optimal_test_error" in q)]
