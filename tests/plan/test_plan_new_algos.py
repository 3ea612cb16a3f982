"""The planner's answers for Unigram, MorphMark, DiPmark and SWEET: each algorithm's own step (checked against its
registry reference step), SWEET's gate, the refusals, and the planned power against a Monte Carlo of the real
generator and detector (seed 11, key 1234, N = 300 texts, fpr 1e-3, on the news preset)."""

import math

import numpy as np
import pytest

import sims
from sims import plan as P
from sims.detect.families import detectors
from sims.watermarks import registry

MC_N, MC_SEED, MC_KEY, FPR = 300, 11, 1234, 1e-3
#: |planned - Monte Carlo power|: 3 binomial standard errors of N = 300 at p = 0.5 (0.087) would do alone; the
#: planner's model (an unwatermarked LM sample under one key, positions independent) adds its own bias (measured:
#: unigram +0.05, morphmark -0.01, dipmark +0.02, sweet -0.04 at the lengths below)
TOL = 0.1
CASES = [("unigram", {}, 21), ("morphmark", {}, 21), ("dipmark", {}, 21), ("sweet", {"alpha": 2.6}, 29)]


def test_the_planners_copies_are_the_records():
    for a in P.PLAN_ALGOS:
        assert registry.context_width(a, 1) == P.PLAN_H.get(a, 1), a
        assert registry.fixed_green_kind(a, "bernoulli") == P.PLAN_GREEN_KIND.get(a, "bernoulli"), a
        assert set(P.EXTRA_PARAMS.get(a, ())) <= set(registry.get(a).params), a
    assert set(P.NOT_PLANNED) <= set(registry.names())
    # Unigram plans at its own h = 0 whatever h is asked (one fixed list)
    assert P.plan("unigram", lm="news", fpr=FPR, T=21, h=3)["power_at_T"] == P.plan("unigram", lm="news", fpr=FPR, T=21)["power_at_T"]


@pytest.mark.parametrize("algo, params", [("unigram", dict(delta=1.5)), ("sweet", dict(delta=1.5, alpha=0.0)), ("morphmark", dict(morph_kappa=1.3)),
                                          ("morphmark", dict(morph_kappa=0.8, morph_p0=0.3)), ("dipmark", dict(dip_alpha=0.45)),
                                          ("dipmark", dict(dip_alpha=0.2)), ("srl", dict(delta=2.0))])
def test_green_step_is_the_reference_steps_green_mass(algo, params):
    """green_step(G) equals the green mass of the registry's reference step on random distributions (Dirichlet, V = 50),
    the green list being the one the step boosts (SWEET with alpha = 0 boosts everywhere)."""
    from sims.core import prf

    info = registry.resolve_params(algo, **params)
    rec = registry.get(algo)
    rng = np.random.default_rng(0)
    V, key = 50, 99
    for i in range(40):
        p = rng.dirichlet(np.full(V, 0.3))
        window = np.array([i], dtype=np.int64)[: registry.context_width(algo, 1)]
        kind = registry.fixed_green_kind(algo, "bernoulli")  # DiPmark: the partition list, its permutation's tail
        green = prf.green_mask(prf.context_hash(key, window), V, info["gamma"], kind=kind)
        q, _ = rec.reference(p, window, 0, key, (info.get("lam1") or 0.0, False), info)
        G = np.array([[p[green].sum()]])
        assert P.green_step(algo, info, G)[0, 0] == pytest.approx(q[green].sum(), abs=1e-9), (algo, i)


@pytest.mark.parametrize("algo, params, T", CASES)
def test_planned_power_agrees_with_a_monte_carlo_of_the_generator_and_detector(algo, params, T):
    lm = sims.get_lm("news")
    got = P.plan(algo, lm="news", fpr=FPR, power=0.5, T=T, **params)
    gen = sims.generate(lm, algo, n=MC_N, T=T, seed=MC_SEED, key=MC_KEY, **params)
    mc = float((detectors.score(gen, lm).log10_p <= math.log10(FPR)).mean())
    assert abs(got["power_at_T"] - mc) < TOL, (algo, got["power_at_T"], mc)
    assert got["tokens_needed"] is not None and abs(got["tokens_needed"] - T) <= 6  # T is about where the power crosses 0.5


def test_sweet_plans_on_its_gated_positions():
    """SWEET's effective length is its gated positions: a higher alpha gates fewer, so more tokens are needed; alpha above
    every entropy of the sample gates none (power 0); alpha 0 gates all and is SRL's plan with the same delta and gamma."""
    a = P.plan("sweet", lm="news", fpr=FPR, power=0.9, alpha=2.0)["tokens_needed"]
    b = P.plan("sweet", lm="news", fpr=FPR, power=0.9, alpha=2.6)["tokens_needed"]
    assert a < b
    assert P.plan("sweet", lm="news", fpr=FPR, power=0.9, T=200, alpha=50.0)["power_at_T"] == 0.0
    srl = P.plan("srl", lm="news", fpr=FPR, power=0.9, T=30, delta=2.0, gamma=0.25)
    s0 = P.plan("sweet", lm="news", fpr=FPR, power=0.9, T=30, delta=2.0, gamma=0.25, alpha=0.0)
    assert s0["power_at_T"] == pytest.approx(srl["power_at_T"], abs=1e-12)


def test_the_planner_names_what_it_does_not_plan():
    for algo in ("pf", "gumbelsoft"):
        with pytest.raises(ValueError, match=rf"algo must be one of \(.*'sweet'\); got '{algo}' \(the planner has no model of algo '{algo}'"):
            P.plan(algo, lm="news")
    with pytest.raises(ValueError, match=r"algo must be one of .*; got 'its'$"):
        P.plan("its", lm="news")
    with pytest.raises(ValueError, match="dedup is planned for the green count of"):
        P.plan("sweet", lm="news", dedup=True)
    with pytest.raises(ValueError, match="attack is not planned for algo 'sweet'"):
        P.plan("sweet", lm="news", attack="substitution:0.1")
    with pytest.raises(ValueError, match="alpha is not a parameter of algo 'srl' in the planner"):
        P.plan("srl", lm="news", alpha=1.0)
    with pytest.raises(ValueError, match="score must be one of"):
        P.plan("morphmark", lm="news", score="lr")


def test_cli_plan_takes_the_new_parameters(capsys):
    import json

    from sims.cli.main import main

    assert main(["plan", "--algo", "sweet", "--alpha", "2.6", "--lm", "news", "--fpr", "1e-3", "--power", "0.5", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["tokens_needed"] == P.plan("sweet", lm="news", fpr=FPR, power=0.5, alpha=2.6)["tokens_needed"]
    assert main(["plan", "--algo", "dipmark", "--dip-alpha", "0.3", "--lm", "news", "--json"]) == 0
    assert main(["plan", "--algo", "pf", "--lm", "news"]) == 2
