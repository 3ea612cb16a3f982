"""Exact log-probabilities of the tokens of texts under a synthetic LM: what perplexity reads.

:math:`\\log p(y_t \\mid \\text{prompt}, y_{<t})` for every token of every text, from the LM's own
next-token law (:mod:`sims.lm.synthetic`) in O(1) per token: the token's unnormalised weight is its
level's tabulated :math:`T_{l,(y + \\mathrm{off}) \\bmod V}` (or :math:`e^{\\ell}` where it is one of
the context's bumped tokens), the normaliser the level's :math:`Z_l` corrected for the bumped tokens
-- the numbers of :func:`sims.lm.synthetic.probs_along`, without writing the (T, V) rows.  A Numba
kernel, parallel over texts; :func:`token_logprobs_reference` is the NumPy path from
:meth:`SyntheticLM.probs` (exponentials of the full logits), tested equal.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from sims.lm.synthetic import N_BUMPS, SyntheticLM, base_index, context_into


@njit(cache=True, parallel=True)
def _token_logprobs(V, order, seed, params, levels, base, table, level_sums, prompts, tokens, lengths, out):
    n, T = tokens.shape
    P = prompts.shape[1]
    for i in prange(n):
        mod_tok = np.empty(N_BUMPS, dtype=np.int64)
        mod_logit = np.empty(N_BUMPS)
        seq = np.empty(P + T, dtype=np.int64)
        seq[:P] = prompts[i]
        seq[P:] = tokens[i]
        for t in range(T):
            if t >= lengths[i]:
                out[i, t] = np.nan
                continue
            level, off, m, _ = context_into(V, order, seed, params, levels, base, seq[: P + t], mod_tok, mod_logit)
            row = table[level]
            s = level_sums[level, 0]
            y = seq[P + t]
            w = row[base_index(y, off, V)]
            for q in range(m):
                e = math.exp(mod_logit[q])
                s += e - row[base_index(mod_tok[q], off, V)]
                if mod_tok[q] == y:
                    w = e
            out[i, t] = math.log(w) - math.log(s)


def _check(lm: SyntheticLM, prompts, tokens, lengths):
    prompts = np.ascontiguousarray(prompts, dtype=np.int64)
    tokens = np.ascontiguousarray(tokens, dtype=np.int64)
    if tokens.ndim != 2 or prompts.ndim != 2 or prompts.shape[0] != tokens.shape[0]:
        raise ValueError(f"tokens (n, T) and prompts (n, P) must share n; got {tokens.shape} and {prompts.shape}")
    n, T = tokens.shape
    lengths = np.full(n, T, dtype=np.int64) if lengths is None else np.ascontiguousarray(lengths, dtype=np.int64)
    if lengths.shape != (n,) or np.any(lengths < 0) or np.any(lengths > T):
        raise ValueError(f"lengths must have shape ({n},) and values in [0, {T}]")
    if prompts.shape[1] < lm.order:
        raise ValueError(f"prompts must hold at least order={lm.order} tokens; got {prompts.shape[1]}")
    inside = np.arange(T)[None, :] < lengths[:, None]
    if prompts.size and (prompts.min() < 0 or prompts.max() >= lm.vocab_size):
        raise ValueError(f"prompt ids must be in [0, {lm.vocab_size - 1}] (a synthetic LM's prompts are not padded)")
    if np.any(inside & ((tokens < 0) | (tokens >= lm.vocab_size))):
        raise ValueError(f"token ids must be in [0, {lm.vocab_size - 1}] within each text's length")
    return prompts, np.where(inside, tokens, 0), lengths


def token_logprobs(lm: SyntheticLM, prompts: np.ndarray, tokens: np.ndarray, lengths: np.ndarray | None = None) -> np.ndarray:
    r"""Natural log-probability of every token of every text under the synthetic LM ``lm``.

    .. math:: \ell_{i,t} = \log p\bigl(y_{i,t} \mid x_i, y_{i,<t}\bigr)

    with :math:`x_i` the prompt row i and :math:`p` the LM's exact next-token law (module docstring).

    Parameters
    ----------
    lm : SyntheticLM
    prompts : ndarray (n, P) of int
        Each text's prompt (P >= ``lm.order``).
    tokens : ndarray (n, T) of int
        The texts; entries at or past ``lengths[i]`` are padding (never read).
    lengths : ndarray (n,) of int, optional
        Tokens of each text (default T).

    Returns
    -------
    ndarray (n, T) of float64
        :math:`\ell_{i,t}`, nan past each text's length.

    Examples
    --------
    >>> import numpy as np, sims
    >>> from sims.lm.logprobs import token_logprobs
    >>> lm = sims.get_lm("tiny").synthetic
    >>> lp = token_logprobs(lm, np.array([[0]]), np.array([[3, 1]]))
    >>> np.allclose(np.exp(lp[0, 0]), lm.next_probs([0])[3])
    True
    """
    prompts, tokens, lengths = _check(lm, prompts, tokens, lengths)
    out = np.empty(tokens.shape)
    _token_logprobs(lm.vocab_size, lm.order, lm.seed, lm.params, lm.levels, lm.base, lm.table, lm.level_sums, prompts, tokens, lengths, out)
    return out


def token_logprobs_reference(lm: SyntheticLM, prompts: np.ndarray, tokens: np.ndarray, lengths: np.ndarray | None = None) -> np.ndarray:
    """:func:`token_logprobs` by the NumPy path: :meth:`SyntheticLM.probs` (the full softmax) at every position.

    Parameters
    ----------
    lm : SyntheticLM
        The LM.
    prompts : ndarray of int, shape (n, P)
        Prompts.
    tokens : ndarray of int, shape (n, T)
        Texts.
    lengths : ndarray of int, shape (n,), optional
        Tokens of each text.

    Returns
    -------
    ndarray, shape (n, T)
        Natural log-probability of each token, nan past each text's length.
    """
    prompts, tokens, lengths = _check(lm, prompts, tokens, lengths)
    out = np.full(tokens.shape, np.nan)
    for i in range(tokens.shape[0]):
        seq = np.concatenate([prompts[i], tokens[i]])
        for t in range(int(lengths[i])):
            P = prompts.shape[1]
            out[i, t] = math.log(lm.probs(seq[: P + t])[seq[P + t]])
    return out
