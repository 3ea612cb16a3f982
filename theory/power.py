r"""Power and sample size of watermark detection from the per-token law of the score (issue 31).

Red-green: a token is green with probability :math:`q_t = \sigma(\delta_t + \mathrm{logit}\, G_t)`
(``theory.green_mass_step``, the tilted green mass of the paper), so given the green masses
:math:`G_{1:T}` of a text the green count is Poisson-binomial; the detector's exact binomial test
at level ``fpr`` rejects at :math:`k^*(T) = \min\{k: P(\mathrm{Bin}(T, \gamma) \ge k) \le \mathrm{fpr}\}`
and the power is :math:`\mathbb E\, P(\sum_t X_t \ge k^*)`, the expectation over texts taken on a
sample of G sequences of the LM (:func:`redgreen_power`).  DualGA reaches its target on every
text where it can: its boost on text i is the :math:`\bar\delta_i` with mean DG :math:`= \Delta`
(capped at M) (:func:`dualga_text_boost`).  A substitution attack at rate :math:`\rho` leaves a
token's colour drawn from :math:`q_t` only when neither it nor its ``h`` context tokens were
replaced, probability :math:`(1-\rho)^{h+1}`, and makes it Bernoulli(gamma) otherwise
(:func:`attacked_green_prob`; the positions are treated as independent).

EMS / Gumbel-max: with :math:`Y_t = U_t^{\pi_t}`, :math:`\pi_t = p_t(y_t)`, a sum score's per-token
law under the watermark is a mixture over the LM's :math:`\pi`; its T-fold convolution on a lattice
gives the power at a critical value (:func:`lattice_power`).

Pure functions: no randomness, no I/O; ``sims.plan`` supplies the LM's samples.
"""

from __future__ import annotations

import functools
import math

import numpy as np

# theory.soft (Numba ufuncs) and scipy.special are imported where used: a red-green query of the
# planner on cached laws (sims.plan) then loads neither


def _check_level(name: str, x) -> float:
    if not (isinstance(x, (int, float, np.floating)) and 0.0 < float(x) < 1.0):
        raise ValueError(f"{name} must be in (0, 1); got {x!r}")
    return float(x)


@functools.cache
def _log_factorial_table(size: int) -> np.ndarray:
    """ln k!, k = 0..size-1 (``math.lgamma``, to an ulp or so, like ``scipy.special.gammaln``); read-only."""
    out = np.fromiter(map(math.lgamma, range(1, size + 1)), dtype=np.float64, count=size)
    out.flags.writeable = False
    return out


def log_factorials(n: int) -> np.ndarray:
    """ln k!, k = 0..n (a table kept per power of two of sizes).

    Parameters
    ----------
    n : int
        Largest k, >= 0.

    Returns
    -------
    ndarray, shape (n + 1,)
        ``out[k]`` = ln k!, read-only (a view of the shared table).
    """
    return _log_factorial_table(1 << max(10, (int(n) + 1).bit_length()))[: int(n) + 1]


def binomial_log_tail(T: int, gamma: float) -> np.ndarray:
    r"""``out[k]`` = ln :math:`P(\mathrm{Bin}(T, \gamma) \ge k)`, k = 0..T+1 (exact in log space).

    The null law of the red-green green count: under no watermark each of T scored tokens is green with probability
    :math:`\gamma`, independently.

    Parameters
    ----------
    T : int
        Number of scored tokens, >= 0.
    gamma : float
        Green-list fraction, in (0, 1).

    Returns
    -------
    ndarray, shape (T + 2,)
        Log upper tails, nonincreasing: ``out[0]`` = 0 and ``out[T + 1]`` = -inf.
    """
    j = np.arange(T + 1)
    lf = log_factorials(T)
    terms = lf[T] - lf - lf[::-1] + j * math.log(gamma) + (T - j) * math.log1p(-gamma)
    tail = np.logaddexp.accumulate(terms[::-1])[::-1]
    # the total is 1: dividing by the computed total (ln 1 + rounding) removes the rounding that all terms share
    return np.concatenate([np.minimum(tail - tail[0], 0.0), [-np.inf]])


def binomial_critical(T: int, gamma: float, fpr: float) -> int:
    r"""Smallest k with :math:`P(\mathrm{Bin}(T, \gamma) \ge k) \le \mathrm{fpr}` (T + 1 if none: too short).

    The critical count :math:`k^*(T)` of the exact binomial test of the red-green detector.

    Parameters
    ----------
    T : int
        Number of scored tokens, >= 0.
    gamma : float
        Green-list fraction, in (0, 1).
    fpr : float
        Level of the test, in (0, 1).

    Returns
    -------
    int
        The critical count, in 0..T+1.

    Raises
    ------
    ValueError
        If T is not a nonnegative integer, or ``gamma`` or ``fpr`` is outside (0, 1).
    """
    if int(T) != T or T < 0:
        raise ValueError(f"T must be an integer in [0, inf); got {T!r}")
    _check_level("gamma", gamma)
    tail = binomial_log_tail(int(T), float(gamma))
    return int(np.argmax(tail <= math.log(_check_level("fpr", fpr))))


def poisson_binomial_sf(q: np.ndarray, k: int) -> np.ndarray:
    r"""Per row of ``q`` (n, T): :math:`P(\sum_t X_t \ge k)`, :math:`X_t \sim \mathrm{Bernoulli}(q_{t})` independent.

    Parameters
    ----------
    q : array_like, shape (T,) or (n, T)
        Success probabilities, one row per text.
    k : int
        Threshold count.

    Returns
    -------
    ndarray, shape (n,)
        The upper tail of each row's Poisson-binomial count (1 for k <= 0, 0 for k > T).
    """
    q = np.atleast_2d(np.asarray(q, dtype=np.float64))
    n, T = q.shape
    if k <= 0:
        return np.ones(n)
    if k > T:
        return np.zeros(n)
    pmf = np.zeros((n, T + 1))
    pmf[:, 0] = 1.0
    for t in range(T):
        qt = q[:, t : t + 1]
        pmf[:, 1 : t + 2] = pmf[:, 1 : t + 2] * (1 - qt) + pmf[:, : t + 1] * qt
        pmf[:, 0] *= 1 - q[:, t]
    return np.clip(pmf[:, k:].sum(axis=1), 0.0, 1.0)


def dualga_text_boost(G: np.ndarray, Delta: float, M: float) -> np.ndarray:
    r"""Per text (row of ``G``): the constant boost whose mean DG over the text's green masses is ``Delta``.

    .. math:: \frac1{T_0} \sum_t \mathrm{DG}_t(\bar\delta, G_t) = \Delta, \qquad \bar\delta \in [0, M],

    found by bisection (60 halvings of [0, M]); ``M`` where even :math:`\delta = M` falls short.  It is the boost
    DualGA settles at on that text (Prop. free_t: the hindsight optimum is one constant boost), which the power
    planner and the LR score read as a DualGA text's boost.

    Parameters
    ----------
    G : array_like, shape (T0,) or (n, T0)
        Green masses of the unwatermarked next-token distributions, in (0, 1).
    Delta : float
        Target DG per token.
    M : float
        Projection bound of the boost (the dual variable's, ``defaults.M``).

    Returns
    -------
    ndarray, shape (n,)
        One boost per text.

    References
    ----------
    Towards Better Statistical Understanding of Watermarking LLMs, Prop. 2.4 (prop:free_t) and the certainty-equivalent
    delta*(Delta, gamma) of App. choose_green_ratio (eq. certainty_equivalent), which a constant G_t = gamma gives.

    Examples
    --------
    A constant green mass 0.2 gives the certainty-equivalent boost log(1 + Delta/gamma) + log(1 + Delta/(1 - gamma - Delta)):

    >>> import numpy as np, theory
    >>> b = theory.dualga_text_boost(np.full((1, 50), 0.2), 0.2, 15.0)
    >>> round(float(b[0]), 6), round(float(theory.delta_star(0.2, 0.2)), 6)
    (0.980829, 0.980829)
    """
    from theory.soft import dg_step

    G = np.atleast_2d(G)
    lo, hi = np.zeros(G.shape[0]), np.full(G.shape[0], float(M))
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        below = dg_step(mid[:, None], G).mean(axis=1) < Delta
        lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
    return 0.5 * (lo + hi)


def green_probs(G: np.ndarray, delta) -> np.ndarray:
    r""":math:`q_t = \sigma(\delta + \mathrm{logit}\, G_t)`; ``delta`` scalar or one per row (inf: hard watermark).

    The probability that the watermarked token is green: the tilted green mass of the paper's per-step problem
    (``theory.green_mass_step``).

    Parameters
    ----------
    G : array_like, shape (T,) or (n, T)
        Green masses of the unwatermarked next-token distributions, in [0, 1].
    delta : float or array_like, shape (n,)
        Logit boost, one for all rows or one per row; ``inf`` makes every token with :math:`G_t > 0` green.

    Returns
    -------
    ndarray, shape (n, T)
        The green probabilities :math:`q_t`.
    """
    from theory.soft import green_mass_step

    G = np.atleast_2d(G)
    d = np.broadcast_to(np.asarray(delta, dtype=np.float64).reshape(-1, 1) if np.ndim(delta) else np.float64(delta), G.shape)
    return np.where(np.isinf(d), (G > 0).astype(np.float64), green_mass_step(np.where(np.isinf(d), 0.0, d), G))


def attacked_green_prob(q, gamma: float, rate: float, h: int) -> np.ndarray:
    r"""Green probability after substituting a share ``rate`` of tokens: :math:`\gamma + (1-\rho)^{h+1}(q - \gamma)`.

    A token keeps its watermarked colour only when neither it nor its ``h`` context tokens were replaced (probability
    :math:`(1-\rho)^{h+1}`); otherwise its colour is Bernoulli(:math:`\gamma`).  Positions are treated as independent.

    Parameters
    ----------
    q : float or array_like
        Green probabilities before the attack.
    gamma : float
        Green-list fraction.
    rate : float
        Substitution rate :math:`\rho`, in [0, 1].
    h : int
        Context width of the seeding (tokens that seed a green list).

    Returns
    -------
    ndarray
        The attacked green probabilities, shaped like ``q``.

    Raises
    ------
    ValueError
        If ``rate`` is outside [0, 1].
    """
    if not 0.0 <= float(rate) <= 1.0:
        raise ValueError(f"rate must be in [0, 1]; got {rate!r}")
    return gamma + (1.0 - rate) ** (int(h) + 1) * (np.asarray(q) - gamma)


class PrefixCountLaws:
    """``laws[r]`` (n, T0 + 1): the law of the green count of the first r tokens of each row of ``q``
    (n, T0), r = 0..T0, by the Poisson-binomial recursion, computed when first asked for.

    The recursion's state is kept at every ``every``-th r (and at T0), so asking for row r walks at
    most ``every`` steps from a kept state, and memory is n (T0 / every + 2) (T0 + 1) doubles instead
    of the n (T0 + 1)^2 of all rows (:func:`count_laws`).

    Parameters
    ----------
    q : array_like, shape (T0,) or (n, T0)
        Green probabilities of each text's tokens (:func:`green_probs`).
    every : int, default 16
        Spacing of the kept recursion states.

    Attributes
    ----------
    q : ndarray, shape (n, T0)
        The green probabilities, as float64.
    T0 : int
        Length of the rows.
    every : int
        Spacing of the kept states.
    """

    def __init__(self, q: np.ndarray, every: int = 16):
        self.q = np.atleast_2d(np.asarray(q, dtype=np.float64))
        n, self.T0 = self.q.shape
        self.every = int(every)
        start = np.zeros((n, self.T0 + 1))
        start[:, 0] = 1.0
        self._kept = {0: start}

    def __getitem__(self, r: int) -> np.ndarray:
        r = int(r)
        if not 0 <= r <= self.T0:
            raise IndexError(f"r must be in [0, {self.T0}]; got {r!r}")
        if r in self._kept:
            return self._kept[r]
        t0 = max(k for k in self._kept if k <= r)
        law = self._kept[t0].copy()
        for t in range(t0, r):
            qt = self.q[:, t : t + 1]
            law[:, 1 : t + 2] = law[:, 1 : t + 2] * (1 - qt) + law[:, : t + 1] * qt
            law[:, 0] *= 1 - qt[:, 0]
            if (t + 1) % self.every == 0 or t + 1 == self.T0:
                self._kept[t + 1] = law.copy()
        return law


def count_laws(q: np.ndarray) -> np.ndarray:
    """``out[i, r]`` = law of the green count of the first r tokens of row i of ``q`` (n, T0), r = 0..T0
    (every row of :class:`PrefixCountLaws`; shape (n, T0 + 1, T0 + 1)).

    Parameters
    ----------
    q : array_like, shape (T0,) or (n, T0)
        Green probabilities of each text's tokens.

    Returns
    -------
    ndarray, shape (n, T0 + 1, T0 + 1)
        ``out[i, r, j]`` = P(j of the first r tokens of text i are green).
    """
    laws = PrefixCountLaws(q, every=1)
    return np.stack([laws[r] for r in range(laws.T0 + 1)], axis=1)


def redgreen_power(laws, T: int, gamma: float, fpr: float, scored: np.ndarray | None = None) -> float:
    r"""Power of the exact binomial test at ``fpr`` on texts of T tokens whose green probabilities are
    rows of ``q`` tiled to length T (``laws``: :class:`PrefixCountLaws` of ``q`` or ``count_laws(q)``):
    :math:`\frac1n \sum_i P(\mathrm{PB}(q_{i, 1:T}) \ge k^*(T))`, the T-token law as the
    (T // T0)-fold convolution of the full-row law with the law of the first T mod T0 tokens (FFT).

    ``scored`` (n, T0) bool, tiled the same way: the tokens the detector scores (``--dedup``: first
    occurrences of their (context, token) pair; ``q`` must be 0 elsewhere, so that they add nothing to
    the count); row i is then tested against the critical count of its own number of scored tokens,
    :math:`k^*(N_i(T))`.

    Parameters
    ----------
    laws : PrefixCountLaws or ndarray, shape (n, T0 + 1, T0 + 1)
        Prefix laws of the green count of the sampled texts.
    T : int
        Text length at which to evaluate the power.
    gamma : float
        Green-list fraction (the null's success probability).
    fpr : float
        Level of the test.
    scored : ndarray of bool, shape (n, T0), optional
        Which tokens the detector scores; default: all.

    Returns
    -------
    float
        The power, averaged over the n sampled texts, in [0, 1].
    """
    row = laws.__getitem__ if isinstance(laws, PrefixCountLaws) else (lambda r: laws[:, r])
    T0 = laws.T0 if isinstance(laws, PrefixCountLaws) else laws.shape[1] - 1
    r, rem = divmod(int(T), T0)
    if scored is None:
        k = np.array([binomial_critical(T, gamma, fpr)])
    else:
        c = np.cumsum(np.asarray(scored, dtype=np.int64), axis=1)
        N = r * c[:, -1] + (c[:, rem - 1] if rem else 0)
        k = np.array([_critical_count(int(x), float(gamma), float(fpr)) for x in N])
    if k.min() > T:
        return 0.0
    L = 1 << int(math.ceil(math.log2(T + 1)))
    f = np.fft.rfft(row(rem), L, axis=1)
    if r:
        f = f * np.fft.rfft(row(T0), L, axis=1) ** r
    pmf = np.maximum(np.fft.irfft(f, L, axis=1)[:, : T + 1], 0.0)
    sf = np.concatenate([np.cumsum(pmf[:, ::-1], axis=1)[:, ::-1], np.zeros((pmf.shape[0], 1))], axis=1)  # sf[:, j] = P(count >= j)
    tail = np.take_along_axis(sf, np.broadcast_to(np.minimum(k, T + 1).reshape(-1, 1), (pmf.shape[0], 1)), axis=1)[:, 0]
    return float(np.clip(tail, 0.0, 1.0).mean())


@functools.lru_cache(maxsize=8192)
def _critical_count(N: int, gamma: float, fpr: float) -> int:
    """:func:`binomial_critical`, kept per (N, gamma, fpr): the ``scored`` rows of :func:`redgreen_power` share their N."""
    return binomial_critical(N, gamma, fpr)


def lattice_power(pmf1: np.ndarray, T: int, crit: float) -> float:
    r""":math:`P(\sum_{t \le T} K_t \ge \mathrm{crit})` for i.i.d. :math:`K_t` with law ``pmf1`` on 0..J (FFT convolution).

    Parameters
    ----------
    pmf1 : ndarray, shape (J + 1,)
        Per-token law of the score on the lattice 0..J.
    T : int
        Number of tokens summed.
    crit : float
        Critical value, in lattice units.

    Returns
    -------
    float
        The power, in [0, 1].
    """
    J = pmf1.size - 1
    L = 1 << int(math.ceil(math.log2(T * J + 1)))
    conv = np.fft.irfft(np.fft.rfft(pmf1, L) ** int(T), L)[: T * J + 1]
    lo = max(0, int(math.ceil(crit - 1e-9)))
    return float(np.clip(np.maximum(conv[lo:], 0.0).sum(), 0.0, 1.0))


def gamma_upper_critical(T: int, fpr: float) -> float:
    r"""c with :math:`P(\Gamma(T, 1) \ge c) = \mathrm{fpr}` (``scipy.special.gammainccinv``; tested against mpmath).

    Under no watermark the EMS sum score :math:`\sum_t -\ln(1 - Y_t)` is :math:`\Gamma(T, 1)`.

    Parameters
    ----------
    T : int
        Number of scored tokens.
    fpr : float
        Level of the test, in (0, 1).

    Returns
    -------
    float
        The upper critical value.
    """
    from scipy.special import gammainccinv

    return float(gammainccinv(int(T), _check_level("fpr", fpr)))


def gamma_lower_critical(T: int, fpr: float) -> float:
    r"""c with :math:`P(\Gamma(T, 1) \le c) = \mathrm{fpr}` (the ``ems-log`` test rejects when :math:`-\sum \ln Y \le c`).

    Parameters
    ----------
    T : int
        Number of scored tokens.
    fpr : float
        Level of the test, in (0, 1).

    Returns
    -------
    float
        The lower critical value.
    """
    from scipy.special import gammaincinv

    return float(gammaincinv(int(T), _check_level("fpr", fpr)))


def tokens_needed(power_at, target: float, T_max: int = 20000) -> int | None:
    """Smallest T with ``power_at(T) >= target`` (doubling, then bisection; power is taken as
    nondecreasing in T); None if even ``T_max`` falls short.

    Parameters
    ----------
    power_at : callable
        ``power_at(T) -> float``, the power at text length T.
    target : float
        Target power, in (0, 1).
    T_max : int, default 20000
        Longest length tried.

    Returns
    -------
    int or None
        The number of tokens needed, or None.
    """
    _check_level("target power", target)
    hi = 8
    while power_at(hi) < target:
        if hi >= T_max:
            return None
        hi = min(2 * hi, T_max)
    lo = hi // 2 if hi > 8 else 0
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if power_at(mid) < target else (lo, mid)
    return hi
