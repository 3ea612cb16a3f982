r"""Anytime-valid detection: e-processes updated token by token, valid under any stopping rule.

Testing a growing text at every prefix with a fixed-length p-value and stopping at the first
``p <= alpha`` is not a level-alpha test (:mod:`sims.detect.anytime.peeking` measures by how much).
Here each detector family gets a **test martingale** :math:`E_t` (nonnegative, :math:`E_0 = 1`,
a martingale under the null), and the text is flagged the first time :math:`E_t \ge 1/\alpha`.
Ville's inequality gives

.. math:: P_{H_0}\Bigl(\sup_{t \ge 0} E_t \ge 1/\alpha\Bigr) \le \alpha ,

so the false-positive rate is at most alpha however the text is read, peeked at or stopped.
No approximation enters: each :math:`E_t` is a uniform mixture over J constant bets (a grid),
each bet a likelihood ratio of a simple alternative against the exact null of the per-token
statistic of :mod:`sims.detect.stats.scores`; an average of test martingales is a test martingale.

Families and their bets (``grid`` = fractions :math:`f_j \in (0, 1)`, default :data:`GRID`,
20 log-spaced values in [0.01, 0.95]):

``redgreen``  green indicators :math:`X_t`, i.i.d. Bernoulli(gamma) under the null when each
    (context, token) pair is scored once (``dedup=True``) and the text does not depend on
    the key.  Bet j is the likelihood ratio of Bernoulli(:math:`q_j`),
    :math:`q_j = \gamma + f_j (1-\gamma)`: factor :math:`1 + \lambda_j (X_t - \gamma)` with
    :math:`\lambda_j = (q_j - \gamma) / (\gamma(1-\gamma)) \in (0, 1/\gamma)`.
``ems``  scores :math:`S_t = -\ln(1 - r_{t,y_t})`, i.i.d. Exp(1) under the null; bet j is the
    likelihood ratio of Exp(:math:`\theta_j`), :math:`\theta_j = 1 - f_j`:
    factor :math:`\theta_j e^{(1-\theta_j) S_t}`.
``autocov``  colours given the previous colour (DualGA-AutoCov alternates them): after a red
    token the bets are those of ``redgreen``; after a green one the likelihood ratios of
    Bernoulli(:math:`\gamma (1 - f_j)`) (betting on red).  The two mixtures multiply.
``tournament`` (SynthID)  per-token g-value sums, i.i.d. Binomial(m, 1/2) under the null; bet j is the
    exponential tilt "every layer's g-value is Bernoulli((1 + f_j)/2)"
    (:func:`sims.detect.anytime.sequential_laws.sequential_tournament`, generic over any per-token score
    of known null law).
``keyed`` (ITS, UW-delta, UW-gamma)  hit indicators :math:`H_t`, independent
    Bernoulli(:math:`\pi_t`) under the null (:func:`sims.detect.stats.scores.score_keyed_order`);
    bet j: "the key forces a hit with probability :math:`f_j`", factor
    :math:`1 + f_j (H_t - \pi_t) / \pi_t`.

Power: against i.i.d. Bernoulli(:math:`\gamma + \Delta`) colours bet j grows at the rate
:math:`r_j = E \ln(1 + \lambda_j (X - \gamma))`, the best constant bet at
:math:`\mathrm{KL}(\mathrm{Ber}(\gamma+\Delta) \| \mathrm{Ber}(\gamma))`, and the mixture's log
e-value is at least bet j's minus :math:`\ln J`: with the grid's ratio 1.27 between neighbours
the best bet on the grid keeps >= 98 % of the optimal rate for :math:`\Delta / (1 - \gamma)`
in [0.01, 0.5] and >= 95 % up to 0.95 (gamma in [0.1, 0.6]; tested), at a cost of :math:`\ln 20 \approx 3` nats (:mod:`theory.sequential` bounds
the expected tokens to detection).

For ``redgreen`` and ``ems`` the log-wealth of bet j is linear in the sufficient statistics,
:math:`a_j s_t + b_j n_t` (s the summed statistic, n the scored tokens), so the crossing is
:math:`s_t \ge s^*(n_t)`, a table computed once (:func:`linear_thresholds`): the Numba scan
costs one comparison per token more than the fixed-length detector's.

Validity holds conditionally on the whole text (the colours of distinct pairs are i.i.d.
given the text when the text does not depend on the key), so stopping may look at the
tokens too.  Without ``dedup`` a repeated (context, token) pair repeats its colour and the
null is not i.i.d. (as for the fixed-length test); with ``green_kind="partition"`` distinct
tokens of one context are drawn without replacement, so the i.i.d. null is an approximation.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from sims.core import defaults
from sims.core import seeding as seeding_mod
from sims.detect.anytime import _kernels as SK
from sims.detect.anytime.e_mixtures import (  # noqa: F401 (public here too)
    GRID,
    LinearMixture,
    SequentialResult,
    bernoulli_mixture,
    check_alpha,
    check_grid,
    exponential_mixture,
    linear_thresholds,
)
from sims.detect.stats import scores


@functools.lru_cache(maxsize=64)
def _linear_table(stat: str, g_eff: float, grid: tuple | None, n_max: int, alpha: float):
    """The mixture of ``stat`` and its crossing table up to ``n_max`` scored tokens, once per
    (stat, gamma, grid, n_max, alpha): the table's bisections cost more than scanning one text, and
    texts scored one at a time (a key each) share it.  The table is read-only."""
    f = None if grid is None else np.array(grid)
    mix = bernoulli_mixture(g_eff, f) if stat == "green" else exponential_mixture(f)
    table = linear_thresholds(mix, n_max, alpha)
    table.flags.writeable = False
    return mix, table


def _scan_linear(tokens, prompts, key, stat, gamma, h, green_kind, dedup, vocab_size, lengths, alpha, grid, prf, seeding=seeding_mod.DEFAULT):
    tokens, prompts, lengths = scores._check_inputs(tokens, prompts, vocab_size, h, lengths)
    code, stream, thr, g_eff, tokmix = scores._stat_code(stat, gamma, green_kind, vocab_size)
    scores._check_key(key, prf)
    mix, table = _linear_table(stat, g_eff, None if grid is None else tuple(check_grid(grid).tolist()), tokens.shape[1], alpha)
    if prf == "siphash" or seeding != seeding_mod.DEFAULT:  # per-token colours by their own kernels, then the crossings
        values, scored = scores.token_scores(tokens, prompts, key, stat=stat, gamma=gamma, h=h, green_kind=green_kind, dedup=dedup,
                                             vocab_size=vocab_size, lengths=lengths, prf=prf, seeding=seeding)
        s, n, stop = SK.value_crossings(values, scored, lengths, table)
    else:
        scan = SK.scan_crossings if tokens.size >= scores.PARALLEL_MIN_TOKENS else SK.scan_crossings_serial
        s, n, stop = scan(tokens, prompts, lengths, np.uint64(key), int(h), bool(dedup), stream, code, thr, tokmix, table)
    return SequentialResult(n, s, mix.log_e(s, n), stop, alpha)


def sequential_ems_marks(values, scored, lengths, *, alpha: float = defaults.FPR, grid=None) -> SequentialResult:
    r"""The ``ems`` e-process (:func:`sequential_ems`) of per-token EMS marks already computed (EXP's position-keyed
    marks, :func:`sims.detect.stats.exp_scores.position_marks`).

    Parameters
    ----------
    values : (n, T) float array
        Each token's mark :math:`-\ln(1 - r)`.
    scored : (n, T) bool array
        Which tokens count.
    lengths : (n,) int array
        Each text's token count.
    alpha : float in (0, 1)
        Level (Ville's inequality).
    grid : array of fractions in (0, 1), optional
        The bets (default :data:`GRID`).

    Returns
    -------
    SequentialResult
        Per text the scored count, EMS sum, final log e-value and stopping token.
    """
    alpha = check_alpha(alpha)
    values = np.ascontiguousarray(values, dtype=np.float64)
    mix, table = _linear_table("ems", None, None if grid is None else tuple(check_grid(grid).tolist()), values.shape[1], alpha)
    s, n, stop = SK.value_crossings(values, np.ascontiguousarray(scored, dtype=bool), np.asarray(lengths, dtype=np.int64), table)
    return SequentialResult(n, s, mix.log_e(s, n), stop, alpha)


def sequential_redgreen(tokens, prompts, key: int, gamma: float, *, alpha: float = defaults.FPR, vocab_size: int | None = None,
                        h: int = defaults.H, dedup: bool = True, green_kind: str = defaults.GREEN_KIND, lengths=None, grid=None,
                        prf: str = defaults.PRF, seeding: str = seeding_mod.DEFAULT) -> SequentialResult:
    r"""Anytime-valid red-green detection: the ``redgreen`` e-process (module docstring) of every text.

    .. math:: E_t = \frac1J \sum_j \prod_{s \le t} \bigl(1 + \lambda_j (X_s - \gamma)\bigr),\qquad
              \text{flag at } \tau = \min\{t : E_t \ge 1/\alpha\}

    Parameters
    ----------
    tokens, prompts, lengths, h, vocab_size, green_kind, prf, key, gamma, seeding :
        As :func:`sims.detect.stats.scores.score_redgreen` (under a ``seeding`` scheme other than ``"lefthash"``
        dedup scores each (seed, token) pair once: the colours of distinct pairs are i.i.d. under the null).
    alpha : float in (0, 1)
        Level: under the null P(some prefix is flagged) <= alpha (Ville's inequality).
    dedup : bool
        Score each (context, token) pair once (default True: the i.i.d. null needs it on
        repetitive text).
    grid : array of fractions in (0, 1), optional
        The bets (default :data:`GRID`).

    Returns
    -------
    SequentialResult

    Examples
    --------
    >>> import numpy as np
    >>> from sims.detect.anytime.sequential import sequential_redgreen
    >>> toks = np.random.default_rng(0).integers(0, 1000, size=(3, 200))
    >>> r = sequential_redgreen(toks, toks[:, :1], key=1, gamma=0.25, vocab_size=1000)
    >>> r.detected.tolist()  # text not made with key 1: the null
    [False, False, False]
    """
    return _scan_linear(tokens, prompts, key, "green", gamma, h, green_kind, dedup, vocab_size, lengths, check_alpha(alpha), grid, prf, seeding)


def sequential_ems(tokens, prompts, key: int, *, alpha: float = defaults.FPR, vocab_size: int | None = None, h: int = defaults.H,
                   dedup: bool = True, lengths=None, grid=None) -> SequentialResult:
    r"""Anytime-valid EMS detection: the ``ems`` e-process (module docstring),
    :math:`E_t = \frac1J \sum_j \theta_j^{n_t} e^{(1-\theta_j) S_t}` with :math:`S_t` the summed
    scores :math:`-\ln(1 - r)` of the first t tokens; arguments as :func:`sequential_redgreen`.

    Parameters
    ----------
    tokens, prompts, key, alpha, vocab_size, h, dedup, lengths, grid :
        As :func:`sequential_redgreen`.

    Returns
    -------
    SequentialResult
        Per text the scored count, EMS sum, final log e-value and stopping token.
    """
    return _scan_linear(tokens, prompts, key, "ems", None, h, "bernoulli", dedup, vocab_size, lengths, check_alpha(alpha), grid, defaults.PRF)


def autocov_grids(gamma: float, grid=None) -> tuple[np.ndarray, np.ndarray]:
    r"""Alternative green probabilities of the ``autocov`` bets: after a red token, after a green one.

    Parameters
    ----------
    gamma : float
        Null green probability.
    grid : array_like, optional
        Bet fractions f in (0, 1) (default :data:`GRID`).

    Returns
    -------
    q_red : ndarray, shape (J,)
        :math:`\gamma + f (1 - \gamma)`: after a red token the green list is boosted.
    q_green : ndarray, shape (J,)
        :math:`\gamma (1 - f)`: after a green token the red list is (Algorithm DualGA_autocov).
    """
    f = check_grid(grid)
    return gamma + f * (1.0 - gamma), gamma * (1.0 - f)


def sequential_autocov(tokens, prompts, key: int, gamma: float, *, alpha: float = defaults.FPR, vocab_size: int | None = None,
                       h: int = defaults.H, dedup: bool = True, green_kind: str = defaults.GREEN_KIND, lengths=None, grid=None,
                       prf: str = defaults.PRF, seeding: str = seeding_mod.DEFAULT) -> SequentialResult:
    """Anytime-valid AutoCov detection: the ``autocov`` e-process (module docstring); arguments as
    :func:`sequential_redgreen`; ``score`` holds the green count.

    Parameters
    ----------
    tokens, prompts, key, gamma, alpha, vocab_size, h, dedup, green_kind, lengths, grid, prf, seeding :
        As :func:`sequential_redgreen`.

    Returns
    -------
    SequentialResult
        Per text the scored count, green count, final log e-value and stopping token.
    """
    alpha = check_alpha(alpha)
    values, scored = scores.token_scores(tokens, prompts, key, stat="green", gamma=gamma, h=h, green_kind=green_kind, dedup=dedup,
                                         vocab_size=vocab_size, lengths=lengths, prf=prf, seeding=seeding)
    g_eff = scores._stat_code("green", gamma, green_kind, vocab_size)[3]
    q_red, q_green = autocov_grids(g_eff, grid)
    L = np.full(values.shape[0], values.shape[1], dtype=np.int64)
    final, _, stop = SK.markov_crossings(values, scored, L, g_eff, q_red, q_green, math.log(1.0 / alpha))
    return SequentialResult(scored.sum(axis=1), values.sum(axis=1), final, stop, alpha)


def sequential_keyed_order(gen, step_probs, *, key: int | None = None, algo: str | None = None, alpha: float = defaults.FPR,
                           grid=None) -> SequentialResult:
    """Anytime-valid ITS / UW detection: the ``keyed`` e-process (module docstring) on the hits of
    :func:`sims.detect.stats.scores.keyed_order_marks`; ``step_probs`` as :func:`sims.detect.stats.scores.score_keyed_order`.

    Parameters
    ----------
    gen : Generation
        The texts (their meta names the algorithm and key unless given).
    step_probs : callable
        ``step_probs(i)``: the (T, V) next-token distributions along text i
    (:func:`sims.detect.stats.scores.score_keyed_order`).
    key : int, optional
        The key (default the generation's).
    algo : str, optional
        The keyed-order algorithm (default the generation's).
    alpha : float
        Level, in (0, 1).
    grid : array_like, optional
        The bets (default :data:`GRID`).

    Returns
    -------
    SequentialResult
        Per text the scored count, hit count, final log e-value and stopping token.
    """
    alpha, c = check_alpha(alpha), check_grid(grid)
    hits, probs_hit, n = scores.keyed_order_marks(gen, step_probs, key=key, algo=algo)
    out = np.array([SK.hit_crossings(hits[i], probs_hit[i], n[i], c, math.log(1.0 / alpha)) for i in range(len(n))]).reshape(len(n), 3)
    return SequentialResult(n, hits.sum(axis=1).astype(np.float64), out[:, 0], out[:, 2].astype(np.int64), alpha)


def log_e_path(values, scored, mix: LinearMixture) -> np.ndarray:
    """NumPy reference: ln E after every token of every text (linear families), nan past a text's end
    when ``scored`` is all False there; the crossing is the first t with ``path[t] >= ln(1/alpha)``.

    Parameters
    ----------
    values : array_like, shape (n, T)
        Per-token statistic (green indicator, EMS score).
    scored : array_like of bool, shape (n, T)
        Which tokens count.
    mix : LinearMixture
        The e-process.

    Returns
    -------
    ndarray, shape (n, T)
        ``mix.log_e`` of the running sum and count of scored tokens.
    """
    s = np.cumsum(np.where(scored, values, 0.0), axis=1)
    n = np.cumsum(scored, axis=1)
    return mix.log_e(s, n)


def first_crossing(path, alpha: float) -> np.ndarray:
    """NumPy reference: 1-based first index with ``path >= ln(1/alpha)``, -1 if none.

    Parameters
    ----------
    path : array_like, shape (n, T)
        Natural log of the e-value after every token.
    alpha : float
        Level, in (0, 1).

    Returns
    -------
    ndarray of int, shape (n,)
        The stopping token of each text, or -1.
    """
    hit = np.asarray(path) >= math.log(1.0 / check_alpha(alpha))
    return np.where(hit.any(axis=1), hit.argmax(axis=1) + 1, -1)


def anytime_log10p(path) -> np.ndarray:
    r"""Anytime-valid prefix p-values from a log e-value path: :math:`p_t = \min(1, 1/\max_{s \le t} E_s)`,
    as log10.  :math:`P_{H_0}(\exists t: p_t \le \alpha) \le \alpha` (Ville), unlike the fixed-length
    prefix p-values of :func:`sims.detect.stats.scores.prefix_log10p`.

    Parameters
    ----------
    path : array_like, shape (n, T)
        Natural log of the e-value after every token (nan past a text's end: ignored).

    Returns
    -------
    ndarray, shape (n, T)
        log10 :math:`p_t`, nonincreasing along each row, <= 0.
    """
    p = np.asarray(path, dtype=np.float64)
    return -np.maximum(np.fmax.accumulate(np.where(np.isnan(p), -np.inf, p), axis=1), 0.0) / math.log(10.0)
