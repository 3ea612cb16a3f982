"""Unwatermarked text from a synthetic LM in O(log V) per token: the ``levels`` sampler.

A synthetic LM's next-token weights after a context (:mod:`sims.lm.synthetic`) are its level's
tabulated row :math:`T_{l,j}` read rotated by the context's offset (token k weighs
:math:`T_{l,(k + \\mathrm{off}) \\bmod V}`), except at most ``N_BUMPS`` bumped tokens whose weight is
:math:`e^{m_q}`.  With the prefix sums :math:`C_{l,j} = \\sum_{i<j} T_{l,i}` tabulated once per LM, the
cumulative weight of the tokens :math:`0..k` in id order is

.. math::
    F(k) = C_{l,\\min(V, k + 1 + \\mathrm{off})} - C_{l,\\mathrm{off}} + C_{l,\\max(0, k + 1 + \\mathrm{off} - V)}
    + \\sum_{q:\\, t_q \\le k} (e^{m_q} - T_{l,(t_q + \\mathrm{off}) \\bmod V}),

so the inverse-CDF draw of the generator's ``none`` step (the first token whose cumulative weight
reaches :math:`u s`, :math:`s = F(V - 1)`, in id order) is a binary search on :math:`F` between the
bumped tokens: :math:`O(\\log V)` per token instead of the :math:`O(V)` green-mass pass that
:func:`sims.watermarks.generate.generate_synthetic` makes for its exact records.  The uniform of step t of
text i is lane ``2 t`` of the counter stream (seed, i), as there.

The next-token distribution is the same (:func:`implied_probs` returns the one this sampler draws
from, tested equal to :meth:`~sims.lm.synthetic.SyntheticLM.probs_along`); the texts agree with the
generator's on a fixed seed except where a uniform falls within rounding of a token boundary
(its masses are summed in blocks, these are differences of prefix sums), which then changes the rest
of that text.  That is why the sampler is opt-in (a sweep grid's ``sampler = "levels"``): seeded
outputs of the default generator do not move.  The records are those that need no pass over the
vocabulary: KL = 0 and the entropy of :math:`p_t` (exact, :math:`O(1)` from the level's sums); the
green mass G and DG are nan.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from sims.core import defaults, rng
from sims.core.record import Generation
from sims.lm import synthetic as lm_mod
from sims.lm.synthetic import SyntheticLM
from sims.watermarks import registry
from sims.watermarks.generate import uniform_start

SAMPLERS = ("blocks", "levels")  #: the generator's exact-record sampler (default), this module's


def prefix_sums(lm: SyntheticLM) -> np.ndarray:
    """:math:`C_{l,j} = \\sum_{i<j} T_{l,i}`, shape ``(N_LEVELS, V + 1)`` (cumulative sums of :attr:`SyntheticLM.table`).

    Parameters
    ----------
    lm : SyntheticLM
        The synthetic LM whose per-level weight table :math:`T` is summed.

    Returns
    -------
    (N_LEVELS, V + 1) float array
        :math:`C_{l,0} = 0` and :math:`C_{l,j}` the weight of tokens 0..j-1 at level l, in id order.
    """
    C = np.zeros((lm.table.shape[0], lm.vocab_size + 1))
    np.cumsum(lm.table, axis=1, out=C[:, 1:])
    return C


@njit(cache=True, inline="always")
def _plain_cum(C, off, V, k):
    """Cumulative unbumped weight of tokens 0..k in id order (k = -1: 0)."""
    j = k + 1 + off
    if j <= V:
        return C[j] - C[off]
    return C[V] - C[off] + C[j - V]


@njit(cache=True)
def _sorted_bumps(lm_state, mod_tok, mod_logit, row, V, tok, delta):
    """The bumped tokens in id order (``tok``) with their weight changes ``delta``; returns the total weight s."""
    level, off, n, _ = lm_state
    for q in range(n):
        tok[q] = mod_tok[q]
        delta[q] = math.exp(mod_logit[q]) - row[lm_mod.base_index(mod_tok[q], off, V)]
    for a in range(1, n):  # insertion sort of at most N_BUMPS
        b = a
        while b > 0 and tok[b - 1] > tok[b]:
            tok[b - 1], tok[b] = tok[b], tok[b - 1]
            delta[b - 1], delta[b] = delta[b], delta[b - 1]
            b -= 1
    s = 0.0
    for q in range(n):
        s += delta[q]
    return s


@njit(cache=True)
def _search(C, off, V, lo, hi, x):
    """The first k in [lo, hi] with plain cumulative weight >= x (hi if none)."""
    while lo < hi:
        mid = (lo + hi) // 2
        if _plain_cum(C, off, V, mid) >= x:
            hi = mid
        else:
            lo = mid + 1
    return lo


@njit(cache=True)
def draw_next(C, off, n, tok, delta, s, V, u):
    """The token at which the cumulative weight in id order first reaches ``u * s`` (module docstring);
    ``tok[:n]``, ``delta[:n]``: the bumped tokens in id order and their weight changes."""
    x = u * s
    d = 0.0  # weight change of the bumped tokens passed
    lo = 0
    for q in range(n):
        t = tok[q]
        if lo <= t - 1 and _plain_cum(C, off, V, t - 1) + d >= x:
            return _search(C, off, V, lo, t - 1, x - d)
        d += delta[q]
        if _plain_cum(C, off, V, t) + d >= x:
            return t
        lo = t + 1
    if lo > V - 1:  # rounding left the target unreached after a bumped last token
        return tok[n - 1]
    return _search(C, off, V, lo, V - 1, x - d)


@njit(cache=True)
def _entropy(lm_state, mod_tok, mod_logit, levels, base, level_sums, row, s):
    """:math:`H(p_t) = \\log s - \\frac1s \\sum_k w_k \\log w_k` from the level's sums, corrected at the bumped tokens."""
    level, off, n, _ = lm_state
    beta = levels[level]
    acc = beta * level_sums[level, 1]
    V = base.shape[0]
    for q in range(n):
        j = lm_mod.base_index(mod_tok[q], off, V)
        acc += math.exp(mod_logit[q]) * mod_logit[q] - row[j] * beta * base[j]
    return math.log(s) - acc / s


@njit(cache=True, parallel=True)
def _sample(V, order, lm_seed, params, levels, base, table, level_sums, C, prompts, T, seed, tokens, entropy):
    """Every text (row of ``prompts``) in parallel: T draws of :func:`draw_next`, lane 2t of stream (seed, i)."""
    n, P = prompts.shape
    for i in prange(n):
        ctx = np.empty(P + T, dtype=np.int64)
        ctx[:P] = prompts[i]
        mod_tok = np.empty(lm_mod.N_BUMPS, dtype=np.int64)
        mod_logit = np.empty(lm_mod.N_BUMPS)
        tok = np.empty(lm_mod.N_BUMPS, dtype=np.int64)
        delta = np.empty(lm_mod.N_BUMPS)
        skey = rng.stream_key_nb(seed, i)
        for t in range(T):
            L = P + t
            lm_state = lm_mod.context_into(V, order, lm_seed, params, levels, base, ctx[:L], mod_tok, mod_logit)
            level, off, n_mod, _ = lm_state
            row = table[level]
            s = level_sums[level, 0] + _sorted_bumps(lm_state, mod_tok, mod_logit, row, V, tok, delta)
            y = draw_next(C[level], off, n_mod, tok, delta, s, V, rng.uniform_nb(skey, 2 * t))
            tokens[i, t] = y
            entropy[i, t] = _entropy(lm_state, mod_tok, mod_logit, levels, base, level_sums, row, s)
            ctx[L] = y


@njit(cache=True)
def _implied(V, order, lm_seed, params, levels, base, table, level_sums, C, seq, P, out):
    """``out[t, k]`` = the probability that :func:`draw_next` returns k after ``seq[:P + t]``: the
    increments of the cumulative weight it searches, over s."""
    mod_tok = np.empty(lm_mod.N_BUMPS, dtype=np.int64)
    mod_logit = np.empty(lm_mod.N_BUMPS)
    tok = np.empty(lm_mod.N_BUMPS, dtype=np.int64)
    delta = np.empty(lm_mod.N_BUMPS)
    for t in range(out.shape[0]):
        lm_state = lm_mod.context_into(V, order, lm_seed, params, levels, base, seq[: P + t], mod_tok, mod_logit)
        level, off, n_mod, _ = lm_state
        s = level_sums[level, 0] + _sorted_bumps(lm_state, mod_tok, mod_logit, table[level], V, tok, delta)
        prev = 0.0
        q = 0
        d = 0.0
        for k in range(V):
            if q < n_mod and tok[q] == k:
                d += delta[q]
                q += 1
            cum = _plain_cum(C[level], off, V, k) + d
            out[t, k] = (cum - prev) / s
            prev = cum


def _tables(lm: SyntheticLM):
    return (lm.vocab_size, lm.order, lm.seed, lm.params, lm.levels, lm.base, lm.table, lm.level_sums, prefix_sums(lm))


def implied_probs(lm: SyntheticLM, seq, P: int, T: int) -> np.ndarray:
    """(T, V): the distribution the ``levels`` sampler draws token ``P + t`` of ``seq`` from, for t < T.

    Equal to :meth:`sims.lm.synthetic.SyntheticLM.probs_along` up to rounding (the test's tolerance is 1e-12).

    Parameters
    ----------
    lm : SyntheticLM
    seq : array of int
        Token ids, at least ``P + T - 1`` of them.
    P, T : int
        The first context's length (>= ``lm.order``) and the number of steps.

    Returns
    -------
    ndarray (T, V)

    References
    ----------
    Towards Better Statistical Understanding of Watermarking LLMs, Section 2: the unwatermarked LM p.

    Examples
    --------
    >>> import sims
    >>> from sims.watermarks.null_sampler import implied_probs
    >>> lm = sims.get_lm("tiny").synthetic
    >>> bool(abs(implied_probs(lm, [0, 1], 1, 2) - lm.probs_along([0, 1], 1, 2)).max() < 1e-12)
    True
    """
    seq = np.ascontiguousarray(seq, dtype=np.int64)
    if int(P) < lm.order or int(T) < 1 or seq.size < int(P) + int(T) - 1:
        raise ValueError(f"P must be >= order={lm.order}, T >= 1 and seq hold P + T - 1 tokens; got P={P}, T={T}, len(seq)={seq.size}")
    out = np.empty((int(T), lm.vocab_size))
    _implied(*_tables(lm), seq, int(P), out)
    return out


def sample_prompts(lm: SyntheticLM, n: int, seed: int, length: int = 16) -> np.ndarray:
    """Prompts as :func:`sims.watermarks.generate.sample_prompts` makes them (the first ``lm.order`` tokens
    uniform from ``numpy.random.default_rng(seed)``, then the LM), the LM's tokens drawn by this sampler.

    Parameters
    ----------
    lm : SyntheticLM
        The LM that continues the prompts.
    n : int
        Number of prompts.
    seed : int
        Sampling seed (the uniform start and the sampler's stream).
    length : int
        Tokens per prompt, at least ``lm.order`` (default 16).

    Returns
    -------
    (n, length) int64 array
        The prompts: ``lm.order`` uniform tokens, then ``length - lm.order`` tokens drawn by :func:`draw_next`.
    """
    first = uniform_start(lm, n, seed, length)
    if int(length) == lm.order:
        return first
    toks = np.empty((int(n), int(length) - lm.order), dtype=np.int64)
    _sample(*_tables(lm), first, toks.shape[1], int(seed), toks, np.empty(toks.shape))
    return np.concatenate([first, toks], axis=1)


def generate_null(lm: SyntheticLM, *, n: int, T: int, seed: int, key: int, gamma=None, h: int = defaults.H,
                  green_kind: str = defaults.GREEN_KIND, prompts: np.ndarray | None = None, prompt_len: int = 16) -> Generation:
    """``n`` unwatermarked texts of ``T`` tokens (algorithm ``none``) by the O(log V) ``levels`` sampler.

    The same next-token distributions as ``sims.generate(lm, "none", ...)``, other texts for the same
    seed (module docstring); ``meta`` is that generator's plus ``sampler = "levels"``.

    Parameters
    ----------
    lm : SyntheticLM
    n, T : int
        Number of texts and tokens per text.
    seed : int
        Sampling seed (text i uses counter stream (seed, i)); the prompts use it too.
    key, gamma, h, green_kind :
        The detector's keying, kept in ``meta`` (the texts do not depend on them).
    prompts : ndarray (n, P), optional
        Prompt token ids; default :func:`sample_prompts` ``(lm, n, seed, prompt_len)``.
    prompt_len : int
        Length of the sampled prompts.

    Returns
    -------
    Generation
        Texts, KL = 0, the exact entropy of :math:`p_t`; G, DG and lambda nan.

    References
    ----------
    Towards Better Statistical Understanding of Watermarking LLMs, Section 2: the unwatermarked LM p, the
    null hypothesis of every detector.

    Examples
    --------
    >>> import sims
    >>> from sims.watermarks.null_sampler import generate_null
    >>> gen = generate_null(sims.get_lm("news").synthetic, n=2, T=5, seed=0, key=42)
    >>> gen.tokens.shape, gen.meta["sampler"]
    ((2, 5), 'levels')
    """
    if int(n) < 1 or int(T) < 1:
        raise ValueError(f"n and T must be in [1, inf); got n={n}, T={T}")
    if int(h) < 0:
        raise ValueError(f"h must be in [0, inf); got {h!r}")
    if not (0 <= int(key) < 2**64):
        raise ValueError(f"key must be in [0, 2**64); got {key!r}")
    if green_kind not in ("bernoulli", "partition"):
        raise ValueError(f"green_kind must be 'bernoulli' or 'partition'; got {green_kind!r}")
    info = registry.resolve_params("none", gamma=gamma)
    if prompts is None:
        prompts = sample_prompts(lm, n, seed, prompt_len)
    prompts = np.ascontiguousarray(prompts, dtype=np.int64)
    if prompts.ndim != 2 or prompts.shape[0] != n or prompts.shape[1] < max(lm.order, h):
        raise ValueError(f"prompts must have shape (n={n}, P >= {max(lm.order, h)}); got {prompts.shape}")
    if prompts.min() < 0 or prompts.max() >= lm.vocab_size:
        raise ValueError(f"prompt token ids must be in [0, {lm.vocab_size - 1}]")
    tokens = np.empty((int(n), int(T)), dtype=np.int64)
    entropy = np.empty((int(n), int(T)))
    _sample(*_tables(lm), prompts, int(T), int(seed), tokens, entropy)
    nan = np.full(tokens.shape, np.nan)
    meta = dict(lm=lm.name, vocab_size=lm.vocab_size, lm_seed=lm.seed, algo="none", key=int(key), seed=int(seed), h=int(h),
                green_kind=green_kind, **info, sampler="levels")
    return Generation(tokens, prompts, np.zeros(tokens.shape), nan, nan.copy(), entropy, nan.copy(), meta)
