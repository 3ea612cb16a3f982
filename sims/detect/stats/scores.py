"""Detectors: red-green counts with exact binomial p-values, EMS with the exact Gamma tail,
the AutoCov statistic Z_T, the keyed-order tests of ITS / UW, prefix and windowed detection.

Every score returns log10 p-values computed by :mod:`sims.detect.stats.nulls` (exact far below 1e-300).
A text with at most one scored token gets p = 1 and ``too_short=True`` (no test).

Token layout (every function): ``tokens`` (n, T) generated ids, ``prompts`` (n, P) with
P >= h; text i is ``tokens[i, :L_i]`` where ``L_i = lengths[i]`` (default T) cut at the first
-1 (padding left by deletion attacks).  The context of a token is the ``h`` tokens before
it, prompt tokens included, oldest first (:mod:`sims.core.prf`).

Dedup (``dedup=True``, Fernandez et al.): each (context window, token) pair is scored once,
at its first occurrence.  A per-text open-addressing hash set holds the 64-bit PRF word
``context_hash ^ mix64(token + C)`` of each pair (a collision merges two pairs with
probability ~T^2 / 2^64).  With Bernoulli green lists and text that does not depend on the
key, the green count of n distinct pairs is then exactly Binomial(n, gamma)
(:mod:`sims.core.prf`), so the binomial p-value is exact; without dedup a repeated pair repeats
its colour and the test is anti-conservative on repetitive text.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sims.core import defaults, prf, prf_crypto, rng
from sims.core import seeding as seeding_mod
from sims.detect.stats import _kernels as K
from sims.detect.stats._seeding_kernels import scan_seeded
from sims.detect.stats.nulls import LN10, autocov_logcdf, binom_logsf, gamma_logsf
from sims.watermarks import registry

#: The registered algorithms of the red-green family (green count, exact binomial tail; :func:`score_redgreen`).
REDGREEN_ALGOS = registry.names(family="redgreen")
#: The registered algorithms of the keyed-order family (ITS, UW-delta, UW-gamma; :func:`score_keyed_order`).
KEYED_ORDER_ALGOS = registry.names(family="keyed")
#: Every registered algorithm: each has a detector (:func:`sims.detect.families.detectors.score`).
DETECTABLE_ALGOS = registry.names()
#: The green-list kinds: i.i.d. Bernoulli(gamma) colours per (context, token), or a partition of floor(gamma V) words.
GREEN_KINDS = ("bernoulli", "partition")
#: The per-token statistics of :func:`token_scores`: the green indicator and the EMS term -ln(1 - r).
STATS = ("green", "ems")
#: The keyed PRFs of the green lists: SplitMix64 (:mod:`sims.core.prf`) and SipHash-2-4 (:mod:`sims.core.prf_crypto`).
PRFS = ("splitmix64", "siphash")
PARALLEL_MIN_TOKENS = 1 << 20  #: below this many tokens the counting kernel runs on one thread


@dataclass
class DetectResult:
    """Per-text detection, one result type for every detector family: the statistic, its exact
    p-value and the decision at a false-positive rate, under the field names of ``sims detect --json``.

    Attributes
    ----------
    n_scored : int array
        Tokens scored (after dedup).
    score : float array
        The statistic: green count (red-green), EMS sum, AutoCov S_T, keyed-order hits, g-value score.
    z : float array
        z-score (nan where undefined).
    log10_p : float array
        log10 of the exact p-value (0 for texts too short to test).
    too_short : bool array
        True where the text is too short to test (at most one token scored, AutoCov: fewer than two;
        p set to 1): the document's decision ``"too short to score"``.
    fpr : float
        The false-positive rate of :attr:`watermarked` (default ``defaults.FPR`` = 1e-4).

    Parameters
    ----------
    n_scored, score, z, log10_p, too_short, fpr
        The attributes above (built by the detectors, e.g. :func:`sims.detect.families.detectors.score`).

    Returns
    -------
    DetectResult
        A record of (n,) arrays, one entry per text.

    References
    ----------
    Towards Better Statistical Understanding of Watermarking LLMs, the z-score eq. (7) (eq:z_score), the exact
    p-values eqs. (17)-(19) of App. F (eq:three_brick_p, eq:ems_zscore, eq:ems_pval) and Prop. B.1
    (prop:type_I&II).

    Examples
    --------
    >>> import sims
    >>> lm = sims.get_lm("tiny")
    >>> gen = sims.generate(lm, "srl", n=2, T=20, seed=0, key=42, gamma=0.25, delta=2.0, prompt_len=4)
    >>> r = sims.score(gen)
    >>> type(r).__name__, r.n_scored.tolist(), r.score.tolist()
    ('DetectResult', [20, 20], [13.0, 13.0])
    >>> r.watermarked.tolist(), r.too_short.tolist(), r.fpr  # p = 10**-3.74 is above 1e-4
    ([False, False], [False, False], 0.0001)
    """

    n_scored: np.ndarray
    score: np.ndarray
    z: np.ndarray
    log10_p: np.ndarray
    too_short: np.ndarray
    fpr: float = defaults.FPR

    @property
    def watermarked(self) -> np.ndarray:
        """The decision at :attr:`fpr`: p <= fpr (never for a text too short to test), as the document's ``watermarked``."""
        return (self.log10_p <= math.log10(self.fpr)) & ~np.asarray(self.too_short, dtype=bool)

    @property
    def green(self) -> np.ndarray:
        """The green count of a red-green score (same array as ``score``)."""
        return self.score


def _check_inputs(tokens, prompts, vocab_size, h, lengths):
    """Validate the token layout; return contiguous int64 arrays and the per-text lengths."""
    if int(h) != h or int(h) < 0:
        raise ValueError(f"h must be an integer in [0, inf); got {h!r}")
    tokens = np.asarray(tokens)
    prompts = np.asarray(prompts)
    for name, a in (("tokens", tokens), ("prompts", prompts)):
        if a.dtype.kind not in "iu":
            raise ValueError(f"{name} must hold integer token ids; got dtype {a.dtype}")
    tokens = np.ascontiguousarray(tokens, dtype=np.int64)
    prompts = np.ascontiguousarray(prompts, dtype=np.int64)
    if tokens.ndim != 2 or prompts.ndim != 2 or prompts.shape[0] != tokens.shape[0]:
        raise ValueError(f"tokens and prompts must be 2-d with one row per text; got shapes {tokens.shape} and {prompts.shape}")
    if prompts.shape[1] < h:
        raise ValueError(f"prompts must hold at least h={h} tokens per text; got {prompts.shape[1]}")
    prompts = prompts[:, prompts.shape[1] - int(h) :]  # only the last h ids are read: none at h = 0 (a real LM's -1 left pads pass)
    if vocab_size is not None and not (2 <= int(vocab_size) <= 2**31):
        raise ValueError(f"vocab_size must be in [2, 2**31]; got {vocab_size!r}")
    hi = np.iinfo(np.int64).max if vocab_size is None else int(vocab_size) - 1
    if prompts.size and (prompts.min() < 0 or prompts.max() > hi):
        raise ValueError(f"prompts ids must be in [0, {hi}]; got min {prompts.min()}, max {prompts.max()}")
    n, T = tokens.shape
    first_pad, lo, hi_seen = K.layout(tokens)
    if n and T and (lo.min() < -1 or hi_seen.max() > hi):
        raise ValueError(f"tokens ids must be in [0, {hi}] (-1 pads); got min {lo.min()}, max {hi_seen.max()}")
    if lengths is None:
        lengths = first_pad
    else:
        lengths = np.asarray(lengths)
        if lengths.shape != (n,) or lengths.dtype.kind not in "iu":
            raise ValueError(f"lengths must be an integer array of shape ({n},); got {lengths.dtype} {lengths.shape}")
        if lengths.size and (lengths.min() < 0 or lengths.max() > T):
            raise ValueError(f"lengths must be in [0, T={T}]; got min {lengths.min()}, max {lengths.max()}")
        lengths = np.minimum(lengths, first_pad)
    return tokens, prompts, np.ascontiguousarray(lengths, dtype=np.int64)


def _stat_code(stat: str, gamma, green_kind: str, vocab_size):
    """Kernel code, integer threshold, effective gamma and token table of a statistic."""
    empty = np.zeros(0, dtype=np.uint64)
    if stat == "ems":
        return K.EMS_SCORE, prf.EMS, 0, None, empty
    if stat != "green":
        raise ValueError(f"stat must be one of {STATS}; got {stat!r}")
    thr = prf.green_threshold(float(gamma))  # validates gamma
    if green_kind == "bernoulli":
        return K.GREEN_BERNOULLI, prf.GREEN, thr, thr / float(prf.TOP53), empty
    if green_kind != "partition":
        raise ValueError(f"green_kind must be one of {GREEN_KINDS}; got {green_kind!r}")
    if vocab_size is None:
        raise ValueError("vocab_size must be given for green_kind='partition' (the green list is the floor(gamma V) smallest words)")
    n_green = max(1, int(np.floor(gamma * vocab_size)))
    tokmix = prf.token_mix(vocab_size)
    return K.GREEN_PARTITION, prf.GREEN, n_green, n_green / vocab_size, tokmix


def token_scores(tokens, prompts, key: int, *, stat: str = "green", gamma: float | None = None, h: int = defaults.H, green_kind: str = defaults.GREEN_KIND,
                 dedup: bool = False, vocab_size: int | None = None, lengths=None, prf: str = defaults.PRF,
                 seeding: str = seeding_mod.DEFAULT) -> tuple[np.ndarray, np.ndarray]:
    r"""Per-token statistic and scored mask (Numba kernel; :func:`token_scores_reference` is the NumPy twin).

    ``stat="green"``: :math:`1\{y_t \in G(\mathrm{ctx}_t)\}` (green list of ``green_kind``, ratio
    ``gamma``); ``stat="ems"``: :math:`-\ln(1 - r_{t,y_t})` (paper eq. ems_zscore's summand).
    ``prf="siphash"``: Bernoulli green lists keyed by SipHash-2-4 with the 128-bit ``key``
    (:mod:`sims.core.prf_crypto`), same threshold and null; ``stat="green"`` only.
    ``seeding``: the green lists' seeding scheme (:mod:`sims.core.seeding`; other than ``"lefthash"``:
    Bernoulli SplitMix64 lists, ``stat="green"``); dedup then names a token by its (seed, token) pair.

    Parameters
    ----------
    tokens, prompts, lengths, h : token layout (module docstring).
    key : int
        Watermark key in [0, 2**64); for ``prf="siphash"`` an int in [0, 2**128) or 16 bytes.
    stat : {"green", "ems"}
        The per-token statistic.
    gamma : float, optional
        Green-list ratio in (0, 1) (required for ``stat="green"``).
    green_kind : {"bernoulli", "partition"}
        The green lists' kind.
    dedup : bool
        Score each (context window, token) pair once, at its first occurrence.
    vocab_size : int, optional
        Token ids must be below it; required for ``green_kind="partition"``.
    prf : {"splitmix64", "siphash"}
        The keyed PRF of the green lists.
    seeding : {"lefthash", "selfhash", "minhash", "skipgram"}
        The green lists' seeding scheme.

    Returns
    -------
    values : (n, T) float64
        Each token's statistic, 0 where not scored.
    scored : (n, T) bool
        True for tokens inside the text and, with ``dedup``, first occurrences of their (context window, token) pair.
    """
    tokens, prompts, lengths = _check_inputs(tokens, prompts, vocab_size, h, lengths)
    code, stream, thr, _, tokmix = _stat_code(stat, gamma, green_kind, vocab_size)
    values = np.empty(tokens.shape, dtype=np.float64)
    scored = np.empty(tokens.shape, dtype=np.bool_)
    words = _check_key(key, prf)
    if seeding_mod.code(seeding) != seeding_mod.LEFTHASH:
        if code != K.GREEN_BERNOULLI or prf != "splitmix64":
            raise ValueError(f"seeding {seeding!r} seeds Bernoulli SplitMix64 green lists only; got stat={stat!r}, green_kind={green_kind!r}, prf={prf!r}")
        scan_seeded(tokens, prompts, lengths, np.uint64(key), int(h), bool(dedup), seeding_mod.code(seeding), seeding_mod.cluster_table(seeding),
                    thr, values, scored)
        return values, scored
    if prf == "siphash":
        if code != K.GREEN_BERNOULLI:
            raise ValueError(f"prf='siphash' keys Bernoulli green lists only; got stat={stat!r}, green_kind={green_kind!r}")
        K.scan_tokens_siphash(tokens, prompts, lengths, *words, int(h), bool(dedup), thr, values, scored)
        return values, scored
    K.scan_tokens(tokens, prompts, lengths, np.uint64(key), int(h), bool(dedup), stream, code, thr, tokmix, values, scored)
    return values, scored


def token_marks(tokens, prompts, key: int, *, stat: str = "green", gamma: float | None = None, h: int = defaults.H, green_kind: str = defaults.GREEN_KIND,
                dedup: bool = False, vocab_size: int | None = None, lengths=None, prf: str = defaults.PRF,
                seeding: str = seeding_mod.DEFAULT) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The marks of every token in one hashing pass: its statistic (repeated pairs included: a repeated
    token keeps its colour) and the scored mask of :func:`token_scores` (arguments as there).

    Parameters
    ----------
    tokens, prompts, lengths, h : token layout (module docstring).
    key, stat, gamma, green_kind, dedup, vocab_size, prf, seeding :
        As :func:`token_scores`.

    Returns
    -------
    values : (n, T) float64
        Each token's statistic inside its text (0 past the end); ``np.where(scored, values, 0)`` is
        :func:`token_scores`' ``values``.
    scored : (n, T) bool
        As :func:`token_scores`.
    lengths : (n,) int64
        Each text's length (its ``lengths`` cut at the first -1 pad).
    """
    tokens, prompts, lengths = _check_inputs(tokens, prompts, vocab_size, h, lengths)
    if prf != defaults.PRF or seeding_mod.code(seeding) != seeding_mod.LEFTHASH:  # their own kernels: colours, then the dedup's mask
        kw = dict(stat=stat, gamma=gamma, h=h, green_kind=green_kind, vocab_size=vocab_size, lengths=lengths, prf=prf, seeding=seeding)
        values, scored = token_scores(tokens, prompts, key, **kw)
        if dedup:
            scored = token_scores(tokens, prompts, key, dedup=True, **kw)[1]
        return values, scored, lengths
    code, stream, thr, _, tokmix = _stat_code(stat, gamma, green_kind, vocab_size)
    _check_key(key, prf)
    values = np.empty(tokens.shape, dtype=np.float64)
    scored = np.empty(tokens.shape, dtype=np.bool_)
    K.scan_marks(tokens, prompts, lengths, np.uint64(key), int(h), bool(dedup), stream, code, thr, tokmix, values, scored)
    return values, scored, lengths


def token_scores_reference(tokens, prompts, key: int, *, stat: str = "green", gamma: float | None = None, h: int = defaults.H,
                           green_kind: str = defaults.GREEN_KIND, dedup: bool = False, vocab_size: int | None = None, lengths=None,
                           seeding: str = seeding_mod.DEFAULT):
    """Pure-NumPy twin of :func:`token_scores` (dedup on the pair of actual token ids; under a seeding
    scheme other than ``"lefthash"``, on the (seed, token) pair of :mod:`sims.core.seeding`).

    Parameters
    ----------
    tokens, prompts, lengths, h : token layout (module docstring).
    key, stat, gamma, green_kind, dedup, vocab_size, seeding :
        As :func:`token_scores` (SplitMix64 green lists only).

    Returns
    -------
    values : (n, T) float64
        Each token's statistic, 0 where not scored (equal to :func:`token_scores`' values).
    scored : (n, T) bool
        The scored mask, as :func:`token_scores`.
    """
    tokens, prompts, lengths = _check_inputs(tokens, prompts, vocab_size, h, lengths)
    _stat_code(stat, gamma, green_kind, vocab_size)  # validation
    _check_key(key)
    n, T = tokens.shape
    seq = np.concatenate([prompts, np.where(tokens < 0, 0, tokens)], axis=1)
    P = prompts.shape[1]
    windows = np.stack([seq[:, P + t - h : P + t] for t in range(T)], axis=1) if T else np.zeros((n, 0, h), dtype=np.int64)
    if seeding_mod.code(seeding) != seeding_mod.LEFTHASH:
        y = seq[:, P:]
        seeds = seeding_mod.seeds(key, windows, seeding, y)
        values = prf.is_green(seeds, y, gamma).astype(np.float64)
        scored = np.arange(T)[None, :] < lengths[:, None]
        for i in range(n):
            seen = set()
            for t in range(lengths[i]):
                pair = (int(seeds[i, t]), int(y[i, t]))
                scored[i, t] = not (dedup and pair in seen)
                seen.add(pair)
        return np.where(scored, values, 0.0), scored
    if stat == "ems":
        ctx = prf.context_hash(key, windows, prf.EMS)
        values = -np.log1p(-prf.uniforms(ctx, seq[:, P:]))
    else:
        ctx = prf.context_hash(key, windows, prf.GREEN)
        if green_kind == "bernoulli":
            values = prf.is_green(ctx, seq[:, P:], gamma).astype(np.float64)
        else:
            values = np.zeros((n, T))
            for i in range(n):
                for t in range(lengths[i]):
                    values[i, t] = prf.green_mask(ctx[i, t], vocab_size, gamma, "partition")[seq[i, P + t]]
    scored = np.arange(T)[None, :] < lengths[:, None]
    if dedup:
        for i in range(n):
            seen = set()
            for t in range(lengths[i]):
                pair = (tuple(windows[i, t]), int(tokens[i, t]))
                scored[i, t] = pair not in seen
                seen.add(pair)
    return np.where(scored, values, 0.0), scored


def green_indicators(tokens, prompts, key: int, gamma: float, h: int = defaults.H, green_kind: str = defaults.GREEN_KIND, *,
                     vocab_size: int | None = None, dedup: bool = False, lengths=None) -> np.ndarray:
    """(n, T) bool: the token is scored and in its context's green list (see :func:`token_scores`).

    Parameters
    ----------
    tokens, prompts, lengths, h : token layout (module docstring).
    key : int
        Watermark key.
    gamma : float
        Green-list ratio in (0, 1).
    green_kind : {"bernoulli", "partition"}
    vocab_size : int, optional
        Token ids must be below it.
    dedup : bool
        Count each (context, token) pair once (later repeats are not scored).

    Returns
    -------
    ndarray (n, T) of bool
        Whether each token is scored and green.

    References
    ----------
    Towards Better Statistical Understanding of Watermarking LLMs, Algorithm 1 (alg:kirchen) (the green list) and eq. (7) (eq:z_score) (the green count).

    Examples
    --------
    >>> import sims
    >>> lm = sims.get_lm("tiny")
    >>> gen = sims.generate(lm, "srl", n=2, T=20, seed=0, key=42, gamma=0.25, delta=2.0, prompt_len=4)
    >>> sims.green_indicators(gen.tokens, gen.prompts, 42, 0.25).sum(axis=1).tolist()
    [13, 13]
    """
    values, _ = token_scores(tokens, prompts, key, stat="green", gamma=gamma, h=h, green_kind=green_kind, dedup=dedup, vocab_size=vocab_size, lengths=lengths)
    return values > 0.5


def _check_key(key, prf: str = defaults.PRF):
    """Validate ``key`` for ``prf``; SipHash's (k0, k1) as uint64 for ``"siphash"``."""
    if prf == "siphash":
        return tuple(np.uint64(w) for w in prf_crypto.key_words(key))
    if prf != "splitmix64":
        raise ValueError(f"prf must be one of {PRFS}; got {prf!r}")
    if isinstance(key, (bytes, bytearray)) or not (0 <= int(key) < 2**64):
        raise ValueError(f"key must be in [0, 2**64) (an int, for prf='splitmix64'); got {key!r}")
    return None


def _sums(tokens, prompts, key, stat, gamma, h, green_kind, dedup, vocab_size, lengths, prf=defaults.PRF, seeding=seeding_mod.DEFAULT):
    if prf == "siphash" or seeding != seeding_mod.DEFAULT:
        values, scored = token_scores(tokens, prompts, key, stat=stat, gamma=gamma, h=h, green_kind=green_kind, dedup=dedup,
                                      vocab_size=vocab_size, lengths=lengths, prf=prf, seeding=seeding)
        return values.sum(axis=1), scored.sum(axis=1), _stat_code(stat, gamma, green_kind, vocab_size)[3]
    tokens, prompts, lengths = _check_inputs(tokens, prompts, vocab_size, h, lengths)
    code, stream, thr, g_eff, tokmix = _stat_code(stat, gamma, green_kind, vocab_size)
    _check_key(key, prf)
    scan = K.scan_sums if tokens.size >= PARALLEL_MIN_TOKENS else K.scan_sums_serial
    s, n = scan(tokens, prompts, lengths, np.uint64(key), int(h), bool(dedup), stream, code, thr, tokmix)
    return s, n, g_eff


def _redgreen_result(counts, n, gamma) -> DetectResult:
    short = n <= 1
    with np.errstate(invalid="ignore", divide="ignore"):
        z = (counts - gamma * n) / np.sqrt(n * gamma * (1 - gamma))
    z[n == 0] = np.nan
    logp = binom_logsf(np.rint(counts).astype(np.int64), n, gamma) / LN10
    return DetectResult(n, counts, z, np.where(short, 0.0, logp), short)


def score_redgreen(tokens, prompts, key: int, gamma: float, *, vocab_size: int | None = None, h: int = defaults.H, dedup: bool = False,
                   green_kind: str = defaults.GREEN_KIND, lengths=None, prf: str = defaults.PRF,
                   seeding: str = seeding_mod.DEFAULT) -> DetectResult:
    r"""Red-green detection: green count, z-score (eq. z_score) and exact binomial log10 p.

    .. math:: z = \frac{|y|_G - \gamma n}{\sqrt{n\gamma(1-\gamma)}},\qquad
              p = P(\mathrm{Bin}(n, \gamma) \ge |y|_G)

    (paper eq. three_brick_p with :math:`\ge`, the valid p-value; :math:`n` = scored tokens).
    ``gamma`` is the Bernoulli rate rounded down to a multiple of 2**-53 (:mod:`sims.core.prf`);
    for ``green_kind="partition"`` it is floor(gamma V) / V, the exact probability that one pair is
    green; colours of distinct contexts are independent, but distinct tokens sharing a context
    are drawn without replacement (negatively correlated), so there the binomial null is an
    approximation (typically conservative), not exact.

    Parameters
    ----------
    tokens, prompts, lengths, h : token layout (module docstring).
    key : int in [0, 2**64); for ``prf="siphash"`` an int in [0, 2**128) or 16 bytes
    gamma : float in (0, 1)
    vocab_size : int, optional
        Token ids must be below it (checked); required for ``green_kind="partition"``.
    dedup : bool
        Score each (context window, token) pair once.
    green_kind : {"bernoulli", "partition"}
    prf : {"splitmix64", "siphash"}
        The keyed PRF of the green lists (:mod:`sims.core.prf`, :mod:`sims.core.prf_crypto`).
    seeding : {"lefthash", "selfhash", "minhash", "skipgram"}
        The green lists' seeding scheme (:mod:`sims.core.seeding`); dedup counts each (seed, token) pair once.

    Returns
    -------
    DetectResult
        Green count, z-score and exact log10 p of each text.

    References
    ----------
    Towards Better Statistical Understanding of Watermarking LLMs, eq. (7) (eq:z_score), eq. (17) (eq:three_brick_p) and Prop. B.1 (prop:type_I&II).

    Examples
    --------
    >>> import sims
    >>> lm = sims.get_lm("tiny")
    >>> gen = sims.generate(lm, "srl", n=2, T=20, seed=0, key=42, gamma=0.25, delta=2.0, prompt_len=4)
    >>> r = sims.score_redgreen(gen.tokens, gen.prompts, 42, 0.25, vocab_size=lm.vocab_size)
    >>> r.score.tolist(), [round(float(x), 3) for x in r.log10_p]
    ([13.0, 13.0], [-3.736, -3.736])
    """
    counts, n, g_eff = _sums(tokens, prompts, key, "green", gamma, h, green_kind, dedup, vocab_size, lengths, prf, seeding)
    return _redgreen_result(counts, n, g_eff)


def score_ems(tokens, prompts, key: int, *, vocab_size: int | None = None, h: int = defaults.H, dedup: bool = False, lengths=None) -> DetectResult:
    r"""EMS detection: :math:`S = \sum_t -\ln(1 - r_{t,y_t})` with the exact Gamma tail.

    .. math:: z = \frac{S - n}{\sqrt n}\ \text{(eq. ems\_zscore)},\qquad p = P(\Gamma(n, 1) \ge S)\ \text{(eq. ems\_pval)}

    :math:`r_{t,k}` = ``prf.uniforms(context_hash(key, ctx, prf.EMS), k)``.

    Parameters
    ----------
    tokens, prompts, lengths, h : token layout (module docstring).
    key : int
        Watermark key in [0, 2**64).
    vocab_size : int, optional
        Token ids must be below it (checked).
    dedup : bool
        Score each (context window, token) pair once: the terms of distinct pairs are then i.i.d. Exp(1) under
        the null.

    Returns
    -------
    DetectResult
        EMS sum S, z-score and exact log10 p of each text (p = 1, ``too_short``, with at most one scored token).

    References
    ----------
    Towards Better Statistical Understanding of Watermarking LLMs, eqs. (18) and (19) of App. F (eq:ems_zscore,
    eq:ems_pval).
    """
    s, n, _ = _sums(tokens, prompts, key, "ems", None, h, "bernoulli", dedup, vocab_size, lengths)
    short = n <= 1
    with np.errstate(invalid="ignore", divide="ignore"):
        z = (s - n) / np.sqrt(n)
    z[n == 0] = np.nan
    return DetectResult(n, s, z, np.where(short, 0.0, gamma_logsf(s, n) / LN10), short)


def score_autocov(tokens, prompts, key: int, gamma: float, *, vocab_size: int | None = None, h: int = defaults.H, green_kind: str = defaults.GREEN_KIND,
                  dedup: bool = False, lengths=None, prf: str = defaults.PRF, seeding: str = seeding_mod.DEFAULT) -> DetectResult:
    r"""AutoCov statistic (appendix "Possibility for Other Variants") with its exact null.

    .. math:: S_T = \frac1T \sum_{t=1}^{T-1} N_t N_{t+1},\quad N_t = 1\{y_t\ \mathrm{green}\} - \gamma,\quad
              Z_T = \frac{\sqrt T S_T}{\gamma(1-\gamma)}

    with T the text's length.  Z_T is asymptotically N(0, 1) under the null; DualGA-AutoCov
    drives it negative, so the p-value is the lower tail :math:`P_{H_0}(S_T \le s)`,
    computed exactly for i.i.d. Bernoulli(gamma) colours by :func:`sims.detect.stats.nulls.autocov_logcdf`
    (exact for key-independent text whose (context, token) pairs do not repeat; repeated
    pairs repeat colours, as for the red-green count without dedup).  With ``dedup`` the
    statistic is that of the kept colours, the first occurrences of their pairs in text order
    (a skipped token's neighbours become adjacent, as in the ``autocov`` e-process of
    :func:`sims.detect.anytime.sequential.sequential_autocov`), and T is their count: the null
    is then exact on any key-independent text, repetitive or not, under the condition that makes
    the dedup'd green count Binomial(T, gamma) (distinct pairs are green independently with
    probability gamma): the kept colours are T i.i.d. Bernoulli(gamma), whose AutoCov sum has the
    law :func:`sims.detect.stats.nulls.autocov_null_table` tabulates.  Texts with T < 2 are
    too short to test (p = 1).  ``score`` holds S_T and ``z`` holds Z_T.

    Parameters
    ----------
    tokens, prompts, lengths, h : token layout (module docstring).
    key : int
        Watermark key.
    gamma : float in (0, 1)
        Green-list ratio.
    vocab_size : int, optional
        Token ids must be below it; required for ``green_kind="partition"``.
    green_kind : {"bernoulli", "partition"}
        The green lists' kind.
    dedup : bool
        Keep each (context window, token) pair's first colour only (see above).
    prf : {"splitmix64", "siphash"}
        The keyed PRF of the green lists.
    seeding : {"lefthash", "selfhash", "minhash", "skipgram"}
        The green lists' seeding scheme.

    Returns
    -------
    DetectResult
        ``n_scored`` T, ``score`` S_T, ``z`` Z_T (nan when too short) and the exact lower-tail log10 p of each text.
    """
    g, scored = token_scores(tokens, prompts, key, stat="green", gamma=gamma, h=h, green_kind=green_kind, dedup=dedup, vocab_size=vocab_size,
                             lengths=lengths, prf=prf, seeding=seeding)
    if dedup:  # the kept colours first, in text order; 0 after them (token_scores' values are 0 where not scored), as past a text's end
        g = np.take_along_axis(g, np.argsort(~scored, axis=1, kind="stable"), axis=1)
    T = scored.sum(axis=1)
    g_eff = _stat_code("green", gamma, green_kind, vocab_size)[3]
    short = T < 2
    A = np.sum(g[:, :-1] * g[:, 1:], axis=1).astype(np.int64)
    K = g.sum(axis=1).astype(np.int64)
    rows = np.arange(g.shape[0])
    c1 = g[:, 0].astype(np.int64) if g.shape[1] else np.zeros(g.shape[0], dtype=np.int64)
    cT = g[rows, np.maximum(T - 1, 0)].astype(np.int64) if g.shape[1] else c1
    with np.errstate(invalid="ignore", divide="ignore"):
        S = (A - g_eff * (2 * K - c1 - cT) + (T - 1) * g_eff**2) / T
        Z = np.sqrt(T) * S / (g_eff * (1 - g_eff))
    S[short], Z[short] = np.nan, np.nan
    logp = np.zeros(g.shape[0])
    live = ~short
    if live.any():
        logp[live] = autocov_logcdf(A[live], K[live], c1[live], cT[live], T[live], g_eff) / LN10
    return DetectResult(T, S, Z, logp, short)



KEYED_ORDER_MODES = {a: registry.get(a).keyed_mode for a in registry.names(family="keyed")}  #: each record's scan branch


def score_keyed_order(gen, step_probs, *, key: int | None = None, algo: str | None = None) -> DetectResult:
    r"""ITS / UW-delta / UW-gamma: was each token the one the key's uniform points at?

    ``step_probs(i)`` returns the (T, V) next-token distributions of text i (the model access
    UW's detector requires): :func:`sims.lm.synthetic.lm_step_probs` for the synthetic LMs, teacher-forced logits
    for a real LM (:meth:`sims.lm.door.LM.step_probs`, :func:`sims.torch_backend.real_lm.teacher_forced_probs`).

    With the model's probabilities (as UW's detector requires), step t's keyed uniform
    u_t and the keyed vocabulary order give an interval :math:`I_t(y)` of cumulative
    mass for every token; the watermark puts u_t in :math:`I_t(y_t)` (ITS, UW-delta), or
    y_t in the kept upper half of the mass (UW-gamma, whose uniform is not recoverable).
    Under the null (text independent of the key) a hit has probability
    :math:`\pi_t = p_t(y_t)` (ITS, UW-delta) or the mass of the tokens reaching past 1/2
    (UW-gamma), independently across steps, so the hit count is Poisson-binomial; its
    exact upper tail is computed by dynamic programming in log space.  The scan over steps
    is the Numba kernel :func:`sims.detect.stats._kernels.keyed_order_hits`.

    Parameters
    ----------
    gen : Generation
        The texts and their record (``meta``: algorithm, key, h, vocab_size).
    step_probs : callable
        ``step_probs(i)``: the (T, V) next-token distributions of text ``i`` (see above).
    key : int, optional
        The detection key; None: the generation's.
    algo : str, optional
        A keyed-order algorithm (:data:`KEYED_ORDER_ALGOS`); None: the generation's.

    Returns
    -------
    DetectResult
        Hit count, nan z and exact Poisson-binomial log10 p of each text (``too_short`` for an empty text).
    """
    marks, probs_hit, n = keyed_order_marks(gen, step_probs, key=key, algo=algo)
    hits = marks.sum(axis=1).astype(np.float64)
    logp = np.array([_poisson_binomial_logsf(int(hits[i]), probs_hit[i, : n[i]]) for i in range(len(n))])
    return DetectResult(n, hits, np.full(len(n), np.nan), logp / LN10, n < 1)


def keyed_order_marks(gen, step_probs, *, key: int | None = None, algo: str | None = None):
    """The keyed-order statistic of :func:`score_keyed_order` token by token: per text, the hit marks
    (n, T) bool and the null hit probabilities (n, T) of every step (1 past a text's end), and the
    lengths (n,).  One scan, :func:`sims.detect.stats._kernels.keyed_order_hits`, serves the fixed-length
    and the sequential (:mod:`sims.detect.anytime.sequential`) tests.

    Parameters
    ----------
    gen : Generation
        The texts and their record (``meta``: algorithm, key, h, vocab_size).
    step_probs : callable
        ``step_probs(i)``: the (T, V) next-token distributions of text ``i``.
    key : int, optional
        The detection key; None: the generation's.
    algo : str, optional
        A keyed-order algorithm (:data:`KEYED_ORDER_ALGOS`); None: the generation's.

    Returns
    -------
    marks : (n, T) bool array
        Whether each step is a hit (the key's uniform falls in the chosen token's interval, or UW-gamma's kept half).
    probs_hit : (n, T) float array
        The null probability of a hit at each step (1 past a text's end).
    lengths : (n,) int array
        Each text's length.
    """
    from sims.core.keys import ITS_STREAM, keyed_order

    algo = gen.meta["algo"] if algo is None else algo
    if registry.get(algo).keyed_mode is None:
        raise ValueError(f"algo must be one of {KEYED_ORDER_ALGOS}; got {algo!r}")
    key = gen.meta["key"] if key is None else int(key)
    h, V = gen.meta["h"], gen.meta["vocab_size"]
    n = _check_inputs(gen.tokens, gen.prompts[:, -h:], V, h, gen.lengths)[2]  # a text ends at its length or first -1 pad
    perm = keyed_order(key, V)
    pos = np.empty(V, dtype=np.int64)
    pos[perm] = np.arange(V)
    its_key = rng.stream_key(key, ITS_STREAM)
    n_txt, T = gen.tokens.shape
    P = gen.prompts.shape[1]
    marks, probs_hit = np.zeros((n_txt, T), dtype=np.bool_), np.ones((n_txt, T))
    for i in range(n_txt):
        seq = np.concatenate([gen.prompts[i], gen.tokens[i, : n[i]]])
        probs = np.ascontiguousarray(step_probs(i)[: n[i]], dtype=np.float64)
        K.keyed_order_hits(probs, seq, P, h, np.uint64(key), perm, pos, its_key, KEYED_ORDER_MODES[algo], probs_hit[i], marks[i])
    return marks, probs_hit, n


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


def tokens_to_detect(log10_p_prefix, threshold: float = -4.0) -> np.ndarray:
    r"""Tokens until detection: per text, the smallest prefix length t such that the prefix
    p-value is at or below ``threshold`` for t and every longer prefix of the text.

    .. math:: \tau = \min\{t : \log_{10} p_{1:s} \le \mathrm{threshold}\ \ \forall s \in [t, L]\}

    Parameters
    ----------
    log10_p_prefix : (n, T) array
        ``[i, t]`` = log10 p of text i's first t+1 tokens; nan past the text's end (ignored).
    threshold : float
        log10 of the level, e.g. -4 for p <= 1e-4.

    Returns
    -------
    (n,) float array: tau (1-based), nan if the final prefix is not below the threshold.

    References
    ----------
    Towards Better Statistical Understanding of Watermarking LLMs, the p-values of App. F (eq:three_brick_p, eq:ems_pval); tokens to detection as in the
    z-score dynamics figure of App. F (fig:z_dynamic_w_t).

    Examples
    --------
    >>> import numpy as np
    >>> from sims import tokens_to_detect
    >>> tokens_to_detect(np.array([[0.0, -1.0, -3.0, -5.0], [0.0, -3.0, -1.0, -1.5]]), threshold=-2.0).tolist()
    [3.0, nan]
    """
    lp = np.asarray(log10_p_prefix, dtype=np.float64)
    if lp.ndim != 2:
        raise ValueError(f"log10_p_prefix must be 2-d (texts x prefix length); got shape {lp.shape}")
    if not np.isfinite(threshold) or threshold > 0:
        raise ValueError(f"threshold must be a finite log10 level in (-inf, 0]; got {threshold!r}")
    gap = np.isnan(lp)
    below = (lp <= threshold) | gap
    stays = np.flip(np.logical_and.accumulate(np.flip(below, axis=1), axis=1), axis=1) & ~gap
    first = np.argmax(stays, axis=1).astype(np.float64) + 1.0
    first[~stays.any(axis=1)] = np.nan
    return first


def prefix_log10p(tokens, prompts, key: int, *, stat: str = "green", gamma: float | None = None, h: int = defaults.H, green_kind: str = defaults.GREEN_KIND,
                  dedup: bool = False, vocab_size: int | None = None, lengths=None, seeding: str = seeding_mod.DEFAULT) -> np.ndarray:
    """log10 p of every prefix of every text (the detection curve; input of :func:`tokens_to_detect`).

    ``[i, t]`` is the exact log10 p-value (binomial for ``stat="green"``, Gamma for
    ``"ems"``) of text i's first t+1 tokens; 0 while at most one token is scored, nan past
    the text's end.

    Parameters
    ----------
    tokens, prompts, lengths, h : token layout (module docstring).
    key : int
        Watermark key.
    stat : {"green", "ems"}
        The statistic: red-green green count or EMS score sum.
    gamma : float, optional
        Green-list ratio (required for ``stat="green"``).
    green_kind, dedup, vocab_size, seeding :
        As :func:`score_redgreen`.

    Returns
    -------
    ndarray (n, T) of float
        log10 p of each prefix.

    References
    ----------
    Towards Better Statistical Understanding of Watermarking LLMs, eqs. (17) and (19) of App. F (eq:three_brick_p, eq:ems_pval).

    Examples
    --------
    >>> import sims
    >>> lm = sims.get_lm("tiny")
    >>> gen = sims.generate(lm, "srl", n=2, T=20, seed=0, key=42, gamma=0.25, delta=2.0, prompt_len=4)
    >>> lp = sims.prefix_log10p(gen.tokens, gen.prompts, 42, gamma=0.25)
    >>> lp.shape, round(float(lp[0, -1]), 3)
    ((2, 20), -3.736)
    """
    values, scored = token_scores(tokens, prompts, key, stat=stat, gamma=gamma, h=h, green_kind=green_kind, dedup=dedup, vocab_size=vocab_size, lengths=lengths,
                                  seeding=seeding)
    s = np.cumsum(values, axis=1)
    n = np.cumsum(scored, axis=1)
    if stat == "green":
        g_eff = _stat_code("green", gamma, green_kind, vocab_size)[3]
        lp = binom_logsf(np.rint(s).astype(np.int64), n, g_eff) / LN10
    else:
        lp = gamma_logsf(s, n) / LN10
    lp = np.where(n <= 1, 0.0, lp)
    L = _check_inputs(tokens, prompts, vocab_size, h, lengths)[2]
    return np.where(np.arange(values.shape[1])[None, :] < L[:, None], lp, np.nan)


def redgreen_prefix_log10p(tokens, prompts, key: int, gamma: float, *, vocab_size: int | None = None, h: int = defaults.H, dedup: bool = False) -> np.ndarray:
    """:func:`prefix_log10p` of the red-green statistic.

    Parameters
    ----------
    tokens, prompts, h : token layout (module docstring).
    key : int
        Watermark key.
    gamma : float in (0, 1)
        Green-list ratio (Bernoulli green lists).
    vocab_size : int, optional
        Token ids must be below it.
    dedup : bool
        Score each (context window, token) pair once.

    Returns
    -------
    (n, T) float array
        log10 of the exact binomial p-value of each prefix (eq. (17), eq:three_brick_p); 0 while at most one
        token is scored, nan past the text's end.
    """
    return prefix_log10p(tokens, prompts, key, stat="green", gamma=gamma, h=h, dedup=dedup, vocab_size=vocab_size)


def windowed_log10p(tokens, prompts, key: int, gamma: float, *, window: int = 50, vocab_size: int | None = None, h: int = defaults.H,
                    dedup: bool = False, bonferroni: bool = True, lengths=None) -> np.ndarray:
    r"""Windowed detection: the smallest exact binomial log10 p over all windows of ``window``
    consecutive tokens, per text (a text shorter than the window is one window).

    The minimum of m window p-values is not a p-value; with ``bonferroni`` (default) it is
    multiplied by the number of windows m, a valid p-value by the union bound:

    .. math:: p_{\mathrm{win}} = \min\left(1,\ m \min_{s} P(\mathrm{Bin}(n_s, \gamma) \ge k_s)\right)

    (unlike WinMax of Kirchenbauer et al., whose scores are not p-values).

    Parameters
    ----------
    tokens, prompts, lengths, h : token layout (module docstring).
    key : int
        Watermark key.
    gamma : float in (0, 1)
        Green-list ratio (Bernoulli green lists).
    window : int
        Window length in tokens, at least 1 (default 50).
    vocab_size : int, optional
        Token ids must be below it.
    dedup : bool
        Score each (context window, token) pair once.
    bonferroni : bool
        Multiply the smallest window p-value by the number of windows (default True: a valid p-value).

    Returns
    -------
    (n,) float array
        log10 of each text's windowed p-value (at most 0).
    """
    if int(window) != window or int(window) < 1:
        raise ValueError(f"window must be an integer in [1, inf); got {window!r}")
    values, scored = token_scores(tokens, prompts, key, stat="green", gamma=gamma, h=h, dedup=dedup, vocab_size=vocab_size, lengths=lengths)
    L = _check_inputs(tokens, prompts, vocab_size, h, lengths)[2]
    g_eff = _stat_code("green", gamma, "bernoulli", vocab_size)[3]
    zero = np.zeros((values.shape[0], 1))
    cs = np.concatenate([zero, np.cumsum(values, axis=1)], axis=1)
    cn = np.concatenate([zero, np.cumsum(scored, axis=1)], axis=1)
    out = np.zeros(values.shape[0])
    for i in range(values.shape[0]):
        w = min(int(window), int(L[i]))
        if w < 1:
            continue
        k = np.rint(cs[i, w : L[i] + 1] - cs[i, : L[i] - w + 1]).astype(np.int64)
        n = (cn[i, w : L[i] + 1] - cn[i, : L[i] - w + 1]).astype(np.int64)
        lp = np.where(n <= 1, 0.0, binom_logsf(k, n, g_eff) / LN10)
        out[i] = min(0.0, lp.min() + (np.log10(k.size) if bonferroni else 0.0))
    return out
