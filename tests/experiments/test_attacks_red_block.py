"""The red block of the oracle attacks with a context of h = 2 tokens, against exhaustive search.

With h > 1 there is no dynamic programme (``_least_green_block`` is for h = 1): ``_red_block`` takes
the first red token in each context, and when the last one cannot leave the successor red it
re-chooses the last two tokens.  On a vocabulary of V = 6, m = 3, for every two-token context and
successor of two keys at gamma 0.5 and two at 0.75, wherever the greedy block is all red but leaves the
successor green: the returned block has m tokens, each red in its own context, ``flipped`` says
whether the successor is red after it, and it is flipped exactly when some red pair of last tokens
after the block's first m - 2 tokens turns the successor red (every one of the V^2 pairs tried).
"""

from __future__ import annotations

import itertools
from types import SimpleNamespace

import numpy as np
import pytest

from sims.experiments import attacks

V = 6


def _table(gen) -> np.ndarray:
    """green[a, b, t]: token t is green after the context (a, b)."""
    return np.array([[attacks._green(gen, np.array([a, b]), np.arange(V)) for b in range(V)] for a in range(V)], dtype=bool)


@pytest.mark.parametrize("M", [2, 3])
@pytest.mark.parametrize("gamma, keys", [(0.5, range(2)), (0.75, range(2, 4))])
def test_h2_red_block_reaches_a_red_successor_whenever_a_red_last_pair_does(gamma, keys, M):
    checked = flipped_seen = 0
    for key in keys:
        gen = SimpleNamespace(meta=dict(h=2, key=key, gamma=gamma))
        g = _table(gen)
        red = lambda seq, t: not g[seq[-2], seq[-1], t]  # noqa: E731
        for ctx in itertools.product(range(V), repeat=2):
            for succ in range(V):
                greedy = list(ctx)
                for j in range(M):  # the greedy block: the first red token, the last one chosen for the successor
                    greedy.append(attacks._red_token(gen, np.array(greedy), V, successor=succ if j == M - 1 else None))
                if not all(red(greedy[: 2 + j], greedy[2 + j]) for j in range(M)) or red(greedy, succ):
                    continue  # the fall-back is not reached
                block, flipped, n_green = attacks._red_block(gen, np.array(ctx), M, V, succ)
                full = [*ctx, *block.tolist()]
                assert block.shape == (M,) and block[: M - 2].tolist() == greedy[2:M]
                assert n_green == 0 and all(red(full[: 2 + j], full[2 + j]) for j in range(M)), (key, ctx, succ, block)
                assert flipped == red(full, succ)
                pre = greedy[:M]  # the context and the block's first m - 2 tokens
                exists = any(red(pre, a) and red([pre[-1], a], b) and red([a, b], succ) for a in range(V) for b in range(V))
                assert flipped == exists, (key, ctx, succ, block)
                checked += 1
                flipped_seen += flipped
    assert checked >= 10 and flipped_seen > 0  # the fall-back is reached and succeeds
