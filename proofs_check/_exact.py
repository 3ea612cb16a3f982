"""Exact next-token distributions of every watermark on small LMs, for enumeration.

``step_dist(algo, lm, key, prefix, prompt_len, state)`` returns the watermarked
distribution q_t (a full vector) after ``prefix`` and the next algorithm state --
written from the algorithms' definitions in the paper, independently of the Numba
generator, which the checks compare against it.
"""

from __future__ import annotations

import numpy as np

import theory
from sims import prf, rng
from sims.generate import ITS_STREAM, algo_params, keyed_order

ALGOS = ("srl", "hard", "dualga", "atw", "ems", "its", "uw-delta", "uw-gamma")


def step_dist(algo: str, lm, key: int, prefix: np.ndarray, t: int, lam: float, params: dict) -> tuple[np.ndarray, float]:
    """q_t and the next lambda (DualGA) after ``prefix`` (prompt + t generated tokens)."""
    p = lm.probs(prefix)
    V = lm.vocab_size
    window = prefix[-1:]
    green = prf.green_mask(prf.context_hash(key, window), V, params["gamma"])
    G = float(p[green].sum())
    if algo in ("srl", "dualga", "atw"):
        d = lam if algo == "dualga" else params["delta"]
        if algo == "atw" and theory.entropy(p) <= params["alpha"]:
            d = 0.0
        q = p * np.exp(d * green)
        q /= q.sum()
        if algo == "dualga":
            lam = min(max(lam + params["eta"] * (params["Delta"] - (q[green].sum() - G)), 0.0), params["M"])
        return q, lam
    if algo == "hard":
        q = np.where(green, p, 0.0)
        return (q / q.sum() if q.sum() > 0 else p), lam
    q = np.zeros(V)
    if algo == "ems":
        r = prf.uniforms(prf.context_hash(key, window, prf.EMS), np.arange(V))
        q[int(np.argmax(np.log(r) / p))] = 1.0
        return q, lam
    perm = keyed_order(key, V)
    sctx = prf.context_hash(key, window, prf.STEP)
    if algo == "uw-gamma":
        order = perm[::-1] if prf.uniforms(sctx, np.array([V + 1]))[0] < 0.5 else perm
        cum = np.cumsum(p[order])
        prev = np.concatenate([[0.0], cum[:-1]])
        q[order] = 2.0 * (np.maximum(cum, 0.5) - np.maximum(prev, 0.5))
        return q, lam
    u = rng.uniforms(rng.stream_key(key, ITS_STREAM), np.array([t]))[0] if algo == "its" else prf.uniforms(sctx, np.array([V]))[0]
    cum = np.cumsum(p[perm])
    q[perm[min(int(np.searchsorted(cum, u)), V - 1)]] = 1.0
    return q, lam


def default_params(algo: str) -> dict:
    _, info = algo_params(algo, Delta=0.3 if algo == "dualga" else None, delta=2.0 if algo in ("srl", "atw") else None, alpha=1.0)
    return info


def sequence_laws(algo: str | None, lm, key: int, prompt: np.ndarray, T: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """All V**T continuations: their probabilities under p and q, and sum_t E[KL_t] under q.

    Returns (p_seq, q_seq, stepwise) where ``stepwise`` is the conditional-KL sum of
    Prop. KL_decompose computed prefix by prefix.
    """
    V = lm.vocab_size
    params = default_params(algo) if algo else {}
    lam0 = params.get("lam1", 0.0)
    frontier = [(np.asarray(prompt, dtype=np.int64), 1.0, 1.0, lam0)]
    stepwise = 0.0
    for t in range(T):
        nxt = []
        for prefix, pp, qq, lam in frontier:
            p = lm.probs(prefix)
            q, lam2 = step_dist(algo, lm, key, prefix, t, lam, params) if algo else (p, lam)
            with np.errstate(divide="ignore", invalid="ignore"):
                stepwise += qq * float(np.sum(np.where(q > 0, q * np.log(q / p), 0.0)))
            for k in range(V):
                nxt.append((np.append(prefix, k), pp * p[k], qq * q[k], lam2))
        frontier = nxt
    return np.array([f[1] for f in frontier]), np.array([f[2] for f in frontier]), stepwise
