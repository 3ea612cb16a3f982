"""sims.detect.multiple at its edges: the key range is [0, 2**64) exactly (the survivors of make
mutate's sampled run on this module)."""

import re

import numpy as np
import pytest

from sims.detect import multiple


def test_keys_are_taken_up_to_2_64_minus_1_and_refused_from_2_64():
    assert multiple.check_keys([0, 2**64 - 1]).tolist() == [0, 2**64 - 1]
    assert multiple.check_keys([2**64 - 1]).dtype == np.uint64
    for bad in ([2**64], [-1], [1, 1], [], [1.0], [b"1"]):
        with pytest.raises(ValueError, match=re.escape("keys must be distinct integers in [0, 2**64), at least one; got")):
            multiple.check_keys(bad)
