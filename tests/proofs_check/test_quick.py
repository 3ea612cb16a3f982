"""``python -m proofs_check --quick`` passes every check and writes its reports."""

import json

from proofs_check.__main__ import main


def test_quick_certificate(tmp_path):
    assert main(["--quick", "--out", str(tmp_path)]) == 0
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["checks"] and all(c["passed"] for c in report["checks"])
    md = (tmp_path / "report.md").read_text()
    assert "| result | quantity | measured | claimed | tolerance | pass |" in md
