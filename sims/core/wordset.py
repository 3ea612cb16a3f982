"""A per-text set of 64-bit words for the Numba kernels: has this (context, token) pair, or this
context, been seen before in the text?  Detection's dedup (Fernandez et al.: each pair scored once)
and the tournament's repeated-context mask both ask it."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, inline="always")
def seen_before(table, word, has_zero):
    """Insert ``word`` (a mixed 64-bit hash) into an open-addressing set whose empty slots hold 0
    (the word 0 itself is tracked by ``has_zero[0]``); True if it was already there."""
    if word == np.uint64(0):
        if has_zero[0]:
            return True
        has_zero[0] = True
        return False
    mask = np.uint64(table.shape[0] - 1)
    slot = word & mask  # the word is already mixed: its low bits spread evenly
    while True:
        cur = table[slot]
        if cur == word:
            return True
        if cur == np.uint64(0):
            table[slot] = word
            return False
        slot = (slot + np.uint64(1)) & mask


@njit(cache=True)
def set_size(T):
    """Slots of a per-text set of ``T`` words (a power of two >= 2 T)."""
    size = 16
    while size < 2 * T:
        size *= 2
    return size
