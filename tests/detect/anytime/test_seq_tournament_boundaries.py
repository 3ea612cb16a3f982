"""Boundary rows of the anytime-valid tournament scan (sims.detect.anytime._tournament): a text stops at the
token whose score reaches its threshold exactly (kernel) or whose log e-value equals the bound (reference),
and the 64-layer mask (every bit of the PRF word) matches the reference."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sims.detect.anytime import _tournament as ST
from sims.detect.anytime import e_mixtures, sequential_laws


def _texts(seed=7, n=4, T=50, V=4096):
    rng = np.random.default_rng(seed)
    return rng.integers(0, V, size=(n, T)), rng.integers(0, V, size=(n, 1)), np.array([T, T, 37, 0])


def _kernel(toks, prompts, lengths, weights, table, key=5):
    out = [np.zeros(len(toks), dtype=np.int64) for _ in range(3)]
    ST.tournament_crossings(toks, prompts, lengths, np.uint64(key), 1, True, weights, table, *out)
    return out


@pytest.mark.parametrize("m", [64, 63, 7])
def test_every_layer_count_equals_the_reference(m):
    """Unit weights at m = 64 (the all-ones mask), 63 and 7 (texts: seed 7, 4 x 50 uniform ids, one ragged, one
    empty); sums, counts and stops equal the reference's at alpha = 0.05.  Kills a mask of m + 1 bits and the
    64-layer branch taken for m < 64."""
    toks, prompts, lengths = _texts()
    w = np.ones(m, dtype=np.int64)
    mix = sequential_laws.tilt_mixture(sequential_laws.weighted_bernoulli_law(w))
    got = _kernel(toks, prompts, lengths, w, e_mixtures.linear_thresholds(mix, toks.shape[1], 0.05))
    ref = ST.tournament_crossings_reference(toks, prompts, lengths, 5, 1, True, w, mix, math.log(1 / 0.05))
    for g, r in zip(got, ref):
        assert g.tolist() == r.tolist()
    assert got[0][0] > 0 and got[1][3] == 0 and got[2][3] == -1


def test_stop_at_equality():
    """Text 0's running score and count after each token (from the reference with no crossing): with the
    threshold after its 10th scored token set to exactly that score (others inf) the kernel stops there, and
    with the bound set to exactly the log e-value there (the largest of the path) the reference does too.
    Kills ``acc >= thresholds[cnt]`` -> ``>`` and ``log_e >= bound`` -> ``>`` (both would never stop)."""
    toks, prompts, lengths = _texts()
    w = np.arange(1, 6, dtype=np.int64)  # weights 1..5: the non-unit path
    mix = sequential_laws.tilt_mixture(sequential_laws.weighted_bernoulli_law(w))
    sums, cnts = [], []
    for t in range(1, 51):
        s, c, _ = ST.tournament_crossings_reference(toks[:1, :t], prompts[:1], np.array([t]), 5, 1, True, w, mix, math.inf)
        sums.append(int(s[0]))
        cnts.append(int(c[0]))
    t10 = cnts.index(10)  # 0-based token index of the 10th scored token
    table = np.full(toks.shape[1] + 1, np.inf)
    table[10] = sums[t10]
    assert _kernel(toks[:1], prompts[:1], lengths[:1], w, table)[2][0] == t10 + 1
    path = [float(mix.log_e(s, c)) for s, c in zip(sums, cnts)]
    top = max(path)
    stop = ST.tournament_crossings_reference(toks[:1], prompts[:1], lengths[:1], 5, 1, True, w, mix, top)[2][0]
    assert stop == path.index(top) + 1
