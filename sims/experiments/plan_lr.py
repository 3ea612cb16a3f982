r"""The planner's power of the likelihood-ratio score ``lr`` from its per-position laws, in NumPy only.

The method (a representative weight profile, its exact critical sum, the tilted linearisation and the
central limit theorem) is described in :mod:`sims.experiments.plan_scores`, which builds the laws
(:func:`~sims.experiments.plan_scores.lr_position_laws`) and computes the exact critical sums
(:func:`~sims.experiments.plan_scores.lr_critical_sum`, Numba).  This module holds the part a query
runs every time, so that a query whose laws and critical sums come from the planner's disk cache
(:mod:`sims.experiments.plan_cache`) loads neither Numba nor scipy: :func:`lr_power_function` takes
the critical sums known so far and imports the Numba code only for a length it has not met.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import numpy as np

from sims.core import defaults

LR_TEXTS = 16  # texts of the LM sample for the LR score (full next-token distributions per position)
LR_T0 = 128  # tokens per text
LR_SEED = 20240601


def _ndtr(z: np.ndarray) -> np.ndarray:
    """The standard normal cdf, :math:`\\mathrm{erfc}(-z/\\sqrt2)/2` (full relative precision in the lower tail)."""
    return np.array([0.5 * math.erfc(-float(x) / math.sqrt(2.0)) for x in np.ravel(z)])


def lr_power_function(laws: np.ndarray, gamma: float, fpr: float, rate: float = 0.0, h: int = defaults.H,
                      sums: dict[int, int] | None = None, on_new: Callable[[dict[int, int]], None] | None = None):
    """``power_at(T)`` of the LR test (:mod:`sims.experiments.plan_scores`' docstring) from
    :func:`~sims.experiments.plan_scores.lr_position_laws`; a substitution at ``rate`` keeps a token's law
    with probability :math:`(1-\\rho)^{h+1}` and makes it a uniform token's (green with probability gamma,
    its weight law unchanged) otherwise.

    ``sums``: the exact critical sums s*(T) already known at this level (T -> s*; filled in place);
    ``on_new(sums)`` is called after a new one is computed (the planner writes them to its disk cache)."""
    n, T0, _, L1 = laws.shape
    sums = {} if sums is None else sums
    m = laws.sum(axis=2)  # (n, T0, L+1) weight laws
    keep = (1.0 - rate) ** (h + 1)
    a1 = keep * laws[:, :, 1] + (1 - keep) * gamma * m  # green mass per weight
    ks = np.arange(L1, dtype=np.float64)
    cm, ca1 = np.cumsum(m, axis=1), np.cumsum(a1, axis=1)
    a1k = a1 @ ks  # (n, T0) mean green weight per position
    lfpr, lg = math.log(fpr), math.log(gamma) - math.log1p(-gamma)

    @functools.lru_cache(maxsize=512)
    def critical(T: int) -> tuple[float, float]:
        """(theta*, threshold) of the representative profile at length T: the exact critical sum s* of the
        pooled expected weight counts (:func:`sims.detect.lr_scores.weighted_bernoulli_logsf`), the tilt
        that puts the mean at s*, and the tilted log tail there, theta* s* - K(theta*)."""
        r, rem = divmod(int(T), T0)
        counts = np.rint((r * cm[:, -1] + (cm[:, rem - 1] if rem else 0.0)).mean(axis=0)).astype(np.int64)
        if T not in sums:
            from sims.experiments.plan_scores import lr_critical_sum

            sums[T] = lr_critical_sum(counts, gamma, lfpr)
            if on_new is not None:
                on_new(sums)
        hi = sums[T]
        a, b = -12.0, math.log(50.0)
        for _ in range(50):
            th = math.exp(0.5 * (a + b))
            a, b = (0.5 * (a + b), b) if float((counts * ks / (1.0 + np.exp(-(lg + th * ks)))).sum()) < hi else (a, 0.5 * (a + b))
        th = math.exp(0.5 * (a + b))
        return th, th * hi - float((counts * np.logaddexp(math.log1p(-gamma), math.log(gamma) + th * ks)).sum())

    def power_at(T: int) -> float:
        r, rem = divmod(int(T), T0)
        hist = r * cm[:, -1] + (cm[:, rem - 1] if rem else 0.0)  # (n, L+1): expected count of each weight
        g1 = r * ca1[:, -1] + (ca1[:, rem - 1] if rem else 0.0)
        th, thr = critical(int(T))
        kap = np.logaddexp(math.log1p(-gamma), math.log(gamma) + th * ks)  # (L+1,)
        mean = th * (g1 @ ks) - hist @ kap
        # variance: sum over positions of Var(D_t), D_t = th k X - kap(k): E D^2 from histograms, (E D_t)^2 per position
        ed2 = g1 @ (th * ks - kap) ** 2 + (hist - g1) @ kap**2
        per = th * a1k - m @ kap  # (n, T0) E D_t
        sq = np.cumsum(per**2, axis=1)
        var = np.maximum(ed2 - (r * sq[:, -1] + (sq[:, rem - 1] if rem else 0.0)), 1e-300)
        return float(np.mean(_ndtr((mean - thr) / np.sqrt(var))))

    return power_at
