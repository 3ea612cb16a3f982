"""Known answers for the synthetic presets' temperature law: the inverse temperatures of the 32
levels, the entropy and top-token mass of each level's Zipf distribution, and two contexts of
each preset.

Where the numbers come from:

* **independent computation**: the law of the module docstring of :mod:`sims.lm.synthetic`,
  :math:`\\beta_l = \\beta_o + (\\beta_f - \\beta_o)((l + 1/2)/32)^\\kappa`, written here with each
  preset's (beta_factual, beta_opinion, kappa) copied below as literals (so that changing a
  preset's law in ``PRESETS`` fails here), and each level's Zipf law
  :math:`p_r \\propto r^{-\\beta}`, r = 1..V, summed here in NumPy (the entropy and top mass do not
  depend on the LM's random ranking);
* **literals computed once from that independent formula** (this file's ``_level_stats``, at the
  commit that added it): the mean over the 32 levels of the level entropy (nats) and of the top
  token's probability, and the range of the level entropies, to 6 decimals;
* **a snapshot of our own output** (``SyntheticLM.probs`` at two fixed contexts; no independent
  value exists, the bumps and loops being hashed): the top-token mass and entropy, pinned to 1e-12.

docs/presets.md's table of generated-text entropy is pinned by :mod:`tests.test_known_answers`.
"""

from __future__ import annotations

import numpy as np
import pytest

from sims.lm.synthetic import N_LEVELS, open_synthetic

# preset: (V, beta_factual, beta_opinion, kappa), from sims.lm.synthetic.PRESETS
LAW = {"news": (32000, 2.0, 1.1, 1.0), "lfqa": (32000, 3.0, 1.1, 1.0), "loopy": (4096, 3.0, 1.1, 1.0), "tiny": (6, 1.0, 0.5, 1.0)}
# preset: (mean level entropy, mean top-token mass, least and largest level entropy), from _level_stats
LEVEL_STATS = {
    "news": (3.266281, 0.397917, 1.662304, 6.140219),
    "lfqa": (2.105161, 0.576421, 0.694066, 5.982067),
    "loopy": (2.015164, 0.578698, 0.694065, 5.191545),
    "tiny": (1.670095, 0.340055, 1.585003, 1.739326),
}
# preset: ((top mass, entropy) after context [1, 2], after [5, 9]): SyntheticLM.probs, snapshot
CONTEXTS = {
    "news": ((0.1783553603351445, 3.0672166705356076), (0.17727556223769747, 2.5695383958682325)),
    "lfqa": ((0.3242066436699707, 2.218668565196798), (0.29029479274776304, 2.0479031091688435)),
    "loopy": ((0.23158552119081302, 2.1572308536176044), (0.420330647790529, 2.2572402399557285)),
    "tiny": ((0.3456193660778167, 1.6511347927914883), (0.2754224652624335, 1.7096860603844257)),
}


def _levels(name: str) -> np.ndarray:
    _, bf, bo, kappa = LAW[name]
    return bo + (bf - bo) * ((np.arange(N_LEVELS) + 0.5) / N_LEVELS) ** kappa


def _level_stats(name: str) -> tuple[np.ndarray, np.ndarray]:
    """Entropy (nats) and top-token probability of p_r = r^-beta / Z at each level."""
    V = LAW[name][0]
    logr = np.log(np.arange(1, V + 1, dtype=np.float64))
    H, top = [], []
    for b in _levels(name):
        w = np.exp(-b * logr)
        Z = w.sum()
        H.append(np.log(Z) + b * (w @ logr) / Z)
        top.append(1.0 / Z)
    return np.array(H), np.array(top)


@pytest.mark.parametrize("name", sorted(LAW))
def test_levels_follow_the_temperature_law(name):
    lm = open_synthetic(name)
    assert lm.vocab_size == LAW[name][0]
    np.testing.assert_allclose(lm.levels, _levels(name), rtol=1e-15, atol=0)


@pytest.mark.parametrize("name", sorted(LAW))
def test_level_entropy_and_top_mass(name):
    """The independent sums match their pinned values, and the LM's tabulated level sums
    (Z_l, A_l) give the same entropies."""
    H, top = _level_stats(name)
    mean_h, mean_top, lo, hi = LEVEL_STATS[name]
    assert H.mean() == pytest.approx(mean_h, abs=5e-7) and top.mean() == pytest.approx(mean_top, abs=5e-7)
    assert H.min() == pytest.approx(lo, abs=5e-7) and H.max() == pytest.approx(hi, abs=5e-7)
    lm = open_synthetic(name)
    Z, A = lm.level_sums.T
    np.testing.assert_allclose(np.log(Z) - lm.levels * A / Z, H, rtol=1e-12)
    np.testing.assert_allclose(1.0 / Z, top, rtol=1e-12)


@pytest.mark.parametrize("name", sorted(LAW))
def test_two_contexts_snapshot(name):
    lm = open_synthetic(name)
    for ctx, (top, ent) in zip(([1, 2], [5, 9]), CONTEXTS[name]):
        p = lm.probs(np.array(ctx))
        nz = p[p > 0]
        assert float(p.max()) == pytest.approx(top, rel=1e-12) and float(-(nz * np.log(nz)).sum()) == pytest.approx(ent, rel=1e-12)
