"""Detectors: red-green counts with exact binomial p-values, EMS with the exact Gamma
tail, the AutoCov statistic Z_T, and the keyed-order tests of ITS / UW.

Every score returns log10 p-values computed by :mod:`sims.nulls` (exact far below
1e-300).  A text with fewer than one scored token gets p = 1 and ``flagged=True``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit, prange

from . import prf, rng
from .nulls import LN10, binom_logsf, gamma_logsf

REDGREEN_ALGOS = ("none", "srl", "hard", "dualga", "atw")


@dataclass
class DetectResult:
    """Per-text detection: scored tokens, statistic, z-score, log10 p (and a flag for empty texts)."""

    n_scored: np.ndarray
    score: np.ndarray
    z: np.ndarray
    log10_p: np.ndarray
    flagged: np.ndarray

    def as_rows(self) -> list[dict]:
        return [
            dict(n_scored=int(n), green=float(s), z=float(z), log10_p=float(p), flagged=bool(f))
            for n, s, z, p, f in zip(self.n_scored, self.score, self.z, self.log10_p, self.flagged)
        ]


def _check_tokens(tokens, prompts, vocab_size, h):
    tokens = np.ascontiguousarray(tokens, dtype=np.int64)
    prompts = np.ascontiguousarray(prompts, dtype=np.int64)
    if tokens.ndim != 2 or prompts.ndim != 2 or prompts.shape[0] != tokens.shape[0]:
        raise ValueError(f"tokens and prompts must be 2-d with one row per text; got {tokens.shape} and {prompts.shape}")
    if prompts.shape[1] < h:
        raise ValueError(f"prompts must hold at least h={h} tokens; got {prompts.shape[1]}")
    for name, a in (("tokens", tokens), ("prompts", prompts)):
        if a.size and (a.min() < -1 or a.max() >= vocab_size):
            raise ValueError(f"{name} ids must be in [0, {vocab_size - 1}] (-1 pads); got min {a.min()}, max {a.max()}")
    return tokens, prompts


@njit(cache=True, parallel=True)
def _scan(tokens, prompts, key, h, dedup, stream, thr):
    """Per text: the statistic summed over scored tokens and their number.

    ``stream`` GREEN sums green indicators (threshold ``thr``); EMS sums -log(1 - r_{t,y_t}).
    With ``dedup`` each (context window, token) pair is scored once.  -1 ends a text.
    """
    n, T = tokens.shape
    P = prompts.shape[1]
    sums = np.zeros(n)
    scored = np.zeros(n, dtype=np.int64)
    for i in prange(n):
        seq = np.empty(P + T, dtype=np.int64)
        seq[:P] = prompts[i]
        seq[P:] = tokens[i]
        seen = {np.uint64(0): True}
        seen.clear()
        for t in range(T):
            y = tokens[i, t]
            if y < 0:
                break
            ctx = prf.context_hash_nb(key, seq[P + t - h : P + t], stream)
            if dedup:
                pair = ctx ^ prf.mix64_nb(np.uint64(y) + np.uint64(prf.C_TOKEN))
                if pair in seen:
                    continue
                seen[pair] = True
            scored[i] += 1
            if stream == prf.GREEN:
                if prf.is_green_nb(ctx, y, thr):
                    sums[i] += 1.0
            else:
                sums[i] -= math.log1p(-prf.uniform_nb(ctx, y))
    return sums, scored


def green_indicators(tokens, prompts, key: int, gamma: float, h: int = 1) -> np.ndarray:
    """Green-list membership of every generated token (NumPy reference of the kernel)."""
    seq = np.concatenate([prompts, tokens], axis=1)
    P = prompts.shape[1]
    windows = np.stack([seq[:, P + t - h : P + t] for t in range(tokens.shape[1])], axis=1)
    return prf.is_green(prf.context_hash(key, windows, prf.GREEN), tokens, gamma)


def score_redgreen(tokens, prompts, key: int, gamma: float, *, vocab_size: int, h: int = 1, dedup: bool = False) -> DetectResult:
    r"""Green counts, z-score (eq. z_score) and exact binomial log10 p (eq. three_brick_p with >=).

    .. math:: z = \frac{|y|_G - \gamma n}{\sqrt{n\gamma(1-\gamma)}},\qquad
              p = P(\mathrm{Bin}(n, \gamma) \ge |y|_G)

    With ``dedup`` each (context window, token) pair is scored once (Fernandez et al.).
    Tokens equal to -1 end a text (padding after deletions).
    """
    import theory

    theory._validate.gamma(gamma)
    tokens, prompts = _check_tokens(tokens, prompts, vocab_size, h)
    counts, n = _scan(tokens, prompts, np.uint64(key), int(h), bool(dedup), prf.GREEN, prf.green_threshold(gamma))
    with np.errstate(invalid="ignore", divide="ignore"):
        z = np.where(n > 0, (counts - gamma * n) / np.sqrt(np.maximum(n, 1) * gamma * (1 - gamma)), 0.0)
    logp = binom_logsf(counts.astype(np.int64), n, gamma) / LN10
    return DetectResult(n, counts, z, np.where(n > 0, logp, 0.0), n < 1)


def score_ems(tokens, prompts, key: int, *, vocab_size: int, h: int = 1, dedup: bool = False) -> DetectResult:
    r"""EMS score :math:`S = \sum_t -\log(1 - r_{t,y_t})` with the exact :math:`\Gamma(n, 1)` tail (eq. ems_pval)."""
    tokens, prompts = _check_tokens(tokens, prompts, vocab_size, h)
    s, n = _scan(tokens, prompts, np.uint64(key), int(h), bool(dedup), prf.EMS, 0)
    z = np.where(n > 0, (s - n) / np.sqrt(np.maximum(n, 1)), 0.0)
    return DetectResult(n, s, z, np.where(n > 0, gamma_logsf(s, n) / LN10, 0.0), n < 1)


def score_autocov(tokens, prompts, key: int, gamma: float, *, vocab_size: int, h: int = 1) -> DetectResult:
    r"""AutoCov statistic (appendix "Possibility for Other Variants").

    .. math:: S_T = \frac1T \sum_{t<T} N_t N_{t+1},\quad N_t = 1\{y_t\ \mathrm{green}\} - \gamma,\quad
              Z_T = \frac{\sqrt T S_T}{\gamma(1-\gamma)}

    Z_T is asymptotically N(0, 1) under the null; DualGA-AutoCov drives it negative, so
    the one-sided p-value is :math:`\Phi(Z_T)` (normal approximation, not exact).
    """
    from scipy.stats import norm

    tokens, prompts = _check_tokens(tokens, prompts, vocab_size, h)
    N = green_indicators(tokens, prompts, key, gamma, h).astype(np.float64) - gamma
    T = N.shape[1]
    S = np.sum(N[:, :-1] * N[:, 1:], axis=1) / T
    Z = np.sqrt(T) * S / (gamma * (1 - gamma))
    n = np.full(N.shape[0], T)
    return DetectResult(n, S, Z, norm.logcdf(Z) / LN10, n < 2)


def lm_step_probs(lm, gen):
    """``step_probs(i)`` for a synthetic LM: the (T, V) next-token distributions of text i."""

    def step_probs(i):
        seq = np.concatenate([gen.prompts[i], gen.tokens[i]])
        P = gen.prompts.shape[1]
        return np.stack([lm.probs(seq[: P + t]) for t in range(gen.tokens.shape[1])])

    return step_probs


def score_keyed_order(gen, step_probs) -> DetectResult:
    r"""ITS / UW-delta / UW-gamma: was each token the one the key's uniform points at?

    ``step_probs(i)`` returns the (T, V) next-token distributions of text i (the model access
    UW's detector requires): :func:`lm_step_probs` for the synthetic LMs, teacher-forced logits
    for a real LM (:mod:`sims.torch_backend.evaluate_torch`).

    With the model's probabilities (as UW's detector requires), step t's keyed uniform
    u_t and the keyed vocabulary order give an interval :math:`I_t(y)` of cumulative
    mass for every token; the watermark puts u_t in :math:`I_t(y_t)` (ITS, UW-delta), or
    y_t in the kept upper half of the mass (UW-gamma, whose uniform is not recoverable).
    Under the null (text independent of the key) a hit has probability
    :math:`\pi_t = p_t(y_t)` (ITS, UW-delta) or the mass of the tokens reaching past 1/2
    (UW-gamma), independently across steps, so the hit count is Poisson-binomial; its
    exact upper tail is computed by dynamic programming in log space.
    """
    from .generate import ITS_STREAM, keyed_order

    algo = gen.meta["algo"]
    if algo not in ("its", "uw-delta", "uw-gamma"):
        raise ValueError(f"score_keyed_order scores its, uw-delta or uw-gamma texts; got {algo!r}")
    key, h, V = gen.meta["key"], gen.meta["h"], gen.meta["vocab_size"]
    perm = keyed_order(key, V)
    pos = np.empty(V, dtype=np.int64)
    pos[perm] = np.arange(V)
    its_key = rng.stream_key(key, ITS_STREAM)
    n_txt, T = gen.tokens.shape
    hits = np.zeros(n_txt)
    logp = np.zeros(n_txt)
    for i in range(n_txt):
        seq = np.concatenate([gen.prompts[i], gen.tokens[i]])
        P = gen.prompts.shape[1]
        probs_hit = np.empty(T)
        ps = step_probs(i)
        for t in range(T):
            window = seq[P + t - h : P + t]
            p = ps[t]
            sctx = prf.context_hash(key, window, prf.STEP)
            y = seq[P + t]
            reverse = algo == "uw-gamma" and prf.uniforms(sctx, np.array([V + 1]))[0] < 0.5
            order = perm[::-1] if reverse else perm
            cum = np.cumsum(p[order])
            r = V - 1 - pos[y] if reverse else pos[y]
            lo, hi = (cum[r - 1] if r > 0 else 0.0), cum[r]
            if algo == "uw-gamma":
                # hit: y's interval reaches past 1/2 (the kept half); null mass of such tokens
                straddle = int(np.searchsorted(cum, 0.5))
                probs_hit[t] = 1.0 - (cum[straddle - 1] if straddle > 0 else 0.0)
                hits[i] += hi > 0.5
            else:
                u = rng.uniforms(its_key, np.array([t]))[0] if algo == "its" else prf.uniforms(sctx, np.array([V]))[0]
                probs_hit[t] = p[y]
                hits[i] += lo < u <= hi
        logp[i] = _poisson_binomial_logsf(int(hits[i]), probs_hit)
    n = np.full(n_txt, T)
    return DetectResult(n, hits, np.full(n_txt, np.nan), logp / LN10, n < 1)


def _poisson_binomial_logsf(k: int, probs: np.ndarray) -> float:
    """ln P(sum of independent Bernoulli(probs) >= k), by a log-space DP."""
    if k <= 0:
        return 0.0
    logq = np.full(len(probs) + 1, -np.inf)
    logq[0] = 0.0
    with np.errstate(divide="ignore"):
        for p in probs:
            lp, l1p = np.log(p), np.log1p(-p)
            logq[1:] = np.logaddexp(logq[1:] + l1p, logq[:-1] + lp)
            logq[0] = logq[0] + l1p
    from scipy.special import logsumexp

    return min(0.0, float(logsumexp(logq[k:])))


def tokens_to_detect(log10_p_prefix: np.ndarray, threshold: float = -4.0) -> np.ndarray:
    """Smallest prefix length after which log10 p stays at or below ``threshold`` (nan if never).

    ``log10_p_prefix[i, t]`` is the log10 p-value of text i's first t+1 tokens.
    """
    below = np.asarray(log10_p_prefix) <= threshold
    # stays below from t on: suffix-all
    stays = np.flip(np.logical_and.accumulate(np.flip(below, axis=1), axis=1), axis=1)
    first = np.argmax(stays, axis=1).astype(np.float64) + 1.0
    first[~stays.any(axis=1)] = np.nan
    return first


def redgreen_prefix_log10p(tokens, prompts, key: int, gamma: float, *, vocab_size: int, h: int = 1) -> np.ndarray:
    """log10 p of every prefix (no dedup): the detection curve, and windowed detection by differences."""
    g = green_indicators(*_check_tokens(tokens, prompts, vocab_size, h), key, gamma, h)
    k = np.cumsum(g, axis=1)
    n = np.broadcast_to(np.arange(1, g.shape[1] + 1), g.shape)
    return binom_logsf(k, n, gamma) / LN10


def windowed_log10p(tokens, prompts, key: int, gamma: float, *, vocab_size: int, h: int = 1, window: int = 50) -> np.ndarray:
    """Minimum over sliding windows of the window's exact log10 p (per text); not a valid
    p-value itself (it is a minimum over windows): report it with a Bonferroni factor."""
    if int(window) < 1:
        raise ValueError(f"window must be in [1, inf); got {window!r}")
    g = green_indicators(*_check_tokens(tokens, prompts, vocab_size, h), key, gamma, h).astype(np.int64)
    c = np.concatenate([np.zeros((g.shape[0], 1), dtype=np.int64), np.cumsum(g, axis=1)], axis=1)
    w = min(window, g.shape[1])
    k = c[:, w:] - c[:, :-w]
    return (binom_logsf(k, np.full_like(k, w), gamma) / LN10).min(axis=1)


def score(gen, lm=None, *, dedup: bool = False, key: int | None = None, gamma: float | None = None) -> DetectResult:
    """The detector matching a :class:`~sims.generate.Generation`'s algorithm.

    ``key`` and ``gamma`` default to the generation's; passing others scores the
    text as a stranger would (the null).
    """
    m = gen.meta
    algo = m["algo"]
    key = m["key"] if key is None else key
    gamma = m["gamma"] if gamma is None else gamma
    kw = dict(vocab_size=m["vocab_size"], h=m["h"])
    if algo in REDGREEN_ALGOS or algo == "dualga":
        return score_redgreen(gen.tokens, gen.prompts, key, gamma, dedup=dedup, **kw)
    if algo == "autocov":
        return score_autocov(gen.tokens, gen.prompts, key, gamma, **kw)
    if algo == "ems":
        return score_ems(gen.tokens, gen.prompts, key, dedup=dedup, **kw)
    if lm is None:
        raise ValueError(f"algo {algo!r} is detected with the model's probabilities: pass lm")
    return score_keyed_order(gen, lm_step_probs(lm, gen))
