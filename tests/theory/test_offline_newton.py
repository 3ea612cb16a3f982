"""theory/offline.py: the safeguarded Newton step on each branch, a solve that must double its bracket
past 1, and the feasibility edge to the ulp (mutants of make mutate)."""

import math
import re

import numpy as np
import pytest

import theory
from theory.offline import rtsafe_step


def test_rtsafe_step_branches():
    # f > 0: the root is below lam, hi moves down; the Newton step 2 - 0.5/1 = 1.5 lies in (0, 2)
    assert rtsafe_step(2.0, 0.0, 4.0, 0.5, 1.0, 1e-12) == (1.5, 0.0, 2.0, False)
    # f < 0: lo moves up; Newton 2 + 3 = 5 leaves (2, 4): bisect to 3
    assert rtsafe_step(2.0, 0.0, 4.0, -3.0, 1.0, 1e-12) == (3.0, 2.0, 4.0, False)
    # zero slope: bisect
    assert rtsafe_step(1.0, 0.0, 4.0, -0.1, 0.0, 1e-12) == (2.5, 1.0, 4.0, False)
    # f == 0: converged at lam
    assert rtsafe_step(1.25, 0.0, 4.0, 0.0, 1.0, 1e-12) == (1.25, 1.25, 4.0, True)
    # converged when the step is within tol * max(1, lam)
    assert rtsafe_step(1.0, 0.0, 4.0, 1e-13, 1.0, 1e-12)[3]
    assert not rtsafe_step(1.0, 0.0, 4.0, 1e-11, 1.0, 1e-12)[3]
    # a bracket within tol: the next point lies inside it, so the step is within tol too
    assert rtsafe_step(1.0, 1.0 - 5e-13, 1.0 + 5e-13, 1e-3, 0.0, 1e-12)[3]


def test_a_solve_past_the_first_bracket_is_the_certainty_equivalent():
    # constant G: mean DG(lam) = Delta at lam = delta_star; Delta near 1 - G puts lam ~ 14 (bracket doubled to 16)
    G, Delta = 0.5, 0.5 - 1e-6
    r = theory.offline_opt(np.full(8, G), Delta)
    # conditioning: d DG / d lam = q (1 - q) ~ 1e-6 here, so one ulp of Delta moves lam by ~5e-11
    assert r.delta == pytest.approx(theory.delta_star(Delta, G), rel=1e-10)
    assert r.delta > 8.0 and r.dg == pytest.approx(Delta, rel=1e-14)
    assert r.iterations > 4  # four doublings, then Newton


def test_feasibility_edge_to_the_ulp():
    G = np.array([0.0, 0.2, 0.5, 1.0])
    max_dg = float(np.mean(np.where(G > 0.0, 1.0 - G, 0.0)))
    hard = theory.offline_opt(G, max_dg)
    assert hard.delta == math.inf and hard.iterations == 0 and hard.feasible
    with pytest.raises(ValueError, match="Delta must be at most"):
        theory.offline_opt(G, math.nextafter(max_dg, 1.0))
    soft = theory.offline_opt(G, math.nextafter(max_dg, 0.0))
    assert math.isfinite(soft.delta) and soft.delta > 20.0
    r = theory.offline_opt(G, 0.2)
    assert r.duality_gap == pytest.approx(r.value - r.dual_value, abs=0.0) and abs(r.duality_gap) < 1e-12


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(Delta=math.inf), "Delta must be in (0, inf); got inf"),
        (dict(Delta=-0.1), "Delta must be in (0, inf); got -0.1"),
        (dict(on_infeasible="warn"), "on_infeasible must be 'raise' or 'report'; got 'warn'"),
        (dict(G=[[0.5, 0.5]]), "G must be a non-empty 1-d array; got shape (1, 2)"),
    ],
)
def test_bad_input_ends(kwargs, message):
    args = dict(G=[0.3, 0.6], Delta=0.1) | kwargs
    with pytest.raises(ValueError, match=re.escape(message)):
        theory.offline_opt(**args)
