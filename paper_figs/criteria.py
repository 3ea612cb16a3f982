"""The criteria of the reproduction report: each a named function from a measured value to a
verdict, with its threshold a module constant, so that a test can feed it a case it must reject
and one exactly at its threshold.

Verdicts on a claim: ``reproduced``, ``not reproduced``, ``mixed`` (a matched comparison whose curves
cross: better at some levels, worse at others), ``refuted`` (the measurement contradicts the claim on
the paper's own metric and matching) and ``n/a`` (the measurement cannot decide: too few samples, no
overlap, no data).

Verdicts of one matched comparison (:func:`matched`), from its per-level paired intervals of the
difference, simultaneous over the levels: ``better`` when at least one level is significantly better
and none significantly worse, ``worse`` symmetric, ``mixed`` when both occur, ``tied`` otherwise.
:func:`claim_verdict` and :func:`no_worse` turn the comparisons of one claim into the claim's verdict.
"""

from __future__ import annotations

import math

import numpy as np

REPRODUCED, NOT_REPRODUCED, REFUTED, NA, MIXED = "reproduced", "not reproduced", "refuted", "n/a", "mixed"
BETTER, TIED, WORSE = "better", "tied", "worse"
"""A matched comparison's verdicts, with :data:`MIXED` (:func:`matched`)."""

FRONTIER_TOL = 0.05  # a configuration is on the frontier when its KL is within 5 % of OPT at its DG
SPREAD_RATIO = 0.5  # "concentrated": DualGA's sd at most half of SRL's
TPR_HIGH = 0.95  # the paper's 0.99 / 0.98, less a margin for a 500-text estimate
DISTORTION_RATIO = 2.0  # "distort more": at least twice the KL
FPR_LEVEL, FPR_ALPHA, FPR_POWER, FPR_RESOLUTION = 1e-4, 0.05, 0.8, 10.0  # binomial test; n must reveal 10 x the level
MEDIAN_P_LEVEL = -4.0  # log10 of the paper's 1e-4 line
Z_LEVEL = 1.645  # one-sided 5 % (the paper's "FPR < 5 %")
Z_LOST = 1.645  # "undetectable": the median z below the 5 % line
LAMBDA_RISE = 1.5  # "spikes": mean lambda on repeated tokens 1.5 x elsewhere
KL_STABLE = 1.25  # "stable, close to optimal": KL within 25 % of the hindsight optimum
SRL_LIKE = 0.1  # "similar to SRL": KL within 10 % of SRL's at the same boost
SUBOPTIMAL = 1.1  # "noticeably suboptimal": KL at least 10 % above the hindsight optimum at the same DG
MOST = 0.5  # "most": more than half
RANK_AGREE = 0.7  # rank correlation for "the same ordering"
TPR_CLOSE, TPR_CLOSE_SHARE = 0.1, 0.75  # a TPR "matches" within 0.1; three quarters of the cells must
TPR_CONSISTENT = 0.1  # "largely consistent across LMs": mean |TPR difference| at most 0.1
OVERHEAD = 20.0  # per cent
REGRET_SLOPE = -0.4  # upper end of the CI of the log-log regret slope
GREEN_RATIO = 1.5  # "a much larger proportion of green words"
LAM1_ADVICE = (0.5, 2.0)  # "lambda_1 about 10 Delta": within a factor 2
ETA_RANGE = (0.1, 2.0)  # the paper's tuned step sizes
DG_SLACK = 0.01  # "meets the constraint": realised DG at least Delta - 0.01
CLEAR = 0.5  # a difference of median log10 p counts (without an interval) only beyond half a decade
ZTEST_INFLATION = 2.0  # "significantly exceed": the z-test's true size at least twice its nominal level
SIMILAR = 1.0  # "a similar trade-off": every interval of the median log10 p difference within one decade of 0


def _ok(cond: bool, refuted: bool = False) -> str:
    return REPRODUCED if cond else (REFUTED if refuted else NOT_REPRODUCED)


def _finite(v) -> bool:
    return v is not None and isinstance(v, (int, float)) and math.isfinite(v)


def on_frontier(gap: float) -> str:
    """DualGA's largest relative KL excess over the hindsight frontier is at most :data:`FRONTIER_TOL`.

    Parameters
    ----------
    gap : float
        DualGA's largest relative KL excess over the hindsight frontier; None or not finite when it could not be measured.

    Returns
    -------
    str
        :data:`REPRODUCED` or :data:`NOT_REPRODUCED`; :data:`NA` when ``gap`` is not a finite number.
    """
    return _ok(gap <= FRONTIER_TOL) if _finite(gap) else NA


def at_least_one(count: float) -> str:
    """At least one instance (e.g. an SRL configuration on one LM's frontier but not the other's).

    Parameters
    ----------
    count : float
        The number of instances; None or not finite when it could not be measured.

    Returns
    -------
    str
        :data:`REPRODUCED` or :data:`NOT_REPRODUCED`; :data:`NA` when ``count`` is not a finite number.
    """
    return _ok(count >= 1) if _finite(count) else NA


def concentrated(ratio: float) -> str:
    """DualGA's spread over SRL's at most :data:`SPREAD_RATIO`; refuted when DualGA spreads more (>= 1).

    Parameters
    ----------
    ratio : float
        DualGA's spread (standard deviation) over SRL's; None or not finite when it could not be measured.

    Returns
    -------
    str
        :data:`REPRODUCED`, :data:`REFUTED` or :data:`NOT_REPRODUCED`; :data:`NA` when ``ratio`` is not a finite number.
    """
    return _ok(ratio <= SPREAD_RATIO, refuted=ratio >= 1) if _finite(ratio) else NA


def less_dispersed(ratio: float) -> str:
    """DualGA's spread over SRL's below 1.

    Parameters
    ----------
    ratio : float
        DualGA's spread over SRL's; None or not finite when it could not be measured.

    Returns
    -------
    str
        :data:`REPRODUCED` or :data:`NOT_REPRODUCED`; :data:`NA` when ``ratio`` is not a finite number.
    """
    return _ok(ratio < 1) if _finite(ratio) else NA


def tpr_high(tpr: float) -> str:
    """TPR at least :data:`TPR_HIGH`.

    Parameters
    ----------
    tpr : float
        A true-positive rate; None or not finite when it could not be measured.

    Returns
    -------
    str
        :data:`REPRODUCED` or :data:`NOT_REPRODUCED`; :data:`NA` when ``tpr`` is not a finite number.
    """
    return _ok(tpr >= TPR_HIGH) if _finite(tpr) else NA


def distorts_more(ratio: float) -> str:
    """The distortion-free schemes' KL over DualGA's at least :data:`DISTORTION_RATIO` on ONE LM; refuted below 1.

    Parameters
    ----------
    ratio : float
        The distortion-free schemes' KL over DualGA's; None or not finite when it could not be measured.

    Returns
    -------
    str
        :data:`REPRODUCED`, :data:`REFUTED` or :data:`NOT_REPRODUCED`; :data:`NA` when ``ratio`` is not a finite number.
    """
    return _ok(ratio >= DISTORTION_RATIO, refuted=ratio < 1) if _finite(ratio) else NA


def binom_sf(k: int, n: int, p: float) -> float:
    """P(Bin(n, p) >= k), exact (scipy's regularised incomplete beta).

    Parameters
    ----------
    k : int
        The count, >= 0 (1.0 for k <= 0).
    n : int
        Trials, >= 0.
    p : float
        Success probability in [0, 1].

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If an argument is out of range.
    """
    from scipy.stats import binom

    if not (k >= 0 and n >= 0 and 0 <= p <= 1):
        raise ValueError(f"need k >= 0, n >= 0, p in [0, 1]; got k={k}, n={n}, p={p}")
    return 1.0 if k <= 0 else float(binom.sf(k - 1, n, p))


def fpr_test(tests: list[tuple[int, int]], level: float = FPR_LEVEL, alpha: float = FPR_ALPHA) -> dict:
    """Exact one-sided binomial test of "every detector's FPR <= level" from ``tests``.

    One ``(rejections, nulls)`` per distinct detector on independent null texts (a null sample that several
    cells share, scored by the same detector, is ONE test counted once).  Bonferroni over the tests, so the
    family holds at ``alpha`` under any dependence between them.

    Parameters
    ----------
    tests : list of (int, int)
        ``(rejections, nulls)`` per detector, 0 <= rejections <= nulls, nulls >= 1.
    level : float, optional
        The FPR claimed (default :data:`FPR_LEVEL`).
    alpha : float, optional
        The test's level (default :data:`FPR_ALPHA`).

    Returns
    -------
    dict
        ``tests``, ``rejections`` (in all), ``p_adjusted`` (the smallest Bonferroni-adjusted p-value),
        ``n_min`` (the smallest test's nulls), ``k_star`` (its rejection threshold), ``detectable`` (the FPR
        that test would reveal with power :data:`FPR_POWER`), ``n_needed`` (the nulls per detector needed to
        reveal :data:`FPR_RESOLUTION` x ``level``), ``level``, ``alpha``.

    Raises
    ------
    ValueError
        If ``tests`` is empty or holds an invalid pair.
    """
    from scipy.stats import binom

    if not tests or any(k < 0 or n < 1 or k > n for k, n in tests):
        raise ValueError(f"tests must be (rejections, nulls) pairs with 0 <= rejections <= nulls, nulls >= 1; got {tests}")
    m = len(tests)
    p_adj = min(1.0, m * min(binom_sf(k, n, level) for k, n in tests))

    def k_star(n):
        return int(binom.isf(alpha / m, n, level)) + 1  # least k with m P(X >= k) <= alpha

    def detectable(n):
        ks = k_star(n)
        lo, hi = level, 1.0
        for _ in range(60):
            mid = math.sqrt(lo * hi)
            lo, hi = (mid, hi) if binom_sf(ks, n, mid) < FPR_POWER else (lo, mid)
        return hi

    n_min = min(n for _, n in tests)
    n_needed = n_min
    while detectable(n_needed) > FPR_RESOLUTION * level and n_needed < 10**9:
        n_needed *= 2
    return dict(tests=m, rejections=sum(k for k, _ in tests), p_adjusted=p_adj, n_min=n_min, k_star=k_star(n_min),
                detectable=detectable(n_min), n_needed=n_needed, level=level, alpha=alpha)


def fpr_kept(res: dict) -> str:
    """:func:`fpr_test`'s verdict.

    Refuted when the Bonferroni-adjusted p-value is <= alpha; n/a when the smallest test could not reveal an
    FPR of :data:`FPR_RESOLUTION` x the level with power :data:`FPR_POWER` (too few nulls to say anything
    about the level); else reproduced.

    Parameters
    ----------
    res : dict
        The result of :func:`fpr_test`.

    Returns
    -------
    str
        :data:`REFUTED`, :data:`NA` or :data:`REPRODUCED`.
    """
    if res["p_adjusted"] <= res["alpha"]:
        return REFUTED
    return NA if res["detectable"] > FPR_RESOLUTION * res["level"] else REPRODUCED


def median_p_below(median_log10_p: float) -> str:
    """Median log10 p at most :data:`MEDIAN_P_LEVEL` (p <= 1e-4).

    Parameters
    ----------
    median_log10_p : float
        The median log10 p-value; None or not finite when it could not be measured.

    Returns
    -------
    str
        :data:`REPRODUCED` or :data:`NOT_REPRODUCED`; :data:`NA` when ``median_log10_p`` is not a finite number.
    """
    return _ok(median_log10_p <= MEDIAN_P_LEVEL) if _finite(median_log10_p) else NA


def most(share: float) -> str:
    """A share above :data:`MOST` ("most methods").

    Parameters
    ----------
    share : float
        The share of instances that hold; None or not finite when it could not be measured.

    Returns
    -------
    str
        :data:`REPRODUCED` or :data:`NOT_REPRODUCED`; :data:`NA` when ``share`` is not a finite number.
    """
    return _ok(share > MOST) if _finite(share) else NA


def all_of(share: float) -> str:
    """Every instance (share 1); refuted when none holds.

    Parameters
    ----------
    share : float
        The share of instances that hold; None or not finite when it could not be measured.

    Returns
    -------
    str
        :data:`REPRODUCED`, :data:`REFUTED` or :data:`NOT_REPRODUCED`; :data:`NA` when ``share`` is not a finite number.
    """
    return _ok(share >= 1, refuted=share <= 0) if _finite(share) else NA


def negative_rank(rho: float) -> str:
    """A rank correlation at most -0.5 (e.g. more KL, smaller p); refuted when positive.

    Parameters
    ----------
    rho : float
        A rank correlation; None or not finite when it could not be measured.

    Returns
    -------
    str
        :data:`REPRODUCED`, :data:`REFUTED` or :data:`NOT_REPRODUCED`; :data:`NA` when ``rho`` is not a finite number.
    """
    return _ok(rho <= -0.5, refuted=rho > 0) if _finite(rho) else NA


def positive(x: float) -> str:
    """Strictly positive; refuted when negative.

    Parameters
    ----------
    x : float
        The measured value; None or not finite when it could not be measured.

    Returns
    -------
    str
        :data:`REPRODUCED`, :data:`REFUTED` or :data:`NOT_REPRODUCED`; :data:`NA` when ``x`` is not a finite number.
    """
    return _ok(x > 0, refuted=x < 0) if _finite(x) else NA


def z_detectable(z: float) -> str:
    """Median z at least :data:`Z_LEVEL` (one-sided 5 %).

    Parameters
    ----------
    z : float
        The median z-score; None or not finite when it could not be measured.

    Returns
    -------
    str
        :data:`REPRODUCED` or :data:`NOT_REPRODUCED`; :data:`NA` when ``z`` is not a finite number.
    """
    return _ok(z >= Z_LEVEL) if _finite(z) else NA


def z_lost(z: float) -> str:
    """Median z below :data:`Z_LOST`: no longer detected at 5 %.

    Parameters
    ----------
    z : float
        The median z-score after the attack; None or not finite when it could not be measured.

    Returns
    -------
    str
        :data:`REPRODUCED` or :data:`NOT_REPRODUCED`; :data:`NA` when ``z`` is not a finite number.
    """
    return _ok(z < Z_LOST) if _finite(z) else NA


def lambda_rises(ratio: float) -> str:
    """Mean lambda on repeated tokens over elsewhere at least :data:`LAMBDA_RISE`; refuted at or below 1.

    Parameters
    ----------
    ratio : float
        Mean lambda on repeated tokens over its mean elsewhere; None or not finite when it could not be measured.

    Returns
    -------
    str
        :data:`REPRODUCED`, :data:`REFUTED` or :data:`NOT_REPRODUCED`; :data:`NA` when ``ratio`` is not a finite number.
    """
    return _ok(ratio >= LAMBDA_RISE, refuted=ratio <= 1) if _finite(ratio) else NA


def kl_stable(ratio: float) -> str:
    """A KL ratio (max / min over a set of settings, or KL over the hindsight optimum) at most :data:`KL_STABLE`.

    Parameters
    ----------
    ratio : float
        The KL ratio; None or not finite when it could not be measured.

    Returns
    -------
    str
        :data:`REPRODUCED` or :data:`NOT_REPRODUCED`; :data:`NA` when ``ratio`` is not a finite number.
    """
    return _ok(ratio <= KL_STABLE) if _finite(ratio) else NA


def srl_like(rel: float) -> str:
    """Largest |KL / KL of SRL - 1| at most :data:`SRL_LIKE`.

    Parameters
    ----------
    rel : float
        The largest relative KL difference from SRL's; None or not finite when it could not be measured.

    Returns
    -------
    str
        :data:`REPRODUCED` or :data:`NOT_REPRODUCED`; :data:`NA` when ``rel`` is not a finite number.
    """
    return _ok(rel <= SRL_LIKE) if _finite(rel) else NA


def suboptimal(ratio: float) -> str:
    """The extreme settings' least KL over the reasonable block's median KL at least :data:`SUBOPTIMAL`.

    Parameters
    ----------
    ratio : float
        The extreme settings' least KL over the reasonable block's median KL; None or not finite when it could not be measured.

    Returns
    -------
    str
        :data:`REPRODUCED` or :data:`NOT_REPRODUCED`; :data:`NA` when ``ratio`` is not a finite number.
    """
    return _ok(ratio >= SUBOPTIMAL) if _finite(ratio) else NA


def rank_agrees(rho: float) -> str:
    """Rank correlation at least :data:`RANK_AGREE`.

    Parameters
    ----------
    rho : float
        A rank correlation; None or not finite when it could not be measured.

    Returns
    -------
    str
        :data:`REPRODUCED` or :data:`NOT_REPRODUCED`; :data:`NA` when ``rho`` is not a finite number.
    """
    return _ok(rho >= RANK_AGREE) if _finite(rho) else NA


def tprs_match(share: float) -> str:
    """Share of TPR cells within :data:`TPR_CLOSE` of the paper's at least :data:`TPR_CLOSE_SHARE`.

    Parameters
    ----------
    share : float
        The share of TPR cells within :data:`TPR_CLOSE` of the paper's; None or not finite when it could not be measured.

    Returns
    -------
    str
        :data:`REPRODUCED` or :data:`NOT_REPRODUCED`; :data:`NA` when ``share`` is not a finite number.
    """
    return _ok(share >= TPR_CLOSE_SHARE) if _finite(share) else NA


def consistent(mean_abs_diff: float) -> str:
    """Mean |TPR difference| between two LMs at most :data:`TPR_CONSISTENT`.

    Parameters
    ----------
    mean_abs_diff : float
        Mean absolute TPR difference between two LMs; None or not finite when it could not be measured.

    Returns
    -------
    str
        :data:`REPRODUCED` or :data:`NOT_REPRODUCED`; :data:`NA` when ``mean_abs_diff`` is not a finite number.
    """
    return _ok(mean_abs_diff <= TPR_CONSISTENT) if _finite(mean_abs_diff) else NA


def overhead_small(pct: float) -> str:
    """Runtime overhead at most :data:`OVERHEAD` per cent.

    Parameters
    ----------
    pct : float
        Runtime overhead in per cent; None or not finite when it could not be measured.

    Returns
    -------
    str
        :data:`REPRODUCED` or :data:`NOT_REPRODUCED`; :data:`NA` when ``pct`` is not a finite number.
    """
    return _ok(pct <= OVERHEAD) if _finite(pct) else NA


def regret_rate(slope_hi: float) -> str:
    """Upper end of the CI of the log-log regret slope at most :data:`REGRET_SLOPE`; refuted above 0.

    Parameters
    ----------
    slope_hi : float
        Upper end of the confidence interval of the log-log regret slope; None or not finite when it could not be measured.

    Returns
    -------
    str
        :data:`REPRODUCED`, :data:`REFUTED` or :data:`NOT_REPRODUCED`; :data:`NA` when ``slope_hi`` is not a finite number.
    """
    return _ok(slope_hi <= REGRET_SLOPE, refuted=slope_hi > 0) if _finite(slope_hi) else NA


def greener(ratio: float) -> str:
    """Green share of the watermarked text over the unwatermarked one at least :data:`GREEN_RATIO`.

    Parameters
    ----------
    ratio : float
        Green share of the watermarked text over the unwatermarked one's; None or not finite when it could not be measured.

    Returns
    -------
    str
        :data:`REPRODUCED` or :data:`NOT_REPRODUCED`; :data:`NA` when ``ratio`` is not a finite number.
    """
    return _ok(ratio >= GREEN_RATIO) if _finite(ratio) else NA


def within(x: float, lo: float, hi: float) -> str:
    """``lo <= x <= hi``.

    Parameters
    ----------
    x : float
        The measured value.
    lo, hi : float
        The bounds.

    Returns
    -------
    str
        :data:`REPRODUCED` or :data:`NOT_REPRODUCED`; :data:`NA` when ``x`` is not a finite number.
    """
    return _ok(lo <= x <= hi) if _finite(x) else NA


def matched(lo, hi, margin=0.0) -> str:
    """The verdict of one matched comparison from its per-level intervals ``[lo, hi]`` of the difference ``a - b``.

    A positive difference means ``a`` is better; the intervals are simultaneous over the levels: ``better``
    when some level's interval lies above its ``margin`` (``lo > margin``) and none below ``-margin``,
    ``worse`` when some lies below (``hi < -margin``) and none above, ``mixed`` when both occur (the curves
    cross), else ``tied``; a level whose interval is nan (no interval) counts as tied.

    Parameters
    ----------
    lo, hi : array_like of float
        The intervals' ends per level, of one shape.
    margin : float or array_like of float, optional
        What the interval cannot see, >= 0 (one number, or one per level): the metric's resolution (for a TPR
        over n texts, 1 / n: a difference of less than one text is no difference a sample can show) plus the
        interpolation error the refinement left at that level on each curve
        (:func:`paper_figs._refine.error_at`): a difference smaller than what drawing the curves between
        measured points can make is not counted.

    Returns
    -------
    str
        :data:`BETTER`, :data:`WORSE`, :data:`MIXED` or :data:`TIED`.

    Raises
    ------
    ValueError
        If ``lo`` and ``hi`` differ in shape or a margin is negative.
    """
    lo, hi = np.asarray(lo, float), np.asarray(hi, float)
    if lo.shape != hi.shape:
        raise ValueError(f"lo and hi must have one shape; got {lo.shape} and {hi.shape}")
    m = np.broadcast_to(np.asarray(margin, float), lo.shape)
    if not np.all(m >= 0):
        raise ValueError(f"margin must be in [0, inf); got {margin!r}")
    up, down = bool(np.any(lo > m)), bool(np.any(hi < -m))
    return MIXED if up and down else BETTER if up else WORSE if down else TIED


def _against(verdicts: dict[str, str], own: bool, shown) -> str:
    """The shared rule of :func:`claim_verdict` and :func:`no_worse`: n/a without a live comparison; a worse one
    refutes on the paper's own metric and matching (``own``), else is not reproduced; a mixed one (and none worse)
    is mixed; otherwise reproduced when ``shown(set of live verdicts)``, else not reproduced."""
    vals = {v for v in verdicts.values() if v != NA}
    if not vals:
        return NA
    if WORSE in vals:
        return REFUTED if own else NOT_REPRODUCED
    if MIXED in vals:
        return MIXED
    return REPRODUCED if shown(vals) else NOT_REPRODUCED


def claim_verdict(verdicts: dict[str, str], *, own: bool) -> str:
    """A claim "DualGA is better than each comparator" from the matched verdicts per comparator.

    ``reproduced`` when DualGA is ``better`` than every comparator sharing a range; ``refuted`` when it
    is ``worse`` than one and ``own`` (the row measures the paper's own metric with the paper's own
    matching: only there does a worse comparison contradict the claim); ``not reproduced`` for a
    ``worse`` on a stronger question than the paper's (``own`` false); ``mixed`` when a comparison is
    mixed and none worse (the curves cross: never counted as worse); ``not reproduced`` when the rest
    are ties (no difference shown at this n); ``n/a`` when no comparator shares a range.

    Parameters
    ----------
    verdicts : dict of str to str
        Comparator -> :func:`matched` verdict (``better`` / ``tied`` / ``worse`` / ``mixed``) or n/a.
    own : bool
        Whether the row measures the paper's own metric with the paper's own matching.

    Returns
    -------
    str
        The claim's verdict.
    """
    return _against(verdicts, own, lambda vals: vals == {BETTER})


def no_worse(verdicts: dict[str, str], *, own: bool) -> str:
    """A claim "DualGA is at least as good as each comparator and better than some".

    The paper's Pareto claim against SRL: on the frontier, which SRL reaches only where delta and gamma are
    aligned.  ``reproduced`` when no comparison is ``worse`` or ``mixed`` and at least one is ``better``;
    ``refuted`` (``own``) or ``not reproduced`` when one is ``worse``; ``mixed`` when one is mixed and none
    worse; ``not reproduced`` when all tie; ``n/a`` without a common range.

    Parameters
    ----------
    verdicts : dict of str to str
        Comparator -> :func:`matched` verdict or n/a.
    own : bool
        Whether the row measures the paper's own metric with the paper's own matching.

    Returns
    -------
    str
        The claim's verdict.
    """
    return _against(verdicts, own, lambda vals: BETTER in vals)


def worse_than(verdict: str) -> str:
    """A matched verdict of the first curve against the second read as "the first is worse".

    Parameters
    ----------
    verdict : str
        A :func:`matched` verdict, or anything else (no overlap).

    Returns
    -------
    str
        Reproduced for ``worse``, refuted for ``better``, not reproduced for tied, mixed for mixed, n/a
        otherwise.
    """
    return {WORSE: REPRODUCED, BETTER: REFUTED, TIED: NOT_REPRODUCED, MIXED: MIXED}.get(verdict, NA)


def better_than(verdict: str) -> str:
    """As :func:`worse_than`, for "the first is better".

    Parameters
    ----------
    verdict : str
        A :func:`matched` verdict, or anything else (no overlap).

    Returns
    -------
    str
        Reproduced for ``better``, refuted for ``worse``, not reproduced for tied, mixed for mixed, n/a
        otherwise.
    """
    return {BETTER: REPRODUCED, WORSE: REFUTED, TIED: NOT_REPRODUCED, MIXED: MIXED}.get(verdict, NA)


def similar(v: dict) -> str:
    """"A similar trade-off" from a matched comparison.

    Reproduced when tied AND every interval lies within +-:data:`SIMILAR` (equivalence, not just no detected
    difference); n/a when tied with a wider interval (too few texts to tell) or without overlap; not
    reproduced when better / worse / mixed.

    Parameters
    ----------
    v : dict or None
        ``{"verdict", "bound"}``: the :func:`matched` verdict and the largest |end| of its per-level
        intervals of the difference.

    Returns
    -------
    str
        :data:`REPRODUCED`, :data:`NOT_REPRODUCED` or :data:`NA`.
    """
    verdict = v.get("verdict") if v else None
    if verdict in ("better", "worse", "mixed"):
        return NOT_REPRODUCED
    if verdict != "tied" or not _finite(v.get("bound")):
        return NA
    return REPRODUCED if v["bound"] <= SIMILAR else NA


def spearman(x, y) -> float:
    """Spearman's rank correlation (average ranks for ties); nan for fewer than 3 pairs.

    Parameters
    ----------
    x, y : array_like of float
        Paired values.

    Returns
    -------
    float
    """
    x, y = np.asarray(x, float), np.asarray(y, float)
    if x.size < 3:
        return float("nan")
    from scipy.stats import rankdata

    rx, ry = rankdata(x), rankdata(y)
    return float(np.corrcoef(rx, ry)[0, 1])


def inflated(ratio: float) -> str:
    """A test's true size over its nominal level at least :data:`ZTEST_INFLATION`; refuted at or below 1 (the level holds).

    Parameters
    ----------
    ratio : float
        The test's true size over its nominal level; None or not finite when it could not be measured.

    Returns
    -------
    str
        :data:`REPRODUCED`, :data:`REFUTED` or :data:`NOT_REPRODUCED`; :data:`NA` when ``ratio`` is not a finite number.
    """
    return _ok(ratio >= ZTEST_INFLATION, refuted=ratio <= 1) if _finite(ratio) else NA


def off_frontier(gap: float) -> str:
    """A configuration's relative KL excess over the frontier above :data:`FRONTIER_TOL`.

    Parameters
    ----------
    gap : float
        The configuration's relative KL excess over the frontier; None or not finite when it could not be measured.

    Returns
    -------
    str
        :data:`REPRODUCED` or :data:`NOT_REPRODUCED`; :data:`NA` when ``gap`` is not a finite number.
    """
    return _ok(gap > FRONTIER_TOL) if _finite(gap) else NA


def no_more_than(diff: float) -> str:
    """At most 0 (e.g. DualGA's overhead minus the median of the others').

    Parameters
    ----------
    diff : float
        The difference; None or not finite when it could not be measured.

    Returns
    -------
    str
        :data:`REPRODUCED` or :data:`NOT_REPRODUCED`; :data:`NA` when ``diff`` is not a finite number.
    """
    return _ok(diff <= 0) if _finite(diff) else NA


def clear_sign(diff: float) -> str:
    """A difference of median log10 p read without an interval.

    Reproduced above +:data:`CLEAR`, refuted below -:data:`CLEAR`, not reproduced in between (no clear difference).

    Parameters
    ----------
    diff : float
        A difference of median log10 p-values; None or not finite when it could not be measured.

    Returns
    -------
    str
        :data:`REPRODUCED`, :data:`REFUTED` or :data:`NOT_REPRODUCED`; :data:`NA` when ``diff`` is not a finite number.
    """
    return _ok(diff > CLEAR, refuted=diff < -CLEAR) if _finite(diff) else NA


def correlated(v: dict) -> str:
    """Per-text correlations, all significantly positive.

    Reproduced when even the least is above the line (all significantly positive, about 5 %), refuted when it
    is below minus the line (one significantly negative), not reproduced in between.

    Parameters
    ----------
    v : dict or None
        ``{"min": least r, "line": 2 / sqrt(n)}``.

    Returns
    -------
    str
        :data:`REPRODUCED`, :data:`REFUTED` or :data:`NOT_REPRODUCED`; :data:`NA` when either is missing or
        not finite.
    """
    if not v or not _finite(v.get("min")) or not _finite(v.get("line")):
        return NA
    return _ok(v["min"] > v["line"], refuted=v["min"] < -v["line"])


def meets_target(gap: float) -> str:
    """Least (realised DG - Delta) at least -:data:`DG_SLACK`.

    Parameters
    ----------
    gap : float
        The least realised DG minus Delta; None or not finite when it could not be measured.

    Returns
    -------
    str
        :data:`REPRODUCED` or :data:`NOT_REPRODUCED`; :data:`NA` when ``gap`` is not a finite number.
    """
    return _ok(gap >= -DG_SLACK) if _finite(gap) else NA
