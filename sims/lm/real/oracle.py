"""A real LM asked the two questions a synthetic LM answers exactly.

The LM-dependent attacks (``entropy``, ``paraphrase``, the colour and score oracles) ask
``next_probs(context)``: the next-token distribution after one context; UW / ITS detection asks
``probs_along(seq, P, T)``: the T distributions along a text (:func:`sims.detect.stats.scores.lm_step_probs`).
:class:`ModelOracle` answers both from a causal LM's softmax, so those attacks and detectors run on
SmolLM2 unchanged.

The attacks walk a text left to right, each context the previous one plus a few tokens (earlier
replacements included), so :meth:`ModelOracle.next_probs` keeps the key-value cache of its last
context, cut back to the longest prefix the new context shares with it, and runs the model on the
new tokens only: a text costs about one forward pass instead of one per attacked position.

:func:`teacher_forced_probs` gives the model's next-token distributions along saved texts
(batched, one chunk of rows in memory at a time): what ITS / UW detection reads through
:meth:`sims.lm.door.LM.step_probs`.
"""

from __future__ import annotations

import numpy as np
import torch

from sims.core.record import Generation
from sims.lm.real import batch as batching
from sims.lm.real.model import cached_forward, new_cache

PROBS_BYTES = 1 << 28  #: teacher-forced probabilities held at once (bytes)


class ModelOracle:
    """Next-token probabilities of a causal LM, as :class:`sims.lm.synthetic.SyntheticLM` gives them.

    Parameters
    ----------
    model : transformers causal LM
        In eval mode, on any device.
    vocab_size : int
        The sampled vocabulary (:func:`sims.lm.real.model.sampled_vocab`): distributions are
        the softmax over the first ``vocab_size`` logits, as the generators sample.

    Token ids below 0 (a generation's left-padded prompts, an attacked text's right padding) are
    not tokens: contexts drop them, and a text's padding is read as id 0, never looked at.
    """

    def __init__(self, model, vocab_size: int):
        if int(vocab_size) < 2:
            raise ValueError(f"vocab_size must be in [2, inf); got {vocab_size!r}")
        self.model = model
        self.vocab_size = int(vocab_size)
        self._device = next(model.parameters()).device
        self._ids = np.zeros(0, dtype=np.int64)  # the context the cache holds
        self._cache = None

    def _softmax(self, logits: torch.Tensor) -> np.ndarray:
        return torch.softmax(logits[..., : self.vocab_size].double(), -1).cpu().numpy()

    @torch.no_grad()
    def next_probs(self, context) -> np.ndarray:
        """The (V,) float64 distribution of the token after ``context`` (ids; negatives dropped).

        The key-value cache is kept between calls and cropped to the prefix the new context shares with the last one,
        so extending a context token by token runs one new token per call.

        Parameters
        ----------
        context : array_like of int
            Token ids, oldest first; at least one >= 0.

        Returns
        -------
        ndarray of float64, shape (V,)
            The softmax of the first V logits.
        """
        ids = np.asarray(context, dtype=np.int64)
        ids = ids[ids >= 0]
        if ids.size == 0:
            raise ValueError("context must hold at least one token id >= 0; got none")
        m = min(self._ids.size, ids.size - 1)  # at least one new token is run
        differ = np.flatnonzero(self._ids[:m] != ids[:m])
        keep = int(differ[0]) if differ.size else m
        if keep == 0:
            self._cache = new_cache(self.model)
        else:
            self._cache.crop(keep - self._ids.size)  # a count of tokens to remove (<= 0)
        x = torch.from_numpy(ids[keep:]).to(self._device)[None]
        out = cached_forward(self.model, self._cache, input_ids=x)
        self._ids = ids
        return self._softmax(out.logits[0, -1])

    @torch.no_grad()
    def probs_along(self, seq, P: int, T: int) -> np.ndarray:
        """The (T, V) float64 distributions of tokens ``seq[P:P + T]`` given what precedes each
        (``seq``: a prompt row of width ``P`` then the text; one teacher-forced forward pass).

        Parameters
        ----------
        seq : array_like of int
            Prompt row (negatives are pads), then the text.
        P : int
            Width of the prompt row.
        T : int
            Number of text positions.

        Returns
        -------
        ndarray of float64, shape (T, V)
            The next-token distributions.
        """
        seq = np.asarray(seq, dtype=np.int64)
        prompt = seq[:P][seq[:P] >= 0]
        if prompt.size == 0:
            raise ValueError("the prompt must hold at least one token id >= 0; got none")
        ids = np.concatenate([prompt, np.maximum(seq[P : P + T], 0)])
        x = torch.from_numpy(ids).to(self._device)[None]
        logits = self.model(input_ids=x).logits[0, prompt.size - 1 : prompt.size - 1 + T]
        return self._softmax(logits)

def teacher_forced_probs(model, gen: Generation, vocab_size: int | None = None, chunk: int | None = None):
    """``step_probs(i)``: the model's (T, V) next-token distributions along text i (float64),
    computed for ``chunk`` rows per forward pass (left-padded, masked) and kept one chunk at a time
    (default: as many rows as ``PROBS_BYTES`` of float32 probabilities allow).

    Parameters
    ----------
    model : transformers.PreTrainedModel
        The causal LM.
    gen : Generation
        The texts.
    vocab_size : int, optional
        Sampled vocabulary (default the generation's).
    chunk : int, optional
        Rows per forward pass.

    Returns
    -------
    callable
        ``step_probs(i) -> ndarray of shape (T, V)``.
    """
    V = int(vocab_size or gen.meta["vocab_size"])
    n, T = gen.tokens.shape
    chunk = chunk or max(1, PROBS_BYTES // (4 * T * V))
    device = next(model.parameters()).device
    cache: dict = {}

    @torch.no_grad()
    def step_probs(i):
        start = (i // chunk) * chunk
        if cache.get("start") != start:
            rows = range(start, min(n, start + chunk))
            # a row that ended early is filled with id 0 past its end: causal attention keeps its
            # real steps' distributions, and the filled ones are never read
            seqs = [np.concatenate([gen.prompt(r), np.maximum(gen.tokens[r], 0)]) for r in rows]
            ids, lens = batching.pad_left(seqs)
            x, mask, pos = batching.model_inputs(ids, device)
            logits = model(input_ids=x, attention_mask=mask, position_ids=pos).logits[:, -T - 1 : -1, :V]
            cache.update(start=start, probs=torch.softmax(logits.float(), -1).cpu())
        return cache["probs"][i - start].double().numpy()

    return step_probs
