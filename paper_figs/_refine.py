"""Curves measured where they are compared: a curve's parameter grid refined by bisection around the
levels at which the matched comparison (:mod:`paper_figs._matched`) reads it.

A matched comparison reads each curve between its measured points by linear interpolation in log KL.
Where the curve bends between two grid points (SRL's TPR at 1e-6 goes from 0.02 to 0.84 between
delta 0.5 and delta 1), the straight line says more than any configuration delivers.  So each
*segment* of a curve (two neighbouring points in KL order) that holds a comparison level gets a
direct run at the parameter interpolated (linearly, over log KL) at the median of its levels.  The
run is *checked*: its residual, the direct value minus the segment's interpolation at the run's own
KL, gets a paired bootstrap interval over the texts (the same texts and resampling weights as the
comparison, confidence :data:`CONFIDENCE`) for each metric of :data:`METRICS`.  A segment whose
check holds every interval around 0 is *settled*; otherwise the run becomes a grid point, which
splits the segment in two, and each half that holds a level is run again in the next round
(bisection on the parameter), for at most ``rounds`` rounds.  Every run joins the curve either way.

The largest residual left (:func:`summary`) is that of the leaf checks (the last check of each compared
segment, a segment split by a failed check being replaced by its halves' checks): the error the final curve
can still make by interpolating there is at most what the last direct run missed.
"""

from __future__ import annotations

import numpy as np

from paper_figs import _matched as mt

AXIS = {"dualga": "Delta", "autocov": "Delta", "srl": "delta", "atw": "delta", "ems": "tau", "hard": "gamma"}
"""The parameter each refinable algorithm's curve runs over (SynthID's integer m and UW's single point are not refined)."""
METRICS = ("dg", "tpr_1e-4", "tpr_1e-6", "strength")
"""The metrics a check compares (DG where the curve has one)."""
CONFIDENCE = 0.95
"""Confidence of a check's paired interval (per metric)."""
NEAR = 0.02
"""A level within this distance in log KL of a measured point is read from that point: its segment needs no run."""
DIGITS = 4
"""Significant digits of a proposed parameter (a grid configuration's value)."""


def axis(algo: str, params: dict) -> str | None:
    """The parameter a configuration's curve runs over, or None where the curve is not refined."""
    name = AXIS.get(algo)
    return name if name is not None and name in params else None


def _round(x: float) -> float:
    return float(f"{x:.{DIGITS}g}")


def interpolated_param(kl: np.ndarray, par: np.ndarray, level: float) -> float:
    """The parameter at KL ``level`` by linear interpolation over log KL between the measured points
    (``kl``, ``par`` in KL order; ``level`` inside their range), rounded to :data:`DIGITS` digits."""
    return _round(float(np.interp(np.log(level), np.log(kl), par)))


def segments(kl: np.ndarray, levels: np.ndarray) -> dict[int, np.ndarray]:
    """Segment index ``i`` (between points ``i`` and ``i + 1`` of ``kl``, increasing) -> the levels it holds,
    leaving out levels outside the range and those within :data:`NEAR` (log KL) of a point."""
    x = np.log(kl)
    out: dict[int, list] = {}
    for lv in np.log(np.asarray(levels, float)):
        if lv <= x[0] or lv >= x[-1] or np.min(np.abs(x - lv)) < NEAR:
            continue
        i = int(np.searchsorted(x, lv) - 1)
        out.setdefault(i, []).append(lv)
    return {i: np.exp(np.array(v)) for i, v in out.items()}


def propose(curve_points: list[dict], levels: np.ndarray, settled: set) -> list[dict]:
    """The direct runs one curve needs: one per unsettled segment holding levels.

    ``curve_points``: the curve's points (dicts with ``algo``, ``params`` and ``stats`` as in
    :func:`paper_figs.fig_matched.analyse`, ``stats`` row 0 the point estimate); ``levels``: every KL
    level a comparison reads the curve at; ``settled``: the parameter pairs ``(lo, hi)`` of segments
    already settled (a sub-segment of a settled segment is settled too).  Returns one dict per run:
    ``params`` (the configuration's parameters), ``segment`` (the bracketing parameters) and ``level``."""
    pts = sorted(curve_points, key=lambda p: p["stats"]["kl"][0])
    name = axis(pts[0]["algo"], pts[0]["params"])
    if name is None or len(pts) < 2:
        return []
    kl = np.array([p["stats"]["kl"][0] for p in pts])
    par = np.array([p["params"][name] for p in pts], float)
    if np.any(np.diff(kl) <= 0):
        return []  # KL not strictly increasing along the curve: no interpolation to check
    out = []
    for i, lv in segments(kl, levels).items():
        seg = tuple(sorted((par[i], par[i + 1])))
        if any(lo <= seg[0] and seg[1] <= hi for lo, hi in settled):
            continue
        level = float(np.exp(np.median(np.log(lv))))
        p = interpolated_param(kl, par, level)
        if not seg[0] < p < seg[1]:
            continue  # the bracket is narrower than DIGITS can split
        out.append(dict(params={**pts[0]["params"], name: p}, segment=seg, level=level))
    return out


def check(curve_points: list[dict], new: dict) -> dict:
    """The residual of direct run ``new`` (a point) against the curve ``curve_points`` without it, per metric:
    the point residual (direct - interpolated at the run's own KL) and its paired bootstrap interval at
    :data:`CONFIDENCE`; ``ok`` when every interval holds 0 (a metric that is nan on the curve is skipped)."""
    st = new["stats"]
    R = st["kl"].size
    rows = slice(1, None) if R > 1 else slice(None)
    q = (1 - CONFIDENCE) / 2
    res = {}
    for m in METRICS:
        ys = np.array([p["stats"][m] for p in curve_points])  # (points, R)
        if not (np.isfinite(ys).all() and np.isfinite(st[m]).all()):
            continue
        kls = np.array([p["stats"]["kl"] for p in curve_points])
        interp = np.array([mt.metric_at_kl(kls[:, r], ys[:, r], [st["kl"][r]],
                                           bounds=(kls[:, 0].min(), kls[:, 0].max()))[0] for r in range(R)])
        d = st[m] - interp
        dr = d[rows][np.isfinite(d[rows])]
        if dr.size == 0:
            continue
        lo, hi = np.quantile(dr, q), np.quantile(dr, 1 - q)
        res[m] = dict(residual=float(d[0]), lo=float(lo), hi=float(hi), ok=bool(lo <= 0 <= hi))
    return dict(metrics=res, ok=all(v["ok"] for v in res.values()))


def error_at(checks: list[dict], curve_points: list[dict], levels, metric: str) -> np.ndarray:
    """The interpolation error left on one curve at each KL level: the |residual| on ``metric`` of the smallest
    checked segment holding the level (its last check: a run split a failed segment and its halves were checked
    again), 0 where no check holds it (a curve that is not refined) and where the level lies within :data:`NEAR`
    of a measured point (read from that point, as :func:`segments` does).  ``checks``: this curve's checks;
    ``curve_points``: its points (``algo``, ``params``, ``stats``) after the refinement."""
    lv = np.asarray(levels, float)
    out = np.zeros(lv.shape)
    if not curve_points or not checks:
        return out
    name = axis(curve_points[0]["algo"], curve_points[0]["params"])
    if name is None:
        return out
    kl_of = {p["params"][name]: p["stats"]["kl"][0] for p in curve_points}
    width = np.full(lv.shape, np.inf)
    for c in checks:
        if metric not in c["metrics"] or c["segment"][0] not in kl_of or c["segment"][1] not in kl_of:
            continue
        lo, hi = sorted((kl_of[c["segment"][0]], kl_of[c["segment"][1]]))
        w = np.log(hi / lo) if lo > 0 else np.inf
        take = (lv >= lo) & (lv <= hi) & (w < width)
        out[take], width[take] = abs(c["metrics"][metric]["residual"]), w
    x = np.log(np.array(sorted(kl_of.values())))
    near = np.array([np.min(np.abs(x - np.log(v))) < NEAR if v > 0 else False for v in lv], dtype=bool)
    return np.where(near, 0.0, out)


def summary(checks: list[dict]) -> dict:
    """The largest |residual| of each metric over the *leaf* checks (a check is superseded by a later one on the
    same curve whose segment lies inside its own: the run it checked split the segment, and the halves read by a
    comparison were checked again), the number of leaf segments and of those not settled when the rounds ran out."""
    leaves = []
    for i, c in enumerate(checks):  # in round order
        lo, hi = c["segment"]
        if not any(d["curve"] == c["curve"] and lo <= d["segment"][0] and d["segment"][1] <= hi for d in checks[i + 1:]):
            leaves.append(c)
    out = dict(segments=len(leaves), unsettled=sum(not c["ok"] for c in leaves), largest={})
    for m in METRICS:
        v = [abs(c["metrics"][m]["residual"]) for c in leaves if m in c["metrics"]]
        if v:
            worst = max(leaves, key=lambda c: abs(c["metrics"].get(m, {}).get("residual", 0.0)))
            out["largest"][m] = dict(residual=max(v), curve=worst["curve"], params=worst["params"])
    return out
