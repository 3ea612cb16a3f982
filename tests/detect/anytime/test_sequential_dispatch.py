"""sims.detect.anytime.sequential's dispatcher and prefix p-values pinned exactly (the survivors of make
mutate's sampled run on this module): a gamma other than the generation's is refused, a tournament
generation is scored with its own m, and the anytime p-values are min(1, 1/max E) in log10."""

import math

import numpy as np
import pytest

import sims
from sims.detect.anytime import sequential
from sims.detect.anytime.sequential_laws import sequential_tournament
from sims.detect.families import detectors


def test_anytime_log10p_is_the_running_max_in_log10_and_ignores_the_padding():
    path = np.array([[math.log(100.0), math.log(10.0), math.log(1e4), np.nan, np.nan],
                     [-1.0, math.log(0.5), math.log(1e3), math.log(20.0), np.nan]])
    want = np.array([[-2.0, -2.0, -4.0, -4.0, -4.0], [0.0, 0.0, -3.0, -3.0, -3.0]])
    np.testing.assert_allclose(sequential.anytime_log10p(path), want, rtol=0, atol=1e-14)


def test_a_gamma_other_than_the_generations_is_refused():
    gen = sims.generate(sims.get_lm("tiny"), "srl", n=2, T=20, seed=0, key=3, gamma=0.25, delta=2.0)
    same = detectors.sequential_score(gen, gamma=0.25, alpha=1e-3)
    np.testing.assert_array_equal(same.log_e, detectors.sequential_score(gen, alpha=1e-3).log_e)
    for bad in (0.5, 0.25 + 1e-9):
        with pytest.raises(ValueError, match="gamma mismatch between generation and detection"):
            detectors.sequential_score(gen, gamma=bad, alpha=1e-3)


def test_a_tournament_generation_is_scored_with_its_own_parameters():
    """m = 7 and no repeated-context mask, both away from the registry's defaults."""
    lm = sims.get_lm("lfqa", vocab_size=500)
    gen = sims.generate(lm, "synthid", n=2, T=30, seed=1, key=5, m=7, mask_repeated=0)
    got = detectors.sequential_score(gen, alpha=1e-3)
    want = sequential_tournament(gen.tokens, gen.prompts[:, -gen.meta["h"]:], 5, 7, alpha=1e-3, h=gen.meta["h"], mask_repeated=False,
                                 lengths=gen.lengths)
    np.testing.assert_array_equal(got.log_e, want.log_e)
    np.testing.assert_array_equal(got.n_scored, want.n_scored)
