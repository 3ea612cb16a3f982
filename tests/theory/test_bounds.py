"""Bounds: Hoeffding (Prop. type_I&II), adversarial Delta' (Prop. adv_robust),
Bretagnolle-Huber (Prop. info_lower_bound), entropy (Example ems)."""

import math
import re

import numpy as np
import pytest
from hypothesis import given

import theory
from tests.theory.strategies import simplices


def test_bretagnolle_huber_is_exact_far_in_the_tail():
    assert theory.bretagnolle_huber(0.0) == 1.0
    # for large KL the naive 1 - sqrt(1 - e^-k) cancels to 0 (from k ~ 37 on); against 50 digits, up to
    # k = 700 where e^-k ~ 1e-304 is still a normal double (a k whose answer underflows could not fail);
    # the naive form in mpmath at 400 digits, enough to keep 50 after the cancellation
    mpmath = pytest.importorskip("mpmath")
    for k in (1e-12, 0.5, 20.0, 40.0, 200.0, 700.0):
        with mpmath.workdps(400):
            exact = float(1 - mpmath.sqrt(1 - mpmath.exp(-mpmath.mpf(k))))
        assert exact > 0.0
        assert theory.bretagnolle_huber(k) == pytest.approx(exact, rel=4e-16, abs=0.0), k
    assert theory.bretagnolle_huber(np.inf) == 0.0


@given(simplices(6), simplices(6))
def test_optimal_test_error_respects_bretagnolle_huber(q, p):
    kl = float(np.sum(q * np.log(q / p)))
    assert theory.optimal_test_error(q, p) >= theory.bretagnolle_huber(kl) - 1e-15


def test_entropy_and_hoeffding_values():
    assert theory.entropy([0.5, 0.5, 0.0]) == pytest.approx(math.log(2))
    assert theory.type1_bound(4.0, 0.25) == pytest.approx(math.exp(-2 * 0.1875 * 16))
    assert theory.type2_bound(4.0, 0.25, 0.3, 200) == pytest.approx(
        math.exp(-2 * (0.3 * math.sqrt(199) - math.sqrt(0.1875) * 4) ** 2)
    )
    assert theory.type2_bound(4.0, 0.25, 0.01, 10) == 1.0  # vacuous regime


def test_robust_delta_formulas():
    D, g, l, T = 0.3, 0.4, 0.2, 100
    assert theory.robust_delta("deletion", D, g, l, T) == pytest.approx((D - l + l * g) / (1 - l))
    assert theory.robust_delta("insertion", D, g, l, T) == pytest.approx((D - l * g - 1 / T) / (1 + l))
    assert theory.robust_delta("edit", D, g, l, T) == pytest.approx(D - l - 1 / T)
    assert theory.robust_delta("deletion", D, g, 0.0, T) == D
    assert theory.robust_delta("deletion", D, g, l, T, rehash="contiguous") == pytest.approx((D - l + l * g - 1 / T) / (1 - l))
    assert theory.robust_delta("deletion", D, g, l, T, rehash="scattered") == pytest.approx((D - 2 * l + l * g) / (1 - l))
    assert theory.robust_delta("insertion", D, g, l, T, rehash="scattered") == pytest.approx((D - l - l * g) / (1 + l))
    assert theory.robust_delta("edit", D, g, l, T, rehash="scattered") == pytest.approx(D - 2 * l)
    for kind in ("insertion", "edit"):  # contiguous is the statement; scattered lies below it once l > 1/T
        assert theory.robust_delta(kind, D, g, l, T, rehash="contiguous") == theory.robust_delta(kind, D, g, l, T)
        assert theory.robust_delta(kind, D, g, l, T, rehash="scattered") < theory.robust_delta(kind, D, g, l, T)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: theory.robust_delta("swap", 0.3, 0.5, 0.1, 10), "kind must be one of 'deletion', 'insertion', 'edit'; got 'swap'"),
        (lambda: theory.robust_delta("edit", 0.3, 0.5, 1.5, 10), "rate must be in [0, 1]; got 1.5"),
        (lambda: theory.robust_delta("deletion", 0.3, 0.5, 0.1, 10, rehash="all"), "rehash must be None, 'contiguous' or 'scattered'; got 'all'"),
        (lambda: theory.type1_bound(-1.0, 0.5), "z0 must be in [0, inf); got -1.0"),
        (lambda: theory.bretagnolle_huber(-0.1), "kl must be in [0, inf]; got -0.1"),
        (lambda: theory.optimal_test_error([0.5, 0.5], [1.0]), "q and p must have one shape"),
    ],
)
def test_bad_input(call, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        call()
