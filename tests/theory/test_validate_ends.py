"""theory/_validate.py: every check accepts the ends of its range and refuses the next double out,
with the message naming the parameter, the value and the range (mutants of make mutate)."""

import math
import re

import numpy as np
import pytest

from theory import _validate as v

UP = math.nextafter(1.0, 2.0)
DOWN = math.nextafter(0.0, -1.0)  # the largest negative double


def refuses(fn, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        fn()


def test_finite_or_inf_array():
    assert v.finite_or_inf_array("x", [1.0, -2.0]).dtype == np.float64
    assert v.finite_or_inf_array("x", np.inf, allow_inf=True) == np.inf
    refuses(lambda: v.finite_or_inf_array("x", [1.0, np.nan]), "x must not contain NaN; got array of shape (2,) with NaN entries")
    refuses(lambda: v.finite_or_inf_array("x", -np.inf), "x must be finite; got -inf with infinite entries")
    refuses(lambda: v.finite_or_inf_array("x", np.nan, allow_inf=True), "x must not contain NaN; got nan")


def test_unit_interval_closed_and_open():
    assert v.in_unit_interval("G", [0.0, 1.0]).tolist() == [0.0, 1.0]
    refuses(lambda: v.in_unit_interval("G", UP), f"G must be in [0, 1]; got {UP!r}")
    refuses(lambda: v.in_unit_interval("G", [0.5, DOWN]), f"G must be in [0, 1]; got {DOWN!r}")
    assert v.in_unit_interval("G", [DOWN * -1, math.nextafter(1.0, 0.0)], closed=False).shape == (2,)
    refuses(lambda: v.in_unit_interval("G", 0.0, closed=False), "G must be in (0, 1); got 0.0")
    refuses(lambda: v.in_unit_interval("G", [0.5, 1.0], closed=False), "G must be in (0, 1); got 1.0")


def test_boost():
    assert v.boost("delta", [0.0, np.inf]).tolist() == [0.0, np.inf]
    refuses(lambda: v.boost("delta", [1.0, DOWN]), f"delta must be in [0, inf]; got {DOWN!r}")
    refuses(lambda: v.boost("delta", -np.inf), "delta must be in [0, inf]; got -inf")


def test_gamma():
    assert v.gamma(5e-324) == 5e-324 and v.gamma(math.nextafter(1.0, 0.0)) < 1.0
    refuses(lambda: v.gamma(0.0), "gamma must be in (0, 1); got 0.0")
    refuses(lambda: v.gamma(1.0), "gamma must be in (0, 1); got 1.0")
    refuses(lambda: v.gamma(float("nan")), "gamma must be in (0, 1); got nan")


def test_positive():
    assert v.positive("M", 5e-324) == 5e-324 and v.positive("M", 1e308) == 1e308
    refuses(lambda: v.positive("M", 0.0), "M must be in (0, inf); got 0.0")
    refuses(lambda: v.positive("M", math.inf), "M must be in (0, inf); got inf")
    refuses(lambda: v.positive("M", float("nan")), "M must be in (0, inf); got nan")


def test_delta_for_gamma():
    assert v.Delta_for_gamma(1e-300, 0.5) == 1e-300
    assert v.Delta_for_gamma(math.nextafter(0.5, 0.0), 0.5) < 0.5
    refuses(lambda: v.Delta_for_gamma(0.0, 0.5), "Delta must be in (0, 1 - gamma) = (0, 0.5) for gamma=0.5; got 0.0")
    refuses(lambda: v.Delta_for_gamma(0.75, 0.25), "Delta must be in (0, 1 - gamma) = (0, 0.75) for gamma=0.25; got 0.75")
