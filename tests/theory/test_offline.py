"""Offline optimum OPT(Delta) of (opt:nofree): exact dual solver vs CVXPY,
strong duality and complementary slackness (Lemma Lagrangian_dual (c),
Props. free_k and free_t)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import theory
from tests.theory.strategies import feasible_problems
from theory.canonical import canonical_problems
from theory.offline_cvxpy import general_opt_cvxpy

AGREE_REL, AGREE_ABS = 1e-6, 1e-10  # CLARABEL gap tolerance 1e-10..1e-12 (absolute, on the sum)
GAP_TOL = 1e-8  # dual solver: lambda to 1e-15 relative, so the gap is rounding only
# CLARABEL's dual multiplier of the DG constraint is less accurate than its objective:
# ~1e-8 typically, but up to 2e-5 relative on single-step problems with G_1 near 1
LAM_REL, LAM_ABS = 1e-4, 3e-6
BOOST_SPREAD = 1e-3  # CVXPY boosts: logit of interior-point x_t; seen up to 2e-4 when CLARABEL stops at reduced accuracy


@given(feasible_problems())
def test_dual_solver_strong_duality_and_slackness(problem):
    G, Delta = problem
    r = theory.offline_opt(G, Delta)
    assert r.feasible and r.lam == r.delta > 0
    assert abs(r.duality_gap) < GAP_TOL
    # complementary slackness: lambda* (mean DG - Delta) = 0 with lambda* > 0, so the constraint binds
    assert r.lam * abs(r.dg - Delta) < 1e-12
    # the value is the mean per-token KL at the common boost
    assert r.value == pytest.approx(np.mean(theory.kl_step(r.delta, G)), rel=1e-12)


@settings(max_examples=12)
@given(feasible_problems(max_T=2000, lo=1e-3))  # CLARABEL's exp cone degrades as G_t -> 0 or 1
def test_dual_and_cvxpy_agree(problem):
    G, Delta = problem
    d = theory.offline_opt(G, Delta, method="dual")
    c = theory.offline_opt(G, Delta, method="cvxpy")
    assert c.value == pytest.approx(d.value, rel=AGREE_REL, abs=AGREE_ABS)
    assert c.lam == pytest.approx(d.lam, rel=LAM_REL, abs=LAM_ABS)
    # Prop. free_t: the per-step optimum of (opt:free_t) is one boost for every t
    assert np.ptp(c.boosts) < BOOST_SPREAD * max(1.0, d.delta)
    assert c.dg == pytest.approx(Delta, rel=AGREE_REL, abs=AGREE_ABS)


@given(feasible_problems(max_T=300))
def test_optimum_beats_every_feasible_constant_boost(problem):
    G, Delta = problem
    r = theory.offline_opt(G, Delta)
    grid = np.linspace(0.0, 20.0, 801)
    dg = np.array([np.mean(theory.dg_step(d, G)) for d in grid])
    kl = np.array([np.mean(theory.kl_step(d, G)) for d in grid])
    feasible = dg >= Delta
    assert r.value <= kl[feasible].min() + 1e-12


def test_constant_sequence_is_the_certainty_equivalent():
    gamma, Delta = 0.398, 0.3
    r = theory.offline_opt(np.full(100, gamma), Delta)
    assert r.delta == pytest.approx(theory.delta_star(Delta, gamma), rel=1e-13)
    assert r.value == pytest.approx(theory.kl_certainty_equivalent(Delta, gamma), rel=1e-13)


def test_hard_watermark_boundary_and_infeasible():
    G = np.array([0.0, 0.2, 0.5, 1.0])
    max_dg = (0.8 + 0.5) / 4
    r = theory.offline_opt(G, max_dg)
    assert r.delta == np.inf and r.value == pytest.approx(-(np.log(0.2) + np.log(0.5)) / 4, rel=1e-14)
    with pytest.raises(ValueError, match=r"Delta must be at most mean\(\(1 - G_t\) 1\{G_t > 0\}\) = 0.325"):
        theory.offline_opt(G, 0.4)
    rep = theory.offline_opt(G, 0.4, on_infeasible="report")
    assert not rep.feasible and np.isnan(rep.value) and rep.max_dg == pytest.approx(max_dg)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(G=[0.5, 1.2], Delta=0.1), "G must be in [0, 1]; got 1.2"),
        (dict(G=[0.5, np.nan], Delta=0.1), "G must not contain NaN"),
        (dict(G=[0.5], Delta=0.0), "Delta must be in (0, inf); got 0.0"),
        (dict(G=[0.5], Delta=0.1, method="newton"), "method must be one of 'dual', 'cvxpy'; got 'newton'"),
        (dict(G=[], Delta=0.1), "G must be a non-empty 1-d array"),
    ],
)
def test_bad_input(kwargs, message):
    import re

    with pytest.raises(ValueError, match=re.escape(message)):
        theory.offline_opt(**kwargs)


@settings(max_examples=8)
@given(st.integers(0, 2**31), st.integers(2, 4), st.integers(3, 6))
def test_general_problem_has_one_boost(seed, T, V):
    """Props. free_k and free_t on the CVXPY program over full distributions (opt:free_t_k)."""
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.ones(V), size=T) * (1 - 1e-3 * V) + 1e-3
    green = rng.random((T, V)) < 0.5
    green[:, 0], green[:, 1] = True, False  # at least one of each colour per step
    G = np.sum(np.where(green, P, 0.0), axis=1)
    Delta = 0.4 * float(np.mean(1 - G))
    res = general_opt_cvxpy(P, green, Delta)
    one = theory.offline_opt(G, Delta)
    assert res.value == pytest.approx(one.value, rel=1e-6)
    assert res.lam == pytest.approx(one.lam, rel=1e-5)
    b = res.boosts[green]
    assert np.ptp(b) < 1e-4 * max(1.0, one.delta)
    assert np.mean(b) == pytest.approx(one.delta, rel=1e-5)
    # within each step the red entries share one log-ratio too (proof of Lemma one_step_k)
    for t in range(T):
        assert np.ptp(res.log_ratio[t, ~green[t]]) < 1e-5


@pytest.mark.parametrize("problem", canonical_problems(), ids=lambda p: p.name)
def test_canonical_problems_are_solved_exactly(problem):
    r = theory.offline_opt(problem.G, problem.Delta)
    assert r.lam == pytest.approx(problem.lam, rel=1e-12)
    assert r.value == pytest.approx(problem.opt, rel=1e-12)
    if np.isfinite(problem.lam):
        c = theory.offline_opt(problem.G, problem.Delta, method="cvxpy")
        assert c.value == pytest.approx(problem.opt, rel=AGREE_REL, abs=AGREE_ABS)
