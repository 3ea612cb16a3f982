r"""Anytime-valid detection for any per-token score whose null law is known: exponential-tilt e-processes.

Generic over the score, keyed only by its null law.  A detector whose scored tokens carry
statistics :math:`X_1, X_2, \dots`, i.i.d. under the null with law :math:`P_0` of cumulant
generating function :math:`\psi(\theta) = \ln E_0 e^{\theta X}`, gets the test martingales

.. math:: M^{(\theta)}_t = \prod_{s \le t} e^{\theta X_s - \psi(\theta)} = e^{\theta S_t - n_t \psi(\theta)},
          \qquad E_0\, e^{\theta X - \psi(\theta)} = 1,

the likelihood ratios of the **exponential tilts** :math:`dP_\theta / dP_0 = e^{\theta x - \psi(\theta)}` to
the null; their uniform mixture over a grid :math:`\theta_1 < \dots < \theta_J` is the e-process, and
Ville's inequality bounds the chance that it ever reaches 1/alpha by alpha, exactly (no
approximation of the law enters: :math:`\psi` is computed from the exact pmf).  The log-wealth of
bet j is linear in the sufficient statistics, :math:`\theta_j S_t - \psi(\theta_j) n_t`, so the
detector is a :class:`sims.detect.anytime.e_mixtures.LinearMixture` and the crossing a table of thresholds
(one comparison per token).

**Strategy and power.**  Bet j is the Kelly bet against its own tilt, whose mean is
:math:`\mu_j = \mu_0 + f_j (x_{\max} - \mu_0)` for a bounded law and :math:`\theta_j = f_j \theta_{\max}`
otherwise, with ``f`` the fractions of :data:`sims.detect.anytime.e_mixtures.GRID` (20 log-spaced in
[0.01, 0.95]).  Against data from a tilt :math:`P_{\theta^*}` bet j grows at
:math:`\mathrm{KL}(P_{\theta^*} \| P_0) - \mathrm{KL}(P_{\theta^*} \| P_{\theta_j})`, and the neighbours' ratio
1.27 keeps the best grid bet within a few per cent of the optimum (tested) at the mixture's
cost of :math:`\ln J` nats.  For a Bernoulli(gamma) law the bets are those of the ``redgreen``
e-process and for Exp(1) those of ``ems`` (:mod:`sims.detect.anytime.sequential`; tested equal).

**Laws** (:class:`NullLaw`): :func:`bernoulli_law`, :func:`exponential_law`, :func:`log_uniform_law` (the ``ems-log``
term :math:`\ln Y`, :mod:`sims.detect.families.sequential_scores`), :func:`lattice_law`
(any finite law, e.g. a quantised score with its exact pmf) and :func:`weighted_bernoulli_law`:
:math:`\sum_l w_l B_l` with :math:`B_l` i.i.d. Bernoulli(r), the per-token score of tournament
sampling (SynthID: under the null the m g-values of a scored token are i.i.d. Bernoulli(1/2),
:mod:`sims.detect.stats.tournament_scores`); :func:`sequential_tournament` is its e-process.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp

from sims.detect.anytime import _kernels as SK
from sims.detect.anytime import e_mixtures


@dataclass(frozen=True)
class NullLaw:
    """The null law of a per-token statistic: a finite lattice (``values``, ``log_pmf``), or
    ``sign`` times an Exp(1) variable (``values`` empty).

    Attributes
    ----------
    name : str
    values, log_pmf : float arrays
        Support points (increasing) and their natural-log probabilities; empty for ``exp(1)`` / ``-exp(1)``.
    integer : bool
        The support is integers (thresholds are then exact integers).
    sign : float
        +1 (Exp(1): EMS's :math:`-\\ln(1 - Y)`) or -1 (:math:`\\ln Y`, Y uniform); lattice laws ignore it.
    """

    name: str
    values: np.ndarray
    log_pmf: np.ndarray
    integer: bool
    sign: float = 1.0

    @property
    def bounded(self) -> bool:
        """A finite support (else ``sign`` Exp(1): tilts with ``sign * theta < 1``)."""
        return self.values.size > 0

    @property
    def top(self) -> float:
        """The support's supremum (inf for Exp(1), 0 for -Exp(1))."""
        if self.bounded:
            return float(self.values[-1])
        return math.inf if self.sign > 0 else 0.0

    def psi(self, theta) -> np.ndarray:
        r"""Cumulant generating function :math:`\psi(\theta) = \ln E_0 e^{\theta X}`.

        Parameters
        ----------
        theta : float or array_like
            Tilts; for an unbounded law, ``sign * theta < 1``.

        Returns
        -------
        ndarray
            :math:`\psi(\theta)`, shaped like ``theta``.

        Raises
        ------
        ValueError
            If a tilt of an unbounded law is out of range.
        """
        th = np.asarray(theta, dtype=np.float64)
        if not self.bounded:
            if np.any(self.sign * th >= 1.0):
                raise ValueError(f"theta must satisfy sign * theta < 1 for {self.name}; got {theta!r}")
            return -np.log1p(-self.sign * th)
        return logsumexp(th[..., None] * self.values + self.log_pmf, axis=-1)

    def tilted_mean(self, theta) -> np.ndarray:
        r"""Mean of the tilt :math:`e^{\theta x - \psi(\theta)} P_0(dx)`.

        Parameters
        ----------
        theta : float or array_like
            Tilts.

        Returns
        -------
        ndarray
            :math:`\psi'(\theta)`, shaped like ``theta``.
        """
        th = np.asarray(theta, dtype=np.float64)
        if not self.bounded:
            return self.sign / (1.0 - self.sign * th)
        lw = th[..., None] * self.values + self.log_pmf
        return np.exp(lw - logsumexp(lw, axis=-1, keepdims=True)) @ self.values

    @property
    def mean(self) -> float:
        return float(self.tilted_mean(0.0))


def lattice_law(values, pmf, name: str = "lattice") -> NullLaw:
    """A finite null law: support ``values`` (distinct reals) with probabilities ``pmf`` (>= 0, summing to 1).

    Parameters
    ----------
    values : array_like
        Support points, at least 2, distinct and finite.
    pmf : array_like
        Their probabilities.
    name : str, default "lattice"
        Name of the law.

    Returns
    -------
    NullLaw
        The law, support sorted, zero-probability points dropped; ``integer`` when every point is an integer.

    Raises
    ------
    ValueError
        If the support or the probabilities are invalid.
    """
    v, p = np.asarray(values, dtype=np.float64).ravel(), np.asarray(pmf, dtype=np.float64).ravel()
    if v.size < 2 or p.shape != v.shape or not np.all(np.isfinite(v)) or np.unique(v).size != v.size:
        raise ValueError(f"values must hold at least 2 distinct finite reals, one per pmf entry; got {values!r}")
    if np.any(p < 0) or abs(p.sum() - 1.0) > 1e-9 or np.count_nonzero(p) < 2:
        raise ValueError(f"pmf must be >= 0, sum to 1 and charge at least 2 values; got {pmf!r}")
    order = np.argsort(v)
    v, p = v[order], p[order]
    keep = p > 0
    with np.errstate(divide="ignore"):
        return NullLaw(name, v[keep], np.log(p[keep]), bool(np.all(v == np.rint(v))))


def bernoulli_law(p: float) -> NullLaw:
    """Bernoulli(``p``): a green indicator (``redgreen``).

    Parameters
    ----------
    p : float
        Success probability, in (0, 1).

    Returns
    -------
    NullLaw
        The lattice law on {0, 1}.
    """
    if not 0.0 < float(p) < 1.0:
        raise ValueError(f"p must be in (0, 1); got {p!r}")
    return lattice_law([0.0, 1.0], [1.0 - float(p), float(p)], f"bernoulli({float(p):g})")


def exponential_law() -> NullLaw:
    r"""Exp(1): the EMS score :math:`-\ln(1 - r)` (``ems``).

    Returns
    -------
    NullLaw
        The unbounded law with ``sign`` +1.
    """
    return NullLaw("exp(1)", np.zeros(0), np.zeros(0), False)


def log_uniform_law() -> NullLaw:
    r""":math:`\ln Y`, Y ~ U(0, 1) (= -Exp(1), support :math:`(-\infty, 0]`): the ``ems-log`` score's token term.
    Its tilts are the Beta(1 + theta, 1) laws of Y, likelihood ratio :math:`(1 + \theta) Y^\theta`.

    Returns
    -------
    NullLaw
        The unbounded law with ``sign`` -1.
    """
    return NullLaw("-exp(1)", np.zeros(0), np.zeros(0), False, -1.0)


def weighted_bernoulli_law(weights, rate: float = 0.5) -> NullLaw:
    r""":math:`\sum_l w_l B_l`, :math:`B_l` i.i.d. Bernoulli(``rate``), ``weights`` non-negative integers
    (tournament sampling's per-token g-value score: all ones for the mean score).

    Parameters
    ----------
    weights : array_like of int
        Layer weights, >= 0, not all 0, summing to at most 1e6.
    rate : float, default 0.5
        Probability that a layer's g-value is 1, in (0, 1).

    Returns
    -------
    NullLaw
        The lattice law of the weighted sum.

    Raises
    ------
    ValueError
        If the weights or the rate are invalid.
    """
    w = np.asarray(weights)
    if w.ndim != 1 or w.size == 0 or w.dtype.kind not in "iu" or w.min() < 0 or w.max() == 0 or w.sum() > 10**6:
        raise ValueError(f"weights must be a non-empty 1-d array of integers >= 0, not all 0, summing to <= 1e6; got {weights!r}")
    if not 0.0 < float(rate) < 1.0:
        raise ValueError(f"rate must be in (0, 1); got {rate!r}")
    pmf = np.zeros(1)
    pmf[0] = 1.0
    for wl in w.astype(np.int64):
        nxt = np.zeros(pmf.size + wl)
        nxt[: pmf.size] += (1.0 - rate) * pmf
        nxt[wl:] += rate * pmf
        pmf = nxt
    x = np.arange(pmf.size, dtype=np.float64)
    return lattice_law(x[pmf > 0], pmf[pmf > 0] / pmf.sum(), f"weighted-bernoulli({rate:g})")


def tilt_thetas(law: NullLaw, grid=None) -> np.ndarray:
    r"""The bets' tilts (module docstring): tilted means :math:`\mu_0 + f (x_{\max} - \mu_0)`, or
    :math:`\theta = f` for Exp(1) (unbounded above); for -Exp(1) (top 0) the tilted mean -1/(1 + theta) = f - 1
    gives :math:`\theta = f / (1 - f)`.

    Parameters
    ----------
    law : NullLaw
        Null law.
    grid : array_like, optional
        Bet fractions f in (0, 1).

    Returns
    -------
    ndarray, shape (J,)
        The tilts :math:`\theta_j` (bisection for a lattice law).
    """
    f = e_mixtures.check_grid(grid)
    if not law.bounded:
        return f.copy() if law.sign > 0 else f / (1.0 - f)
    mu0, top = law.mean, float(law.values[-1])
    target = mu0 + f * (top - mu0)
    lo, hi = np.zeros_like(f), np.ones_like(f)
    while np.any(law.tilted_mean(hi) < target):
        hi = np.where(law.tilted_mean(hi) < target, 2.0 * hi, hi)
    for _ in range(100):  # bisection: the tilted mean increases in theta
        mid = 0.5 * (lo + hi)
        up = law.tilted_mean(mid) < target
        lo, hi = np.where(up, mid, lo), np.where(up, hi, mid)
    return 0.5 * (lo + hi)


def tilt_mixture(law: NullLaw, grid=None) -> e_mixtures.LinearMixture:
    r"""The e-process of ``law``: bets :math:`a_j = \theta_j`, :math:`b_j = -\psi(\theta_j)` (module docstring).

    Parameters
    ----------
    law : NullLaw
        Null law of one token's statistic.
    grid : array_like, optional
        Bet fractions.

    Returns
    -------
    LinearMixture
        The uniform mixture of the exponentially tilted likelihood ratios.
    """
    th = tilt_thetas(law, grid)
    return e_mixtures.LinearMixture(th, -law.psi(th), law.integer, law.top)


def sequential_values(values, scored, law: NullLaw, *, alpha: float, lengths=None, grid=None) -> e_mixtures.SequentialResult:
    """Anytime-valid detection from per-token statistics ``values`` (n, T) of null law ``law`` on the
    ``scored`` (n, T) tokens: the tilt mixture's first crossing of 1/alpha per text.

    Parameters
    ----------
    values : array_like, shape (n, T)
        Per-token statistics.
    scored : array_like of bool, shape (n, T)
        Which tokens count.
    law : NullLaw
        Null law of one scored token's statistic.
    alpha : float
        Level, in (0, 1).
    lengths : array_like of int, shape (n,), optional
        Tokens of each text (default T).
    grid : array_like, optional
        Bet fractions (default :data:`sims.detect.anytime.e_mixtures.GRID`).

    Returns
    -------
    SequentialResult
        Per text the scored count, summed statistic, final log e-value and stopping token.

    Raises
    ------
    ValueError
        If the shapes disagree or a length is outside [0, T].
    """
    alpha = e_mixtures.check_alpha(alpha)
    values, scored = np.asarray(values, dtype=np.float64), np.asarray(scored, dtype=np.bool_)
    if values.ndim != 2 or scored.shape != values.shape:
        raise ValueError(f"values and scored must be (n, T) arrays of one shape; got {values.shape}, {scored.shape}")
    lengths = np.full(values.shape[0], values.shape[1], dtype=np.int64) if lengths is None else np.asarray(lengths, dtype=np.int64)
    if lengths.shape != (values.shape[0],) or (lengths.size and (lengths.min() < 0 or lengths.max() > values.shape[1])):
        raise ValueError(f"lengths must be (n,) ints in [0, T={values.shape[1]}]; got {lengths!r}")
    mix = tilt_mixture(law, grid)
    table = e_mixtures.linear_thresholds(mix, values.shape[1], alpha)
    s, n, stop = SK.value_crossings(values, scored, lengths, table)
    return e_mixtures.SequentialResult(n, s, mix.log_e(s, n), stop, alpha)


def tournament_token_scores(tokens, prompts, key: int, m: int, *, weights=None, h: int | None = None, mask_repeated: bool = True,
                            lengths=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Per-token g-value score :math:`\sum_l w_l g_{t,l}` (n, T), the scored mask (n, T) and the weights
    (all ones: the mean score) of tournament-sampled text (:mod:`sims.detect.stats.tournament_scores`).

    Parameters
    ----------
    tokens : ndarray of int, shape (n, T)
        Generated tokens.
    prompts : ndarray of int, shape (n, P)
        Prompts.
    key : int
        The watermark key.
    m : int
        Number of tournament layers.
    weights : array_like of int, optional
        Layer weights (default all ones).
    h : int, optional
        Context width (default the tournament's).
    mask_repeated : bool, default True
        Leave repeated (context, token) pairs unscored.
    lengths : array_like of int, shape (n,), optional
        Tokens of each text.

    Returns
    -------
    values : ndarray, shape (n, T)
        Weighted g-value sums (0 where not scored).
    scored : ndarray of bool, shape (n, T)
        Which tokens are scored.
    weights : ndarray of int, shape (m,)
        The layer weights used.
    """
    from sims.detect.stats import tournament_scores as ts
    from sims.watermarks import tournament as tn

    w = ts.layer_weights(m, weights)
    words, scored = ts.g_words(tokens, prompts, key, h=tn.DEFAULT_H if h is None else h, mask_repeated=mask_repeated, lengths=lengths)
    values = np.zeros(words.shape)
    for layer in range(int(m)):
        if w[layer]:
            values += w[layer] * ((words >> np.uint64(layer)) & np.uint64(1)).astype(np.float64)
    return np.where(scored, values, 0.0), scored, w


def sequential_tournament(tokens, prompts, key: int, m: int, *, alpha: float, weights=None, h: int | None = None, mask_repeated: bool = True,
                          lengths=None, grid=None) -> e_mixtures.SequentialResult:
    r"""Anytime-valid detection of tournament sampling (SynthID): the tilt e-process of the per-token
    g-value score.

    Under the null the m g-values of a scored token are i.i.d. Bernoulli(1/2) (the repeated-context
    mask leaves distinct contexts), so the per-token score :math:`X_t = \sum_l w_l g_{t,l}` is i.i.d.
    with the :func:`weighted_bernoulli_law` of the weights (Binomial(m, 1/2) for the mean score,
    ``weights=None``).  Bet j is the tilt of that law with mean :math:`\mu_0 + f_j(\max - \mu_0)`; for
    the mean score that is "every layer's g-value is Bernoulli(:math:`(1 + f_j)/2`)", the likelihood
    ratio of i.i.d. layers drifted by the watermark, the Kelly bet against the mean-g drift DG.

    Parameters
    ----------
    tokens, prompts, lengths : as :func:`sims.detect.stats.scores.score_redgreen`
    key : int in [0, 2**64)
    m : int in [1, 64]
        Tournament layers.
    alpha : float in (0, 1)
        Level: under the null P(some prefix is flagged) <= alpha.
    weights : array of ints, optional
        Layer weights (default: all ones, the mean score; SynthID's weighted score:
        :func:`sims.detect.stats.tournament_scores.synthid_weights`).
    h, mask_repeated : as :func:`sims.detect.stats.tournament_scores.score_tournament`
    grid : optional, the bets' fractions (:data:`sims.detect.anytime.e_mixtures.GRID`)

    Returns
    -------
    SequentialResult
        ``score`` the (weighted) g-value sum, ``n_scored`` the scored tokens.

    Examples
    --------
    >>> import sims
    >>> from sims.detect.anytime.sequential_laws import sequential_tournament
    >>> gen = sims.generate(sims.get_lm("news"), "synthid", n=3, T=200, seed=0, key=7, m=30)
    >>> r = sequential_tournament(gen.tokens, gen.prompts[:, -gen.meta["h"]:], 7, 30, alpha=1e-4, h=gen.meta["h"])
    >>> bool(r.detected.all())
    True
    """
    from sims.detect.anytime import _tournament as _seq_tournament
    from sims.detect.stats import scores
    from sims.detect.stats import tournament_scores as ts
    from sims.watermarks import tournament as tn

    alpha = e_mixtures.check_alpha(alpha)
    w = ts.layer_weights(m, weights)
    h = tn.DEFAULT_H if h is None else h
    tokens, prompts, lengths = scores._check_inputs(tokens, prompts, None, h, lengths)
    if isinstance(key, (bytes, bytearray)) or not (0 <= int(key) < 2**64):
        raise ValueError(f"key must be an int in [0, 2**64); got {key!r}")
    grid_key = None if grid is None else tuple(e_mixtures.check_grid(grid).tolist())
    mix, table = _tilt_table(tuple(w.tolist()), grid_key, tokens.shape[1], alpha)
    s, n, stop = (np.zeros(tokens.shape[0], dtype=np.int64) for _ in range(3))
    _seq_tournament.tournament_crossings(tokens, prompts, lengths, np.uint64(int(key)), int(h), bool(mask_repeated), w, table, s, n, stop)
    return e_mixtures.SequentialResult(n, s.astype(np.float64), mix.log_e(s, n), stop, alpha)


@functools.lru_cache(maxsize=64)
def _tilt_table(weights: tuple, grid: tuple | None, n_max: int, alpha: float):
    """The tilt mixture of :func:`weighted_bernoulli_law` (rate 1/2) and its crossing table up to
    ``n_max`` scored tokens, computed once per (weights, grid, n_max, alpha): the bisections cost
    more than a scan of 1e5 tokens.  The table is read-only."""
    mix = tilt_mixture(weighted_bernoulli_law(np.array(weights, dtype=np.int64), 0.5), None if grid is None else np.array(grid))
    table = e_mixtures.linear_thresholds(mix, n_max, alpha)
    table.flags.writeable = False
    return mix, table
