"""The planner's kernels (sims.plan._kernels) equal the detector's exact ones, and its
HC / Tr-GoF critical values equal the plain bisection on the exact null tail, bit for bit."""

import math

import numpy as np
import pytest

from sims.detect.stats import _score_kernels as SK
from sims.detect.stats import gumbel_scores as gs
from sims.plan import _kernels as PK
from sims.plan import lr as plan_lr
from sims.plan import scores as PS


def _bounds():
    """HC and Tr-GoF boundaries across c (null tails from ~1 down to e^-60), and the same pushed up as a
    watermark pushes them (1 - (1 - b)^3), on n = 1..100."""
    for n in (1, 2, 7, 40, 100):
        for c in (1e-3, 0.5, 3.0, 30.0, 1e4, 1e7):
            for b in (gs.hc_bounds(c, n), gs.trgof_bounds(c, n, gs.TRGOF_S)):
                yield n, b
                yield n, 1.0 - (1.0 - np.minimum(b, 1.0)) ** 3


def test_linear_crossing_equals_the_log_kernel_and_numpy_reference():
    """ln P(crossing) agrees with the log-space kernel and its NumPy twin to 1e-12 (absolute near ln p = 0,
    relative in the tail), on every boundary of _bounds (the slow NumPy twin up to n = 40)."""
    for n, b in _bounds():
        b = np.maximum.accumulate(np.clip(b, 0.0, 1.0))
        got = PK.crossing_logsf(b, gs._lfact(n))
        wants = [SK.crossing_logp(np.ascontiguousarray(b), gs._lfact(n))]
        if n <= 40:
            with np.errstate(divide="ignore"):  # the NumPy twin takes ln(1 - b) of a bound at 1
                wants.append(SK.crossing_logp_reference(b))
        for want in wants:
            assert got == want or abs(got - want) <= 1e-12 * max(1.0, abs(want)), (n, got, want)


def test_linear_crossing_hands_deep_tails_to_the_log_kernel():
    """A tail below e^-600 (HC at c = 1e140 on 3 p-values) is the log kernel's, and is finite."""
    b = gs.hc_bounds(1e140, 3)
    got = PK.crossing_logsf(b, gs._lfact(3))
    assert got < PK.LINEAR_FLOOR and got == float(SK.crossing_logp(np.ascontiguousarray(b), gs._lfact(3)))


def test_trgof_bounds_kernel_equals_numpy():
    for n in (1, 5, 64):
        for s in (1.0, gs.TRGOF_S, 2.0):
            for c in (0.01, 2.0, 40.0, 1e6):
                np.testing.assert_allclose(PK.trgof_bounds_nb(c, n, s), gs.trgof_bounds(c, n, s), rtol=1e-12, atol=0)


def _bisection(kind, n, fpr, s=gs.TRGOF_S):
    """The reference: 32 bisection steps on ln c over [ln 1e-3, ln 1e8] with the detector's exact tail."""
    lo, hi = math.log(1e-3), math.log(1e8)
    for _ in range(32):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if gs.order_stat_logsf(kind, math.exp(mid), n, s) > math.log(fpr) else (lo, mid)
    return math.exp(hi)


@pytest.mark.parametrize("kind", ["hc", "trgof"])
def test_order_critical_is_the_bisection_bit_for_bit(kind):
    for n in (2, 3, 9, 24, 50):
        for fpr in (0.3, 1e-2, 1e-6, 1e-12):
            PS.order_critical.cache_clear()
            assert PS.order_critical(kind, n, fpr) == _bisection(kind, n, fpr), (kind, n, fpr)


def _lr_bisection(counts, gamma, lfpr):
    """The reference: bisection on the exact weighted-Bernoulli tail of the profile."""
    from sims.detect.stats.lr_scores import weighted_bernoulli_logsf

    k = np.repeat(np.arange(counts.size), counts)
    lo, hi = 0, int(k.sum()) + 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if weighted_bernoulli_logsf(k, mid, gamma) > lfpr else (lo, mid)
    return hi


def test_lr_critical_sum_is_the_bisection():
    """Profiles of 0..300 weights on 65 levels (seed 3; one with a single weight, one unreachable level),
    gamma 0.25 / 0.5, fpr 1e-1 .. 1e-12: the same critical sum as the bisection on the exact tail."""
    rng = np.random.default_rng(3)
    profiles = [np.bincount([64], minlength=65), np.bincount([0, 0, 3], minlength=65)]
    profiles += [rng.multinomial(T, rng.dirichlet(np.full(65, 0.3))) for T in (5, 40, 300)]
    for counts in profiles:
        for gamma in (0.25, 0.5):
            for fpr in (1e-1, 1e-4, 1e-6, 1e-12):
                assert plan_lr.lr_critical_sum(counts, gamma, math.log(fpr)) == _lr_bisection(counts, gamma, math.log(fpr)), (counts.sum(), gamma, fpr)
