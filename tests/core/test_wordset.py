"""The word set's linear probing lands in the next slot, wrapping round (a probe step of 2 still
finds free slots and passed test_core_mutants.py; the slots it fills differ)."""

import numpy as np
from numba import njit

from sims.core import wordset


@njit(cache=True)
def _table_after(words, size):
    table = np.zeros(size, dtype=np.uint64)
    has_zero = np.zeros(1, dtype=np.bool_)
    for j in range(words.shape[0]):
        wordset.seen_before(table, words[j], has_zero)
    return table


def test_collisions_fill_the_following_slots_in_order():
    # 14, 30, 46, 62 all hash to slot 14 of 16: they take slots 14, 15, 0, 1
    table = _table_after(np.array([14, 30, 46, 62], dtype=np.uint64), 16)
    assert table[14] == 14 and table[15] == 30 and table[0] == 46 and table[1] == 62
    assert np.count_nonzero(table) == 4
