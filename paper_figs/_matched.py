"""Matched-distortion comparison: algorithms' (KL, detection) curves compared at common KL and at
common TPR, with a paired bootstrap over texts.

A *curve* is one algorithm family over its parameter (DualGA over Delta, SRL over delta at one
gamma, ...) on one LM: each point is a configuration with per-text KL per token, realised DG and
exact log10 p.  A curve may be an *envelope* of several sub-curves (SRL at its best gamma):
at each KL its detection is the best of the sub-curves defined there.

Comparison of curve ``a`` with curve ``b`` on a metric:

* at common KL (``tpr_1e-4``, ``tpr_1e-6``, ``strength`` = -median log10 p; higher is better):
  ``K`` levels spaced evenly in log KL over the overlap of the two curves' KL ranges, trimmed by
  :data:`TRIM` of that log range at each end; each curve's metric is interpolated linearly in
  log KL between its points (no extrapolation);
* at common TPR at 1e-4 (``kl_at_tpr``; lower KL is better): ``K`` levels evenly spaced over the
  overlap of the TPR ranges within [:data:`TPR_RANGE`]; the KL where a curve first reaches a
  level is read from its running maximum of TPR over increasing KL (linear interpolation).  A
  replicate whose curve starts above a level (its least-KL point's TPR moved up) only bounds that
  KL, to [0, least KL]; one that never reaches it, to [greatest KL, inf): the replicate's difference
  is then an interval, and the level's interval runs from the low quantile of the lower bounds to the
  high quantile of the upper bounds (:func:`outer_quantiles`; wider, never narrower, than the
  unknown differences' own), with the share of such ``censored`` replicates per level in the output.

The texts of an LM are resampled jointly across configurations (the sweep draws every
configuration's text ``j`` from the same prompt and counter stream, so the comparison is paired);
each of ``B`` replicates recomputes every point and every interpolation.  At each level the
difference ``a - b`` (for KL, ``b - a``: positive means ``a`` is better) gets a percentile interval
at confidence ``1 - alpha / K`` (Bonferroni over the levels, so the ``K`` intervals hold together
at ``1 - alpha``); a level that fewer than :data:`MIN_DEFINED` of the replicates define gets none
(nan; ``defined`` in the output gives the share).  Verdict: :func:`paper_figs.criteria.matched`.
"""

from __future__ import annotations

import numpy as np

from paper_figs import criteria as cr

TRIM = 0.05  # share of the overlap's log-KL range left out at each end (interpolation stays inside every replicate's range)
TPR_RANGE = (0.05, 0.95)  # TPR levels inside this band (outside it the KL at a TPR is ill-determined: TPR saturates)
MIN_DEFINED = 0.9  # a level whose difference is defined in fewer replicates than this gets no interval (counts as tied)
METRICS_AT_KL = ("tpr_1e-4", "tpr_1e-6", "strength")
BETTER, TIED, WORSE, MIXED = cr.BETTER, cr.TIED, cr.WORSE, cr.MIXED


def point_stats(kl, dg, log10_p, weights=None) -> dict[str, np.ndarray]:
    """Per-point statistics of per-text arrays (shape ``(n,)``), for each row of ``weights`` (shape
    ``(B, n)``, bootstrap counts; default one row of ones): mean KL, mean DG, TPR at 1e-4 and 1e-6
    (share of texts with log10 p <= -4, -6) and ``strength`` = -(weighted median of log10 p)."""
    kl, dg, lp = (np.asarray(x, dtype=float) for x in (kl, dg, log10_p))
    n = lp.size
    if not (kl.shape == dg.shape == lp.shape == (n,)) or n == 0:
        raise ValueError(f"kl, dg, log10_p must be 1-d arrays of one length >= 1; got shapes {kl.shape}, {dg.shape}, {lp.shape}")
    w = np.ones((1, n)) if weights is None else np.asarray(weights, dtype=float)
    tot = w.sum(axis=1)
    order = np.argsort(lp, kind="stable")
    cum = np.cumsum(w[:, order], axis=1)
    med = lp[order][np.argmax(cum >= tot[:, None] / 2, axis=1)]  # lower weighted median
    mean = lambda x: (w @ np.nan_to_num(x)) / tot  # noqa: E731
    return {"kl": mean(kl), "dg": mean(dg) if np.isfinite(dg).all() else np.full(w.shape[0], np.nan), "tpr_1e-4": mean(lp <= -4),
            "tpr_1e-6": mean(lp <= -6), "strength": -med}


def metric_at_kl(kls: np.ndarray, ys: np.ndarray, levels: np.ndarray, bounds: tuple[float, float] | None = None) -> np.ndarray:
    """A curve's metric at KL ``levels``: linear interpolation in log KL between its points
    (``kls``, ``ys`` of one length, any order), held flat beyond its end points; nan outside
    ``bounds`` (default the points' KL range; a bootstrap replicate passes the point estimate's
    range, so that a replicate whose end point moved a little still answers there)."""
    kls, ys = np.asarray(kls, float), np.asarray(ys, float)
    o = np.argsort(kls)
    x = np.log(np.maximum(kls[o], 1e-300))
    lv = np.log(np.maximum(np.asarray(levels, float), 1e-300))
    lo, hi = (x[0], x[-1]) if bounds is None else np.log(np.maximum(np.asarray(bounds, float), 1e-300))
    out = np.interp(lv, x, ys[o])
    return np.where((lv < lo - 1e-12) | (lv > hi + 1e-12), np.nan, out)


def kl_at_tpr_bounds(kls: np.ndarray, tprs: np.ndarray, levels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Bounds ``(lower, upper)`` on the least KL at which a curve reaches each TPR level, read from its TPR's
    running maximum over increasing KL.  Inside the running maximum's range both are its linear inverse;
    where the curve starts above the level they are ``(0, least KL)`` (the level is crossed somewhere below
    the curve's first point, KL being >= 0); where it never reaches the level, ``(greatest KL, inf)``."""
    kls, tprs = np.asarray(kls, float), np.asarray(tprs, float)
    o = np.argsort(kls, kind="stable")
    k, t = kls[o], np.maximum.accumulate(tprs[o])
    lv = np.asarray(levels, float)
    j = np.searchsorted(t, lv, side="left")  # the first point whose running maximum reaches the level
    jj = np.clip(j, 1, k.size - 1) if k.size > 1 else np.zeros_like(j)
    with np.errstate(invalid="ignore", divide="ignore"):
        inner = k[jj - 1] + (lv - t[jj - 1]) * (k[jj] - k[jj - 1]) / (t[jj] - t[jj - 1])
    val = np.where(j == 0, k[0], inner)  # j == 0: the first point reaches it (equal to it, or above: then only bounded)
    lower = np.where(j == k.size, k[-1], np.where((j == 0) & (t[0] > lv), 0.0, val))
    upper = np.where(j == k.size, np.inf, val)
    return lower, upper


def kl_at_tpr(kls: np.ndarray, tprs: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """The least KL at which a curve reaches each TPR level (:func:`kl_at_tpr_bounds` where its bounds meet);
    nan where the curve never reaches the level or starts above it."""
    lower, upper = kl_at_tpr_bounds(kls, tprs, levels)
    return np.where(lower == upper, lower, np.nan)


def envelope(subcurves: list[tuple[np.ndarray, np.ndarray]], levels: np.ndarray, *, at_kl: bool = True, bounds=None) -> np.ndarray:
    """The best of several sub-curves (each ``(kls, ys)``) at each level: the highest metric at a KL
    (``at_kl``), else the least KL at a TPR (:func:`envelope_kl_bounds` where its bounds meet); nan where
    no sub-curve is defined (``bounds``: one KL range per sub-curve, see :func:`metric_at_kl`)."""
    if not at_kl:
        lower, upper = envelope_kl_bounds(subcurves, levels)
        return np.where(lower == upper, lower, np.nan)
    bounds = bounds or [None] * len(subcurves)
    vals = np.array([metric_at_kl(k, y, levels, b) for (k, y), b in zip(subcurves, bounds)])
    if np.all(np.isnan(vals), axis=0).any():
        vals = np.where(np.all(np.isnan(vals), axis=0), -np.inf, vals)
    best = np.nanmax(vals, axis=0)
    return np.where(np.isinf(best), np.nan, best)


def envelope_kl_bounds(subcurves: list[tuple[np.ndarray, np.ndarray]], levels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Bounds on the least KL at which the best of several sub-curves (each ``(kls, tprs)``) reaches each TPR
    level: the least of their lower and the least of their upper bounds (:func:`kl_at_tpr_bounds`)."""
    b = np.array([kl_at_tpr_bounds(k, t, levels) for k, t in subcurves])
    return b[:, 0].min(axis=0), b[:, 1].min(axis=0)


def common_levels(range_a: tuple[float, float], range_b: tuple[float, float], k: int, *, log: bool) -> np.ndarray:
    """``k`` levels over the overlap of two ranges (log-spaced and trimmed by :data:`TRIM` when ``log``);
    empty when they do not overlap.  A degenerate range (one point) gives that point if the other covers it."""
    lo, hi = max(range_a[0], range_b[0]), min(range_a[1], range_b[1])
    if not lo <= hi:
        return np.zeros(0)
    if np.isclose(lo, hi, rtol=1e-9, atol=0):
        return np.array([lo])
    if log:
        a, b = np.log(lo), np.log(hi)
        pad = TRIM * (b - a)
        return np.exp(np.linspace(a + pad, b - pad, k))
    return np.linspace(lo, hi, k + 2)[1:-1]


verdict = cr.matched
"""The verdict of a comparison from its per-level intervals (:func:`paper_figs.criteria.matched`)."""


def bootstrap_weights(n: int, B: int, seed: int) -> np.ndarray:
    """``B`` rows of multinomial resampling counts over ``n`` texts (the first row: all ones, the point estimate)."""
    if n < 1 or B < 1:
        raise ValueError(f"n and B must be in [1, inf); got n={n}, B={B}")
    rng = np.random.default_rng(seed)
    w = rng.multinomial(n, np.full(n, 1.0 / n), size=B).astype(float)
    return np.vstack([np.ones((1, n)), w])


def compare(curve_a: list, curve_b: list, metric: str, k: int, alpha: float, margin=0.0) -> dict:
    """Compare two curves on ``metric`` (one of :data:`METRICS_AT_KL` or ``kl_at_tpr``).

    A curve is a list of sub-curves; a sub-curve a list of points; a point the dict of
    :func:`point_stats` arrays over replicates (row 0 the point estimate).  Returns the levels,
    the point difference per level, its interval (confidence ``1 - alpha / k``) and the verdict
    (:func:`paper_figs.criteria.matched` with ``margin``: a number, or a function of the levels giving one
    per level, e.g. the metric's resolution plus the interpolation error left on each curve)."""
    if not 0 < alpha < 1 or k < 1:
        raise ValueError(f"alpha must be in (0, 1) and k in [1, inf); got alpha={alpha}, k={k}")
    at_kl = metric != "kl_at_tpr"
    key = metric if at_kl else "tpr_1e-4"

    def series(curve, r):
        return [(np.array([p["kl"][r] for p in sub]), np.array([p[key][r] for p in sub])) for sub in curve]

    def rng_of(curve):
        if at_kl:
            ks = [p["kl"][0] for sub in curve for p in sub]
            return min(ks), max(ks)
        # the TPRs the running maximum passes through: from the least-KL point's (of the sub-curve that starts lowest) to the greatest
        start = min(min(sub, key=lambda p: p["kl"][0])["tpr_1e-4"][0] for sub in curve)
        return max(start, TPR_RANGE[0]), min(max(p["tpr_1e-4"][0] for sub in curve for p in sub), TPR_RANGE[1])

    levels = common_levels(rng_of(curve_a), rng_of(curve_b), k, log=at_kl)
    out = dict(metric=metric, levels=levels.tolist(), diff=[], lo=[], hi=[], verdict="n/a")
    if levels.size == 0:
        out["reason"] = "the two curves share no " + ("KL range" if at_kl else f"TPR range inside {TPR_RANGE}")
        return out
    R = len(curve_a[0][0]["kl"])
    if at_kl:
        bounds = [[(min(p["kl"][0] for p in sub), max(p["kl"][0] for p in sub)) for sub in c] for c in (curve_a, curve_b)]
        single = [c for c in (curve_a, curve_b) if sum(len(sub) for sub in c) == 1]

        def at(r):  # a one-point curve (UW) is compared at its own KL in each replicate
            if single:
                lv = np.array([single[0][0][0]["kl"][r]])
                return [np.array([1.0]) * envelope(series(c, r), lv, at_kl=True) for c in (curve_a, curve_b)]
            return [envelope(series(c, r), levels, at_kl=True, bounds=b) for c, b in zip((curve_a, curve_b), bounds)]

        d_lo = d_hi = np.array([np.subtract(*at(r)) for r in range(R)])
        censored = np.zeros(d_lo.shape, bool)
    else:  # less KL at the same TPR is better: b's KL - a's, from bounds where a replicate's curve starts above or ends below a level
        (a_lo, a_hi), (b_lo, b_hi) = (np.moveaxis(np.array([envelope_kl_bounds(series(c, r), levels) for r in range(R)]), 1, 0)
                                      for c in (curve_a, curve_b))
        d_lo, d_hi = b_lo - a_hi, b_hi - a_lo
        censored = (a_lo != a_hi) | (b_lo != b_hi)
    q = alpha / levels.size / 2
    rows = slice(1, None) if R > 1 else slice(None)
    lo, hi = np.full(levels.size, np.nan), np.full(levels.size, np.nan)
    defined = ~np.isnan(d_lo[rows]) & ~np.isnan(d_hi[rows])  # nan: no value (a level outside a replicate's KL range)
    ok = defined.mean(axis=0) >= MIN_DEFINED
    if ok.any():
        lo[ok], hi[ok] = outer_quantiles(d_lo[rows][:, ok], d_hi[rows][:, ok], q)
    diff = np.where(d_lo[0] == d_hi[0], d_lo[0], np.nan)
    mg = np.asarray(margin(levels) if callable(margin) else margin, float)
    out.update(diff=diff.tolist(), lo=lo.tolist(), hi=hi.tolist(), verdict=verdict(lo, hi, mg),
               margin=np.broadcast_to(mg, levels.shape).tolist(), confidence=1 - alpha / levels.size,
               defined=defined.mean(axis=0).tolist(), censored=censored[rows].mean(axis=0).tolist())
    return out


def outer_quantiles(lower: np.ndarray, upper: np.ndarray, q: float) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval from per-replicate bounds on a difference (shape ``(B, L)``; equal where the
    difference is known): the ``q`` quantile of the lower bounds and the ``1 - q`` quantile of the upper
    bounds over the replicates where they are not nan (linear interpolation; an end is infinite where its
    order statistic is).  It holds the interval of the unknown differences, so it keeps its coverage."""
    with np.errstate(invalid="ignore"):
        lo = np.nanquantile(lower, q, axis=0)
        hi = np.nanquantile(upper, 1 - q, axis=0)
        lo = np.where(np.isneginf(np.nanquantile(lower, q, axis=0, method="lower")), -np.inf, lo)
        hi = np.where(np.isposinf(np.nanquantile(upper, 1 - q, axis=0, method="higher")), np.inf, hi)
    return lo, hi


def n_to_decide(diff, lo, hi, n: int) -> float:
    """For a ``tied`` comparison: the number of texts at which its clearest level would leave 0 out
    of its interval, if the interval's half-width on the side of 0 shrinks like ``1 / sqrt(n)`` and
    the difference stays what it is: ``min over levels of n (half-width / |diff|)^2``, rounded up and
    at least ``n + 1`` (an interval that just touches 0 is still a tie); nan when no level has a finite
    nonzero difference and interval."""
    d, lo, hi = (np.asarray(x, float) for x in (diff, lo, hi))
    if not (d.shape == lo.shape == hi.shape) or n < 1:
        raise ValueError(f"diff, lo, hi must share one shape and n must be in [1, inf); got shapes {d.shape}, {lo.shape}, {hi.shape}, n={n}")
    half = np.where(d > 0, d - lo, hi - d)
    ok = np.isfinite(d) & np.isfinite(half) & (d != 0) & (half > 0)
    if not ok.any():
        return float("nan")
    need = float(np.ceil(np.min(n * (half[ok] / np.abs(d[ok])) ** 2) - 1e-9))  # 1e-9: 36.000000000000004 is 36
    return max(need, float(n + 1))  # an interval that touches 0 at n (a tie) needs more than n
