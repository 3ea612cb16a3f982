"""sequential_score_family's defaults and inputs (sims.detect.families.sequential_scores): repeated (context, token)
pairs are scored once unless told otherwise, and only the last h prompt ids are a text's first context."""

from __future__ import annotations

import numpy as np
import pytest

from sims.core.record import Generation
from sims.detect.families import sequential_scores as SS


def _gen(tokens, prompts, h):
    z = np.zeros(tokens.shape)
    meta = dict(lm="news", vocab_size=1000, algo="ems", key=3, h=h, gamma=0.25, green_kind="bernoulli")
    return Generation(tokens, prompts, z, z, z, z, z, meta)


@pytest.mark.parametrize("name", ["ems-log", "ems-ars"])
def test_default_scores_each_context_token_pair_once(name):
    """Text 0 repeats one (context, token) pair 40 times: scored once by default (dedup=True) and 40 times with
    dedup=False; text 1 (seed 2, 40 uniform ids of 1000) is the same either way where it repeats no pair.
    Kills ``dedup: bool = True`` -> ``False``."""
    rng = np.random.default_rng(2)
    tokens = np.stack([np.full(40, 7), rng.integers(0, 1000, size=40)])
    gen = _gen(tokens, np.array([[7], [1]]), 1)
    d, on, off = (SS.sequential_score_family(gen, name, alpha=1e-3, **kw) for kw in ({}, dict(dedup=True), dict(dedup=False)))
    assert d.n_scored[0] == 1 and off.n_scored[0] == 40
    np.testing.assert_array_equal(d.n_scored, on.n_scored)
    np.testing.assert_array_equal(d.score, on.score)
    np.testing.assert_array_equal(d.stop, on.stop)


def test_only_the_last_h_prompt_ids_count():
    """h = 2: a generation whose prompts are 5 ids wide scores as the one holding only their last 2
    (kills ``gen.prompts[:, -m["h"]:]`` -> ``gen.prompts[:, +m["h"]:]``, which keeps 3 of the 5)."""
    rng = np.random.default_rng(3)
    tokens, prompts = rng.integers(0, 1000, size=(3, 30)), rng.integers(0, 1000, size=(3, 5))
    wide = SS.sequential_score_family(_gen(tokens, prompts, 2), "ems-log", alpha=1e-3)
    last = SS.sequential_score_family(_gen(tokens, prompts[:, -2:], 2), "ems-log", alpha=1e-3)
    np.testing.assert_array_equal(wide.score, last.score)
    np.testing.assert_array_equal(wide.n_scored, last.n_scored)
