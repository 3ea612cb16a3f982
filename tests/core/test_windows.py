"""Context windows (:mod:`sims.core.windows`) at the smallest ``h``: h = 1 is the default context of
every red-green watermark (``sims.core.defaults.H``) and must be accepted; h = 0 (Unigram: no context) gives every
token the empty window, one name for all; a negative h is refused."""

from __future__ import annotations

import numpy as np
import pytest

from sims.core import prf, windows


def test_h_1_is_the_previous_token_prompt_included():
    prompts = np.array([[9, 4], [8, 5]])
    tokens = np.array([[1, 2, 3], [6, 7, 0]])
    assert windows.windows(tokens, prompts, 1).tolist() == [[[4], [1], [2]], [[5], [6], [7]]]
    names = windows.window_names(tokens, prompts, 1)
    assert names[0, 1] == prf.context_hash(windows.PUBLIC_KEY, np.array([1]), windows.WINDOW_STREAM)
    assert names[0, 0] != names[1, 0]  # different previous tokens, different names
    assert windows.windows(tokens, prompts[:, 1:], 1).shape == (2, 3, 1)  # a one-token prompt is enough


def test_h_0_is_the_empty_window_and_negative_h_or_too_short_prompts_are_refused():
    w = windows.windows(np.array([[1, 2, 3]]), np.zeros((1, 0), dtype=np.int64), 0)
    assert w.shape == (1, 3, 0)
    names = windows.window_names(np.array([[1, 2, 3]]), np.zeros((1, 0), dtype=np.int64), 0)
    assert len(set(names[0].tolist())) == 1
    with pytest.raises(ValueError, match="h must be an integer in \\[0, inf\\); got -1"):
        windows.windows(np.array([[1]]), np.array([[2]]), -1)
    with pytest.raises(ValueError, match="prompts must hold at least h=1 tokens per text; got 0"):
        windows.windows(np.array([[1]]), np.zeros((1, 0)), 1)
