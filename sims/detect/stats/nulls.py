"""Exact null tails in log space (Fernandez et al.'s tests; paper eqs. three_brick_p, ems_pval).

Both tails are sums of positive terms evaluated as a log-sum-exp, so they stay
exact (relative error ~1e-13 on ln p) far below 1e-300, where ``scipy.stats``
underflows: ``scipy.stats.binom.logsf(899, 1000, 0.25)`` is ``-inf`` while the
true value is ln p = -954.48 (p = 1e-414.5).

The paper's eq. three_brick_p writes :math:`P(S > s_0)`; that is not a valid
p-value for a discrete statistic (it rejects more often than its level under the
null, see ``proofs_check/check_type_errors.py``).  The valid p-value is
:math:`P(S \\ge s_0)`, which is what :func:`binom_logsf` returns.
"""

from __future__ import annotations

import numpy as np
from scipy.special import gammaln, logsumexp

LN10 = float(np.log(10.0))  #: ln 10: natural-log tails divided by it are log10 p-values
_CHUNK = 1 << 22  # cells of one (texts x terms) block in gamma_logsf


def _as_counts(name: str, a) -> np.ndarray:
    a = np.asarray(a)
    if a.dtype.kind == "f":
        if not np.all(np.isfinite(a)) or np.any(a != np.round(a)):
            raise ValueError(f"{name} must hold integers; got {a.ravel()[~(np.isfinite(a.ravel()) & (a.ravel() == np.round(a.ravel())))][:3]}")
    elif a.dtype.kind not in "iub":
        raise ValueError(f"{name} must hold integers; got dtype {a.dtype}")
    return a.astype(np.int64)


TAIL_TABLE_MAX = 1 << 22  #: binom_logsf reads every length's tail from one table up to this many entries (32 MiB)


def binom_logsf(k, n, gamma: float) -> np.ndarray | float:
    r"""Natural log of the binomial upper tail :math:`P(\mathrm{Bin}(n, \gamma) \ge k)`, exact.

    .. math:: \ln P(S \ge k) = \ln \sum_{j=k}^{n} \binom{n}{j} \gamma^j (1-\gamma)^{n-j}

    the p-value of the green count :math:`k = |y|_G` of :math:`n` scored tokens (paper
    eq. three_brick_p, with :math:`\ge`).  The pmf terms are formed in log space with
    ``gammaln`` and accumulated from the far tail inwards with ``logaddexp``, one table per
    distinct ``n`` (O(n) for every ``k`` of that length), so the result is exact far below
    1e-300 (tested to 1e-6000 against 50-digit mpmath).

    Parameters
    ----------
    k, n : array_like of int (broadcast)
        Green count and number of scored tokens, ``n >= 0``.  ``k <= 0`` gives 0 (p = 1),
        ``k > n`` gives ``-inf``.
    gamma : float in (0, 1)
        Green-list ratio.

    Returns
    -------
    ndarray of float64 (or float for scalar input), values in [-inf, 0].
    """
    if not (isinstance(gamma, (float, int, np.floating)) and 0.0 < float(gamma) < 1.0):
        raise ValueError(f"gamma must be in (0, 1); got {gamma!r}")
    k, n = np.broadcast_arrays(_as_counts("k", k), _as_counts("n", n))
    if n.size and n.min() < 0:
        raise ValueError(f"n must be in [0, inf); got {n.min()}")
    lg, l1g = np.log(gamma), np.log1p(-gamma)

    def tail(nn):  # tail[k] = ln P(S >= k), k = 0..nn
        j = np.arange(nn + 1)
        terms = gammaln(nn + 1.0) - gammaln(j + 1.0) - gammaln(nn - j + 1.0) + j * lg + (nn - j) * l1g
        return np.minimum(np.logaddexp.accumulate(terms[::-1])[::-1], 0.0)

    lengths = np.unique(n)
    if (lengths + 1).sum() <= TAIL_TABLE_MAX:  # every length's tail in one table, read at each (n, k) in one pass
        starts = np.concatenate([[0], np.cumsum(lengths + 1)[:-1]]).astype(np.int64)
        table = np.concatenate([tail(nn) for nn in lengths]) if lengths.size else np.zeros(0)
        out = np.array(table[starts[np.searchsorted(lengths, n)] + np.clip(k, 0, n)] if k.size else np.zeros(k.shape), dtype=np.float64)
        out[k <= 0] = 0.0
        out[k > n] = -np.inf
        return out if out.ndim else float(out)
    out = np.zeros(k.shape, dtype=np.float64)
    for nn in lengths:  # one length at a time
        sel = n == nn
        kk = k[sel]
        res = tail(nn)[np.clip(kk, 0, nn)]
        res[kk <= 0] = 0.0
        res[kk > nn] = -np.inf
        out[sel] = res
    return out if out.ndim else float(out)


def gamma_logsf(s, n) -> np.ndarray | float:
    r"""Natural log of :math:`P(\Gamma(n, 1) \ge s)` for integer shape ``n``, exact.

    The EMS score :math:`S = \sum_{t=1}^{n} -\ln(1 - r_{t,y_t})` is a sum of ``n`` unit
    exponentials under the null (paper eq. ems_pval).  For integer shape the tail is a
    Poisson CDF,

    .. math:: P(\Gamma(n,1) \ge s) = e^{-s} \sum_{j=0}^{n-1} \frac{s^j}{j!},

    evaluated as a log-sum-exp (exact below 1e-300).  ``n = 0`` or ``s <= 0`` gives 0 (p = 1).

    Parameters
    ----------
    s : array_like of float
        Observed score(s).
    n : array_like of int (broadcast with ``s``), ``n >= 0``.
        Number of scored tokens.

    Returns
    -------
    ndarray or float
        The log tail, shaped like the broadcast inputs (a float for scalars).
    """
    s = np.asarray(s, dtype=np.float64)
    if np.any(np.isnan(s)):
        raise ValueError("s must not be nan")
    s, n = np.broadcast_arrays(s, _as_counts("n", n))
    if n.size and n.min() < 0:
        raise ValueError(f"n must be in [0, inf); got {n.min()}")
    out = np.zeros(s.shape, dtype=np.float64)
    out[(n > 0) & (s == np.inf)] = -np.inf
    live = (n > 0) & (s > 0) & (s < np.inf)
    sflat, oflat, nflat = np.ascontiguousarray(s).ravel(), out.reshape(-1), np.ascontiguousarray(n).ravel()
    for nn in np.unique(n[live]):
        idx = np.flatnonzero((nflat == nn) & live.ravel())
        j = np.arange(nn, dtype=np.float64)
        lgj = gammaln(j + 1.0)
        step = max(1, _CHUNK // int(nn))
        for a in range(0, idx.size, step):
            ii = idx[a : a + step]
            ss = sflat[ii]
            terms = j[None, :] * np.log(ss)[:, None] - lgj[None, :]
            oflat[ii] = np.minimum(0.0, logsumexp(terms, axis=1) - ss)
    return out if out.ndim else float(out)


def _log_compositions(m: np.ndarray, r: np.ndarray) -> np.ndarray:
    """ln of the number of ways to write m as an ordered sum of r positive integers."""
    m, r = np.broadcast_arrays(m, r)
    out = np.full(m.shape, -np.inf)
    empty = (m == 0) & (r == 0)
    ok = (r >= 1) & (m >= r)
    out[empty] = 0.0
    mm, rr = m[ok].astype(np.float64), r[ok].astype(np.float64)
    out[ok] = gammaln(mm) - gammaln(rr) - gammaln(mm - rr + 1.0)
    return out


def autocov_null_table(T: int, gamma: float) -> tuple[np.ndarray, np.ndarray]:
    r"""Exact null law of the AutoCov sum :math:`T S_T = \sum_{t<T} N_t N_{t+1}` for i.i.d.
    Bernoulli(gamma) colours (appendix "Possibility for Other Variants").

    With :math:`K` greens, :math:`A` adjacent green pairs and end colours :math:`c_1, c_T`,

    .. math:: T S_T = A - \gamma (2K - c_1 - c_T) + (T-1)\gamma^2 .

    A colour sequence with K greens in R runs has A = K - R; the number of sequences with
    given (K, R, c_1, c_T) is a product of two composition counts (greens into R runs, reds
    into R - 1, R or R + 1 runs), each sequence having probability
    :math:`\gamma^K (1-\gamma)^{T-K}`.  Enumerating the O(T^2) cells gives the law exactly.

    Parameters
    ----------
    T : int
        Text length, >= 2.
    gamma : float
        Null green probability, in (0, 1).

    Returns
    -------
    values : sorted :math:`T S_T - (T-1)\gamma^2` of every cell
    log_cdf : ln P(value' <= values[j]) (natural log, exact in log space)

    Raises
    ------
    ValueError
        If ``gamma`` is outside (0, 1) or T < 2.
    """
    if not (0.0 < float(gamma) < 1.0):
        raise ValueError(f"gamma must be in (0, 1); got {gamma!r}")
    if int(T) < 2:
        raise ValueError(f"T must be in [2, inf); got {T!r}")
    T = int(T)
    K, R = np.meshgrid(np.arange(T + 1), np.arange(T + 1), indexing="ij")
    vals, logs = [], []
    base = K * np.log(gamma) + (T - K) * np.log1p(-gamma) + _log_compositions(K, R)
    for c1, cT in ((1, 1), (1, 0), (0, 1), (0, 0)):
        Z = R - 1 + (1 - c1) + (1 - cT)  # runs of reds between/around the R runs of greens
        lw = base + _log_compositions(T - K, Z)
        ok = np.isfinite(lw) & ((K > 0) | (c1 + cT == 0)) & ((K < T) | (c1 * cT == 1))
        vals.append(((K - R) - gamma * (2 * K - c1 - cT))[ok])
        logs.append(lw[ok])
    v, lp = np.concatenate(vals), np.concatenate(logs)
    order = np.argsort(v, kind="stable")
    return v[order], np.minimum(np.logaddexp.accumulate(lp[order]), 0.0)


AUTOCOV_TIE = 1e-9  #: cells within this of the observed value count as ties (<=): conservative


def autocov_logcdf(A, K, c1, cT, T, gamma: float) -> np.ndarray:
    r"""ln :math:`P_{H_0}(S_T \le s)` for observed counts (see :func:`autocov_null_table`): the
    exact one-sided p-value of the AutoCov statistic, which DualGA-AutoCov drives negative.

    ``A, K, c1, cT, T`` are integer arrays (adjacent green pairs, greens, first and last
    colour, length >= 2).  Values within ``AUTOCOV_TIE`` of the observed one count as <=.

    Parameters
    ----------
    A, K, c1, cT, T : array_like of int
        The observed counts of each text, broadcast together.
    gamma : float
        Null green probability, in (0, 1).

    Returns
    -------
    ndarray
        Natural log of each text's p-value.
    """
    A, K, c1, cT, T = np.broadcast_arrays(*(np.asarray(x, dtype=np.int64) for x in (A, K, c1, cT, T)))
    obs = A - gamma * (2 * K - c1 - cT)
    out = np.empty(obs.shape)
    for tt in np.unique(T):
        sel = T == tt
        v, lc = autocov_null_table(int(tt), gamma)
        j = np.searchsorted(v, obs[sel] + AUTOCOV_TIE, side="right") - 1
        out[sel] = np.where(j >= 0, lc[np.maximum(j, 0)], -np.inf)
    return out
