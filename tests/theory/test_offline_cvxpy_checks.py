"""theory/offline_cvxpy.py: the general program's input check on row sums and the precision its tight
CLARABEL setting promises (survivors of make mutate's sampled theory run)."""

import re

import numpy as np
import pytest

import theory
from theory.offline_cvxpy import general_opt_cvxpy


def _problem(seed=5, T=4, V=6):
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.ones(V), size=T) * (1 - 1e-3 * V) + 1e-3
    green = rng.random((T, V)) < 0.5
    green[:, 0], green[:, 1] = True, False
    G = np.sum(np.where(green, P, 0.0), axis=1)
    return P, green, G, 0.4 * float(np.mean(1 - G))


def test_the_tight_setting_recovers_the_dual_multiplier_to_1e_9():
    """Seed 5, T = 4, V = 6: lambda* of the one-boost dual solver (exact to ~1e-15) is matched to 2e-9
    relative (measured 5.6e-10; with tol_feas loosened to 1, 7.9e-9) and the green entries of each step
    share one boost to 1e-8 (measured 1.1e-9; loosened, 6.2e-8)."""
    P, green, G, Delta = _problem()
    res = general_opt_cvxpy(P, green, Delta)
    one = theory.offline_opt(G, Delta)
    assert res.lam == pytest.approx(one.lam, rel=2e-9, abs=0)
    assert res.value == pytest.approx(one.value, rel=1e-11, abs=0)
    assert max(np.ptp(res.boosts[t][green[t]]) for t in range(P.shape[0])) < 1e-8


@pytest.mark.parametrize("off", [1e-4, -1e-4])
def test_rows_that_do_not_sum_to_1_are_refused(off):
    """np.allclose(..., atol=1e-12) keeps its default rtol = 1e-5: a row off by 1e-4 is refused."""
    P, green, _, Delta = _problem()
    P[1, 2] += off
    with pytest.raises(ValueError, match=re.escape("P rows must sum to 1")):
        general_opt_cvxpy(P, green, Delta)
