r"""What peeking costs: false-positive rates of testing every prefix, on simulated null texts.

A red-green text that does not depend on the key has, after dedup, i.i.d. Bernoulli(gamma)
colours (:mod:`sims.detect.stats.scores`), so its green count after n scored tokens is a Bernoulli
random walk; :func:`null_crossings` simulates it (Numba, counter-based uniforms, one stream
per text) and reports, per text, the first prefix at which

- the **naive prefix rule** fires: the exact fixed-length p-value :math:`P(\mathrm{Bin}(n,\gamma) \ge k_n)`
  of some prefix is at most alpha (what ``tokens_to_detect`` and "stop when p < alpha" do);
- the **anytime-valid** e-process of :mod:`sims.detect.anytime.sequential` reaches 1/alpha;

and whether the **fixed-length** test of the whole text rejects.  The fixed-length and the
anytime tests have false-positive rate at most alpha; the naive rule does not (it is the
union of T tests).  :func:`exceeds_level` is the Monte Carlo verdict used by the tests.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from sims.detect.anytime import _kernels as SK
from sims.detect.anytime import sequential
from sims.detect.stats.nulls import binom_logsf


def naive_thresholds(n_max: int, gamma: float, alpha: float) -> np.ndarray:
    """``k[n]``: the smallest green count whose exact binomial p-value after n tokens is <= alpha
    (inf when none, and for n <= 1, where the detectors set p = 1), n = 0..n_max.

    Parameters
    ----------
    n_max : int
        Largest number of scored tokens.
    gamma : float
        Null green probability.
    alpha : float
        Level, in (0, 1).

    Returns
    -------
    ndarray of float64, shape (n_max + 1,)
        The naive rule's critical green counts.
    """
    alpha = sequential.check_alpha(alpha)
    out = np.full(int(n_max) + 1, np.inf)
    lvl = math.log(alpha)
    for n in range(2, int(n_max) + 1):
        tail = binom_logsf(np.arange(n + 1), n, gamma)
        ok = np.flatnonzero(tail <= lvl)
        if ok.size:
            out[n] = ok[0]
    return out


def null_crossings(n_texts: int, T: int, gamma: float, alpha: float, seed: int, grid=None) -> dict:
    """Simulate ``n_texts`` null texts of ``T`` distinct (context, token) pairs.

    Parameters
    ----------
    n_texts : int
        Number of null texts, >= 1.
    T : int
        Scored tokens per text, >= 1.
    gamma : float
        Green probability of each token, in (0, 1).
    alpha : float
        Level of every test.
    seed : int
        Seed of the counter-based RNG that colours the tokens.
    grid : array_like, optional
        Bet fractions of the anytime e-process (default :data:`sims.detect.anytime.sequential.GRID`).

    Returns
    -------
    dict with per-text int arrays ``anytime_stop`` and ``naive_stop`` (first flagged prefix
    length, -1 if never) and the bool array ``fixed`` (the fixed-length test of all T tokens
    rejects at alpha).

    Raises
    ------
    ValueError
        If ``n_texts`` or ``T`` is below 1, or ``gamma`` or ``alpha`` is outside (0, 1).

    Examples
    --------
    >>> from sims.detect.anytime.peeking import null_crossings
    >>> r = null_crossings(20000, 200, 0.25, 0.01, seed=0)
    >>> int((r["naive_stop"] > 0).sum()) > 2 * int((r["fixed"]).sum())  # peeking multiplies false positives
    True
    """
    if int(n_texts) < 1 or int(T) < 1:
        raise ValueError(f"n_texts and T must be in [1, inf); got {n_texts!r}, {T!r}")
    if not 0.0 < float(gamma) < 1.0:
        raise ValueError(f"gamma must be in (0, 1); got {gamma!r}")
    alpha = sequential.check_alpha(alpha)
    any_k = sequential.linear_thresholds(sequential.bernoulli_mixture(gamma, grid), T, alpha)
    naive_k = naive_thresholds(T, gamma, alpha)
    final_k = naive_k[T]
    stop_any, stop_naive, fixed = SK.null_prefix_crossings(int(n_texts), int(T), float(gamma), np.uint64(seed), any_k, naive_k, final_k)
    return dict(anytime_stop=stop_any, naive_stop=stop_naive, fixed=fixed)


def exceeds_level(k: int, n: int, alpha: float, confidence: float = 0.999) -> bool:
    """True when k false positives in n null trials show a rate above ``alpha``: the one-sided
    Clopper-Pearson lower bound at ``confidence`` lies above alpha.  A valid test gives False
    with probability at least ``confidence``.

    Parameters
    ----------
    k : int
        False positives observed, in [0, n].
    n : int
        Null trials, >= 1.
    alpha : float
        The claimed level.
    confidence : float, default 0.999
        Confidence of the lower bound.

    Returns
    -------
    bool
        Whether the observed rate is significantly above ``alpha``.

    Raises
    ------
    ValueError
        If k is outside [0, n] or n < 1.
    """
    from scipy.stats import beta

    if not 0 <= int(k) <= int(n) or int(n) < 1:
        raise ValueError(f"k must be in [0, n] with n >= 1; got k={k}, n={n}")
    lo = 0.0 if k == 0 else float(beta.ppf(1.0 - confidence, k, n - k + 1))
    return lo > alpha


def prefix_tables(n_max: int, gamma: float, grid=None) -> tuple[np.ndarray, np.ndarray]:
    r"""Tables over (n scored tokens, k greens), n, k = 0..n_max: the naive rule's log10 fixed-length
    p-value :math:`\log_{10} P(\mathrm{Bin}(n,\gamma) \ge k)` (0 for n <= 1, as the detectors) and the
    ``redgreen`` e-process's log10 e-value (:func:`sims.detect.anytime.sequential.bernoulli_mixture`).

    Parameters
    ----------
    n_max : int
        Largest number of scored tokens, >= 0.
    gamma : float
        Null green probability, in (0, 1).
    grid : array_like, optional
        The e-process's bets.

    Returns
    -------
    naive : ndarray, shape (n_max + 1, n_max + 1)
        ``naive[n, k]``, the log10 fixed-length p-value.
    anytime : ndarray, shape (n_max + 1, n_max + 1)
        ``anytime[n, k]``, the log10 e-value (-inf where k > n).
    """
    if int(n_max) < 0:
        raise ValueError(f"n_max must be in [0, inf); got {n_max!r}")
    if not 0.0 < float(gamma) < 1.0:
        raise ValueError(f"gamma must be in (0, 1); got {gamma!r}")
    n = np.arange(int(n_max) + 1)
    nn, kk = np.meshgrid(n, n, indexing="ij")
    naive = np.where(nn <= 1, 0.0, binom_logsf(np.minimum(kk, nn + 1), nn, float(gamma)) / math.log(10.0))
    anytime = sequential.bernoulli_mixture(float(gamma), grid).log_e(kk, nn) / math.log(10.0)
    return naive, np.where(kk <= nn, anytime, -np.inf)


@functools.lru_cache(maxsize=8)
def _cached_tables(n_max: int, gamma: float) -> tuple[np.ndarray, np.ndarray]:
    """:func:`prefix_tables` on the default grid, built once per process (a sweep's chunks share them)."""
    return prefix_tables(n_max, gamma)


def peek_pvalues(values, scored, lengths, gamma: float, grid=None) -> tuple[np.ndarray, np.ndarray]:
    r"""What a reader who tests every prefix sees, per text, from its green indicators.

    Returns ``(peek_log10_p, anytime_log10_p)``: the smallest log10 fixed-length p-value over the
    text's scored prefixes (the naive rule flags the text at level alpha iff it is <= log10 alpha:
    not a valid p-value) and the anytime-valid log10 p-value :math:`-\log_{10}\max(1, \max_t E_t)`
    of the ``redgreen`` e-process (valid: Ville's inequality).

    Parameters
    ----------
    values, scored : (n, T) arrays
        Green indicators and scored mask (:func:`sims.detect.stats.scores.token_scores`, ``stat="green"``).
    lengths : (n,) ints
        Tokens of each text.
    gamma : float in (0, 1)
        The null green probability.
    grid : optional, the e-process's bets (:data:`sims.detect.anytime.sequential.GRID`).

    Returns
    -------
    peek_log10_p : ndarray, shape (n,)
        Smallest fixed-length log10 p-value over each text's prefixes.
    anytime_log10_p : ndarray, shape (n,)
        Anytime-valid log10 p-value of each text, <= 0.

    Examples
    --------
    >>> import numpy as np
    >>> from sims.detect.anytime.peeking import peek_pvalues
    >>> v = np.array([[1.0, 1.0, 1.0, 0.0, 0.0, 0.0]])
    >>> peek, anytime = peek_pvalues(v, v >= 0, np.array([6]), 0.25)
    >>> round(float(peek[0]), 3), bool(anytime[0] <= 0.0)  # 3 greens of 3: p = 0.25**3
    (-1.806, True)
    """
    values, scored = np.asarray(values, dtype=np.float64), np.asarray(scored, dtype=np.bool_)
    lengths = np.asarray(lengths, dtype=np.int64)
    if values.ndim != 2 or scored.shape != values.shape or lengths.shape != (values.shape[0],):
        raise ValueError(f"values, scored must be (n, T) and lengths (n,); got shapes {values.shape}, {scored.shape}, {lengths.shape}")
    naive, anytime = _cached_tables(values.shape[1], float(gamma)) if grid is None else prefix_tables(values.shape[1], gamma, grid)
    low, high = SK.prefix_extremes(values, scored, lengths, naive, anytime)
    return low, -np.maximum(high, 0.0)


def peek_pvalues_reference(values, scored, lengths, gamma: float, grid=None) -> tuple[np.ndarray, np.ndarray]:
    """NumPy twin of :func:`peek_pvalues` (fixed-length p-value and e-value of every prefix, then min / max).

    Parameters
    ----------
    values, scored : (n, T) arrays
        Green indicators and scored mask.
    lengths : (n,) ints
        Tokens of each text.
    gamma : float
        The null green probability.
    grid : array_like, optional
        The e-process's bets.

    Returns
    -------
    peek_log10_p, anytime_log10_p : ndarray, shape (n,)
        As :func:`peek_pvalues`.
    """
    values, scored = np.asarray(values, dtype=np.float64), np.asarray(scored, dtype=np.bool_)
    scored = scored & (np.arange(values.shape[1])[None, :] < np.asarray(lengths)[:, None])
    k = np.cumsum(np.where(scored, values > 0.5, 0), axis=1)
    n = np.cumsum(scored, axis=1)
    lp = np.where(n <= 1, 0.0, binom_logsf(k, n, float(gamma)) / math.log(10.0))
    le = sequential.bernoulli_mixture(float(gamma), grid).log_e(k, n) / math.log(10.0)
    peek = np.where(scored, lp, 0.0).min(axis=1, initial=0.0)
    anytime = -np.maximum(np.where(scored, le, 0.0).max(axis=1, initial=0.0), 0.0)
    return peek, anytime
