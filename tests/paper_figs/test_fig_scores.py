"""fig_scores (issue 31) runs every score the registry lists for its algorithms, and its own
prefix tests agree with the registered detector on the whole text; the committed table has a row
for every registered score in every setting it reports."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

from paper_figs import fig_scores
from sims.detect.families import score_families
from sims.detect.families.score_families import score_generation
from sims.detect.stats.lr_scores import lr_token_inputs
from sims.lm.synthetic import open_synthetic
from sims.watermarks.generate import generate_synthetic

RESULTS = pathlib.Path(__file__).resolve().parents[2] / "docs" / "results" / "fig_scores.json"


@pytest.fixture(scope="module")
def small():
    return open_synthetic("news", vocab_size=500)


def _levels(log10_p: np.ndarray) -> tuple[float, ...]:
    """Levels between every two consecutive distinct p-values (at least 0.01 decades apart): k of the texts reject at the k-th."""
    lp = np.sort(log10_p)
    return tuple(10.0 ** (0.5 * (lo + hi)) for lo, hi in zip(lp[:-1], lp[1:]) if hi - lo > 0.01)


@pytest.mark.parametrize("algo", list(fig_scores.ALGOS))
def test_every_registered_score_agrees_with_its_detector(algo, small):
    """For each score of ``algo`` (registry order), the whole-text column of fig_scores' exact test
    rejects exactly the texts whose registered p-value is at or below the level, at a level between
    every two consecutive p-values (so the test's ordering of the texts and its threshold are both checked)."""
    names = fig_scores.scores(algo)
    assert names and score_families.get_score(names[0]).default
    n, T = 12, (20 if algo == "ems" else 60)
    gen = generate_synthetic(small, algo, n=n, T=T, seed=3, key=fig_scores.KEY, **fig_scores.ALGOS[algo])
    inputs = [lr_token_inputs(gen, small, fig_scores.KEY, gen.meta["gamma"], i) for i in range(n)] if "lr" in names else None
    lengths = [T // 2, T]
    for name in names:
        want = score_generation(gen, name, small, key=fig_scores.KEY).log10_p
        levels = _levels(want)
        assert len(levels) >= n // 2, (name, want)
        rej = fig_scores._prefix_rejects(name, gen, inputs, lengths, levels, small)
        for a in levels:
            assert rej[a].shape == (n, 2)
            assert np.array_equal(rej[a][:, -1], want <= np.log10(a)), (name, a, want)


def test_scores_left_out_are_registered_and_few():
    """ELSEWHERE names registered scores only (a stale entry fails), and leaves every algorithm its default score."""
    assert set(fig_scores.ELSEWHERE) <= set(score_families.score_names())
    for algo in fig_scores.ALGOS:
        assert set(score_families.score_names(algo)) - set(fig_scores.scores(algo)) <= set(fig_scores.ELSEWHERE)
        assert score_families.get_score(fig_scores.scores(algo)[0]).default


def test_committed_table_has_every_registered_score():
    """docs/results/fig_scores.json: each (lm, algo, attack) setting has one row per registered score of the
    algorithm but those the summary lists as missing for that LM (drawn before the score joined the figure; never the
    default), the default flagged, and its sample size and TPR intervals recorded."""
    doc = json.loads(RESULTS.read_text())
    assert not doc["quick"]
    settings = {}
    for r in doc["rows"]:
        settings.setdefault((r["lm"], r["algo"], r["attack_label"]), []).append(r)
    assert {lm for lm, _, _ in settings} >= {"news", "smollm2-fit"}
    assert len(settings) == len({lm for lm, _, _ in settings}) * len(fig_scores.ALGOS) * len(fig_scores.ATTACKS)
    for (lm, algo, attack), rows in settings.items():
        missing = doc["missing"].get(f"{lm}/{algo}", [])
        assert [r["score"] for r in rows] == [s for s in fig_scores.scores(algo) if s not in missing], (lm, algo, attack)
        assert not any(score_families.get_score(s).default for s in missing)
        assert [r["default"] for r in rows] == [score_families.get_score(r["score"]).default for r in rows]
        for r in rows:
            assert r["n"] >= 32 and r["n"] == rows[0]["n"]
            for lv in ("0.0001", "1e-06"):
                lo, hi = r[f"tpr_at_{lv}_ci99"]
                assert lo <= r[f"tpr_at_{lv}"] <= hi


def test_missing_scores_are_listed_and_noted(tmp_path):
    """An LM whose rows lack a score of the figure (drawn before it joined) is listed under ``missing`` and named in
    the table's notes; complete rows list nothing."""
    doc = json.loads(RESULTS.read_text())
    rows = [r for r in doc["rows"] if not (r["lm"] == "news" and r["algo"] == "srl" and r["score"] == "ewd")]
    assert fig_scores.missing_scores(doc["rows"]) == doc["missing"]
    assert fig_scores.missing_scores(rows) == {**doc["missing"], "news/srl": ["ewd"]}
    fig_scores.render(tmp_path, rows, False)
    assert "No `ewd` rows for news srl" in (tmp_path / "fig_scores.md").read_text()


def test_render_rewrites_the_table_from_the_saved_rows(tmp_path):
    """``render`` of the committed rows writes the same JSON back, and a table with one line per row whose
    TPR cells carry the row's 99 % interval."""
    doc = json.loads(RESULTS.read_text())
    fig_scores.render(tmp_path, doc["rows"], doc["quick"])
    assert json.loads((tmp_path / "fig_scores.json").read_text()) == doc
    lines = [ln for ln in (tmp_path / "fig_scores.md").read_text().splitlines() if ln.startswith("| ") and "---" not in ln][1:]
    assert len(lines) == len(doc["rows"])
    for ln, r in zip(lines, doc["rows"]):
        cells = [c.strip() for c in ln.strip("|").split("|")]
        assert cells[:5] == [r["lm"], r["algo"], r["attack_label"], f"{r['n']} x {r['T']}", r["score"] + (" (default)" if r["default"] else "")]
        lo, hi = r["tpr_at_1e-06_ci99"]
        assert cells[6] == f"{r['tpr_at_1e-06']:.3g} [{lo:.2f}, {hi:.2f}]"


def test_only_some_scores_are_drawn_and_the_other_rows_kept(tmp_path):
    """``main(..., only=...)`` draws just those scores (the green count needs its token inputs without ``lr``), lists
    the others as missing, and a later run of another score keeps the first one's rows unchanged."""
    fig_scores.main(tmp_path, True, ["news"], only=["green"])
    first = json.loads((tmp_path / "fig_scores.json").read_text())
    assert {r["score"] for r in first["rows"]} == {"green"} and len(first["rows"]) == 2 * len(fig_scores.ATTACKS)
    assert first["missing"]["news/srl"] == [s for s in fig_scores.scores("srl") if s != "green"]
    fig_scores.main(tmp_path, True, ["news"], only=["ewd"])
    second = json.loads((tmp_path / "fig_scores.json").read_text())
    assert [r for r in second["rows"] if r["score"] == "green"] == first["rows"]
    assert [r["score"] for r in second["rows"]][:2] == ["green", "ewd"]
    assert second["missing"]["news/srl"] == [s for s in fig_scores.scores("srl") if s not in ("green", "ewd")]
