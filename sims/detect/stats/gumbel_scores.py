r"""Score families of the Gumbel-max (EMS) watermark, each with an exact null tail in log space.

Every score reads the pivot of each scored token, :math:`Y_t = r_{t, y_t}` (the key's uniform of
the chosen token, :func:`sims.detect.stats.scores.token_scores` with ``stat="ems"`` returns
:math:`-\ln(1 - Y_t)`).  Under the null (text independent of the key, distinct (context, token)
pairs) the :math:`Y_t` are i.i.d. U(0, 1); under the watermark :math:`Y_t = U_t^{p_t(y_t)}` with
:math:`U_t` uniform and :math:`y_t \sim p_t`, so :math:`P(Y_t \le y) = \sum_k p_{t,k} y^{1/p_{t,k}}`
(Li, Ruan, Wang, Long and Su 2024, "A statistical framework of watermarks for LLMs").

=============  ======================================================================  ====================================
name           statistic                                                               null tail (exact)
=============  ======================================================================  ====================================
``ems-ars``    :math:`\sum_t -\ln(1 - Y_t)` (today's default, eq. ems_zscore)          :math:`\Gamma(n, 1)` upper tail
``ems-log``    :math:`\sum_t \ln Y_t`                                                  :math:`\Gamma(n, 1)` lower tail at -S
``ems-opt``    :math:`\sum_t \varepsilon \lfloor h_\Delta(Y_t)/\varepsilon \rfloor`    lattice law, tilted FFT
``ems-hc``     higher criticism of the p-values :math:`1 - Y_t`                        order statistics crossing a boundary
``ems-trgof``  truncated phi-divergence goodness of fit (Tr-GoF)                       same recursion
=============  ======================================================================  ====================================

**The optimal sum score.**  For the class of next-token distributions whose largest probability
is at most :math:`1 - \Delta`, the least-favourable distribution puts :math:`1 - \Delta` on
:math:`m = \lfloor 1/(1-\Delta) \rfloor` tokens and the rest :math:`\rho = 1 - m(1 - \Delta)` on one
more, and the optimal score is the log density ratio of Y under it:

.. math:: h_\Delta(y) = \ln\left(m\, y^{\Delta/(1-\Delta)} + 1\{\rho > 0\}\, y^{1/\rho - 1}\right)

(the density of Y under p is :math:`\sum_k y^{1/p_k - 1}`).  At :math:`\Delta = 1/2`,
:math:`h_\Delta(y) = \ln 2 + \ln y`: the ``ems-log`` test.  The package scores
:math:`h_\Delta` on a lattice of ``OPT_CELLS`` cells (width :math:`\varepsilon`) and clamps it below at
:math:`h_\Delta(y_0)`, :math:`y_0` = ``OPT_Y0``; the quantised statistic *is* the test, so its null
law is the exact n-fold convolution of one lattice law (cell masses from the exact inverse of the
monotone :math:`h_\Delta`), evaluated by FFT after exponential tilting at the observed value: the
tail agrees with a 50-digit mpmath convolution to 1e-10 relative however deep (tested down to 1e-120
).  Quantisation moves each token's score by less than :math:`\varepsilon` (~0.03).

**Higher criticism and Tr-GoF.**  With sorted p-values :math:`p_{(1)} \le \dots \le p_{(n)}`,
:math:`p_t = 1 - Y_t`,

.. math:: \mathrm{HC} = \max_i \sqrt n \frac{i/n - p_{(i)}}{\sqrt{p_{(i)}(1 - p_{(i)})}}, \qquad
          \mathrm{TrGoF}_s = n \max_{i:\ p_{(i)} < i/n} K_s(i/n, p_{(i)}),

:math:`K_s(u, v) = \frac{1 - u^s v^{1-s} - (1-u)^s (1-v)^{1-s}}{s(1-s)}` the phi-divergence of
Bernoulli laws (:math:`K_1` = KL, the Berk-Jones statistic; :math:`K_2 = (u-v)^2/(2v(1-v))` gives
HC^2 / 2n, the same test as ``ems-hc``); the supremum over :math:`r \ge p_{(1)}` of Tr-GoF's
:math:`K_s^+(F_n(r), r)` is attained at an order statistic.  Each term decreases in
:math:`p_{(i)}` below :math:`i/n`, so :math:`\{\text{stat} \ge c\} = \{\exists i: p_{(i)} \le b_i(c)\}`
and the p-value is the exact boundary-crossing probability of uniform order statistics
(:func:`sims.detect.stats._score_kernels.crossing_logp`, O(n^3), about 0.06 s at n = 200).
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy.special import gammaln, logsumexp

from sims.core import defaults
from sims.detect.stats import _score_kernels as SK
from sims.detect.stats.nulls import LN10, gamma_logsf
from sims.detect.stats.scores import DetectResult, token_scores

#: The EMS (Gumbel-max) score variants of this module, each with its exact null (module docstring).
GUMBEL_SCORES = ("ems-ars", "ems-log", "ems-opt", "ems-hc", "ems-trgof")
OPT_DELTA = 0.1  #: default class of ems-opt: largest next-token probability <= 0.9
OPT_CELLS = 512  #: lattice cells of h_Delta between its clamp and its maximum
OPT_Y0 = 1e-12  #: h_Delta is clamped below at h_Delta(OPT_Y0): changes a token's score with probability 1e-12
TRGOF_S = 1.0  #: Tr-GoF's phi-divergence index (1: Kullback-Leibler, Berk-Jones)


def _check_delta(Delta) -> float:
    if not (isinstance(Delta, (int, float, np.floating)) and 0.0 < float(Delta) < 1.0):
        raise ValueError(f"Delta must be in (0, 1); got {Delta!r}")
    return float(Delta)


def opt_class(Delta: float) -> tuple[int, float]:
    """The least-favourable distribution of the class max p <= 1 - Delta: m atoms of 1 - Delta and one of rho.

    Parameters
    ----------
    Delta : float
        The class, in (0, 1).

    Returns
    -------
    m : int
        Number of atoms of mass 1 - Delta.
    rho : float
        The remaining atom's mass (0 when none).
    """
    Delta = _check_delta(Delta)
    m = int(math.floor(1.0 / (1.0 - Delta) + 1e-12))
    rho = max(0.0, 1.0 - m * (1.0 - Delta))
    return m, (0.0 if rho < 1e-12 else rho)


def h_opt_log(logy, Delta: float) -> np.ndarray:
    r""":math:`h_\Delta` of the module docstring, from :math:`\ln y` (exact for y near 0 and near 1).

    Parameters
    ----------
    logy : array_like
        :math:`\ln Y` of the pivots.
    Delta : float
        The class: largest next-token probability at most 1 - Delta.

    Returns
    -------
    ndarray
        :math:`h_\Delta(y)`, the optimal score of each pivot, in log form.
    """
    m, rho = opt_class(Delta)
    logy = np.asarray(logy, dtype=np.float64)
    a = math.log(m) + (Delta / (1.0 - Delta)) * logy
    if rho == 0.0:
        return a
    return np.logaddexp(a, (1.0 / rho - 1.0) * logy)


def log_pivot(v) -> np.ndarray:
    r""":math:`\ln Y` from :math:`v = -\ln(1 - Y)` (what the EMS token scores hold).

    Parameters
    ----------
    v : array_like
        EMS token scores.

    Returns
    -------
    ndarray
        :math:`\ln(1 - e^{-v})`.
    """
    v = np.asarray(v, dtype=np.float64)
    with np.errstate(divide="ignore"):
        return np.log(-np.expm1(-v))


@functools.lru_cache(maxsize=32)
def opt_lattice(Delta: float) -> tuple[float, int, np.ndarray]:
    r"""The null lattice law of one token's quantised :math:`h_\Delta`: ``(eps, kmin, pmf)``.

    The token's score is :math:`k = \min(\max(\lfloor h_\Delta(Y)/\varepsilon \rfloor, k_{min}), k_{max})`
    and ``pmf[j] = P(k = kmin + j)`` under Y ~ U(0, 1): :math:`h_\Delta^{-1}((k+1)\varepsilon) -
    h_\Delta^{-1}(k\varepsilon)`, the inverse by bisection on ln y to machine precision.
    """
    Delta = _check_delta(Delta)
    lo, hi = float(h_opt_log(math.log(OPT_Y0), Delta)), float(h_opt_log(0.0, Delta))
    eps = (hi - lo) / OPT_CELLS
    kmin, kmax = math.floor(lo / eps), math.floor(hi / eps)
    edges = np.arange(kmin + 1, kmax + 1) * eps  # P(h < edge) = h^{-1}(edge)
    a, b = np.full(edges.size, -800.0), np.zeros(edges.size)
    for _ in range(200):
        mid = 0.5 * (a + b)
        below = h_opt_log(mid, Delta) < edges
        a, b = np.where(below, mid, a), np.where(below, b, mid)
    cdf = np.concatenate([[0.0], np.exp(0.5 * (a + b)), [1.0]])
    return eps, kmin, np.diff(cdf)


def opt_cells(logy, Delta: float) -> np.ndarray:
    r"""Integer lattice score of each pivot (``kmin <= k <= kmax``, see :func:`opt_lattice`).

    Parameters
    ----------
    logy : array_like
        :math:`\ln Y` of the pivots.
    Delta : float
        The class of ``ems-opt``.

    Returns
    -------
    ndarray of int64
        :math:`\lfloor h_\Delta / \epsilon \rfloor`, clipped to the lattice.
    """
    eps, kmin, pmf = opt_lattice(_check_delta(Delta))
    k = np.floor(h_opt_log(logy, Delta) / eps)
    return np.clip(k, kmin, kmin + pmf.size - 1).astype(np.int64)


def _tilt_mean(logpmf, theta):
    j = np.arange(logpmf.size)
    lw = logpmf + theta * j
    lm = logsumexp(lw)
    return float(np.exp(lw - lm) @ j), float(lm), np.exp(lw - lm)


def _tilt_for(x, n, lp, mean0):
    """The tilt theta >= 0 that puts the mean of the n-fold sum at x (safeguarded Newton: the
    mean's derivative in theta is the tilted variance)."""
    target = x / n
    if target <= mean0:
        return 0.0
    j = np.arange(lp.size)
    lo, hi, theta = 0.0, math.inf, 0.0
    for _ in range(100):
        mu, _, pt = _tilt_mean(lp, theta)
        if mu < target:
            lo = theta
        else:
            hi = theta
        if abs(mu - target) <= 1e-9 * max(1.0, target):
            break
        var = float(pt @ (j - mu) ** 2)
        step = theta + (target - mu) / var if var > 0 else math.nan
        if not (lo < step < hi):
            step = 0.5 * (lo + hi) if math.isfinite(hi) else 2.0 * theta + 1.0
        theta = step
    return theta


def _tilted_log_tails(x, n, pmf):
    """ln P(S >= y), y = 0..nJ, of the n-fold sum from one FFT tilted at x: exact arithmetic, accurate
    in floating point within a few tilted standard deviations of x (and everywhere above x).
    Also returns the tilted standard deviation of S."""
    J = pmf.size - 1
    with np.errstate(divide="ignore"):
        lp = np.log(pmf)
    theta = _tilt_for(x, n, lp, float(pmf @ np.arange(J + 1)))
    mu, lm, pt = _tilt_mean(lp, theta)
    sd = math.sqrt(max(n * float(pt @ (np.arange(J + 1) - mu) ** 2), 1e-300))
    L = 1 << int(math.ceil(math.log2(n * J + 1)))
    conv = np.maximum(np.fft.irfft(np.fft.rfft(pt, L) ** n, L)[: n * J + 1], 0.0)
    z = np.arange(n * J + 1)
    w = conv * np.exp(np.minimum(-theta * (z - x), 700.0))  # far below x the tails are not used
    with np.errstate(divide="ignore"):
        tails = np.log(np.cumsum(w[::-1])[::-1])  # ln sum_{z >= y} e^{-theta (z - x)} P_theta(z)
    return np.minimum(0.0, n * lm - theta * x + tails), sd


def iid_lattice_logsf(x, n: int, pmf: np.ndarray) -> float:
    r"""ln P(sum of n i.i.d. draws of ``pmf`` (on 0..J) >= x), exact: FFT of the law tilted so that its
    mean is x/n, then :math:`\ln P = n \ln M(\theta) - \theta x + \ln \sum_{y \ge x} e^{-\theta (y - x)} P_\theta(y)`.

    Parameters
    ----------
    x : int
        Threshold of the sum.
    n : int
        Number of draws.
    pmf : ndarray, shape (J + 1,)
        Law of one draw on 0..J.

    Returns
    -------
    float
        The log upper tail (0 for x <= 0, -inf above n J).
    """
    J = pmf.size - 1
    x = int(x)
    if x <= 0 or n == 0:
        return 0.0
    if x > n * J:
        return -math.inf
    if x == n * J:
        return float(n * math.log(pmf[J])) if pmf[J] > 0 else -math.inf
    return float(_tilted_log_tails(x, n, pmf)[0][x])


def iid_lattice_critical(n: int, pmf: np.ndarray, fpr: float) -> int:
    """Smallest x with ln P(n-fold sum >= x) <= ln fpr (n J + 1 if none): tilted FFTs, re-tilted at
    the answer until it lies within two tilted standard deviations of the tilt.

    Parameters
    ----------
    n : int
        Number of summed draws.
    pmf : ndarray, shape (J + 1,)
        Law of one draw on 0..J.
    fpr : float
        Level.

    Returns
    -------
    int
        The critical sum.
    """
    J = pmf.size - 1
    target = math.log(fpr)
    j = np.arange(J + 1)
    mean, sd = n * float(pmf @ j), math.sqrt(n * float(pmf @ (j - pmf @ j) ** 2))
    x = int(min(n * J, mean + sd * math.sqrt(-2.0 * target)))
    for _ in range(20):
        tails, sd_t = _tilted_log_tails(max(1, min(x, n * J - 1)), n, pmf)
        below = np.flatnonzero(tails <= target)
        new = int(below[0]) if below.size else n * J + 1
        if abs(new - x) <= 2 * sd_t + 1:
            return new
        x = new
    return new


def log_gamma_cdf(x, n) -> np.ndarray:
    r"""ln :math:`P(\Gamma(n, 1) \le x)` for integer n >= 1, exact in log space:
    :math:`e^{-x}\sum_{j \ge n} x^j/j!` summed from its first term (x < n + 1) or
    :math:`\ln(1 - P(\Gamma(n,1) > x))` (the upper tail then is at most ~0.6).

    Parameters
    ----------
    x : array_like
        Points.
    n : array_like of int
        Shapes, >= 1, broadcast with ``x``.

    Returns
    -------
    ndarray
        The log CDF (-inf for x <= 0).
    """
    x, n = np.broadcast_arrays(np.asarray(x, dtype=np.float64), np.asarray(n, dtype=np.int64))
    out = np.full(x.shape, -np.inf)
    for idx in np.ndindex(x.shape):
        xx, nn = float(x[idx]), int(n[idx])
        if xx <= 0.0:
            continue
        if xx >= nn + 1:
            out[idx] = math.log1p(-math.exp(gamma_logsf(xx, nn)))
            continue
        j = np.arange(nn, nn + 400 + int(4 * xx))
        terms = j * math.log(xx) - gammaln(j + 1.0) - xx
        out[idx] = min(0.0, float(logsumexp(terms)))
    return out


def hc_terms(p: np.ndarray) -> np.ndarray:
    r"""HC of each sorted p-value (module docstring).

    Parameters
    ----------
    p : ndarray, shape (n,)
        Sorted p-values, in (0, 1).

    Returns
    -------
    ndarray, shape (n,)
        :math:`\sqrt n (i/n - p_{(i)}) / \sqrt{p_{(i)}(1 - p_{(i)})}`.
    """
    n = p.size
    u = np.arange(1, n + 1) / n
    return math.sqrt(n) * (u - p) / np.sqrt(p * (1.0 - p))


def hc_bounds(c: float, n: int) -> np.ndarray:
    """b_i(c): HC_i >= c iff p_(i) <= b_i (the smaller root of n(u - b)^2 = c^2 b(1 - b), u = i/n).

    Parameters
    ----------
    c : float
        Critical value of the higher-criticism statistic.
    n : int
        Number of p-values.

    Returns
    -------
    ndarray, shape (n,)
        The bounds :math:`b_i(c)`.
    """
    u = np.arange(1, n + 1) / n
    big = ((2 * n * u + c * c) + c * np.sqrt(c * c + 4 * n * u * (1 - u))) / (2 * (n + c * c))
    return (n * u * u / (n + c * c)) / big


def k_div(u, v, s: float):
    """:math:`K_s(u, v)` (module docstring), s >= 1.

    Parameters
    ----------
    u, v : array_like
        Probabilities in [0, 1], broadcast together.
    s : float
        Order of the divergence (1: the Bernoulli KL).

    Returns
    -------
    ndarray
        The divergence of Bernoulli(u) from Bernoulli(v) of order s.
    """
    u, v = np.asarray(u, dtype=np.float64), np.asarray(v, dtype=np.float64)
    if s == 1.0:
        with np.errstate(divide="ignore", invalid="ignore"):
            a = np.where(u > 0, u * (np.log(u) - np.log(v)), 0.0)
            b = np.where(u < 1, (1 - u) * (np.log1p(-u) - np.log1p(-v)), 0.0)
        return a + b
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return (1.0 - u**s * v ** (1 - s) - (1 - u) ** s * (1 - v) ** (1 - s)) / (s * (1 - s))


def trgof_terms(p: np.ndarray, s: float) -> np.ndarray:
    r"""n K_s^+(i/n, p_(i)) of each sorted p-value.

    Parameters
    ----------
    p : ndarray, shape (n,)
        Sorted p-values.
    s : float
        Order of the divergence.

    Returns
    -------
    ndarray, shape (n,)
        The terms, 0 where :math:`p_{(i)} \ge i/n`.
    """
    n = p.size
    u = np.arange(1, n + 1) / n
    return np.where(p < u, n * k_div(u, p, s), 0.0)


def trgof_bounds(c: float, n: int, s: float) -> np.ndarray:
    """b_i(c): n K_s(i/n, b) >= c with b < i/n iff p_(i) <= b_i (bisection on ln b; 0 where none).

    Parameters
    ----------
    c : float
        Critical value of Tr-GoF.
    n : int
        Number of p-values.
    s : float
        Order of the divergence.

    Returns
    -------
    ndarray, shape (n,)
        The bounds :math:`b_i(c)`.
    """
    u = np.arange(1, n + 1) / n
    a, b = np.full(n, -745.0), np.log(u)
    ok = n * k_div(u, np.exp(a), s) >= c
    for _ in range(56):  # ln b to within 745 / 2^56 ~ 1e-14
        mid = 0.5 * (a + b)
        above = n * k_div(u, np.exp(mid), s) >= c
        a, b = np.where(above, mid, a), np.where(above, b, mid)
    return np.where(ok, np.exp(a), 0.0)


@functools.lru_cache(maxsize=8)
def _lfact(n: int) -> np.ndarray:
    return gammaln(np.arange(n + 2) + 1.0)


def crossing_logsf(bounds: np.ndarray) -> float:
    """ln P(exists i: U_(i) <= bounds[i]) for len(bounds) uniforms (running max of the bounds taken).

    Parameters
    ----------
    bounds : ndarray, shape (n,)
        Bounds on the order statistics, clipped to [0, 1].

    Returns
    -------
    float
        The log probability that some order statistic of n i.i.d. U(0, 1) falls below its bound.
    """
    b = np.maximum.accumulate(np.clip(np.asarray(bounds, dtype=np.float64), 0.0, 1.0))
    return float(SK.crossing_logp(np.ascontiguousarray(b), _lfact(b.size)))


def order_stat_logsf(kind: str, c: float, n: int, s: float = TRGOF_S) -> float:
    """ln P(stat >= c) under the null for HC (``kind="hc"``) or Tr-GoF (``"trgof"``) of n p-values.

    Parameters
    ----------
    kind : {"hc", "trgof"}
        The statistic.
    c : float
        Observed value.
    n : int
        Number of p-values.
    s : float, default TRGOF_S
        Tr-GoF's order.

    Returns
    -------
    float
        The exact log p-value (0 for c <= 0).
    """
    if c <= 0.0:
        return 0.0
    return crossing_logsf(hc_bounds(c, n) if kind == "hc" else trgof_bounds(c, n, s))


def text_statistic(name: str, v: np.ndarray, *, Delta: float = OPT_DELTA, s: float = TRGOF_S) -> tuple[float, float]:
    """(statistic, ln p) of one text's EMS token scores ``v = -ln(1 - Y)`` (scored tokens only).

    Parameters
    ----------
    name : str
        One of :data:`GUMBEL_SCORES`.
    v : ndarray, shape (n,)
        The text's scored token scores.
    Delta : float, default OPT_DELTA
        Class of ``ems-opt``.
    s : float, default TRGOF_S
        Order of ``ems-trgof``, in [1, 2].

    Returns
    -------
    statistic : float
        The score.
    log_p : float
        Natural log of its exact null p-value.

    Raises
    ------
    ValueError
        If ``name`` is unknown or ``s`` is outside [1, 2].
    """
    n = v.size
    if name == "ems-ars":
        S = float(v.sum())
        return S, float(gamma_logsf(S, n))
    if name == "ems-log":
        S = float(log_pivot(v).sum())
        return S, float(log_gamma_cdf(-S, n))
    if name == "ems-opt":
        eps, kmin, pmf = opt_lattice(_check_delta(Delta))
        k = int(opt_cells(log_pivot(v), Delta).sum())
        return k * eps, iid_lattice_logsf(k - n * kmin, n, pmf)
    p = np.sort(np.exp(-v))
    if name == "ems-hc":
        c = max(0.0, float(hc_terms(p).max()))
        return c, order_stat_logsf("hc", c, n)
    if name == "ems-trgof":
        if not (1.0 <= float(s) <= 2.0):
            raise ValueError(f"s must be in [1, 2]; got {s!r}")
        c = float(trgof_terms(p, s).max())
        return c, order_stat_logsf("trgof", c, n, s)
    raise ValueError(f"score must be one of {GUMBEL_SCORES}; got {name!r}")


def score_gumbel(tokens, prompts, key: int, name: str = "ems-ars", *, Delta: float = OPT_DELTA, s: float = TRGOF_S,
                 vocab_size: int | None = None, h: int = defaults.H, dedup: bool = False, lengths=None) -> DetectResult:
    """Detect EMS text with the score family ``name`` (module docstring): exact log10 p per text.

    Parameters
    ----------
    tokens, prompts, key, vocab_size, h, dedup, lengths :
        As :func:`sims.detect.stats.scores.score_ems`.
    name : one of ``GUMBEL_SCORES``
    Delta : float in (0, 1)
        The class of ``ems-opt`` (largest next-token probability at most 1 - Delta).
    s : float in [1, 2]
        Tr-GoF's divergence index.

    Returns
    -------
    DetectResult whose ``score`` is the statistic (``z`` is nan); texts with at most one scored
    token are too short to test (p = 1).
    """
    if name not in GUMBEL_SCORES:
        raise ValueError(f"score must be one of {GUMBEL_SCORES}; got {name!r}")
    _check_delta(Delta)
    v, scored = token_scores(tokens, prompts, key, stat="ems", h=h, dedup=dedup, vocab_size=vocab_size, lengths=lengths)
    n_txt = v.shape[0]
    n = scored.sum(axis=1)
    stat, logp = np.zeros(n_txt), np.zeros(n_txt)
    for i in range(n_txt):
        if n[i] > 1:
            stat[i], logp[i] = text_statistic(name, v[i][scored[i]], Delta=Delta, s=s)
    short = n <= 1
    return DetectResult(n, stat, np.full(n_txt, np.nan), np.where(short, 0.0, logp / LN10), short)
