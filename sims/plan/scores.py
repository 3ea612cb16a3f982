r"""The planner's power of the scores without a closed-form sum law: the likelihood-ratio score of
red-green watermarks (``lr``) and EMS's higher criticism / Tr-GoF (``ems-hc``, ``ems-trgof``).

**HC and Tr-GoF (exact given the per-token law).**  Under the planner's model the p-values
:math:`P_t = 1 - Y_t` of a watermarked text are i.i.d. with cdf
:math:`H(p) = c\,(1 - \overline{(1 - p)^{1/\pi}}) + (1 - c)\, p` (the bar: the mean over the LM's
sample of :math:`\pi = p_t(y_t)`; c the clean share of a substitution attack,
:func:`sims.plan.clean_share`).  Each test rejects iff some order statistic crosses its
exact boundary, :math:`p_{(i)} \le b_i(c^*)` (:func:`sims.detect.stats.gumbel_scores.hc_bounds`,
``trgof_bounds``), with :math:`c^*` the exact critical value at the level (bisection on the exact
null tail); since :math:`H(P_t)` are uniform, the power is the same crossing probability for
the boundaries :math:`H(b_i)` (:func:`sims.detect.stats.gumbel_scores.crossing_logsf`): no
approximation beyond the i.i.d. model of :math:`\pi`.  The planner runs that recursion in linear
space (:mod:`sims.plan._kernels`, equal to the log-space kernel to rounding) and finds
:math:`c^*` with a handful of tail evaluations (:func:`order_critical`, the bisection's answer bit
for bit).

**LR (a stated bounded approach).**  The test conditions on the realised weights :math:`k_t`, so
its critical value is random; there is no closed form.  From the LM sample the planner takes,
per position, the exact joint law :math:`A_t(x, k)` of the green indicator and the quantised
weight of the token drawn from the watermarked distribution (the full next-token distribution and
green list of the position; :func:`lr_position_laws`).  It takes a representative
weight profile (the expected count of each weight at length T, pooled over the sample's texts,
rounded), its exact critical sum :math:`s^*` at the level (the exact weighted-Bernoulli tail, all
sums at once from one tilted lattice law: :func:`sims.plan.lr.lr_critical_sum`) and
the tilt :math:`\theta^*` that puts its mean at :math:`s^*`, :math:`K'(\theta^*) = s^*` with
:math:`K(\theta) = \sum_t \ln(1 - \gamma + \gamma e^{\theta k_t})` over the profile, and writes the
test of the realised weights, linearised around the profile, as the rejection region
:math:`\sum_t D_t \ge \theta^* s^* - K(\theta^*)`,
:math:`D_t = \theta^* k_t X_t - \ln(1 - \gamma + \gamma e^{\theta^* k_t})` (the realised tilted
log tail, a sum of independent terms), and takes its power by the central limit theorem with the
exact means and variances of :math:`D_t` under :math:`A_t`.  Its error (the fixed tilt, the CLT)
is not bounded in closed form: it is measured against simulation in
``proofs_check/check_power_plan.py`` (within the Monte Carlo interval widened by its stated
allowance).  Each text of the sample keeps its own positions (tiled to length T); the power is the
mean over texts.  Repeated context windows are not dropped (the detector keeps the first of each).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from sims.core import prf
from sims.detect.stats import gumbel_scores as gs
from sims.detect.stats import lr_scores as lr
from sims.lm.synthetic import open_synthetic
from sims.plan import _kernels as PK
from sims.plan.lr import LR_SEED, LR_T0, LR_TEXTS
from sims.watermarks import registry
from sims.watermarks.generate import algo_params, generate_synthetic

ORDER_T_MAX = 256  #: HC / Tr-GoF: the exact crossing recursion is O(T^3); longer texts are not planned


@functools.lru_cache(maxsize=8)
def lr_position_laws(algo: str, lm: str, gamma, delta, Delta, h: int, key: int) -> tuple[np.ndarray, np.ndarray, float]:
    """((LR_TEXTS, LR_T0, 2, levels + 1) joint laws of (green, quantised LR weight) of the token drawn
    from the watermarked distribution at each position of the LM sample; the same of a uniformly drawn
    token (what a random substitution puts there: mostly a rare token, whose weight is near the largest); gamma)."""
    info = algo_params(algo, gamma=gamma, delta=delta, Delta=Delta)[1]
    gam = float(info["gamma"])
    d_lr = lr.lr_delta(dict(info, algo=algo))
    model = open_synthetic(lm)
    gen = generate_synthetic(model, "none", n=LR_TEXTS, T=LR_T0, seed=LR_SEED, key=key, gamma=gam, h=h)
    boost = np.broadcast_to(registry.get(algo).boost.per_text(info, gen.G), (LR_TEXTS,)).astype(np.float64)  # per text (DualGA) or one boost
    L = lr.LR_LEVELS
    out = np.zeros((LR_TEXTS, LR_T0, 2, L + 1))
    uniform = np.zeros((LR_TEXTS, LR_T0, 2, L + 1))
    P = gen.prompts.shape[1]
    for i in range(LR_TEXTS):
        seq = np.concatenate([gen.prompts[i], gen.tokens[i]])
        probs = model.probs_along(seq, P, LR_T0)
        for t in range(LR_T0):
            p = probs[t]
            g = prf.green_mask(prf.context_hash(key, seq[P + t - h : P + t]), p.size, gam)
            G = float(p[g].sum())
            q = np.where(g, p, 0.0) if math.isinf(boost[i]) else p * np.exp(boost[i] * g)
            q = q / q.sum() if q.sum() > 0 else p
            k = lr.quantise(lr.lr_weights(G - p * g, p, d_lr), d_lr)
            out[i, t, 1] = np.bincount(k[g], q[g], L + 1)
            out[i, t, 0] = np.bincount(k[~g], q[~g], L + 1)
            uniform[i, t, 1] = np.bincount(k[g], minlength=L + 1) / p.size
            uniform[i, t, 0] = np.bincount(k[~g], minlength=L + 1) / p.size
    return out, uniform, gam


def _null_logsf(kind: str, c: float, n: int, s: float) -> float:
    """ln P(stat >= c) under the null (:func:`sims.detect.stats.gumbel_scores.order_stat_logsf`, by the linear-space kernel)."""
    b = gs.hc_bounds(c, n) if kind == "hc" else PK.trgof_bounds_nb(c, n, s)
    return PK.crossing_logsf(b, gs._lfact(n))


_LAST_CRITICAL: dict = {}  # (kind, fpr, s) -> ln c* of the last n: the next search's first guess


@functools.lru_cache(maxsize=4096)
def order_critical(kind: str, n: int, fpr: float, s: float = gs.TRGOF_S) -> float:
    """Exact critical value of HC / Tr-GoF on n p-values: the smallest c (to 6e-9 relative) with null tail <= fpr.

    The value is the end point of a 32-step bisection on ln c over [ln 1e-3, ln 1e8] (the test's
    tail is decreasing in c).  A bracket of the root narrowed by the Illinois method (a handful of
    tail evaluations) decides every step that falls outside it; a step inside it evaluates the tail,
    so the answer is the bisection's own, bit for bit, at a fraction of its cost."""
    lfpr = math.log(fpr)
    memo: dict = {}

    def g(x: float) -> float:  # decreasing in x; its root is ln c*
        if x not in memo:
            memo[x] = _null_logsf(kind, math.exp(x), n, s) - lfpr
        return memo[x]

    lo, hi = math.log(1e-3), math.log(1e8)
    xl, xr = -math.inf, math.inf  # g(xl) > 0 >= g(xr)
    x = min(max(_LAST_CRITICAL.get((kind, fpr, s), -0.5 * lfpr if kind == "hc" else math.log(-lfpr)), lo), hi)
    step = 0.25
    while (xl == -math.inf or xr == math.inf) and lo <= x <= hi:  # bracket by steps doubling away from the guess
        if g(x) > 0.0:
            xl, x = x, x + step
        else:
            xr, x = x, x - step
        step *= 2.0
    if xl > -math.inf and xr < math.inf:
        fl, fr, side = g(xl), g(xr), 0
        for _ in range(60):
            if xr - xl <= 1e-9:
                break  # Illinois: regula falsi, halving the stale end's value
            x = min(max(xr - fr * (xr - xl) / (fr - fl), xl + 1e-12), xr - 1e-12)
            if g(x) > 0.0:
                xl, fl = x, g(x)
                fr, side = (0.5 * fr if side == -1 else fr), -1
            else:
                xr, fr = x, g(x)
                fl, side = (0.5 * fl if side == 1 else fl), 1
    for _ in range(32):
        mid = 0.5 * (lo + hi)
        if xl < mid < xr:
            xl, xr = (mid, xr) if g(mid) > 0.0 else (xl, mid)
        lo, hi = (mid, hi) if mid <= xl else (lo, mid)
    _LAST_CRITICAL[(kind, fpr, s)] = hi
    return math.exp(hi)


def order_power_function(kind: str, pi: np.ndarray, fpr: float, clean=lambda T: 1.0, s: float = gs.TRGOF_S):
    """``power_at(T)`` of the exact HC (``kind="hc"``) / Tr-GoF test on T EMS tokens (module docstring);
    ``pi`` the LM's sample of :math:`p_t(y_t)`, ``clean(T)`` the share of tokens that keep their pivot.

    Parameters
    ----------
    kind : {"hc", "trgof"}
        The statistic.
    pi : array_like
        Sample of the probabilities of the tokens drawn.
    fpr : float
        Level of the test.
    clean : callable, optional
        ``clean(T)``: share of the T tokens that keep their pivot (default 1: no attack).
    s : float, default gs.TRGOF_S
        Tr-GoF's order.

    Returns
    -------
    callable
        ``power_at(T) -> float`` (0 for T < 2; ValueError above ``ORDER_T_MAX``).
    """
    inv = 1.0 / np.asarray(pi, dtype=np.float64)

    def power_at(T: int) -> float:
        T = int(T)
        if T < 2:
            return 0.0
        if T > ORDER_T_MAX:
            raise ValueError(f"T must be in [1, {ORDER_T_MAX}] for HC / Tr-GoF (exact O(T^3) recursion); got {T}")
        c = order_critical(kind, T, fpr, s)
        b = gs.hc_bounds(c, T) if kind == "hc" else PK.trgof_bounds_nb(c, T, s)
        share = clean(T)
        wm = -np.expm1(np.log1p(-np.minimum(b, 1.0))[:, None] * inv[None, :]).mean(axis=1)  # P(1 - Y <= b) = 1 - mean (1 - b)^(1/pi)
        return float(math.exp(PK.crossing_logsf(share * wm + (1.0 - share) * b, gs._lfact(T))))

    return power_at
