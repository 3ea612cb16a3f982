"""The bet grid's range check (sims.detect.anytime.e_mixtures.check_grid) at both open ends."""

from __future__ import annotations

import numpy as np
import pytest

from sims.detect.anytime import e_mixtures


@pytest.mark.parametrize("grid", [[0.5, 1.0], [0.0, 0.5], [], [1.5]])
def test_grid_refuses_fractions_outside_the_open_unit_interval(grid):
    """A fraction of 1 bets everything (a Bernoulli tilt to probability 1: one red token ends the wealth); kills
    ``g < 1`` -> ``g <= 1``."""
    with pytest.raises(ValueError, match=r"grid must be a non-empty array of fractions in \(0, 1\)"):
        e_mixtures.check_grid(grid)


def test_grid_accepts_fractions_next_to_the_ends():
    g = [np.nextafter(0.0, 1.0), np.nextafter(1.0, 0.0)]
    assert e_mixtures.check_grid(g).tolist() == g
