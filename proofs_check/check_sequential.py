r"""Expected tokens to detection of the anytime-valid red-green test (:mod:`theory.sequential`).

Colours are simulated i.i.d. Bernoulli(gamma + Delta) (the proposition's model: per-token green
probability gamma + DG), the e-process of :mod:`sims.detect.anytime.sequential` is run on them at
alpha = 1e-4, and the mean stopping time over R texts (2,000; ``--quick``: 400) is compared
with

1. the proved upper bound :math:`(\ln(1/\alpha) + \ln J + u_j) / r_j` (best grid bet): the
   sample mean must not be significantly above it (one-sided z-test on the mean, level 1e-3;
   the stopping time has all moments, R >= 400);
2. Wald's lower bound :math:`\ln(1/\alpha) / \mathrm{KL}(\mathrm{Ber}(\gamma+\Delta) \| \mathrm{Ber}(\gamma))`:
   not significantly below it (same test).

Settings: gamma = 0.25 (SRL) with Delta in {0.1, 0.2, 0.3}, and DualGA's gamma*(Delta)
(:func:`theory.gamma_star`) with Delta in {0.2, 0.3}.  Each text runs for 8x the upper
bound, so no stopping time is censored (checked).
"""

from __future__ import annotations

import math

import numpy as np

import theory
from proofs_check._check import Check
from sims.detect.anytime import sequential
from theory.sequential import stopping_time_bounds

RESULT = "anytime test: E[tau] bounds"
ALPHA = 1e-4
Z = 3.09  # one-sided normal quantile at level 1e-3


def stopping_times(gamma: float, Delta: float, R: int, rng, alpha: float = ALPHA) -> np.ndarray:
    """First crossing of the redgreen e-process on R texts of i.i.d. Bernoulli(gamma + Delta) colours.

    Parameters
    ----------
    gamma : float
        The null green probability.
    Delta : float
        The green excess of the texts.
    R : int
        Texts.
    rng : numpy.random.Generator
        The colours' generator.
    alpha : float, optional
        The level (default ``ALPHA``).

    Returns
    -------
    numpy.ndarray
        (R,) stopping times (1-based), nan where a text never crosses within 8x the upper bound of
        :func:`theory.sequential.stopping_time_bounds`.
    """
    T = int(8 * stopping_time_bounds(Delta, gamma, alpha)["upper"]) + 10
    thr = sequential.linear_thresholds(sequential.bernoulli_mixture(gamma), T, alpha)[1:]
    k = np.cumsum(rng.random((R, T)) < gamma + Delta, axis=1)
    hit = k >= thr
    return np.where(hit.any(axis=1), hit.argmax(axis=1) + 1.0, np.nan)


def run(quick: bool, rng) -> list[Check]:
    """Mean simulated stopping time against the upper and lower bounds, per (gamma, Delta).

    Parameters
    ----------
    quick : bool
        ``--quick``: 400 simulated texts per (gamma, Delta) instead of 2000.
    rng : numpy.random.Generator
        The module's generator, seeded ``[seed, crc32(module name)]`` by ``python -m proofs_check``.

    Returns
    -------
    list of proofs_check._check.Check
        One row of the report per quantity checked: measured against claimed at the stated tolerance.
    """
    R = 400 if quick else 2000
    settings = [(0.25, d) for d in (0.1, 0.2, 0.3)] + [(theory.gamma_star(d), d) for d in (0.2, 0.3)]
    out = []
    for gamma, Delta in settings:
        tau = stopping_times(gamma, Delta, R, rng)
        b = stopping_time_bounds(Delta, gamma, ALPHA)
        censored = int(np.isnan(tau).sum())
        m, se = float(np.nanmean(tau)), float(np.nanstd(tau, ddof=1) / math.sqrt(R))
        what = f"gamma={gamma:.3f}, Delta={Delta}"
        just = f"R={R} texts of i.i.d. Bernoulli(gamma+Delta) colours, alpha={ALPHA:g}, mean {m:.1f} +- {se:.1f} (s.e.), censored {censored}"
        out.append(Check(RESULT, f"mean tau / upper bound, {what}", m / b["upper"], "<= 1", f"z-test on the mean, level 1e-3 (+{Z} s.e.)",
                         censored == 0 and m - Z * se <= b["upper"], just))
        out.append(Check(RESULT, f"mean tau / Wald lower bound ln(1/alpha)/KL, {what}", m / b["lower"], ">= 1",
                         f"z-test on the mean, level 1e-3 (-{Z} s.e.)", m + Z * se >= b["lower"], just))
    return out
