"""sims.watermarks.generate beyond test_generate.py (the survivors of make mutate's sampled run on this
module): sample_prompts refuses a prompt shorter than the LM's order even for n >= 1."""

import re

import pytest

from sims.lm.synthetic import open_synthetic
from sims.watermarks.generate import sample_prompts


def test_sample_prompts_refuses_a_bad_n_or_a_short_length_each_alone():
    lm = open_synthetic("tiny")
    assert sample_prompts(lm, 1, seed=0, length=lm.order + 1).shape == (1, lm.order + 1)
    for n, length in ((1, lm.order - 1), (0, lm.order + 4)):
        with pytest.raises(ValueError, match=re.escape(f"n must be >= 1 and length >= order={lm.order}; got n={n}, length={length}")):
            sample_prompts(lm, n, seed=0, length=length)


def test_sample_prompts_of_exactly_the_order_are_the_uniform_start():
    """length = order is allowed by the check: the prompts are the uniform first tokens alone, the same
    ones a longer prompt of the same seed starts with (both samplers)."""
    from sims.watermarks import null_sampler

    lm = open_synthetic("tiny")
    for sample in (sample_prompts, null_sampler.sample_prompts):
        short, longer = sample(lm, 3, seed=4, length=lm.order), sample(lm, 3, seed=4, length=lm.order + 5)
        assert short.shape == (3, lm.order) and (short == longer[:, : lm.order]).all()
