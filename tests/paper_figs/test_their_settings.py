"""tab_their_settings: every published setting maps onto parameters the registry accepts (and a score its
algorithm's texts take), a quick run on the tiny LM writes every row, the decision rules compute what they say
(the z of the exact p-value against scipy.stats.norm, each rule's statistic and strictness on hand-made scores),
and the rows of SWEET, EWD, MorphMark, PF, EXP-edit and GumbelSoft are scored by their own family's statistic."""

import json
import math

import numpy as np
import pytest
from scipy.stats import gamma as gamma_law
from scipy.stats import norm

from paper_figs import tab_their_settings as ts
from sims.detect import families
from sims.detect.families import score_families
from sims.detect.stats import ewd_scores
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
    assert s.rule is None or (s.rule.statistic in ts.STATISTICS and s.rule.op in (">", ">=", "<", "<="))
    assert s.reported is None or all(isinstance(v, float) and v >= 0 for v in s.reported.values())
    # a score row names a registered score that applies to its algorithm's texts (get_score refuses any other)
    assert s.score is None or score_families.get_score(s.score, s.algo).name == s.score


# Each published setting of the algorithms added after the table: its algorithm (or score), its parameters under the
# registry's names, the family whose statistic its rule reads, and the rule.  A renamed parameter, a wrong family or
# a wrong rule fails here as well as in the registry check above.
NEW_ROWS = {
    "sweet": ("sweet", None, dict(gamma=0.5, delta=2.0, alpha=0.9, h=1), "entropy_gated", ("z", ">", 4.0)),
    "ewd": ("srl", "ewd", dict(gamma=0.5, delta=2.0, h=1), "redgreen", ("z", ">", 4.0)),
    "morphmark": ("morphmark", None, dict(gamma=0.5, morph_kappa=1.3, morph_p0=0.15, h=1), "redgreen", ("z", ">", 2.0)),
    "pf": ("pf", None, dict(tau=0.9, h=8), "ems", ("pf-gamma", "<", 0.01)),
    "exp-edit": ("exp", "exp-edit", dict(tau=1.0, exp_n=256, h=1), "ems_position", ("p", "<", 0.2)),
    "gumbelsoft": ("gumbelsoft", None, dict(gs_tau=0.3, h=3), "ems", None),
}


def _new_row(name):
    algo, score, _, _, _ = NEW_ROWS[name]
    (s,) = [s for s in ts.SETTINGS if s.algo == algo and s.score == score and (algo != "srl" or score)]
    return s


@pytest.mark.parametrize("name", NEW_ROWS)
def test_new_rows_map_their_parameters_and_rule(name):
    """The row of each algorithm added after the table runs its published values under the registry's parameter
    names, is detected by its own family (SWEET: the entropy-gated one), and decides by its published rule."""
    algo, score, params, family, rule = NEW_ROWS[name]
    s = _new_row(name)
    assert s.params == params and set(params) - {"h"} <= set(registry.get(algo).params) | {"gamma"}
    assert families.of(algo).name == family and registry.get(algo).family == family
    assert (None if s.rule is None else (s.rule.statistic, s.rule.op, s.rule.threshold)) == rule
    assert s.source and s.theirs and s.note


def test_sweet_row_scores_the_gated_positions_only():
    """SWEET's z is over the positions whose entropy (nats, the generator's record of H(p_t)) exceeds alpha = 0.9:
    n is the gated count, not the text length, and z = (k - gamma n) / sqrt(n gamma (1 - gamma)) on it."""
    s = _new_row("sweet")
    runs = ts._Runs("lfqa", 6, 1000)  # tiny's entropies all exceed 0.9 nats; lfqa's (V = 1000) do not always
    gen = runs.gen(s.algo, 40, **s.params)
    res = runs.score(gen, gen, s.dedup, s.score)
    gated = (gen.entropy > s.params["alpha"]).sum(axis=1)
    assert 0 < gated.min() and (gated < 40).any()  # the gate both keeps and drops positions here
    assert res.n_scored.tolist() == gated.tolist()
    g = s.params["gamma"]
    assert res.z == pytest.approx((res.score - g * gated) / np.sqrt(gated * g * (1 - g)))


def test_ewd_row_scores_the_entropy_weighted_z():
    """The EWD row's rule reads EWD's weighted z (sims.detect.stats.ewd_scores.score_ewd at the generation's boost),
    on the texts of the MarkLLM KGW row (one draw), not the plain green count's z."""
    s, kgw = _new_row("ewd"), next(k for k in ts.SETTINGS if k.name == "MarkLLM KGW")
    assert (s.algo, s.params, s.T) == (kgw.algo, kgw.params, kgw.T)
    runs = ts._Runs("tiny", 6, None)
    gen = runs.gen(s.algo, 40, **s.params)
    res = runs.score(gen, gen, s.dedup, s.score)
    want = ewd_scores.score_ewd(gen, runs.lm, key=gen.meta["key"], gamma=s.params["gamma"], dedup=s.dedup, algo=s.algo, delta=2.0)
    assert np.array_equal(res.z, want.z, equal_nan=True) and np.array_equal(res.log10_p, want.log10_p)
    assert not np.allclose(res.z, runs.score(gen, gen, s.dedup).z)


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
    # PF's p-value: the Gamma(n - h, 1) tail of the EMS sum (their threshold's shape); n <= h never fires
    pf = _Gen(h=8)
    e = _result(score=[120.0, 95.0, 50.0], n=[100, 100, 8], z=[0.0, 0.0, 0.0], log10_p=[0.0, 0.0, 0.0])
    assert ts.their_statistic(ts.Rule("pf-gamma", "<", 0.01, ""), e, pf) == pytest.approx([gamma_law.sf(120.0, 92), gamma_law.sf(95.0, 92), 1.0])
    assert ts.decide(ts.Rule("pf-gamma", "<", 0.01, ""), e, pf).tolist() == [True, False, False]
    # SynthID's mean g-value: the g-value sum over m layers and n tokens
    g = _result(score=[30 * 100 * 0.53, 30 * 100 * 0.52], n=[100, 100], z=[0.0, 0.0], log10_p=[0.0, 0.0])
    assert ts.their_statistic(ts.Rule("synthid-mean", ">", 0.52, ""), g, wm) == pytest.approx([0.53, 0.52])
    assert ts.decide(ts.Rule("synthid-mean", ">", 0.52, ""), g, wm).tolist() == [True, False]


def test_quick_run_on_tiny_writes_every_row(tmp_path):
    """Every setting gets a row labelled as theirs on our LM, with rates inside their Clopper-Pearson intervals and
    their numbers beside ours; the markdown names every setting and a score row's score."""
    files = ts.main(tmp_path, True, ["tiny"], n=6, T=24)
    assert sorted(f.name for f in files) == ["tab_their_settings.json", "tab_their_settings.md"]
    d = json.loads((tmp_path / "tab_their_settings.json").read_text())
    assert [r["setting"] for r in d["rows"]] == [s.name for s in ts.SETTINGS]
    for r, s in zip(d["rows"], ts.SETTINGS):
        assert r["label"] == ts.LABEL and r["reported"] == s.reported and r["params"] == s.params and r["score"] == s.score
        (o,) = r["ours"]
        assert o["lm"] == "tiny" and o["n"] == 6 and o["T"] == 24
        rates = [o["tpr_exact_z4"], o["tpr_exact_1e6"], o["fpr_exact_z4"]] + ([o["tpr_their_rule"], o["fpr_their_rule"]] if s.rule else [])
        assert all(x["n"] == 6 and x["ci"][0] <= x["rate"] <= x["ci"][1] for x in rates)
        assert ("tpr_their_rule" in o) == (s.rule is not None)
        assert o["kl_per_token"]["mean"] >= 0 and o["perplexity"]["mean"] >= 1 and o["null_perplexity"]["mean"] >= 1
    md = (tmp_path / "tab_their_settings.md").read_text()
    assert all(s.name in md for s in ts.SETTINGS) and all(f"score {s.score}" in md for s in ts.SETTINGS if s.score)
    assert "Pending" not in md
    assert md.count("| tiny, 6 x 24 |") == len(ts.SETTINGS)
