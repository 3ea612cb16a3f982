"""theory/dual_ascent.py at the exact ends of its input ranges, and the projection at both bounds
(mutants of make mutate: a `<` for `<=` in a range check, a clip made one-sided)."""

import re

import numpy as np
import pytest

import theory


@pytest.mark.parametrize(
    "lam, dg, Delta, eta, M, expected",
    [
        (0.0, 0.0, 0.3, 0.5, 15.0, 0.15),  # lam = 0 and dg = 0 accepted
        (15.0, 0.0, 0.3, 0.5, 15.0, 15.0),  # lam = M accepted, projected down to M
        (1.0, -1.0, 0.0, 0.5, 15.0, 1.5),  # dg = -1, Delta = 0
        (1.0, 1.0, 1.0, 0.5, 15.0, 1.0),  # dg = 1, Delta = 1
        (1.0, 0.2, 0.3, 0.0, 15.0, 1.0),  # eta = 0: lam unchanged
        (1.0, 0.9, 0.0, 10.0, 15.0, 0.0),  # projected up to 0
        (2.0, 0.0, 1.0, 10.0, 2.5, 2.5),  # a small M
    ],
)
def test_dualga_update_accepts_the_ends_and_projects(lam, dg, Delta, eta, M, expected):
    assert theory.dualga_update(lam, dg, Delta, eta, M) == expected


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: theory.dualga_update(-1e-300, 0.1, 0.3, 0.5), "lam must be in [0, M] = [0, 15.0]; got -1e-300"),
        (lambda: theory.dualga_update(np.nextafter(15.0, 16.0), 0.1, 0.3, 0.5), "lam must be in [0, M] = [0, 15.0]; got 15.000000000000002"),
        (lambda: theory.dualga_update(1.0, np.nextafter(-1.0, -2.0), 0.3, 0.5), "dg must be in [-1, 1]; got -1.0000000000000002"),
        (lambda: theory.dualga_update(1.0, 0.1, -1e-300, 0.5), "Delta must be in [0, 1]; got -1e-300"),
        (lambda: theory.dualga_update(1.0, 0.1, 0.3, -1e-300), "eta must be in [0, inf); got -1e-300"),
        (lambda: theory.dualga_update(1.0, 0.1, 0.3, 0.5, M=-1.0), "M must be in (0, inf); got -1.0"),
        (lambda: theory.autocov_update(1.0, 0.1, True, 0.0, 0.3, 0.5), "gamma must be in (0, 1); got 0.0"),
        (lambda: theory.autocov_update(-0.5, 0.1, True, 0.5, 0.3, 0.5), "lam must be in [0, M]"),
        (lambda: theory.autocov_update(1.0, 1.5, True, 0.5, 0.3, 0.5), "dg must be in [-1, 1]; got 1.5"),
    ],
)
def test_just_outside_each_range_is_refused(call, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        call()


def test_autocov_update_reads_the_previous_colour_elementwise():
    lam = np.array([1.0, 1.0, 1.0, 1.0])
    dg = np.array([0.2, -0.2, 0.0, -1.0])
    prev = np.array([False, True, True, True])
    out = theory.autocov_update(lam, dg, prev, 0.25, 0.3, 0.5, 15.0)
    want = [1.0 + 0.5 * (0.3 - 0.25 * 0.2), 1.0 + 0.5 * (0.3 - 0.75 * 0.2), 1.0 + 0.5 * 0.3, 1.0 + 0.5 * (0.3 - 0.75)]
    assert out.tolist() == want
    assert theory.autocov_update(0.0, 1.0, False, 0.5, 0.0, 10.0, 15.0) == 0.0  # projected up to 0
    assert theory.autocov_update(14.0, -1.0, False, 0.5, 1.0, 10.0, 15.0) == 15.0  # after red, DG < 0 raises lam
