r"""A scheme-aware stealing attacker: green lists estimated on the seed a seeding scheme actually uses.

The attacker of :mod:`sims.steal` estimates one green list per h-token window.  Under
left-hash that is the seed, but the other schemes of :mod:`sims.core.seeding` seed from less:

=============  =================================================================================
``lefthash``   the whole window: one *anchor* per position, the window (as in :mod:`~sims.steal`)
``skipgram``   the token h back alone: one anchor, that token; every window that shares it shares
               its green list, so the evidence of V**(h-1) windows pools
``minhash``    the window's token of least keyed hash: the attacker cannot compute the hash (it is
               keyed), so every token of the window is an anchor, weighted by how often it is the seed
``selfhash``   the least of the candidate's own hash and of its pairs with each window token: the
               anchors are every window token and ``self`` (the candidate alone), weighted alike
=============  =================================================================================

**Per pair.**  For anchor a and token y it counts :math:`w = w(a, y)` over the watermarked texts and
:math:`b = b(a, y)` over the base texts (:math:`W = w(a)`, :math:`B = b(a)` over all y).  If a seeds y's
colour, a watermark of strength :math:`\delta` (green mass :math:`\approx\gamma`) multiplies y's
probability by :math:`\rho_g = e^\delta / (1 + (e^\delta - 1)\gamma)` if green and
:math:`\rho_r = 1 / (1 + (e^\delta - 1)\gamma)` if red, so given :math:`n = w + b` the split is
:math:`w \sim \mathrm{Bin}(n, \theta_c)`, :math:`\theta_c = W\rho_c / (W\rho_c + B)`, and the posterior
that the pair is green (prior :math:`\gamma`) has log-odds

.. math::
    \operatorname{logit} q(a, y) = \operatorname{logit}\gamma + w \log\frac{\theta_g}{\theta_r}
    + b \log\frac{1 - \theta_g}{1 - \theta_r}

(pairs seen in either haul; a pair seen in neither, or an anchor absent from one haul, keeps
:math:`q = \gamma`).  The attacker knows the scheme, h, :math:`\gamma` and :math:`\delta` (Kerckhoffs:
the public parameters, not the key).

**Per position.**  Exactly one anchor seeds (x, y), so the anchors are a mixture, not independent
evidence on one bit:

.. math:: P(x, y) = \sum_{a \in A(x, y)} \omega_a\, q(a, y) \Big/ \sum_{a} \omega_a ,

with :math:`\omega_a` the weight of anchor a: 1 for every anchor except under min-hash, where the
seed is the window's token of least hash, a fixed order of the vocabulary the attacker learns from
the texts: a token low in the order seeds most windows it enters, and its followers then differ most
from the base LM's.  Its weight is :math:`\omega_x = \max(\phi_x, 0)`,
:math:`\phi_x = (X^2_x - d_x) / (W + B)`, the excess of the chi-square statistic :math:`X^2_x` of
homogeneity between its followers in the two hauls over its degrees of freedom :math:`d_x`, a
divergence that grows as the square of the share of windows x seeds (at h = 2, news V = 1024 and
10000 stolen texts it orders a held-out window's two tokens as their keyed hashes do 80 % of the
time; the weights :math:`\phi^{1/2}`, :math:`\phi`, :math:`\phi^2`, :math:`\phi^4` forged 0.12, 0.17, 0.18, 0.18
of 200 texts there, uniform weights 0.07); an anchor unseen in the hauls gets the mean weight.
(The h + 1 summed frequency-ratio scores this replaced believed 97 % of its own spoofed tokens green
at a precision of 0.34 under min-hash: it boosted nearly every candidate.)

Spoofing (:func:`spoof_aware`) samples the base LM with logits :math:`\ell_y + \delta_s 1\{y \in S\}`,
evaluating each candidate y under its own anchors (under self-hash ``self`` is y itself).  By default S is
the k candidates of largest :math:`P(x, y)` with k chosen to maximise the forger's own expected green share
of the boosted distribution (:func:`best_boost_count`); a fixed ``threshold`` :math:`\tau` takes
:math:`S = \{y : P(x, y) > \tau\}` instead (at 10000 texts, h = 2: 1/2 forged self-hash 0.28 and min-hash
0.17 of 200 texts, 0.4 skip-gram 0.27; the adaptive k 0.45, 0.26, 0.43).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit, prange

from sims import steal
from sims.core import prf, rng, windows
from sims.core import seeding as seeding_mod
from sims.core.record import Generation
from sims.detect.families import detectors
from sims.lm import synthetic as lm_mod
from sims.watermarks.generate import sample_prompts

SELF = np.uint64(0)
"""The anchor name of ``self`` (a candidate alone, self-hash); token anchors are named ``token + 1``."""


def anchor_count(seeding: str, h: int) -> int:
    """Anchors per position: 1 (left-hash, skip-gram), h (min-hash), h + 1 (self-hash).

    Parameters
    ----------
    seeding : str
        One of ``lefthash``, ``skipgram``, ``minhash``, ``selfhash``.
    h : int
        Context width.

    Returns
    -------
    int

    Raises
    ------
    ValueError
        If ``seeding`` is not a scheme of :mod:`sims.core.seeding`.
    """
    seeding_mod.code(seeding)
    return {"lefthash": 1, "skipgram": 1, "minhash": int(h), "selfhash": int(h) + 1}[seeding]


def anchors(tokens, prompts, h: int, seeding: str) -> np.ndarray:
    """The anchor names of every generated position (module docstring).

    Parameters
    ----------
    tokens : array_like of int
        (n, T) texts.
    prompts : array_like of int
        (n, P) their prompts, P >= h.
    h : int
        Context width.
    seeding : str
        The scheme assumed.

    Returns
    -------
    numpy.ndarray of uint64
        (n, T, K), K = :func:`anchor_count`: the window's public name (left-hash), ``token + 1`` of the anchor
        tokens, and :data:`SELF` (self-hash's last anchor).
    """
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
    r"""The scheme-aware estimate (:func:`estimate_aware`).

    Per (anchor, token) pair seen in either haul, sorted by anchor then token.

    Parameters
    ----------
    seeding : str
        The scheme assumed.
    h, vocab_size, n_stolen : int
        Context width, vocabulary size, texts stolen.
    gamma : float
        The scheme's green share.
    names : numpy.ndarray
        (C,) sorted anchors.
    starts : numpy.ndarray
        (C + 1,) anchor i's pairs are ``starts[i]:starts[i+1]``.
    weights : numpy.ndarray
        (C,) :math:`\omega_a` of each anchor.
    unseen_weight : float
        :math:`\omega` of an anchor not in ``names``.
    tokens : numpy.ndarray
        The pairs' tokens y.
    wm_counts, base_counts : numpy.ndarray
        :math:`w(a, y)` and :math:`b(a, y)`.
    posterior : numpy.ndarray
        :math:`q(a, y)` (:func:`pair_posterior`).
    """

    seeding: str
    h: int
    vocab_size: int
    n_stolen: int
    gamma: float
    names: np.ndarray
    starts: np.ndarray
    weights: np.ndarray
    unseen_weight: float
    tokens: np.ndarray
    wm_counts: np.ndarray
    base_counts: np.ndarray
    posterior: np.ndarray


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


def _merge(wa, wy, wc, ba, by, bc):
    """The union of two sorted pair lists: anchors, tokens, counts in each (0 where absent)."""
    a, y = np.concatenate([wa, ba]), np.concatenate([wy, by])
    o = np.lexsort((y, a))
    a, y = a[o], y[o]
    new = np.ones(a.size, dtype=bool)
    new[1:] = (a[1:] != a[:-1]) | (y[1:] != y[:-1])
    idx = np.cumsum(new) - 1
    w, b = np.zeros(new.sum(), dtype=np.int64), np.zeros(new.sum(), dtype=np.int64)
    src = o < wa.size
    w[idx[src]] = wc[o[src]]
    b[idx[~src]] = bc[o[~src] - wa.size]
    return a[new], y[new], w, b


def pair_posterior(w, b, W, B, gamma: float, delta: float) -> np.ndarray:
    r""":math:`q(a, y)` (module docstring): the posterior probability that y is green under anchor a.

    Parameters
    ----------
    w, b : array_like
        The pair's counts in the watermarked and base hauls.
    W, B : array_like
        Its anchor's counts over all tokens (broadcast with ``w``, ``b``).
    gamma : float
        The green share, the prior.
    delta : float
        The watermark's strength.

    Returns
    -------
    numpy.ndarray
        :math:`q(a, y)` in (0, 1); :math:`\gamma` where the anchor is absent from either haul.
    """
    w, b, W, B = (np.asarray(v, dtype=np.float64) for v in (w, b, W, B))
    rr = 1.0 / (1.0 + math.expm1(delta) * gamma)
    rg = math.exp(delta) * rr
    both = (W > 0) & (B > 0)
    Ws, Bs = np.where(both, W, 1.0), np.where(both, B, 1.0)
    tg, tr = Ws * rg / (Ws * rg + Bs), Ws * rr / (Ws * rr + Bs)
    llr = np.where(both, w * np.log(tg / tr) + b * (np.log1p(-tg) - np.log1p(-tr)), 0.0)
    z = math.log(gamma / (1.0 - gamma)) + llr
    return 0.5 * (1.0 + np.tanh(0.5 * z))  # expit, without overflow


def minhash_weights(w, b, starts) -> np.ndarray:
    r""":math:`\omega_x = \max(\phi_x, 0)` per anchor (module docstring): how often a token is min-hash's seed.

    Parameters
    ----------
    w, b : numpy.ndarray
        Counts of the pairs, sorted by anchor.
    starts : numpy.ndarray
        Anchor i's pairs are ``starts[i]:starts[i+1]``.

    Returns
    -------
    numpy.ndarray
        (C,) non-negative weights.
    """
    first = starts[:-1]
    W = np.repeat(np.add.reduceat(w, first), np.diff(starts)).astype(np.float64)
    B = np.repeat(np.add.reduceat(b, first), np.diff(starts)).astype(np.float64)
    n = (w + b).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        x2 = np.where((W > 0) & (B > 0), (w - n * W / (W + B)) ** 2 * (W + B) ** 2 / (n * W * B), 0.0)
    phi = (np.add.reduceat(x2, first) - (np.diff(starts) - 1)) / np.add.reduceat(n, first)
    return np.maximum(phi, 0.0)


def estimate_aware(wm: Generation, base: Generation, *, n_stolen: int | None = None, seeding: str | None = None,
                   gamma: float | None = None, delta: float | None = None) -> AwareEstimate:
    """The scheme-aware estimate from the first ``n_stolen`` texts of each haul (module docstring).

    Parameters
    ----------
    wm, base : Generation
        The watermarked texts (the haul) and base-LM texts (at least ``n_stolen`` each).
    n_stolen : int, optional
        Texts used, in [1, min(wm.n, base.n)] (default wm.n).
    seeding : str, optional
        The scheme the attacker assumes (default the owner's, ``wm.meta["seeding"]``: Kerckhoffs).
    gamma, delta : float, optional
        The scheme's green share in (0, 1) and strength in (0, inf) (default the owner's, ``wm.meta``).

    Returns
    -------
    AwareEstimate

    Raises
    ------
    ValueError
        If ``base`` is not a Generation, ``n_stolen``, ``gamma`` or ``delta`` is out of range, the scheme is
        unknown, or the texts come from another vocabulary.
    """
    V, h = int(wm.meta["vocab_size"]), int(wm.meta.get("h", 1))
    seeding = wm.meta.get("seeding", seeding_mod.DEFAULT) if seeding is None else seeding
    seeding_mod.code(seeding)
    gamma = float(wm.meta["gamma"] if gamma is None else gamma)
    delta = float(wm.meta.get("delta", 2.0) if delta is None else delta)
    if not isinstance(base, Generation):
        raise ValueError(f"base must be a Generation (the attacker's base-LM texts); got {type(base).__name__}")
    n_stolen = wm.n if n_stolen is None else int(n_stolen)
    if not (1 <= n_stolen <= min(wm.n, base.n)):
        raise ValueError(f"n_stolen must be in [1, {min(wm.n, base.n)}] (the texts given); got {n_stolen}")
    if not 0.0 < gamma < 1.0:
        raise ValueError(f"gamma must be in (0, 1); got {gamma!r}")
    if not (delta > 0.0 and math.isfinite(delta)):
        raise ValueError(f"delta must be in (0, inf); got {delta!r}")
    steal._check_texts("wm texts", wm, V, h)
    steal._check_texts("base texts", base, V, h)
    wp = _pairs(anchors(wm.tokens[:n_stolen], wm.prompts[:n_stolen], h, seeding), wm.tokens[:n_stolen])
    bp = _pairs(anchors(base.tokens[:n_stolen], base.prompts[:n_stolen], h, seeding), base.tokens[:n_stolen])
    a, y, w, b = _merge(*wp, *bp)
    names, first = np.unique(a, return_index=True)
    starts = np.append(first, a.size).astype(np.int64)
    rep = np.diff(starts)
    W, B = np.repeat(np.add.reduceat(w, first), rep), np.repeat(np.add.reduceat(b, first), rep)
    q = pair_posterior(w, b, W, B, gamma, delta)
    if seeding == "minhash":
        weights = minhash_weights(w, b, starts)
        unseen = float(weights.mean())
    else:
        weights, unseen = np.ones(names.size), 1.0
    return AwareEstimate(seeding, h, V, n_stolen, gamma, names, starts, weights, unseen, y, w, b, q)


def green_probability_reference(est: AwareEstimate, tokens, prompts, *, candidates=None) -> np.ndarray:
    r""":math:`P(x, y)` at every generated position of ``tokens`` (NumPy; the spoof kernel's rule).

    Parameters
    ----------
    est : AwareEstimate
        The estimate.
    tokens, prompts : array_like of int
        (n, T) texts and (n, P) prompts.
    candidates : array_like of int, optional
        (n, T) tokens to score after each position's window instead of its own token.

    Returns
    -------
    numpy.ndarray
        (n, T) float: :math:`\gamma` plus the weighted mean of :math:`q(a, y) - \gamma` over the anchors.
    """
    A = anchors(tokens, prompts, est.h, est.seeding)
    tokens = tokens if candidates is None else candidates
    keys = windows.pair_names(est.names.repeat(np.diff(est.starts)), est.tokens)
    o = np.argsort(keys)
    keys, q = keys[o], est.posterior[o]
    k = windows.pair_names(A, np.asarray(tokens, dtype=np.int64)[..., None])
    i = np.minimum(np.searchsorted(keys, k), max(keys.size - 1, 0))
    qa = np.where(keys[i] == k, q[i], est.gamma) if keys.size else np.full(k.shape, est.gamma)
    j = np.minimum(np.searchsorted(est.names, A), max(est.names.size - 1, 0))
    om = np.where(est.names[j] == A, est.weights[j], est.unseen_weight) if est.names.size else np.full(A.shape, est.unseen_weight)
    tot = om.sum(axis=-1)
    return est.gamma + np.where(tot > 0, (om * (qa - est.gamma)).sum(axis=-1) / np.where(tot > 0, tot, 1.0), 0.0)


def accuracy_aware(est: AwareEstimate, key: int, texts: Generation, *, threshold: float = 0.5) -> float:
    r"""Balanced accuracy of :math:`P(x, y) > \tau` (:func:`green_probability_reference`) against the key's true colours.

    Parameters
    ----------
    est : AwareEstimate
        The estimate (its ``seeding`` gives the true colours).
    key : int
        The owner's key.
    texts : Generation
        Held-out texts.
    threshold : float, optional
        :math:`\tau`.

    Returns
    -------
    float
        The mean of the true-green and true-red rates (0.5: no knowledge).
    """
    pred = green_probability_reference(est, texts.tokens, texts.prompts) > threshold
    win = windows.windows(texts.tokens, texts.prompts, est.h)
    truth = (seeding_mod.words(int(key), win, texts.tokens, est.seeding) >> np.uint64(11)) < np.uint64(prf.green_threshold(est.gamma))
    tpr = (pred & truth).sum() / max(1, truth.sum())
    tnr = (~pred & ~truth).sum() / max(1, (~truth).sum())
    return float(0.5 * (tpr + tnr))


# ------------------------------------------------------------------ spoofing kernel
@njit(cache=True)
def best_boost_count(logits, P, boost, order):
    r"""The k that maximises the forger's own expected green share when it boosts its k most-likely-green candidates.

    The share is :math:`\sum_y r_k(y) P(y)`, :math:`r_k` the softmax of the logits with ``boost`` added to the
    k candidates of largest ``P`` (ties by id).

    Parameters
    ----------
    logits : numpy.ndarray
        (V,) the base LM's logits.
    P : numpy.ndarray
        (V,) :math:`P(x, y)` of each candidate.
    boost : float
        The logit boost.
    order : numpy.ndarray
        (V,) int64, filled with the candidates by decreasing ``P``.

    Returns
    -------
    int
        k in [0, V]; 0 (no boost) when nothing helps.
    """
    V = logits.shape[0]
    top = -np.inf
    for y in range(V):
        top = max(top, logits[y])
    p = np.exp(logits - top)
    p /= p.sum()
    order[:] = np.argsort(-P, kind="mergesort")
    eb = math.exp(boost)
    g0 = 0.0
    for y in range(V):
        g0 += p[y] * P[y]
    a = ga = 0.0
    best, k = g0, 0
    for r in range(V):
        y = order[r]
        a += p[y]
        ga += p[y] * P[y]
        g = (eb * ga + g0 - ga) / (eb * a + 1.0 - a)
        if g > best:
            best, k = g, r + 1
    return k


@njit(cache=True, inline="always")
def _add_anchor(names, starts, weights, unseen, toks, post, gamma, name, acc):
    """acc += omega_a (q(a, .) - gamma) over anchor ``name``'s pairs; returns omega_a."""
    i = np.searchsorted(names, name)
    if i < names.shape[0] and names[i] == name:
        om = weights[i]
        for j in range(starts[i], starts[i + 1]):
            acc[toks[j]] += om * (post[j] - gamma)
        return om
    return unseen


@njit(cache=True, parallel=True)
def _spoof_aware_kernel(V, order, lm_seed, lm_params, levels, base, prompts, T, seed, h, scheme, names, starts, weights, unseen, toks, post,
                        gamma, boost, threshold, out):
    n, P = prompts.shape
    for i in prange(n):
        ctx = np.empty(P + T, dtype=np.int64)
        ctx[:P] = prompts[i]
        logits = np.empty(V)
        acc = np.empty(V)
        rank = np.empty(V, dtype=np.int64)
        skey = rng.stream_key_nb(seed, i)
        for t in range(T):
            L = P + t
            lm_mod.logits_into(V, order, lm_seed, lm_params, levels, base, ctx[:L], logits)
            acc[:] = 0.0
            if scheme == seeding_mod.LEFTHASH:
                tot = _add_anchor(names, starts, weights, unseen, toks, post, gamma,
                                  prf.context_hash_nb(windows.PUBLIC_KEY, ctx[L - h : L], windows.WINDOW_STREAM), acc)
            elif scheme == seeding_mod.SKIPGRAM:
                tot = _add_anchor(names, starts, weights, unseen, toks, post, gamma, np.uint64(ctx[L - h] + 1), acc)
            else:
                tot = 0.0
                for j in range(L - h, L):
                    tot += _add_anchor(names, starts, weights, unseen, toks, post, gamma, np.uint64(ctx[j] + 1), acc)
                if scheme == seeding_mod.SELFHASH:  # each candidate y's own anchor: the pairs (self, y)
                    tot += _add_anchor(names, starts, weights, unseen, toks, post, gamma, SELF, acc)
            if tot > 0.0:
                for y in range(V):
                    acc[y] = gamma + acc[y] / tot
                if threshold < 0.0:
                    k = best_boost_count(logits, acc, boost, rank)
                    for r in range(k):
                        logits[rank[r]] += boost
                else:
                    for y in range(V):
                        if acc[y] > threshold:
                            logits[y] += boost
            y = steal._sample(logits, rng.uniform_nb(skey, t))
            out[i, t] = y
            ctx[L] = y


def spoof_aware(lm, est: AwareEstimate, owner_meta: dict, *, n: int, T: int, seed: int, boost: float = 4.0,
                threshold: float | None = None, prompt_len: int | None = None) -> Generation:
    """``n`` texts of the base LM boosted by ``boost`` towards the set S of the module docstring.

    They carry the owner's meta so that :func:`sims.detect.families.detectors.score` scores them (prompts and
    draws as :func:`sims.steal.spoof`'s).

    Parameters
    ----------
    lm : SyntheticLM
        The base LM.
    est : AwareEstimate
        The estimate, of ``lm``'s vocabulary.
    owner_meta : dict
        The owner's generation meta.
    n, T : int
        Texts and tokens per text, >= 1.
    seed : int
        Seed of the prompts and draws.
    boost : float, optional
        The logit boost, >= 0.
    threshold : float, optional
        Boost the candidates with :math:`P(x, y)` above it, in [0, 1); None: the adaptive k
        (:func:`best_boost_count`).
    prompt_len : int, optional
        Prompt tokens (default the LM's order + 1, at least ``est.h``).

    Returns
    -------
    Generation
        The spoofed texts with ``meta["spoofed"]`` (``n_stolen``, ``boost``, ``aware``).

    Raises
    ------
    ValueError
        If the vocabularies differ, ``boost`` < 0, ``threshold`` is outside [0, 1) or ``n`` / ``T`` < 1.
    """
    if lm.vocab_size != est.vocab_size:
        raise ValueError(f"lm vocab_size must equal the estimate's {est.vocab_size}; got {lm.vocab_size}")
    if not (boost >= 0.0 and math.isfinite(boost)):
        raise ValueError(f"boost must be in [0, inf); got {boost!r}")
    if threshold is not None and not 0.0 <= threshold < 1.0:
        raise ValueError(f"threshold must be None (adaptive) or in [0, 1); got {threshold!r}")
    if int(n) < 1 or int(T) < 1:
        raise ValueError(f"n and T must be in [1, inf); got {n}, {T}")
    prompts = sample_prompts(lm, int(n), int(seed), max(lm.order + 1, est.h) if prompt_len is None else int(prompt_len))
    out = np.empty((int(n), int(T)), dtype=np.int64)
    _spoof_aware_kernel(*steal._lm_args(lm), np.ascontiguousarray(prompts, dtype=np.int64), int(T), int(seed), est.h, seeding_mod.code(est.seeding),
                        est.names, est.starts, est.weights.astype(np.float64), float(est.unseen_weight), est.tokens, est.posterior,
                        float(est.gamma), float(boost), -1.0 if threshold is None else float(threshold), out)
    return steal._as_owner(out, prompts, owner_meta, dict(spoofed=dict(n_stolen=est.n_stolen, boost=float(boost), aware=est.seeding)))


def attack_point_aware(haul: steal.StealingTexts, n_stolen: int, *, boost: float = 4.0, threshold: float | None = None, seed: int = 0,
                       level: float = steal.LEVEL, seeding: str | None = None) -> dict:
    """Steal with the scheme-aware estimate, spoof, and score with the owner's detector.

    The estimate uses the first ``n_stolen`` texts of ``haul``.

    Parameters
    ----------
    haul : sims.steal.StealingTexts
        The texts.
    n_stolen : int
        Texts stolen.
    boost : float, optional
        The logit boost.
    threshold : float, optional
        As in :func:`spoof_aware`.
    seed : int, optional
        Seed of the spoofing draws.
    level : float, optional
        Detection level of success.
    seeding : str, optional
        The scheme assumed (default the owner's).

    Returns
    -------
    dict
        ``n_stolen``, ``seeding`` (the owner's), ``assumed``, ``boost``, ``threshold``, ``spoof_success`` (share
        of spoofed texts with p <= ``level``), ``spoof_median_log10_p``, ``spoof_green_share`` (true green share
        of the spoofed tokens), ``n_anchors`` and ``green_estimate_accuracy`` (balanced, on held-out text).
    """
    m = haul.wm.meta
    est = estimate_aware(haul.wm, haul.base, n_stolen=n_stolen, seeding=seeding)
    n_eval, T = haul.targets.tokens.shape
    sp = spoof_aware(haul.lm, est, m, n=n_eval, T=T, seed=seed + steal.SPOOF_SEED_OFFSET, boost=boost, threshold=threshold,
                     prompt_len=haul.targets.prompts.shape[1])
    lp = detectors.score(sp, haul.lm).log10_p
    win = windows.windows(sp.tokens, sp.prompts, est.h)
    green = (seeding_mod.words(int(m["key"]), win, sp.tokens, m.get("seeding", seeding_mod.DEFAULT)) >> np.uint64(11)) < np.uint64(
        prf.green_threshold(float(m["gamma"])))
    return dict(n_stolen=int(n_stolen), seeding=m.get("seeding", seeding_mod.DEFAULT), assumed=est.seeding, boost=boost, threshold=threshold,
                spoof_success=float(np.mean(lp <= math.log10(level))), spoof_median_log10_p=float(np.median(lp)),
                spoof_green_share=float(green.mean()), n_anchors=int(est.names.size),
                green_estimate_accuracy=accuracy_aware(est, m["key"], haul.held_out))
