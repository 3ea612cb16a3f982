r"""A scheme-aware stealing attacker: green lists estimated on the seed a seeding scheme actually uses.

The attacker of :mod:`sims.experiments.steal` estimates one green list per h-token window.  Under
left-hash that is the seed, but the other schemes of :mod:`sims.core.seeding` seed from less:

=============  =================================================================================
``lefthash``   the whole window: one *anchor* per position, the window (as in :mod:`~sims.experiments.steal`)
``skipgram``   the token h back alone: one anchor, that token; every window that shares it shares
               its green list, so the evidence of V**(h-1) windows pools
``minhash``    the window's token of least keyed hash: the attacker cannot compute the hash (it is
               keyed), so every token of the window is an anchor; the true one carries the signal,
               the others average over other lists (their score stays near 0)
``selfhash``   the least of the candidate's own hash and of its pairs with each window token: the
               anchors are every window token and ``self`` (the candidate alone)
=============  =================================================================================

Per (anchor a, token y) it counts :math:`w(a, y)` over the watermarked texts and :math:`b(a, y)` over
the base texts, and scores the pair by the frequency ratio of :mod:`sims.experiments.steal` with the
window replaced by the anchor:

.. math::
    s(a, y) = \log\frac{w(a, y)}{w(a)} - \log\frac{b(a, y) + \beta u(y)}{b(a) + \beta}.

A candidate y after window x is believed green iff :math:`S(x, y) = \sum_{a \in A(x)} s(a, y) > \tau`
over the anchors :math:`A(x)` of the scheme (pairs seen fewer than ``min_count`` times add 0).  Under
left-hash this is the estimate of :mod:`~sims.experiments.steal` (one anchor, the window).

Spoofing (:func:`spoof_aware`) samples the base LM with logits :math:`\ell_y + \delta_s 1\{S(x, y) > \tau\}`.
(A spoofer that also leaned towards tokens fixing a seed it had evidence for -- the next window under
left-hash -- wrote the same spoof success to 0.01 at h = 2 with 3000 and 10000 stolen texts: not kept.)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit, prange

from sims.core import prf, rng, windows
from sims.core import seeding as seeding_mod
from sims.core.record import Generation
from sims.detect import scores as detect
from sims.experiments import steal
from sims.lm import synthetic as lm_mod
from sims.watermarks.generate import sample_prompts

SELF = np.uint64(0)
"""The anchor name of ``self`` (a candidate alone, self-hash); token anchors are named ``token + 1``."""


def anchor_count(seeding: str, h: int) -> int:
    """Anchors per position: 1 (left-hash, skip-gram), h (min-hash), h + 1 (self-hash)."""
    seeding_mod.code(seeding)
    return {"lefthash": 1, "skipgram": 1, "minhash": int(h), "selfhash": int(h) + 1}[seeding]


def anchors(tokens, prompts, h: int, seeding: str) -> np.ndarray:
    """(n, T, K) uint64: the anchor names of every generated position (module docstring)."""
    win = windows.windows(tokens, prompts, h)
    if seeding == "lefthash":
        return windows.window_names(tokens, prompts, h)[..., None]
    if seeding == "skipgram":
        return (win[..., :1] + 1).astype(np.uint64)
    a = (win + 1).astype(np.uint64)
    if seeding == "minhash":
        return a
    seeding_mod.code(seeding)
    return np.concatenate([a, np.zeros(a.shape[:-1] + (1,), dtype=np.uint64)], axis=-1)


@dataclass
class AwareEstimate:
    """Per (anchor, token) pair, sorted by anchor then token: ``scores`` :math:`s(a, y)` and ``counts``
    :math:`w(a, y)`; ``names`` (C,) sorted anchors with pairs ``starts[i]:starts[i+1]`` and ``anchor_counts`` :math:`w(a)`."""

    seeding: str
    h: int
    vocab_size: int
    n_stolen: int
    names: np.ndarray
    starts: np.ndarray
    tokens: np.ndarray
    scores: np.ndarray
    counts: np.ndarray
    anchor_counts: np.ndarray


def _pairs(A: np.ndarray, tokens: np.ndarray):
    """Distinct (anchor, token) pairs (sorted) with counts, from anchors (n, T, K) and tokens (n, T)."""
    a = A.reshape(-1)
    y = np.repeat(np.asarray(tokens, dtype=np.int64).reshape(-1), A.shape[-1])
    o = np.lexsort((y, a))
    a, y = a[o], y[o]
    new = np.ones(a.size, dtype=bool)
    new[1:] = (a[1:] != a[:-1]) | (y[1:] != y[:-1])
    first = np.flatnonzero(new)
    return a[first], y[first], np.diff(np.append(first, a.size))


def estimate_aware(wm: Generation, base: Generation | None = None, *, n_stolen: int | None = None, seeding: str | None = None,
                   prior: float = 1.0) -> AwareEstimate:
    """The scheme-aware estimate from the first ``n_stolen`` texts (module docstring).

    Parameters
    ----------
    wm, base : Generation
        The watermarked texts (the haul) and, optionally, base-LM texts (at least ``n_stolen``).
    n_stolen : int, optional
        Texts used, in [1, wm.n] (default all).
    seeding : str, optional
        The scheme the attacker assumes (default the owner's, ``wm.meta["seeding"]``: Kerckhoffs).
    prior : float
        :math:`\\beta > 0`.
    """
    V, h = int(wm.meta["vocab_size"]), int(wm.meta.get("h", 1))
    seeding = wm.meta.get("seeding", seeding_mod.DEFAULT) if seeding is None else seeding
    seeding_mod.code(seeding)
    n_stolen = wm.n if n_stolen is None else int(n_stolen)
    if not (1 <= n_stolen <= wm.n) or (base is not None and n_stolen > base.n):
        raise ValueError(f"n_stolen must be in [1, {wm.n if base is None else min(wm.n, base.n)}] (the texts given); got {n_stolen}")
    if not (prior > 0.0 and math.isfinite(prior)):
        raise ValueError(f"prior must be in (0, inf); got {prior!r}")
    steal._check_texts("wm texts", wm, V, h)
    a, y, w = _pairs(anchors(wm.tokens[:n_stolen], wm.prompts[:n_stolen], h, seeding), wm.tokens[:n_stolen])
    names, first = np.unique(a, return_index=True)
    starts = np.append(first, a.size).astype(np.int64)
    w_a = np.add.reduceat(w, first)
    w_c = np.repeat(w_a, np.diff(starts))
    if base is None:
        uni = np.bincount(wm.tokens[:n_stolen].ravel(), minlength=V)
        b_ay = b_a = 0.0
    else:
        steal._check_texts("base texts", base, V, h)
        ba, by, bw = _pairs(anchors(base.tokens[:n_stolen], base.prompts[:n_stolen], h, seeding), base.tokens[:n_stolen])
        uni = np.bincount(base.tokens[:n_stolen].ravel(), minlength=V)
        keys, bkeys = windows.pair_names(a, y), windows.pair_names(ba, by)
        o = np.argsort(bkeys)
        i = np.minimum(np.searchsorted(bkeys[o], keys), bkeys.size - 1)
        b_ay = np.where(bkeys[o][i] == keys, bw[o][i], 0).astype(np.float64)
        bnames, bfirst = np.unique(ba, return_index=True)
        j = np.minimum(np.searchsorted(bnames, a), bnames.size - 1)
        b_a = np.where(bnames[j] == a, np.add.reduceat(bw, bfirst)[j], 0).astype(np.float64)
    u = (uni + 1.0) / (uni.sum() + V)
    scores = np.log(w / w_c) - np.log((b_ay + prior * u[y]) / (b_a + prior))
    return AwareEstimate(seeding, h, V, n_stolen, names, starts, y, scores, w.astype(np.int64), w_a.astype(np.int64))


def believed_green_reference(est: AwareEstimate, tokens, prompts, *, candidates=None, threshold: float = 0.0, min_count: int = 1) -> np.ndarray:
    """(n, T) bool: :math:`S(x, y) > \\tau` at every generated position of ``tokens`` (NumPy; the spoof kernel's
    rule), for its own token y or, when given, ``candidates[i, t]`` after the same window."""
    A = anchors(tokens, prompts, est.h, est.seeding)
    tokens = tokens if candidates is None else candidates
    keys = windows.pair_names(est.names.repeat(np.diff(est.starts)), est.tokens)
    o = np.argsort(keys)
    keys, sc, ct = keys[o], est.scores[o], est.counts[o]
    q = windows.pair_names(A, np.asarray(tokens, dtype=np.int64)[..., None])
    i = np.minimum(np.searchsorted(keys, q), max(keys.size - 1, 0))
    hit = (keys[i] == q) & (ct[i] >= min_count) if keys.size else np.zeros(q.shape, dtype=bool)
    return np.where(hit, sc[i] if keys.size else 0.0, 0.0).sum(axis=-1) > threshold


def accuracy_aware(est: AwareEstimate, key: int, gamma: float, texts: Generation, **kw) -> float:
    """Balanced accuracy of :func:`believed_green_reference` against the key's true colours (``est.seeding``) on ``texts``."""
    pred = believed_green_reference(est, texts.tokens, texts.prompts, **kw)
    win = windows.windows(texts.tokens, texts.prompts, est.h)
    truth = (seeding_mod.words(int(key), win, texts.tokens, est.seeding) >> np.uint64(11)) < np.uint64(prf.green_threshold(gamma))
    tpr = (pred & truth).sum() / max(1, truth.sum())
    tnr = (~pred & ~truth).sum() / max(1, (~truth).sum())
    return float(0.5 * (tpr + tnr))


# ------------------------------------------------------------------ spoofing kernel
@njit(cache=True, inline="always")
def _add_scores(names, starts, toks, scores, counts, name, min_count, S):
    i = np.searchsorted(names, name)
    if i < names.shape[0] and names[i] == name:
        for j in range(starts[i], starts[i + 1]):
            if counts[j] >= min_count:
                S[toks[j]] += scores[j]


@njit(cache=True, parallel=True)
def _spoof_aware_kernel(V, order, lm_seed, lm_params, levels, base, prompts, T, seed, h, scheme, names, starts, toks, scores, counts,
                        boost, threshold, min_count, out):
    n, P = prompts.shape
    for i in prange(n):
        ctx = np.empty(P + T, dtype=np.int64)
        ctx[:P] = prompts[i]
        logits = np.empty(V)
        S = np.empty(V)
        skey = rng.stream_key_nb(seed, i)
        for t in range(T):
            L = P + t
            lm_mod.logits_into(V, order, lm_seed, lm_params, levels, base, ctx[:L], logits)
            S[:] = 0.0
            if scheme == seeding_mod.LEFTHASH:
                _add_scores(names, starts, toks, scores, counts, prf.context_hash_nb(windows.PUBLIC_KEY, ctx[L - h : L], windows.WINDOW_STREAM),
                            min_count, S)
            elif scheme == seeding_mod.SKIPGRAM:
                _add_scores(names, starts, toks, scores, counts, np.uint64(ctx[L - h] + 1), min_count, S)
            else:
                for j in range(L - h, L):
                    _add_scores(names, starts, toks, scores, counts, np.uint64(ctx[j] + 1), min_count, S)
                if scheme == seeding_mod.SELFHASH:
                    _add_scores(names, starts, toks, scores, counts, np.uint64(0), min_count, S)
            for y in range(V):
                if S[y] > threshold:
                    logits[y] += boost
            y = steal._sample(logits, rng.uniform_nb(skey, t))
            out[i, t] = y
            ctx[L] = y


def spoof_aware(lm, est: AwareEstimate, owner_meta: dict, *, n: int, T: int, seed: int, boost: float = 4.0, threshold: float = 0.0,
                min_count: int = 1, prompt_len: int | None = None) -> Generation:
    """``n`` texts of the base LM boosted by ``boost`` towards the believed-green tokens, carrying the owner's
    meta so that :func:`sims.detect.scores.score` scores them (prompts and draws as :func:`sims.experiments.steal.spoof`'s)."""
    if lm.vocab_size != est.vocab_size:
        raise ValueError(f"lm vocab_size must equal the estimate's {est.vocab_size}; got {lm.vocab_size}")
    if not (boost >= 0.0 and math.isfinite(boost)):
        raise ValueError(f"boost must be in [0, inf); got {boost!r}")
    if int(n) < 1 or int(T) < 1 or int(min_count) < 1:
        raise ValueError(f"n, T and min_count must be in [1, inf); got {n}, {T}, {min_count}")
    prompts = sample_prompts(lm, int(n), int(seed), max(lm.order + 1, est.h) if prompt_len is None else int(prompt_len))
    out = np.empty((int(n), int(T)), dtype=np.int64)
    _spoof_aware_kernel(*steal._lm_args(lm), np.ascontiguousarray(prompts, dtype=np.int64), int(T), int(seed), est.h, seeding_mod.code(est.seeding),
                        est.names, est.starts, est.tokens, est.scores, est.counts, float(boost), float(threshold), int(min_count), out)
    return steal._as_owner(out, prompts, owner_meta, dict(spoofed=dict(n_stolen=est.n_stolen, boost=float(boost), aware=est.seeding)))


def attack_point_aware(haul: steal.Haul, n_stolen: int, *, boost: float = 4.0, seed: int = 0, level: float = steal.LEVEL,
                       seeding: str | None = None) -> dict:
    """Steal from the first ``n_stolen`` texts of ``haul`` with the scheme-aware estimate, spoof, score with the
    owner's detector: spoof success (share of spoofed texts with p <= ``level``), median log10 p, balanced accuracy."""
    m = haul.wm.meta
    est = estimate_aware(haul.wm, haul.base, n_stolen=n_stolen, seeding=seeding)
    n_eval, T = haul.targets.tokens.shape
    sp = spoof_aware(haul.lm, est, m, n=n_eval, T=T, seed=seed + steal.SPOOF_SEED_OFFSET, boost=boost, prompt_len=haul.targets.prompts.shape[1])
    lp = detect.score(sp, haul.lm).log10_p
    return dict(n_stolen=int(n_stolen), seeding=m.get("seeding", seeding_mod.DEFAULT), assumed=est.seeding, boost=boost,
                spoof_success=float(np.mean(lp <= math.log10(level))), spoof_median_log10_p=float(np.median(lp)),
                green_estimate_accuracy=accuracy_aware(est, m["key"], m["gamma"], haul.held_out), n_anchors=int(est.names.size))
