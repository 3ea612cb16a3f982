r"""Many keys, many texts: family-wise error over keys, false discovery rate over a corpus.

**Many keys.**  A provider holding K keys asks which of them, if any, marked a text.  Each
key's exact p-value :math:`p_k` is valid on its own (:mod:`sims.detect.stats.scores`); testing every
key at alpha flags an innocent text with probability up to :math:`K\alpha`.  :func:`holm`
rejects :math:`p_{(1)} \le \alpha/K,\ p_{(2)} \le \alpha/(K-1), \dots` until the first failure
(Holm 1979).  Its family-wise error is at most alpha under **any** dependence between the
keys' p-values: if :math:`K_0` keys did not mark the text, a false rejection needs some true
null :math:`p_k \le \alpha / K_0` at Holm's first true-null step, and by the union bound
:math:`P(\exists k \in H_0 : p_k \le \alpha/K_0) \le \sum_{k \in H_0} \alpha/K_0 = \alpha`;
only the validity of each :math:`p_k` is used, never independence.  That matters here: the
keys score the same tokens, so their green counts are dependent (through the shared text and
dedup pattern), and a text watermarked with key j is not independent of key j's p-value.
(three_bricks' Sidak correction :math:`1-(1-\alpha)^{1/K}` assumes independence.)

**Many texts.**  Screening N texts at alpha flags about :math:`N_0\alpha` innocent ones;
:func:`benjamini_hochberg` bounds the expected share of false flags among the flags (FDR) by
alpha when the null p-values are independent (texts that share no (context, token) pair,
scored with dedup, have independent colours) or positively regression dependent (PRDS;
Benjamini and Yekutieli 2001); ``arbitrary=True`` divides alpha by :math:`\sum_{i \le N} 1/i`
(Benjamini-Yekutieli), valid under any dependence.  :func:`e_bh` (Wang and Ramdas 2022) uses
e-values (e.g. the final e-value of :mod:`sims.detect.anytime.sequential`, whose null expectation is
at most 1): reject the k* texts with the largest e-values, :math:`k^* = \max\{k : e_{(k)} \ge N /
(\alpha k)\}`; its FDR is at most alpha under arbitrary dependence, with no correction.

All computations are in log space (p-values far below 1e-300 stay exact).
"""

from __future__ import annotations

import math

import numpy as np

from sims.core import defaults
from sims.core import seeding as seeding_mod
from sims.detect.multiple import _kernels as MK
from sims.detect.stats import scores
from sims.detect.stats._seeding_kernels import multi_key_seeded_sums
from sims.detect.stats.nulls import LN10, binom_logsf


def _level(alpha) -> float:
    from sims.detect.anytime.sequential import check_alpha

    return check_alpha(alpha)


def holm(log10_p, alpha: float) -> np.ndarray:
    """Holm's step-down rejections over the keys (axis 0) of ``log10_p`` (K, ...): FWER <= alpha per
    column under arbitrary dependence (module docstring).

    Parameters
    ----------
    log10_p : array_like, shape (K, ...)
        log10 p-value of each text (trailing axes) under each key (axis 0).
    alpha : float
        Family-wise error rate, in (0, 1).

    Returns
    -------
    ndarray of bool, shape of ``log10_p``
        True where the key is rejected (it marked the text).

    Raises
    ------
    ValueError
        If ``log10_p`` is empty or holds nan, or alpha is outside (0, 1).
    """
    lp = np.asarray(log10_p, dtype=np.float64)
    if lp.ndim < 1 or lp.shape[0] < 1 or np.isnan(lp).any():
        raise ValueError(f"log10_p must be a non-empty array (keys first) without nan; got shape {lp.shape}")
    Kn = lp.shape[0]
    order = np.argsort(lp, axis=0, kind="stable")
    srt = np.take_along_axis(lp, order, axis=0)
    lvl = (math.log10(_level(alpha)) - np.log10(Kn - np.arange(Kn))).reshape((Kn,) + (1,) * (lp.ndim - 1))
    ok = np.logical_and.accumulate(srt <= lvl, axis=0)
    out = np.zeros(lp.shape, dtype=bool)
    np.put_along_axis(out, order, ok, axis=0)
    return out


def holm_adjusted_log10p(log10_p) -> np.ndarray:
    r"""Holm-adjusted log10 p-values over axis 0: :math:`\tilde p_{(i)} = \max_{j \le i} \min(1, (K-j+1) p_{(j)})`;
    key k is rejected at level alpha iff :math:`\tilde p_k \le \alpha`.

    Parameters
    ----------
    log10_p : array_like, shape (K, ...)
        log10 p-values, keys on axis 0.

    Returns
    -------
    ndarray, shape of ``log10_p``
        log10 of the adjusted p-values, <= 0.
    """
    lp = np.asarray(log10_p, dtype=np.float64)
    Kn = lp.shape[0]
    order = np.argsort(lp, axis=0, kind="stable")
    srt = np.take_along_axis(lp, order, axis=0)
    adj = np.minimum(0.0, srt + np.log10(Kn - np.arange(Kn)).reshape((Kn,) + (1,) * (lp.ndim - 1)))
    adj = np.maximum.accumulate(adj, axis=0)
    out = np.empty_like(adj)
    np.put_along_axis(out, order, adj, axis=0)
    return out


def benjamini_hochberg(log10_p, alpha: float, *, arbitrary: bool = False) -> np.ndarray:
    r"""BH rejections of a 1-d array of log10 p-values (one per text): FDR <= alpha under independence
    or PRDS; ``arbitrary=True``: the Benjamini-Yekutieli level, valid under any dependence.

    Parameters
    ----------
    log10_p : array_like, shape (N,)
        log10 p-value of each text.
    alpha : float
        Target false discovery rate, in (0, 1).
    arbitrary : bool, default False
        Divide alpha by :math:`\sum_{i \le N} 1/i` (Benjamini-Yekutieli).

    Returns
    -------
    ndarray of bool, shape (N,)
        True for the flagged texts: the k smallest p-values, k the largest with
        :math:`p_{(k)} \le \alpha k / N`.

    Raises
    ------
    ValueError
        If ``log10_p`` is empty, not 1-d, or holds nan, or alpha is outside (0, 1).
    """
    lp = np.asarray(log10_p, dtype=np.float64)
    if lp.ndim != 1 or lp.size == 0 or np.isnan(lp).any():
        raise ValueError(f"log10_p must be a non-empty 1-d array without nan; got shape {lp.shape}")
    N = lp.size
    a = _level(alpha) / (np.sum(1.0 / np.arange(1, N + 1)) if arbitrary else 1.0)
    order = np.argsort(lp, kind="stable")
    below = np.flatnonzero(lp[order] <= math.log10(a) + np.log10(np.arange(1, N + 1) / N))
    out = np.zeros(N, dtype=bool)
    if below.size:
        out[order[: below[-1] + 1]] = True
    return out


def e_bh(log_e, alpha: float) -> np.ndarray:
    r"""e-BH rejections of a 1-d array of natural-log e-values: FDR <= alpha under arbitrary dependence.

    Parameters
    ----------
    log_e : array_like, shape (N,)
        Natural log of each text's e-value.
    alpha : float
        Target false discovery rate, in (0, 1).

    Returns
    -------
    ndarray of bool, shape (N,)
        True for the k* texts with the largest e-values, :math:`k^* = \max\{k : e_{(k)} \ge N / (\alpha k)\}`.

    Raises
    ------
    ValueError
        If ``log_e`` is empty, not 1-d, or holds nan, or alpha is outside (0, 1).
    """
    le = np.asarray(log_e, dtype=np.float64)
    if le.ndim != 1 or le.size == 0 or np.isnan(le).any():
        raise ValueError(f"log_e must be a non-empty 1-d array without nan; got shape {le.shape}")
    N = le.size
    order = np.argsort(-le, kind="stable")
    ok = np.flatnonzero(le[order] >= math.log(N / _level(alpha)) - np.log(np.arange(1, N + 1)))
    out = np.zeros(N, dtype=bool)
    if ok.size:
        out[order[: ok[-1] + 1]] = True
    return out


def check_keys(keys) -> np.ndarray:
    """Keys as a uint64 array (each in [0, 2**64), at least one, no repeat), else a ValueError naming ``keys``.

    Parameters
    ----------
    keys : iterable of int
        Candidate watermark keys.

    Returns
    -------
    ndarray of uint64, shape (K,)
        The keys, in the given order.

    Raises
    ------
    ValueError
        If there is no key, a key out of range or not an integer, or a repeat.
    """
    ks = list(keys)
    if not ks or any(isinstance(k, (bytes, bytearray, float)) or not 0 <= int(k) < 2**64 for k in ks) or len(set(map(int, ks))) != len(ks):
        raise ValueError(f"keys must be distinct integers in [0, 2**64), at least one; got {keys!r}")
    return np.array([int(k) for k in ks], dtype=np.uint64)


def score_redgreen_keys(tokens, prompts, keys, gamma: float, *, vocab_size: int | None = None, h: int = defaults.H, dedup: bool = True,
                        green_kind: str = defaults.GREEN_KIND, lengths=None,
                        seeding: str = seeding_mod.DEFAULT) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Exact red-green log10 p-value of every text under every key (what :func:`sims.detect.stats.scores.score_redgreen`
    gives key by key; one Numba pass over the tokens hashes every key, the dedup pattern found once).

    Under a ``seeding`` scheme other than ``"lefthash"`` (:mod:`sims.core.seeding`; Bernoulli green lists)
    dedup counts each (seed, token) pair once, and which windows share a seed depends on the key (the
    window token of smallest hash), so each key has its own dedup pattern and scored count
    (:func:`sims.detect.stats._seeding_kernels.multi_key_seeded_sums`).

    Parameters
    ----------
    tokens : ndarray of int, shape (n, T)
        Generated tokens.
    prompts : ndarray of int, shape (n, P)
        Prompts, at least ``h`` tokens each.
    keys : iterable of int
        Candidate keys (:func:`check_keys`).
    gamma : float
        Green-list fraction.
    vocab_size : int, optional
        Vocabulary size: ids are checked against it; ``"partition"`` green lists need it.
    h : int, default defaults.H
        Context width.
    dedup : bool, default True
        Score each (context, token) pair once.
    green_kind : {"bernoulli", "partition"}
        Green-list kind (:mod:`sims.core.prf`).
    lengths : ndarray of int, shape (n,), optional
        Tokens of each text (default: up to the first -1 pad).
    seeding : str, default "lefthash"
        Seeding scheme (:data:`sims.core.seeding.SEEDINGS`).

    Returns
    -------
    log10_p : (K, n) float array
        Exact log10 p-value of each text under each key (0 for at most one scored token).
    green, n_scored : (K, n) arrays
        Green count and scored count of each text under each key.

    Examples
    --------
    >>> import sims
    >>> from sims.detect.multiple import holm, score_redgreen_keys
    >>> gen = sims.generate(sims.get_lm("news"), "srl", n=2, T=100, seed=0, key=5, delta=2.0)
    >>> lp, _, _ = score_redgreen_keys(gen.tokens, gen.prompts[:, -1:], [3, 4, 5, 6], 0.25, vocab_size=gen.meta["vocab_size"])
    >>> holm(lp, 1e-4).T.tolist()  # only key 5 marked the texts
    [[False, False, True, False], [False, False, True, False]]
    """
    keys = check_keys(keys)
    tokens, prompts, lengths = scores._check_inputs(tokens, prompts, vocab_size, h, lengths)
    code, stream, thr, g_eff, tokmix = scores._stat_code("green", gamma, green_kind, vocab_size)
    if seeding_mod.code(seeding) != seeding_mod.LEFTHASH:
        if green_kind != "bernoulli":
            raise ValueError(f"seeding {seeding!r} seeds Bernoulli green lists only; got green_kind={green_kind!r}")
        green, n = multi_key_seeded_sums(tokens, prompts, lengths, keys, int(h), bool(dedup), seeding_mod.code(seeding),
                                         seeding_mod.cluster_table(seeding), thr)
        lp = np.where(n <= 1, 0.0, binom_logsf(np.rint(green).astype(np.int64), n, g_eff) / LN10)
        return lp, green, n
    _, scored = scores.token_scores(tokens, prompts, int(keys[0]), gamma=gamma, h=h, green_kind=green_kind, dedup=dedup, vocab_size=vocab_size,
                                    lengths=lengths)
    green = MK.multi_key_sums(tokens, prompts, lengths, scored, keys, int(h), stream, code, thr, tokmix)
    n = np.broadcast_to(scored.sum(axis=1), green.shape)
    lp = np.where(n <= 1, 0.0, binom_logsf(np.rint(green).astype(np.int64), n, g_eff) / LN10)
    return lp, green, n
