"""Synthetic autoregressive language models with exact next-token distributions.

A preset fixes a vocabulary of size V, a context width ``order`` (the LM looks at
its last ``order`` tokens) and an entropy profile.  For a context c with hash
h(c) (the keyed PRF of :mod:`sims.core.prf` under the LM's own seed and stream
``LM_STREAM``, independent of any watermark key):

.. math::
    \\ell_k(c) = \\beta(c)\\, b_k + \\sum_{j<B} s_j(c)\\, 1\\{k = t_j(c)\\} + L(c)\\, 1\\{k = t_0(c)\\}

* :math:`b_k = -\\log(1 + \\mathrm{rank}_k)` is a Zipf base over a fixed random ranking, read
  rotated by a context-dependent offset (token k takes :math:`b_{(k + \\mathrm{off}(c)) \\bmod V}`),
  so every context has its own head;
* :math:`\\beta(c)` is the context's inverse temperature, one of ``N_LEVELS`` = 32 levels
  :math:`\\beta_l = \\beta_o + (\\beta_f - \\beta_o)((l + 1/2)/32)^\\kappa` with l uniform: sharp
  "factual" contexts and flat "opinion" ones -- the entropy profile;
* B = 8 context-specific "likely next tokens" :math:`t_j(c)` get logits up to
  :math:`s_j(c) = b\\,(u_j - 1/2)` (b = ``bump_scale``), comparable with the Zipf head (logit 0);
* with probability ``p_loop`` a context has a near-deterministic successor
  (:math:`L(c)` = ``loop_boost``), so a chain of such contexts can cycle the way a
  real LM falls into repetition.

All of it is a pure function of the context, so :math:`p_t` is exact at every
step, and the Numba kernel :func:`logits_into` and the NumPy :meth:`SyntheticLM.logits`
compute the same numbers.

Because the temperatures are levels, the unnormalised Zipf weights
:math:`T_{l,j} = e^{\\beta_l b_j}` and their sums :math:`Z_l = \\sum_j T_{l,j}`,
:math:`A_l = \\sum_j T_{l,j} b_j` are tabulated once per LM (:attr:`SyntheticLM.table`,
:attr:`SyntheticLM.level_sums`): a step's softmax normaliser and entropy are then
:math:`O(1)` plus a correction for the at most 8 bumped tokens, and only the green mass
needs a pass over the vocabulary (:func:`context_into`, used by :mod:`sims.watermarks.generate`).

A fitted LM (:mod:`sims.lm.fitted`, preset ``smollm2-fit`` or any ``.npz`` of
``python -m sims fit-lm``) carries ``N_FIT_PARAMS`` parameters and its own 32 levels: its level
is :math:`\\lfloor 32\\,\\Phi(Z_t) \\rfloor` of a latent Gaussian with a per-text part (hashed from
the text's first ``order`` tokens), a moving-average part over positions and the context's own
part (:func:`latent_uniform`), and its bump logits scale with :math:`\\beta_l`.  Its logits then
depend on the whole context from the text's start (its first ``order`` tokens and its length),
still exactly and through the same kernels.
"""

from __future__ import annotations

import dataclasses
import math
import pathlib
import re
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
from numba import njit

from sims.core import prf
from sims.lm.presets import FITTED_PRESETS, LM_PRESETS, PRESETS

LM_STREAM = 7  #: stream of the LM's own hashing (watermarks use 0..2)
#: Tokens whose logit each context raises (its "bumps", at PRF-chosen ids, heights scaled by ``bump_scale``).
N_BUMPS = 8
N_LEVELS = 32  #: inverse temperatures per LM
#: per-preset scalars packed for the kernel:
#: [beta_factual, beta_opinion, kappa, bump_scale, p_loop, loop_boost]
N_LM_PARAMS = 6
#: a fitted LM (sims.lm.fitted) appends [a, b, w]: the weights of the per-text and the slowly
#: varying parts of the latent temperature Z_t, and the window of the latter
N_FIT_PARAMS = 9
TEXT_STREAM = 8  #: stream of the per-text hash (the text's first ``order`` tokens)
MAX_WINDOW = 1024  #: largest window w of the slowly varying part


@dataclass(frozen=True)
class SyntheticLM:
    """An exact synthetic LM (see module docstring). Build with :func:`open_synthetic` (or :func:`sims.get_lm`, which wraps it in an :class:`~sims.lm.door.LM`).

    Parameters
    ----------
    name, vocab_size, order, seed, params, base, level_table
        The preset's name, V, context order, seed and tables (see module docstring).

    Returns
    -------
    SyntheticLM

    References
    ----------
    Towards Better Statistical Understanding of Watermarking LLMs, Section 2: the unwatermarked LM p whose
    next-token distributions the watermarks reweight (Algorithm 1, alg:kirchen).

    Examples
    --------
    >>> import sims
    >>> lm = sims.get_lm("tiny").synthetic  # the exact tables behind the LM object
    >>> type(lm).__name__, lm.name, lm.vocab_size, lm.order
    ('SyntheticLM', 'tiny', 6, 1)
    """

    name: str
    vocab_size: int
    order: int
    seed: int
    params: np.ndarray
    base: np.ndarray = field(repr=False)
    level_table: np.ndarray | None = field(default=None, repr=False)  # a fitted LM's levels

    @property
    def fitted(self) -> bool:
        """Whether the LM has the latent temperature process of :mod:`sims.lm.fitted`."""
        return self.params.shape[0] >= N_FIT_PARAMS

    @cached_property
    def levels(self) -> np.ndarray:
        """The ``N_LEVELS`` inverse temperatures :math:`\\beta_l` (a fitted LM's are tabulated)."""
        if self.level_table is not None:
            return self.level_table
        b_factual, b_opinion, kappa = self.params[:3]
        return b_opinion + (b_factual - b_opinion) * ((np.arange(N_LEVELS) + 0.5) / N_LEVELS) ** kappa

    @cached_property
    def table(self) -> np.ndarray:
        """:math:`T_{l,j} = \\exp(\\beta_l b_j)`, shape ``(N_LEVELS, V)`` (8 MiB at V = 32k)."""
        return np.exp(self.levels[:, None] * self.base[None, :])

    @cached_property
    def level_sums(self) -> np.ndarray:
        """:math:`(Z_l, A_l) = (\\sum_j T_{l,j}, \\sum_j T_{l,j} b_j)`, shape ``(N_LEVELS, 2)``."""
        return np.stack([self.table.sum(axis=1), self.table @ self.base], axis=1)

    def context_hash(self, context) -> int:
        """The LM's hash of a context: its last ``order`` tokens under the LM's seed, on stream :data:`LM_STREAM`.

        Parameters
        ----------
        context : array_like of int
            Token ids, oldest first.

        Returns
        -------
        int
            The 64-bit hash that draws the context's level, bumps and offset.
        """
        ctx = np.asarray(context, dtype=np.int64)[-self.order :]
        return int(prf.context_hash(self.seed, ctx, LM_STREAM))

    def logits(self, context) -> np.ndarray:
        """Next-token logits after ``context`` (token ids, oldest first), NumPy reference.

        Parameters
        ----------
        context : array_like of int
            At least ``order`` token ids.

        Returns
        -------
        ndarray of float64, shape (V,)
            The logits.

        Raises
        ------
        ValueError
            If the context is shorter than ``order``.
        """
        ctx = np.asarray(context, dtype=np.int64)
        if ctx.size < self.order:
            raise ValueError(f"context must hold at least order={self.order} tokens; got {ctx.size}")
        h = np.uint64(self.context_hash(ctx))
        scale, ploop, lboost = self.params[3:6]
        u = prf.uniforms(h, np.arange(N_BUMPS + 3) + self.vocab_size)
        x = self._latent_uniform(ctx, float(u[0]), float(u[2])) if self.fitted else u[0]
        beta = self.levels[min(int(x * N_LEVELS), N_LEVELS - 1)]
        if self.fitted:
            scale = scale * beta
        off = int(prf.token_bits(h, np.array([3 * self.vocab_size]))[0] % np.uint64(self.vocab_size))
        out = beta * np.roll(self.base, -off)
        toks = (prf.token_bits(h, np.arange(N_BUMPS) + 2 * self.vocab_size) % np.uint64(self.vocab_size)).astype(np.int64)
        for j in range(N_BUMPS):
            out[toks[j]] = max(out[toks[j]], scale * (u[3 + j] - 0.5))
        if u[1] < ploop:
            out[toks[0]] = lboost
        return out

    def _latent_uniform(self, ctx: np.ndarray, u0: float, u2: float) -> float:
        """:math:`\\Phi(Z_t)` of a fitted LM (:func:`latent_uniform`, here with Python's ``math``)."""
        a, b, w = float(self.params[6]), float(self.params[7]), int(self.params[8])
        ht = prf.context_hash(self.seed, ctx[: self.order], TEXT_STREAM)
        pos = 2 * (ctx.size - np.arange(w) + MAX_WINDOW)
        ua = prf.uniforms(ht, np.concatenate([[0, 1], pos, pos + 1])).tolist()
        z_text = _box_muller(ua[0], ua[1])
        z_slow = sum(_box_muller(ua[2 + j], ua[2 + w + j]) for j in range(w)) / math.sqrt(w)
        z = a * z_text + b * z_slow + math.sqrt(max(0.0, 1.0 - a * a - b * b)) * _box_muller(u0, u2)
        return 0.5 * math.erfc(-z / math.sqrt(2.0))

    def probs(self, context) -> np.ndarray:
        """The next-token distribution after ``context``: the softmax of :meth:`logits` (NumPy reference).

        Parameters
        ----------
        context : array_like of int
            At least ``order`` token ids.

        Returns
        -------
        ndarray of float64, shape (V,)
            The distribution.
        """
        lg = self.logits(context)
        e = np.exp(lg - lg.max())
        return e / e.sum()

    def next_probs(self, context) -> np.ndarray:
        """:meth:`probs` by the Numba kernel (for the attacks, which call it token by token).

        Parameters
        ----------
        context : array_like of int
            At least ``order`` token ids.

        Returns
        -------
        ndarray of float64, shape (V,)
            The distribution.
        """
        ctx = np.ascontiguousarray(context, dtype=np.int64)
        if ctx.size < self.order:
            raise ValueError(f"context must hold at least order={self.order} tokens; got {ctx.size}")
        return self.probs_along(ctx, ctx.size, 1)[0]

    def probs_along(self, seq, P: int, T: int) -> np.ndarray:
        """(T, V): :meth:`probs` after ``seq[:P + t]`` for t < T, by the kernel :func:`probs_along`.

        Parameters
        ----------
        seq : array_like of int
            Prompt row then the text.
        P : int
            Width of the prompt row.
        T : int
            Number of text positions.

        Returns
        -------
        ndarray of float64, shape (T, V)
            The distributions.
        """
        out = np.empty((int(T), self.vocab_size))
        probs_along(self.vocab_size, self.order, self.seed, self.params, self.levels, self.base, self.table, self.level_sums,
                    np.ascontiguousarray(seq, dtype=np.int64), int(P), out)
        return out


@njit(cache=True, inline="always")
def _scale_into(a, x, out):
    for k in range(x.shape[0]):  # a plain loop over slices vectorises; index arithmetic did not
        out[k] = a * x[k]


@njit(cache=True, inline="always")
def base_index(k, off, V):
    """Where token ``k`` reads the base (or a table row) under rotation ``off``: (k + off) mod V."""
    j = k + off
    return j - V if j >= V else j


@njit(cache=True, inline="always")
def _box_muller(u1, u2):
    """A standard normal from two uniforms in (0, 1)."""
    return math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)


@njit(cache=True)
def latent_uniform(order, seed, params, context, u0, u2):
    """:math:`\\Phi(Z_t)` of a fitted LM (:mod:`sims.lm.fitted`): ``u0``, ``u2`` are the context's own
    uniforms, the per-text and slowly varying parts hash the text's first ``order`` tokens."""
    a = params[6]
    b = params[7]
    w = np.int64(params[8])
    L = context.shape[0]
    ht = prf.context_hash_nb(seed, context[:order], TEXT_STREAM)
    slow = 0.0
    for j in range(w):
        k = 2 * (L - j + MAX_WINDOW)
        slow += _box_muller(prf.uniform_nb(ht, k), prf.uniform_nb(ht, k + 1))
    z = a * _box_muller(prf.uniform_nb(ht, 0), prf.uniform_nb(ht, 1)) + b * slow / math.sqrt(w)
    z += math.sqrt(max(0.0, 1.0 - a * a - b * b)) * _box_muller(u0, u2)
    return 0.5 * math.erfc(-z / math.sqrt(2.0))


@njit(cache=True)
def context_into(V, order, seed, params, levels, base, context, mod_tok, mod_logit):
    """The LM's state after ``context``: which level, rotation and bumped tokens.

    Writes the distinct tokens whose logit is not :math:`\\beta_l b_{(k + \\mathrm{off}) \\bmod V}`
    and their logits into ``mod_tok[:n]``, ``mod_logit[:n]`` (arrays of ``N_BUMPS``) and returns
    ``(level, off, n, top)``, where ``top`` bounds the largest logit from above (the base
    spans :math:`[-\\log V, 0]`), the shift of the softmax.
    """
    h = prf.context_hash_nb(seed, context[context.shape[0] - order :], LM_STREAM)
    u0 = prf.uniform_nb(h, V)
    u1 = prf.uniform_nb(h, V + 1)
    fitted = params.shape[0] >= N_FIT_PARAMS
    if fitted:
        u0 = latent_uniform(order, seed, params, context, u0, prf.uniform_nb(h, V + 2))
    level = min(np.int64(u0 * N_LEVELS), N_LEVELS - 1)
    beta = levels[level]
    scale = params[3] * beta if fitted else params[3]
    off = np.int64(prf.token_bits_nb(h, 3 * V) % np.uint64(V))
    top = max(0.0, -beta * math.log(V))
    n = 0
    first = 0
    for j in range(N_BUMPS):
        tok = np.int64(prf.token_bits_nb(h, 2 * V + j) % np.uint64(V))
        m = n
        for q in range(n):
            if mod_tok[q] == tok:
                m = q
        if m == n:
            mod_tok[n] = tok
            mod_logit[n] = beta * base[base_index(tok, off, V)]
            n += 1
        if j == 0:
            first = m
        mod_logit[m] = max(mod_logit[m], scale * (prf.uniform_nb(h, V + 3 + j) - 0.5))
    if u1 < params[4]:
        mod_logit[first] = params[5]
    for q in range(n):
        top = max(top, mod_logit[q])
    return level, off, n, top


@njit(cache=True)
def logits_into(V, order, seed, params, levels, base, context, out):
    """Kernel of :meth:`SyntheticLM.logits` for the last ``order`` tokens of ``context``.

    Returns the softmax shift ``top`` of :func:`context_into`.
    """
    mod_tok = np.empty(N_BUMPS, dtype=np.int64)
    mod_logit = np.empty(N_BUMPS)
    level, off, n, top = context_into(V, order, seed, params, levels, base, context, mod_tok, mod_logit)
    beta = levels[level]
    _scale_into(beta, base[off:], out[: V - off])  # out = beta * roll(base, -off)
    _scale_into(beta, base[:off], out[V - off :])
    for q in range(n):
        out[mod_tok[q]] = mod_logit[q]
    return top


@njit(cache=True)
def probs_along(V, order, seed, params, levels, base, table, level_sums, seq, P, out):
    """``out[t]`` = the next-token distribution after ``seq[:P + t]`` for every row t of ``out``:
    the model access of UW's detector along one text, and of the attacks token by token.

    No exponentials over the vocabulary: a token's unnormalised probability is its level's
    tabulated :math:`T_{l,(k + \\mathrm{off}) \\bmod V}` (:attr:`SyntheticLM.table`), except the
    bumped tokens of :func:`context_into`; the normaliser is the level's :math:`Z_l` corrected
    for those.
    """
    mod_tok = np.empty(N_BUMPS, dtype=np.int64)
    mod_logit = np.empty(N_BUMPS)
    for t in range(out.shape[0]):
        level, off, n, _ = context_into(V, order, seed, params, levels, base, seq[: P + t], mod_tok, mod_logit)
        row = table[level]
        s = level_sums[level, 0]
        for q in range(n):
            s += math.exp(mod_logit[q]) - row[base_index(mod_tok[q], off, V)]
        inv = 1.0 / s
        _scale_into(inv, row[off:], out[t, : V - off])  # out[t, k] = row[(k + off) mod V] / s
        _scale_into(inv, row[:off], out[t, V - off :])
        for q in range(n):
            out[t, mod_tok[q]] = math.exp(mod_logit[q]) * inv




def zipf_base(V: int, seed: int) -> np.ndarray:
    r""":math:`b_k = -\log(1 + \mathrm{rank}_k)` over the LM's random ranking (module docstring).

    Parameters
    ----------
    V : int
        Vocabulary size.
    seed : int
        The LM's seed (draws the ranking).

    Returns
    -------
    ndarray of float64, shape (V,)
        The base logits.
    """
    rank = np.random.default_rng([seed, 12345]).permutation(V)
    return -np.log1p(rank.astype(np.float64))


def load_fitted(path, seed: int = 0, name: str | None = None) -> SyntheticLM:
    """A fitted LM from the ``.npz`` that :func:`sims.lm.fitted.save_fit` wrote.

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    seed : int, default 0
        The LM's seed.
    name : str, optional
        Its name (default the path).

    Returns
    -------
    SyntheticLM
        The fitted LM.

    Raises
    ------
    ValueError
        If the file is missing or its arrays have the wrong shapes.
    """
    path = pathlib.Path(path)
    if not path.is_file():
        raise ValueError(f"lm must be a preset in {LM_PRESETS} or a fitted .npz file; got {str(path)!r}")
    with np.load(path) as f:
        V, order, params, levels = int(f["vocab_size"]), int(f["order"]), f["params"].astype(np.float64), f["levels"].astype(np.float64)
    if params.shape != (N_FIT_PARAMS,) or levels.shape != (N_LEVELS,):
        raise ValueError(f"{path}: params must have shape ({N_FIT_PARAMS},) and levels ({N_LEVELS},); got {params.shape}, {levels.shape}")
    return SyntheticLM(name or str(path), V, order, int(seed), params, zipf_base(V, seed), levels)


def open_synthetic(name: str, vocab_size: int | None = None, seed: int = 0) -> SyntheticLM:
    """A preset LM (``news``, ``lfqa``, ``loopy``, ``tiny``, ``smollm2-fit``) or a fitted ``.npz`` file,
    optionally with another vocabulary size (not for a fitted LM, whose levels are fitted at its own).

    Parameters
    ----------
    name : str
        A preset name or the path of a fitted ``.npz``.
    vocab_size : int, optional
        Vocabulary size (default the preset's).
    seed : int
        Seed of the preset's tables.

    Returns
    -------
    SyntheticLM

    References
    ----------
    Towards Better Statistical Understanding of Watermarking LLMs, Section 2: the unwatermarked LM p whose
    next-token distributions the watermarks reweight (Algorithm 1, alg:kirchen).

    Examples
    --------
    >>> import sims
    >>> lm = sims.get_lm("tiny")
    >>> lm.name, lm.vocab_size
    ('tiny', 6)
    """
    if name in PRESETS:
        V, order, *rest = PRESETS[name]
        params = np.array(rest, dtype=np.float64)
        levels = None
    elif name in FITTED_PRESETS or str(name).endswith(".npz"):
        lm = load_fitted(FITTED_PRESETS.get(name, name), seed, name)
        if vocab_size is not None and int(vocab_size) != lm.vocab_size:
            raise ValueError(f"vocab_size of fitted LM {name!r} must be its own {lm.vocab_size}; got {vocab_size!r}")
        return lm
    else:
        raise ValueError(f"lm must be one of {LM_PRESETS} or a fitted .npz file; got {name!r}")
    if vocab_size is not None:
        if not (2 <= int(vocab_size) <= 2**17):
            raise ValueError(f"vocab_size must be in [2, 131072]; got {vocab_size!r}")
        V = int(vocab_size)
    return SyntheticLM(name, V, order, int(seed), params, zipf_base(V, seed), levels)


LOOP_P = 0.3  #: probability of a near-deterministic context in the looping LM
LOOP_V = 1024  #: vocabulary of the looping LM (a smaller V makes cycles of such contexts likelier)
_P_LOOP_INDEX = 4  # position of p_loop in SyntheticLM.params (see sims.lm.synthetic.PRESETS)


def loop_lm(vocab_size: int = LOOP_V, p_loop: float = LOOP_P, seed: int = 0) -> SyntheticLM:
    """The ``loopy`` preset with ``vocab_size`` tokens and a share ``p_loop`` of near-deterministic contexts.

    Named ``loopy-V<vocab_size>-p<p_loop>`` so that a saved text is not mistaken for the preset.

    Parameters
    ----------
    vocab_size : int
        Vocabulary size.
    p_loop : float
        Share of near-deterministic contexts, in [0, 1].
    seed : int
        Seed of the tables.

    Returns
    -------
    SyntheticLM

    References
    ----------
    Towards Better Statistical Understanding of Watermarking LLMs, App. F, 'Repetition Detection via
    Dual-Variable Dynamics' (subsec:body_text_repetition_detection).

    Examples
    --------
    >>> import sims
    >>> lm = sims.loop_lm(vocab_size=64, p_loop=0.3, seed=0)
    >>> lm.name, lm.vocab_size
    ('loopy-V64-p0.3', 64)
    """
    if not (0.0 <= float(p_loop) <= 1.0):
        raise ValueError(f"p_loop must be in [0, 1]; got {p_loop!r}")
    lm = open_synthetic("loopy", vocab_size=vocab_size, seed=seed)
    params = lm.params.copy()
    params[_P_LOOP_INDEX] = float(p_loop)
    return dataclasses.replace(lm, name=f"loopy-V{lm.vocab_size}-p{float(p_loop):g}", params=params)


def lm_from_meta(meta: dict) -> SyntheticLM:
    """The LM a saved :class:`sims.watermarks.generate.Generation` was drawn from: a preset, or a
    :func:`loop_lm` variant (named ``loopy-V<V>-p<p_loop>``).

    Parameters
    ----------
    meta : dict
        ``Generation.meta`` (``lm`` and ``vocab_size`` are read).

    Returns
    -------
    SyntheticLM

    References
    ----------
    Towards Better Statistical Understanding of Watermarking LLMs, Section 2: the unwatermarked LM p whose
    next-token distributions the watermarks reweight (Algorithm 1, alg:kirchen).

    Examples
    --------
    >>> import sims
    >>> sims.lm_from_meta({"lm": "loopy-V64-p0.3", "vocab_size": 64}).name
    'loopy-V64-p0.3'
    """
    seed = meta.get("lm_seed", 0)
    loop = re.fullmatch(r"loopy-V(\d+)-p(.+)", str(meta["lm"]))
    if loop:
        return loop_lm(int(loop[1]), float(loop[2]), seed)
    return open_synthetic(meta["lm"], vocab_size=meta["vocab_size"], seed=seed)

def lm_step_probs(lm, gen):
    """``step_probs(i)`` for a synthetic LM: the (T, V) next-token distributions of text i.

    Parameters
    ----------
    lm : SyntheticLM
        The LM.
    gen : Generation
        The texts.

    Returns
    -------
    callable
        ``step_probs(i) -> ndarray of shape (T, V)``.
    """

    def step_probs(i):
        return lm.probs_along(np.concatenate([gen.prompts[i], gen.tokens[i]]), gen.prompts.shape[1], gen.tokens.shape[1])

    return step_probs


def step_probs_of(lm, gen):
    """``step_probs(i)`` for any LM a detector may hold: :meth:`sims.lm.door.LM.step_probs` for :func:`sims.get_lm`'s
    object (batched teacher forcing on a real LM), :func:`lm_step_probs` for a bare synthetic LM.

    Parameters
    ----------
    lm : LM or SyntheticLM
        The LM.
    gen : Generation
        The texts.

    Returns
    -------
    callable
        ``step_probs(i) -> ndarray of shape (T, V)``.
    """
    return lm.step_probs(gen) if hasattr(lm, "step_probs") else lm_step_probs(lm, gen)
