"""transformers' self-hash red-green watermark (``WatermarkingConfig(seeding_scheme="selfhash")``), scored exactly.

transformers' ``WatermarkLogitsProcessor`` with ``seeding_scheme="selfhash"``, ``hashing_key`` K,
``context_width`` c and ``greenlist_ratio`` gamma defines (read from its source, written here anew):

* a fixed table: ``torch.randperm(1_000_003)`` from a CPU generator seeded with K;
* the seed of a window w_1 .. w_c whose last token w_c is the *candidate* itself (c - 1 tokens of
  context, then the candidate): with :math:`a_j = \\mathrm{table}[w_j \\bmod 1000003] + 1` and
  :math:`b = a_c`, :math:`s = \\min_j (K a_j b)` computed on int64 wrapping modulo :math:`2^{64}` (a
  signed minimum), then :math:`s \\bmod (2^{64} - 1)` as a non-negative Python integer;
* the green list of a seed: the first ``int(gamma V)`` entries of ``torch.randperm(V)`` from a CPU
  generator seeded with s; the candidate is green iff it is in its own window's green list.

Generation boosts by ``bias`` only those of the 40 highest-scoring candidates that are green
(:class:`TransformersSelfHashProcessor` computes the same logits, tested bit for bit); its
``WatermarkDetector`` scores every token from the c-th on (its window the c tokens ending at it)
with the normal approximation of the green count.

**Null and dedup.**  The window's own term :math:`K b^2` does not depend on the context: when it is the
minimum (about one window in c), the token's colour is the same in every context.  transformers'
``ignore_repeated_ngrams`` counts each distinct c-gram once, so such a token repeated after different
contexts counts its one colour several times.  Our ``dedup`` counts each distinct (seed, token)
pair once: distinct seeds give independent permutations, so the green count is then Binomial(n,
int(gamma V) / V) up to the without-replacement dependence of different tokens under one seed (as
for transformers' lefthash); without dedup the counts equal ``WatermarkDetector``'s exactly.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import torch

#: Size of transformers' fixed self-hash table: ``randperm(1_000_003)``, a token id taken modulo it.
TABLE_SIZE = 1_000_003
TOP_CANDIDATES = 40  #: transformers checks only the 40 highest-scoring candidates
_MASK = (1 << 64) - 1


@lru_cache(maxsize=4)
def fixed_table(hashing_key: int) -> np.ndarray:
    """transformers' fixed table of its key: ``randperm(1_000_003)`` on a CPU generator seeded ``hashing_key``.

    Parameters
    ----------
    hashing_key : int
        transformers' ``hashing_key``.

    Returns
    -------
    numpy.ndarray
        (:data:`TABLE_SIZE`,) int64 permutation (cached for the last four keys).
    """
    g = torch.Generator(device="cpu")
    g.manual_seed(int(hashing_key))
    return torch.randperm(TABLE_SIZE, generator=g).numpy()


def _signed(x: int) -> int:
    x &= _MASK
    return x - (1 << 64) if x >= 1 << 63 else x


class SelfHashGreenLists:
    """transformers' self-hash green lists of one key (module docstring); lists are cached by seed.

    Parameters
    ----------
    vocab_size : int
        V, what ``randperm`` permutes (the model config's ``vocab_size``).
    gamma : float
        ``greenlist_ratio`` in (0, 1).
    hashing_key : int
        transformers' ``hashing_key`` (an int64).
    context_width : int
        c >= 1: the window is c - 1 tokens of context and the candidate.
    """

    def __init__(self, vocab_size: int, gamma: float, hashing_key: int, context_width: int = 1):
        if int(vocab_size) < 2:
            raise ValueError(f"vocab_size must be in [2, inf); got {vocab_size!r}")
        if not 0.0 < float(gamma) < 1.0:
            raise ValueError(f"gamma must be in (0, 1); got {gamma!r}")
        if not -(1 << 63) <= int(hashing_key) < 1 << 63:
            raise ValueError(f"hashing_key must be an int64 in [-2**63, 2**63); got {hashing_key!r}")
        if int(context_width) < 1:
            raise ValueError(f"context_width must be in [1, inf); got {context_width!r}")
        self.V, self.gamma, self.key, self.c = int(vocab_size), float(gamma), int(hashing_key), int(context_width)
        self.size = int(self.V * self.gamma)
        self.table = fixed_table(self.key)
        self._lists: dict[int, np.ndarray] = {}

    def seed(self, window) -> int:
        r"""The seed of a window (its last ``context_width`` ids; the last is the candidate).

        Parameters
        ----------
        window : sequence of int
            Token ids, the candidate last.

        Returns
        -------
        int
            :math:`\min_j (K a_j b) \bmod (2^{64} - 1)` (module docstring), non-negative.
        """
        w = [int(x) for x in window][-self.c :]
        b = int(self.table[w[-1] % TABLE_SIZE]) + 1
        s = min(_signed(self.key * (int(self.table[x % TABLE_SIZE]) + 1) * b) for x in w)
        return s % (_MASK)

    def green_list(self, seed: int) -> np.ndarray:
        """The green list of ``seed``: the first ``int(gamma V)`` entries of ``torch.randperm(V)`` seeded with it.

        Parameters
        ----------
        seed : int
            A seed (:meth:`seed`).

        Returns
        -------
        numpy.ndarray
            (V,) bool (cached by seed).
        """
        if seed not in self._lists:
            g = torch.Generator(device="cpu")
            g.manual_seed(seed)
            mask = np.zeros(self.V, dtype=bool)
            mask[torch.randperm(self.V, generator=g)[: self.size].numpy()] = True
            self._lists[seed] = mask
        return self._lists[seed]

    def is_green(self, window) -> bool:
        """Whether the window's last token is green.

        Parameters
        ----------
        window : sequence of int
            Token ids, the candidate last.

        Returns
        -------
        bool
        """
        return bool(self.green_list(self.seed(window))[int(window[-1])])


def selfhash_marks(rows: list[np.ndarray], vocab_size: int, gamma: float, hashing_key: int, context_width: int = 1,
                   dedup: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Colours of transformers' self-hash watermark on texts of token ids, as its ``WatermarkDetector`` reads them.

    The first ``context_width - 1`` ids of a text are context, each later token is scored with the window of the
    ``context_width`` ids ending at it.

    Parameters
    ----------
    rows : list of numpy.ndarray
        Token ids of each text.
    vocab_size : int
        V, what ``randperm`` permutes (the model config's ``vocab_size``).
    gamma : float
        ``greenlist_ratio`` in (0, 1).
    hashing_key : int
        transformers' ``hashing_key`` (an int64).
    context_width : int, optional
        c >= 1.
    dedup : bool, optional
        Count each (seed, token) pair once (module docstring; stricter than transformers'
        ``ignore_repeated_ngrams``).

    Returns
    -------
    green, scored : (n, T) bool
        T = longest text minus ``context_width - 1``; padding is unscored.

    Raises
    ------
    ValueError
        If ``vocab_size``, ``gamma``, ``hashing_key`` or ``context_width`` is out of range.
    """
    lists = SelfHashGreenLists(vocab_size, gamma, hashing_key, context_width)
    c = lists.c - 1
    T = max([0, *(len(r) - c for r in rows)])
    green = np.zeros((len(rows), T), dtype=bool)
    scored = np.zeros((len(rows), T), dtype=bool)
    for i, r in enumerate(rows):
        seen = set()
        for t in range(c, len(r)):
            s = lists.seed(r[t - c : t + 1])
            y = int(r[t])
            green[i, t - c] = lists.green_list(s)[y]
            scored[i, t - c] = not (dedup and (s, y) in seen)
            seen.add((s, y))
    return green, scored


class TransformersSelfHashProcessor:
    """transformers' self-hash ``WatermarkLogitsProcessor`` written from its definition.

    Each of the 40 highest-scoring candidates (``scores.sort(descending=True)`` order) that is green after the
    last ``context_width - 1`` ids gets ``+ bias``; the same logits, bit for bit (tested).

    Parameters
    ----------
    vocab_size : int
        V (the model config's ``vocab_size``).
    gamma : float, optional
        ``greenlist_ratio``.
    bias : float, optional
        The boost of the green candidates.
    hashing_key : int, optional
        transformers' ``hashing_key``.
    context_width : int, optional
        c >= 1.
    """

    def __init__(self, *, vocab_size: int, gamma: float = 0.25, bias: float = 2.0, hashing_key: int = 15485863, context_width: int = 1):
        self.lists = SelfHashGreenLists(vocab_size, gamma, hashing_key, context_width)
        self.bias = float(bias)

    def __call__(self, input_ids: torch.LongTensor, scores: torch.Tensor) -> torch.Tensor:
        if input_ids.shape[-1] < self.lists.c:
            return scores
        out = scores.clone()
        ctx_len = self.lists.c - 1
        for b in range(input_ids.shape[0]):
            ctx = input_ids[b, input_ids.shape[1] - ctx_len :].tolist() if ctx_len else []
            order = scores[b].sort(dim=-1, descending=True)[1][:TOP_CANDIDATES].tolist()
            green = [k for k in order if self.lists.is_green(ctx + [k])]
            if green:
                idx = torch.tensor(green, device=scores.device)
                out[b, idx] = out[b, idx] + self.bias
        return out
