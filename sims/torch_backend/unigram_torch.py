"""Unigram's torch processor (:mod:`sims.watermarks.unigram`): SRL's boost of the key's one green list."""

from __future__ import annotations

from sims.core import defaults
from sims.torch_backend.processors import SRLProcessor, processor
from sims.watermarks import unigram


@processor
class UnigramProcessor(SRLProcessor):
    """Unigram (Zhao et al. 2023, Algorithm 1): the logits plus ``delta`` on one fixed keyed green list.

    :class:`SRLProcessor` at context width 0: the window read is empty, so every row and step boosts the
    green list of the empty context (the same bits as :func:`sims.watermarks.unigram.green_list`); the
    unfused path (the fused kernels hash a window of width >= 1)."""

    name = "unigram"

    def __init__(self, *, vocab_size: int, key: int = defaults.KEY, gamma: float = unigram.GAMMA, delta: float = defaults.DELTA,
                 h: int = 0):
        if int(h) != 0:
            raise ValueError(f"h must be 0 for Unigram (one green list for every context); got {h!r}")
        super().__init__(vocab_size=vocab_size, key=key, gamma=gamma, delta=delta, h=0, fused=False)
