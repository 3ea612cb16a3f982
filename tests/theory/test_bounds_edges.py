"""theory/bounds.py at the ends of its ranges and on exact values (mutants of make mutate): a `<` for
`<=` in a range check, the vacuous branch of the type-II bound, axes and zeros of the entropy."""

import math
import re

import numpy as np
import pytest

import theory


def refuses(fn, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        fn()


def test_type1_bound_ends():
    assert theory.type1_bound(0.0, 0.25) == 1.0  # z0 = 0 accepted: no evidence, no bound
    assert theory.type1_bound(1.0, 0.5) == math.exp(-0.5)
    refuses(lambda: theory.type1_bound(-1e-300, 0.5), "z0 must be in [0, inf); got -1e-300")


def test_type2_bound_ends_and_the_vacuous_branch():
    # m = Delta sqrt(T - 1) - sqrt(gamma (1 - gamma)) z0
    assert theory.type2_bound(0.0, 0.25, 1.0, 2) == math.exp(-2.0)  # T = 2, Delta = 1 accepted
    assert theory.type2_bound(2.0, 0.5, 0.5, 5) == 1.0  # m = 0 exactly: the bound is vacuous
    assert theory.type2_bound(1.0, 0.5, 0.5, 5) == pytest.approx(math.exp(-2 * 0.5**2), rel=1e-15)  # m = 0.5
    refuses(lambda: theory.type2_bound(1.0, 0.5, 0.5, 1), "T must be in [2, inf); got 1")
    refuses(lambda: theory.type2_bound(1.0, 0.5, 0.0, 10), "Delta must be in (0, 1]; got 0.0")
    refuses(lambda: theory.type2_bound(1.0, 0.5, 1.0 + 1e-15, 10), "Delta must be in (0, 1]")


def test_robust_delta_ends():
    D, g = 0.3, 0.4
    assert theory.robust_delta("edit", D, g, 1.0, 1) == D - 1.0 - 1.0  # rate = 1 and T = 1 accepted
    assert theory.robust_delta("insertion", D, g, 0.0, 1) == D - 1.0  # one successor in a text of 1
    assert theory.robust_delta("insertion", D, g, 0.5, 4) == pytest.approx((D - 0.2 - 0.25) / 1.5, rel=1e-15)
    assert theory.robust_delta("deletion", D, g, 0.5, 4, rehash="contiguous") == pytest.approx((D - 0.5 + 0.2 - 0.25) / 0.5, rel=1e-14)
    refuses(lambda: theory.robust_delta("deletion", D, g, 1.0, 10), "rate must be in [0, 1) for deletion; got 1.0")
    refuses(lambda: theory.robust_delta("edit", D, g, -1e-300, 10), "rate must be in [0, 1]; got -1e-300")
    refuses(lambda: theory.robust_delta("edit", D, g, 0.1, 0), "T must be in [1, inf); got 0")


def test_bretagnolle_huber_broadcasts_and_is_exact_near_zero():
    out = theory.bretagnolle_huber(np.array([0.0, 1e-20, np.inf]))
    assert out.shape == (3,) and out[0] == 1.0 and out[2] == 0.0
    assert out[1] == pytest.approx(1.0 - 1e-10, rel=1e-15)  # 1 - sqrt(k) + k/2 ...
    assert theory.bretagnolle_huber(math.log(4.0 / 3.0)) == pytest.approx(0.5, rel=1e-15)  # 1 - sqrt(1/4)


def test_optimal_test_error_values():
    assert theory.optimal_test_error([1.0, 0.0], [0.0, 1.0]) == 0.0
    assert theory.optimal_test_error([0.3, 0.7], [0.3, 0.7]) == 1.0
    assert theory.optimal_test_error([0.25, 0.75, 0.0], [0.5, 0.25, 0.25]) == pytest.approx(0.5, rel=1e-15)
    refuses(lambda: theory.optimal_test_error([0.5, 1.5], [0.5, 0.5]), "q must be in [0, 1]; got 1.5")


def test_entropy_axes_and_zeros():
    p = np.array([[1.0, 0.0, 0.0, 0.0], [0.25, 0.25, 0.25, 0.25]])
    assert theory.entropy(p).tolist() == [0.0, pytest.approx(math.log(4), rel=1e-15)]
    assert theory.entropy(p, axis=0) == pytest.approx([-0.25 * math.log(0.25) * 1 + 0.0, *([-0.25 * math.log(0.25)] * 3)], rel=1e-15)
    assert theory.entropy([0.0, 1.0]) == 0.0 and isinstance(theory.entropy([0.5, 0.5]), float)
    assert theory.ems_expected_kl is theory.entropy
