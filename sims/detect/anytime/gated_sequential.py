"""SWEET's anytime-valid test: the red-green e-process over the entropy-gated tokens of
:func:`sims.detect.stats.gated_scores.gated_marks` (Lee et al. 2023's gate; the e-process of
:mod:`sims.detect.anytime.sequential`)."""

from __future__ import annotations

import numpy as np

from sims.core import defaults
from sims.detect.anytime import _kernels as AK
from sims.detect.anytime.e_mixtures import SequentialResult, bernoulli_mixture, check_alpha, check_grid, linear_thresholds


def sequential_gated(values, scored, lengths, g_eff: float, *, alpha: float = defaults.FPR, grid=None) -> SequentialResult:
    """The red-green e-process (:mod:`sims.detect.anytime.sequential`, Bernoulli bets) over the gated, kept tokens of
    :func:`sims.detect.stats.gated_scores.gated_marks`: anytime-valid at level ``alpha`` by Ville's inequality, the null being the fixed-length test's.

    Parameters
    ----------
    values : (n, T) float array
        The tokens' colours as 0.0/1.0 (:func:`sims.detect.stats.gated_scores.gated_marks`).
    scored : (n, T) bool array
        The gated, kept tokens (:func:`sims.detect.stats.gated_scores.gated_marks`).
    lengths : (n,) int array
        Each text's length.
    g_eff : float
        The exact null probability of green, the Bernoulli mixture's null.
    alpha : float
        The level in (0, 1): a text is flagged when its e-value reaches 1/alpha.
    grid : array_like of float, optional
        The bet fractions in (0, 1) of the mixture; None for the default grid
        (:func:`sims.detect.anytime.e_mixtures.check_grid`).

    Returns
    -------
    SequentialResult
        Per text: tokens scored, gated green count, log e-value after the whole text and the first stopping position.
    """
    alpha = check_alpha(alpha)
    mix = bernoulli_mixture(g_eff, check_grid(grid))
    table = linear_thresholds(mix, values.shape[1], alpha)
    s, n, stop = AK.value_crossings(np.where(scored, values, 0.0), scored, np.asarray(lengths, dtype=np.int64), table)
    return SequentialResult(n, s, mix.log_e(s, n), stop, alpha)
