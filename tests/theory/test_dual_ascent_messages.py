"""The error of theory.dualga_update names the first *offending* entry of an array, not the first
entry at a valid end (mutants of make mutate that moved the message's own range test)."""

import re

import numpy as np
import pytest

import theory


@pytest.mark.parametrize(
    "kw, message",
    [
        (dict(lam=np.array([15.0, 16.0])), "lam must be in [0, M] = [0, 15.0]; got 16.0"),  # 15 = M is valid
        (dict(lam=np.array([0.0, -1.0])), "lam must be in [0, M] = [0, 15.0]; got -1.0"),
        (dict(eta=np.array([0.5, 0.0, -0.5])), "eta must be in [0, inf); got -0.5"),
        (dict(dg=np.array([1.0, -1.0, 1.5])), "dg must be in [-1, 1]; got 1.5"),
    ],
)
def test_the_message_names_the_offending_entry(kw, message):
    args = dict(lam=1.0, dg=0.1, Delta=0.3, eta=0.5) | kw
    with pytest.raises(ValueError, match=re.escape(message)):
        theory.dualga_update(**args)
