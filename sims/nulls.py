"""Exact null tails in log space (Fernandez et al.'s tests, paper eqs. three_brick_p, ems_pval).

Both tails are sums of positive terms evaluated with a log-sum-exp, so they stay
exact far below 1e-300 where ``scipy.stats`` underflows to 0.  The paper's eq.
three_brick_p writes P(S > s0); a valid p-value (P(p <= a) <= a under the null)
is P(S >= s0), which is what is returned.
"""

from __future__ import annotations

import numpy as np
from scipy.special import gammaln, logsumexp

LN10 = np.log(10.0)


def binom_logsf(k, n, gamma: float) -> np.ndarray:
    r"""Natural log of :math:`P(\mathrm{Bin}(n, \gamma) \ge k)`, exact (log-sum of pmf terms,
    accumulated from the far tail inwards).

    .. math:: \log \sum_{j=k}^{n} \binom{n}{j} \gamma^j (1-\gamma)^{n-j}
    """
    k, n = np.broadcast_arrays(np.asarray(k, dtype=np.int64), np.asarray(n, dtype=np.int64))
    out = np.empty(k.shape, dtype=np.float64)
    lg, l1g = np.log(gamma), np.log1p(-gamma)
    for nn in np.unique(n):  # one tail table per distinct length: O(n) for all k at once
        sel = n == nn
        j = np.arange(nn + 1)
        terms = gammaln(nn + 1) - gammaln(j + 1) - gammaln(nn - j + 1) + j * lg + (nn - j) * l1g
        tail = np.minimum(np.logaddexp.accumulate(terms[::-1])[::-1], 0.0)  # tail[k] = ln P(S >= k)
        kk = k[sel]
        out[sel] = np.where(kk <= 0, 0.0, tail[np.clip(kk, 0, nn)])
        out[sel] = np.where(kk > nn, -np.inf, out[sel])
    return out if out.ndim else float(out)


def gamma_logsf(s, n) -> np.ndarray:
    r"""Natural log of :math:`P(\Gamma(n, 1) \ge s)` for integer n >= 1, exact.

    For integer shape the tail is a Poisson CDF:
    :math:`P(\Gamma(n,1) \ge s) = e^{-s} \sum_{j<n} s^j / j!`.
    """
    s = np.asarray(s, dtype=np.float64)
    n = np.asarray(n, dtype=np.int64)
    s, n = np.broadcast_arrays(s, n)
    out = np.empty(s.shape, dtype=np.float64)
    for idx in np.ndindex(s.shape):
        ss, nn = float(s[idx]), int(n[idx])
        if nn <= 0 or ss <= 0.0:
            out[idx] = 0.0
            continue
        j = np.arange(nn)
        out[idx] = min(0.0, float(-ss + logsumexp(j * np.log(ss) - gammaln(j + 1))))
    return out if out.ndim else float(out)
