"""Mixtures of bets whose log-wealth is linear in a running sum, and their crossing tables.

The building blocks of the anytime-valid tests of :mod:`sims.detect.anytime.sequential` and
:mod:`sims.detect.anytime.sequential_laws`: the grid of bet fractions, a :class:`LinearMixture` (bet j's
log e-value :math:`a_j s_t + b_j n_t`), the threshold table :func:`linear_thresholds` at which the
mixture crosses :math:`1/\\alpha` (Ville's inequality), and the :class:`SequentialResult` every
sequential detector returns.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sims.detect.stats.marks import check_fpr

#: The default bet fractions f_j of the e-processes: 20 log-spaced in [0.01, 0.95] (theory.sequential.DEFAULT_GRID).
GRID = np.geomspace(0.01, 0.95, 20)


def check_alpha(alpha) -> float:
    """``alpha`` as a float in (0, 1), else a ValueError naming it.

    Parameters
    ----------
    alpha : float
        Level of an anytime-valid test.

    Returns
    -------
    float
        ``alpha``.
    """
    return check_fpr(alpha, name="alpha")


def check_grid(grid) -> np.ndarray:
    """The bet fractions as a float array in (0, 1), else a ValueError naming ``grid``.

    Parameters
    ----------
    grid : array_like or None
        Bet fractions; None for :data:`GRID`.

    Returns
    -------
    ndarray of float64, shape (J,)
        The fractions, flattened.
    """
    g = GRID if grid is None else np.asarray(grid, dtype=np.float64).ravel()
    if g.size == 0 or not np.all((g > 0) & (g < 1)):
        raise ValueError(f"grid must be a non-empty array of fractions in (0, 1); got {grid!r}")
    return g


@dataclass(frozen=True)
class LinearMixture:
    r"""A uniform mixture of J bets whose log-wealth is linear in the sufficient statistics:

    .. math:: \ln E(s, n) = \ln \frac1J \sum_j e^{a_j s + b_j n}, \qquad a_j > 0 .

    Attributes
    ----------
    a, b : (J,) float arrays
    integer : bool
        True when the statistic s is integer-valued (red-green counts), so thresholds are integers.
    top : float
        The largest value of one token's statistic (1 for a count; bounds an integer threshold by ``top * n``).
    """

    a: np.ndarray
    b: np.ndarray
    integer: bool
    top: float = 1.0

    def log_e(self, s, n) -> np.ndarray:
        r"""Natural log of the mixture's e-value at summed statistic ``s`` after ``n`` scored tokens.

        Parameters
        ----------
        s : float or array_like
            Summed statistic :math:`S_t`.
        n : int or array_like
            Number of scored tokens, broadcast with ``s``.

        Returns
        -------
        ndarray
            :math:`\ln \frac1J \sum_j e^{a_j s + b_j n}`, computed stably (log-sum-exp).
        """
        s, n = np.broadcast_arrays(np.asarray(s, dtype=np.float64), np.asarray(n, dtype=np.float64))
        x = s[..., None] * self.a + n[..., None] * self.b
        m = x.max(axis=-1)
        return m + np.log(np.exp(x - m[..., None]).mean(axis=-1))


def bernoulli_mixture(gamma: float, grid=None) -> LinearMixture:
    r"""The ``redgreen`` e-process: likelihood ratios of Bernoulli(gamma + f (1 - gamma)) to Bernoulli(gamma).

    Parameters
    ----------
    gamma : float
        Null green probability, in (0, 1).
    grid : array_like, optional
        Bet fractions f in (0, 1) (default :data:`GRID`).

    Returns
    -------
    LinearMixture
        :math:`a_j = \ln(q_j/\gamma) - b_j`, :math:`b_j = \ln((1-q_j)/(1-\gamma))`, :math:`q_j = \gamma + f_j(1-\gamma)`;
        integer statistic (the green count).

    Raises
    ------
    ValueError
        If ``gamma`` is outside (0, 1) or the grid is invalid.
    """
    if not 0.0 < float(gamma) < 1.0:
        raise ValueError(f"gamma must be in (0, 1); got {gamma!r}")
    q = gamma + check_grid(grid) * (1.0 - gamma)
    b = np.log((1.0 - q) / (1.0 - gamma))
    return LinearMixture(np.log(q / gamma) - b, b, True)


def exponential_mixture(grid=None) -> LinearMixture:
    r"""The ``ems`` e-process: likelihood ratios of Exp(1 - f) to Exp(1).

    Parameters
    ----------
    grid : array_like, optional
        Bet fractions f in (0, 1) (default :data:`GRID`).

    Returns
    -------
    LinearMixture
        :math:`a_j = f_j`, :math:`b_j = \ln(1 - f_j)`; continuous statistic (the EMS sum :math:`\sum -\ln(1-r)`).
    """
    f = check_grid(grid)
    return LinearMixture(f.copy(), np.log1p(-f), False)


def linear_thresholds(mix: LinearMixture, n_max: int, alpha: float) -> np.ndarray:
    r"""``thr[n]``: the smallest statistic s with :math:`\ln E(s, n) \ge \ln(1/\alpha)`, n = 0..n_max.

    Integer for integer statistics (exact: the smallest integer k <= ``top`` n that crosses, inf if
    none); for continuous ones the upper end of a bisection bracket (so :math:`s \ge`
    ``thr[n]`` implies the crossing: conservative by at most 1e-12 relative).

    Parameters
    ----------
    mix : LinearMixture
        The e-process.
    n_max : int
        Largest number of scored tokens.
    alpha : float
        Level, in (0, 1): the e-process crosses at :math:`1/\alpha`.

    Returns
    -------
    ndarray of float64, shape (n_max + 1,)
        The crossing thresholds (inf where none exists).
    """
    bound = math.log(1.0 / check_alpha(alpha))
    n = np.arange(int(n_max) + 1, dtype=np.float64)
    # bet j alone reaching bound + ln J suffices: an upper bracket
    hi = np.min((bound + math.log(mix.a.size) - np.outer(n, mix.b)) / mix.a, axis=1)
    lo = np.zeros_like(hi)
    if mix.integer:
        hi = np.minimum(np.ceil(hi), n * mix.top)
        ok = mix.log_e(hi, n) >= bound
        lo = lo - 1.0  # invariant: log_e(lo) < bound <= log_e(hi)
        for _ in range(64):
            mid = np.floor((lo + hi) / 2)
            up = (mix.log_e(np.maximum(mid, 0.0), n) >= bound) & (mid >= 0)
            hi, lo = np.where(up, mid, hi), np.where(up, lo, mid)
            if np.all(hi - lo <= 1):
                break
        return np.where(ok, hi, np.inf)
    # where no bet reaches bound the mixture does not (a mean is at most its largest term): a lower
    # bracket, below 0 only for statistics that are negative (ln Y)
    lo = np.minimum(lo, np.min((bound - np.outer(n, mix.b)) / mix.a, axis=1) - 1.0)
    for _ in range(200):
        mid = (lo + hi) / 2
        up = mix.log_e(mid, n) >= bound
        hi, lo = np.where(up, mid, hi), np.where(up, lo, mid)
        if np.all(hi - lo <= 1e-12 * np.maximum(1.0, hi)):
            break
    return hi


@dataclass
class SequentialResult:
    """Per-text anytime-valid detection.

    Attributes
    ----------
    n_scored : int array
        Tokens scored (after dedup).
    score : float array
        The summed statistic (green count, EMS sum; hits for keyed orders; greens for AutoCov).
    log_e : float array
        Natural log of the e-value after the whole text.
    stop : int array
        The first token (1-based position in the text) at which the e-value reached 1/alpha;
        -1 if it never did.
    alpha : float
        The level: P(any text of the null is ever flagged) <= alpha.
    """

    n_scored: np.ndarray
    score: np.ndarray
    log_e: np.ndarray
    stop: np.ndarray
    alpha: float

    @property
    def detected(self) -> np.ndarray:
        """True where the e-process crossed 1/alpha at some token."""
        return self.stop > 0
