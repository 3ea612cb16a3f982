"""The leaderboard (paper_figs.tab_leaderboard): its configurations, its interpolation at the KL levels against hand
computations, its bootstrap intervals and a quick run end to end."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from paper_figs import tab_leaderboard as lb
from sims.watermarks import registry


def test_every_numba_algorithm_is_on_the_board():
    algos = {a for a, _ in lb.configs()}
    assert algos == {a for a in registry.names() if "numba" in registry.get(a).backends}
    assert lb.configs()[0] == ("none", {})
    srl = [p["delta"] for a, p in lb.configs() if a == "srl"]
    assert srl == list(lb.STRENGTH["srl"][1])


def _arrays(kl, log10_p, log_ppl):
    n = len(log10_p)
    return dict(kl=np.full(n, kl), log10_p=np.asarray(log10_p, float), log_ppl=np.full(n, log_ppl))


def test_values_at_levels_are_interpolated_in_log_kl():
    """Two points at KL 0.05 and 0.2: at KL 0.1 (log-midpoint) every metric is the mean of the two; the median
    log10 p of 5 texts is their third smallest; TPR at 1e-6 counts log10 p <= -6; perplexity is exp(mean log-ppl)."""
    pts = [("none", {}, _arrays(0.0, [0.0] * 5, 1.0)),
           ("srl", {"delta": 1.0}, _arrays(0.05, [-1, -2, -5, -7, -8], 2.0)),
           ("srl", {"delta": 2.0}, _arrays(0.2, [-5, -6, -7, -9, -10], 3.0))]
    rows = {r["algo"]: r for r in lb.board(pts, B=50, seed=1)}
    assert rows["none"]["perplexity"]["value"] == pytest.approx(math.e)
    srl = rows["srl"]
    assert srl["param"] == "delta" and srl["values"] == [1.0, 2.0] and srl["kl_range"] == pytest.approx([0.05, 0.2])
    at = {m: [c["value"] for c in srl[m]] for m in lb.METRICS}
    assert at["tpr_1e-6"] == pytest.approx([0.4, 0.6, 0.8])
    assert at["median_log10_p"] == pytest.approx([-5.0, -6.0, -7.0])
    assert at["perplexity"] == pytest.approx([math.exp(2), (math.exp(2) + math.exp(3)) / 2, math.exp(3)])
    for m in lb.METRICS:
        for c in srl[m]:
            assert c["ci"][0] <= c["value"] + 1e-12 and c["value"] <= c["ci"][1] + 1e-12


def test_levels_outside_a_curve_are_out_of_range():
    pts = [("none", {}, _arrays(0.0, [0.0] * 4, 1.0)), ("its", {}, _arrays(2.5, [-9] * 4, 2.0)),
           ("srl", {"delta": 1.0}, _arrays(0.07, [-1] * 4, 2.0)), ("srl", {"delta": 2.0}, _arrays(0.15, [-2] * 4, 2.0))]
    rows = {r["algo"]: r for r in lb.board(pts, B=20, seed=0)}
    assert [c["value"] is None for c in rows["its"]["tpr_1e-6"]] == [True, True, True]
    assert [c["value"] is None for c in rows["srl"]["tpr_1e-6"]] == [True, False, True]
    assert "out of range" in lb.table(dict(per_lm={"x": lb.board(pts, B=20)}, levels=list(lb.LEVELS), n=4, T=1, seed=0,
                                                bootstrap=20, confidence=0.95))


def test_bootstrap_interval_matches_an_independent_percentile():
    """One curve of two points whose KL does not vary across texts: the interval of the TPR at KL 0.1 equals the
    percentile interval of the mean of the two points' resampled TPRs, computed here from the same resampled counts."""
    from paper_figs import _matched as mt

    rng = np.random.default_rng(3)
    a, b = rng.choice([-7.0, -1.0], 40), rng.choice([-7.0, -1.0], 40)
    pts = [("srl", {"delta": 1.0}, _arrays(0.05, a, 1.0)), ("srl", {"delta": 2.0}, _arrays(0.2, b, 1.0))]
    cell = lb.board(pts, B=200, seed=5)[0]["tpr_1e-6"][1]
    w = mt.bootstrap_weights(40, 200, 5)
    rep = 0.5 * (w @ (a <= -6) + w @ (b <= -6)) / w.sum(axis=1)
    assert cell["ci"] == pytest.approx([np.quantile(rep, 0.025), np.quantile(rep, 0.975)])


def test_quick_run_writes_the_board(tmp_path):
    files = lb.main(tmp_path, True, ["tiny"], n=8, T=12)
    summary = json.loads((tmp_path / "tab_leaderboard.json").read_text())
    assert [f.name for f in files] == ["tab_leaderboard.json", "tab_leaderboard.md"]
    assert summary["n"] == 8 and summary["T"] == 12 and list(summary["per_lm"]) == ["tiny"]
    assert {r["algo"] for r in summary["per_lm"]["tiny"]} == {a for a, _ in lb.configs()}
    with pytest.raises(ValueError, match="lm must be a synthetic LM"):
        lb.main(tmp_path, True, ["random-llama"])


def test_a_row_does_not_depend_on_the_other_algorithms(tmp_path):
    """Recomputing one algorithm's rows (``algos``) gives the board a full run gives: rows are independent."""
    full = tmp_path / "full"
    part = tmp_path / "part"
    full.mkdir(), part.mkdir()
    lb.main(full, True, ["tiny"], n=6, T=10)
    board = json.loads((full / "tab_leaderboard.json").read_text())
    stale = json.loads(json.dumps(board))
    for r in stale["per_lm"]["tiny"]:
        if r["algo"] == "srl":
            r["tpr_1e-6"] = [dict(kl=c["kl"], value=None) for c in r["tpr_1e-6"]]
    (part / "tab_leaderboard.json").write_text(json.dumps(stale))
    lb.main(part, True, ["tiny"], n=6, T=10, algos=["srl"])
    assert json.loads((part / "tab_leaderboard.json").read_text()) == board
    with pytest.raises(ValueError, match="algos needs a board of the same LMs"):
        lb.main(part, True, ["tiny"], n=7, T=10, algos=["srl"])
