"""theory/canonical.py: each instance is what its name says, and its optimum is the closed form
(mutants of make mutate: a changed constant must not leave a misnamed or wrong instance)."""

import math

import numpy as np
import pytest

import theory
from theory.canonical import canonical_problems


def by_name():
    return {p.name: p for p in canonical_problems()}


def test_instances_are_what_their_names_say():
    p = by_name()
    assert len(p) == 5
    ce = p["constant G = gamma (certainty equivalent)"]
    assert np.all(ce.G == 0.398) and ce.Delta == 0.3
    assert ce.lam == theory.delta_star(0.3, 0.398) and ce.opt == theory.kl_certainty_equivalent(0.3, 0.398)
    two = p["two-point G in {0.1, 0.9}"]
    assert set(two.G.tolist()) == {0.1, 0.9} and np.mean(two.G == 0.1) == 0.5
    beta = p["Beta(2, 2), T = 1000, seed 0"]
    assert np.array_equal(beta.G, np.random.default_rng(0).beta(2.0, 2.0, 1000))
    low = p["low entropy: G in {0.02, 0.98, 0.5}"]
    assert set(low.G.tolist()) == {0.02, 0.98, 0.5} and low.G.size % 3 == 0
    hard = p["hard red list: Delta = mean(1 - G)"]
    assert hard.G.tolist() == [0.2, 0.5, 0.8] and hard.lam == math.inf
    assert hard.Delta == pytest.approx(0.5, rel=1e-15) and hard.opt == pytest.approx(np.mean(-np.log([0.2, 0.5, 0.8])), rel=1e-15)


@pytest.mark.parametrize("name, lam", [("two-point G in {0.1, 0.9}", 1.5), ("Beta(2, 2), T = 1000, seed 0", 1.0), ("low entropy: G in {0.02, 0.98, 0.5}", 3.0)])
def test_instances_built_from_lambda_have_the_lagrangian_optimum(name, lam):
    p = by_name()[name]
    assert p.lam == lam
    assert p.Delta == pytest.approx(np.mean(theory.dg_step(lam, p.G)), rel=1e-15)
    assert p.opt == pytest.approx(np.mean(theory.kl_step(lam, p.G)), rel=1e-15)
