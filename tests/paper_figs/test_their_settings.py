"""tab_their_settings: every published setting maps onto parameters the registry accepts, a quick run on the
tiny LM writes every row, and the decision rules compute what they say (the z of the exact p-value against
scipy.stats.norm, each rule's statistic and strictness on hand-made scores)."""

import json
import math

import numpy as np
import pytest
from scipy.stats import norm

from paper_figs import tab_their_settings as ts
from sims.detect.stats.scores import DetectResult
from sims.watermarks import registry


@pytest.mark.parametrize("s", ts.SETTINGS, ids=lambda s: s.name)
def test_each_setting_maps_onto_the_registry(s):
    """The row's parameters are the algorithm's own (check_params refuses any other), resolve to the values
    given (no default silently replaces one), and its context width runs as given."""
    params = {k: v for k, v in s.params.items() if k != "h"}
    registry.check_params(s.algo, **params)
    resolved = registry.resolve_params(s.algo, **params)
    assert all(resolved[k] == pytest.approx(v) for k, v in params.items())
    assert registry.context_width(s.algo, s.params["h"]) == s.params["h"]
    assert s.source and s.setup and s.theirs
    assert s.rule is None or (s.rule.statistic in ("z", "p", "dip", "synthid-mean") and s.rule.op in (">", ">=", "<", "<="))
    assert s.reported is None or all(isinstance(v, float) and v >= 0 for v in s.reported.values())


def test_pending_rows_wait_for_their_algorithm():
    """A pending algorithm is skipped while unregistered and asks for its mapping once registered; none of them
    runs already (a registered one belongs in SETTINGS)."""
    algos = [p["algo"] for p in ts.PENDING]
    assert not set(algos) & {s.algo for s in ts.SETTINGS}
    msgs = ts.pending_messages(registered=("srl", "sweet"))
    assert "registered now" in msgs[algos.index("sweet")] and all("skipped" in m for a, m in zip(algos, msgs) if a != "sweet")
    assert all(("registered now" in m) == (a in registry.names()) for a, m in zip(algos, ts.pending_messages()))


def test_exact_z_rule_matches_scipy_norm():
    """z_p >= 4 exactly when p <= norm.sf(4), on both sides of the boundary; z_p = norm.isf(p) where scipy can
    represent p, and finite and decreasing in p far below it."""
    edge = math.log10(norm.sf(4.0))
    lp = np.array([0.0, -1.0, -3.0, edge + 1e-9, edge, edge - 1e-9, -6.0, -12.0, -200.0, -300.0])
    z = ts.exact_z(lp)
    assert ((z >= ts.Z_RULE) == (10.0 ** lp <= norm.sf(4.0))).all()
    assert z[1:] == pytest.approx(norm.isf(10.0 ** lp[1:]), rel=1e-9) and z[0] == -np.inf
    deep = ts.exact_z(np.array([-300.0, -400.0, -1000.0]))
    assert np.isfinite(deep).all() and (np.diff(deep) > 0).all()


def _result(score, n, z, log10_p, short=None):
    n = np.asarray(n)
    return DetectResult(n, np.asarray(score, dtype=float), np.asarray(z, dtype=float), np.asarray(log10_p, dtype=float),
                        np.zeros(n.size, bool) if short is None else np.asarray(short))


class _Gen:
    def __init__(self, **meta):
        self.meta = meta


def test_rules_compute_their_statistic_and_strictness():
    wm = _Gen(gamma=0.5, m=30)
    res = _result(score=[60.0, 55.0, 100.0, 90.0], n=[100, 100, 100, 100], z=[4.0, 4.0 + 1e-9, np.nan, 8.0],
                  log10_p=[-4.0, -3.9, -5.0, -6.0], short=[False, False, False, True])
    # z > 4 is strict; a nan z and a text too short to test (whatever its statistic) never fire
    assert ts.decide(ts.Rule("z", ">", 4.0, ""), res, wm).tolist() == [False, True, False, False]
    assert ts.decide(ts.Rule("z", ">=", 4.0, ""), res, wm).tolist() == [True, True, False, False]
    # p < 1e-4 strict against p <= 1e-4
    assert ts.decide(ts.Rule("p", "<", 1e-4, ""), res, wm).tolist() == [False, False, True, False]
    assert ts.decide(ts.Rule("p", "<=", 1e-4, ""), res, wm).tolist() == [True, False, True, False]
    # DiPmark's Phi = (S - gamma n) / sqrt(n): 1.0, 0.5, 5.0 (not divided by sqrt(gamma (1 - gamma)))
    assert ts.their_statistic(ts.Rule("dip", ">", 1.513, ""), res, wm)[:3] == pytest.approx([1.0, 0.5, 5.0])
    assert ts.decide(ts.Rule("dip", ">", 0.9, ""), res, wm).tolist() == [True, False, True, False]
    # SynthID's mean g-value: the g-value sum over m layers and n tokens
    g = _result(score=[30 * 100 * 0.53, 30 * 100 * 0.52], n=[100, 100], z=[0.0, 0.0], log10_p=[0.0, 0.0])
    assert ts.their_statistic(ts.Rule("synthid-mean", ">", 0.52, ""), g, wm) == pytest.approx([0.53, 0.52])
    assert ts.decide(ts.Rule("synthid-mean", ">", 0.52, ""), g, wm).tolist() == [True, False]


def test_quick_run_on_tiny_writes_every_row(tmp_path):
    """Every setting gets a row labelled as theirs on our LM, with rates inside their Clopper-Pearson intervals and
    their numbers beside ours; the markdown names every setting and every pending one."""
    files = ts.main(tmp_path, True, ["tiny"], n=6, T=24)
    assert sorted(f.name for f in files) == ["tab_their_settings.json", "tab_their_settings.md"]
    d = json.loads((tmp_path / "tab_their_settings.json").read_text())
    assert [r["setting"] for r in d["rows"]] == [s.name for s in ts.SETTINGS]
    for r, s in zip(d["rows"], ts.SETTINGS):
        assert r["label"] == ts.LABEL and r["reported"] == s.reported and r["params"] == s.params
        (o,) = r["ours"]
        assert o["lm"] == "tiny" and o["n"] == 6 and o["T"] == 24
        rates = [o["tpr_exact_z4"], o["tpr_exact_1e6"], o["fpr_exact_z4"]] + ([o["tpr_their_rule"], o["fpr_their_rule"]] if s.rule else [])
        assert all(x["n"] == 6 and x["ci"][0] <= x["rate"] <= x["ci"][1] for x in rates)
        assert ("tpr_their_rule" in o) == (s.rule is not None)
        assert o["kl_per_token"]["mean"] >= 0 and o["perplexity"]["mean"] >= 1 and o["null_perplexity"]["mean"] >= 1
    md = (tmp_path / "tab_their_settings.md").read_text()
    assert all(s.name in md for s in ts.SETTINGS) and all(p["algo"] in md for p in ts.PENDING)
    assert md.count("| tiny, 6 x 24 |") == len(ts.SETTINGS)
