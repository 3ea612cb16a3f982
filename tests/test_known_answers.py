"""Known-answer tests: outputs pinned to values from outside the code under test.

* SplitMix64: the first outputs of Vigna's reference generator from state 0 (published
  in ``splitmix64.c`` and reproduced by every port of it), which is what
  :func:`sims.core.rng.uniforms` and the PRF's mixer compute for those inputs.
* The PRF: the formula of :mod:`sims.core.prf`'s docstring, written here once more on Python
  integers (no NumPy, no Numba), and a few of its outputs as literals, so that a changed
  constant is caught by name rather than by a crash elsewhere.
* The presets: the entropy and green-mass table that ``docs/presets.md`` quotes.
"""

from __future__ import annotations

import numpy as np
import pytest

from sims.core import prf, rng

MASK = (1 << 64) - 1
# splitmix64.c, state 0: next() three times
SPLITMIX64_FROM_0 = (0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F)


def _mix(z: int) -> int:
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def _token_bits(key: int, context: list[int], token: int, stream: int) -> int:
    """u(key, context, k, stream) as the module docstring of sims.core.prf defines it."""
    c = _mix((key + 0x9E3779B97F4A7C15 * (stream + 1)) & MASK)
    for t in context:
        c = _mix(c ^ ((t * 0xD6E8FEB86659FD93 + 1) & MASK))
    return _mix(c ^ _mix((token + 0x632BE59BD9B4E019) & MASK))


def test_the_mixer_is_splitmix64():
    state = [(0x9E3779B97F4A7C15 * (i + 1)) & MASK for i in range(3)]
    assert [int(z) for z in prf._mix64(np.array(state, dtype=np.uint64))] == list(SPLITMIX64_FROM_0)
    assert [int(prf.mix64_nb(np.uint64(s))) for s in state] == list(SPLITMIX64_FROM_0)
    assert [_mix(s) for s in state] == list(SPLITMIX64_FROM_0)  # the test's own mixer, checked too


def test_counter_uniforms_are_splitmix64_outputs():
    """Counter i of the stream with key 0 is SplitMix64's output i, top 53 bits, centred."""
    want = [((z >> 11) + 0.5) / 2.0**53 for z in SPLITMIX64_FROM_0]
    assert rng.uniforms(0, np.arange(1, 4)).tolist() == want
    assert [rng.uniform_nb(np.uint64(0), i) for i in range(1, 4)] == want


@pytest.mark.parametrize("key, context, stream", [(0, [0], prf.GREEN), (15485863, [17, 4093], prf.GREEN),
                                                  (MASK, [31999, 0, 5], prf.EMS), (12345, [2], prf.STEP)])
def test_prf_follows_its_written_formula(key, context, stream):
    tokens = np.array([0, 1, 2, 1000, 31999])
    ctx = prf.context_hash(key, np.array(context), stream)
    got = [int(b) for b in prf.token_bits(ctx, tokens)]
    assert got == [_token_bits(key, context, int(k), stream) for k in tokens]
    gamma = 0.25
    thr = int(np.floor(gamma * 2**53))
    assert prf.is_green(ctx, tokens, gamma).tolist() == [(b >> 11) < thr for b in got]
    assert prf.uniforms(ctx, tokens).tolist() == [((b >> 11) + 0.5) / 2**53 for b in got]


def test_prf_literal_outputs():
    """Three outputs written down once (from the formula above): a changed constant fails here, by name."""
    ctx = prf.context_hash(15485863, np.array([17, 4093]), prf.GREEN)
    assert [int(b) for b in prf.token_bits(ctx, np.array([0, 1, 31999]))] == [0x00BB5D57EEFEDD91, 0x6E773165C7A81C6D, 0x11715C938E73A897]


# docs/presets.md: preset -> (mean, q10, q25, median, q75, q90 entropy; mean G, sd G), 200 x 200 tokens, seed 0
PRESET_TABLE = {
    "news": (2.83, 2.34, 2.43, 2.65, 3.16, 3.82, 0.249, 0.150),
    "lfqa": (2.11, 1.74, 1.87, 2.02, 2.26, 2.81, 0.248, 0.198),
    "loopy": (1.84, 0.01, 1.80, 1.99, 2.21, 2.71, 0.249, 0.239),
}


@pytest.mark.parametrize("name", sorted(PRESET_TABLE))
def test_presets_match_the_table_the_docs_quote(name):
    """Each number of docs/presets.md, to the rounding it is quoted at (half a unit of its last digit)."""
    from sims import generate, get_lm

    g = generate(get_lm(name), "none", n=200, T=200, seed=0, key=1)
    e = g.entropy[np.isfinite(g.entropy)]
    ours = [e.mean(), *np.quantile(e, [0.1, 0.25, 0.5, 0.75, 0.9]), np.nanmean(g.G), np.nanstd(g.G)]
    quoted = PRESET_TABLE[name]
    for mine, doc, digits in zip(ours, quoted, (2, 2, 2, 2, 2, 2, 3, 3)):
        assert abs(mine - doc) <= 0.5 * 10.0**-digits + 1e-12, (name, mine, doc)
