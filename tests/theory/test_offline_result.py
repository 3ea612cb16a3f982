"""theory/offline_result.py and the cvxpy path's realised DG (survivors of make mutate's sampled theory run)."""

import dataclasses

import numpy as np
import pytest

import theory
from theory.offline_result import OfflineResult


def _result(**kw):
    return OfflineResult(value=0.1, delta=1.0, lam=1.0, dual_value=0.1, dg=0.2, feasible=True, max_dg=0.5, method="dual", **kw)


def test_a_result_is_immutable_and_reports_no_iterations_unless_given():
    r = _result()
    assert r.iterations == 0 and r.boosts is None and r.status is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.value = 0.0  # a result is a record of one solve: never edited in place


def test_cvxpy_reports_the_realised_dg_at_its_optimum():
    """20 tokens, Delta = 0.2 binds: the solver's x_t - G_t average to Delta (to the solver's tolerance) and the
    dual solution's dg agrees."""
    G = np.random.default_rng(3).uniform(0.1, 0.9, 20)
    cv, du = theory.offline_opt(G, 0.2, method="cvxpy"), theory.offline_opt(G, 0.2)
    assert cv.dg == pytest.approx(0.2, abs=1e-6) and du.dg == pytest.approx(0.2, abs=1e-9)
