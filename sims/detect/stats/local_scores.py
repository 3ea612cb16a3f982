r"""The red-green local score: the best segment's green likelihood ratio, with its exact null.

**Why a local score.**  A red-green watermark keyed by the ``h`` tokens before each token (SRL,
DualGA, hard, ATW) keeps its key through an edit: an insertion, deletion or substitution spoils the
colour of the edited token and the ``h`` after it only.  What an edit cannot leave behind is
*where* the watermark is: a watermarked passage pasted into plain text (a "copy-paste" or splicing
attack), or a text whose larger part was rewritten, keeps a run of watermarked tokens whose green
excess the whole-text green count dilutes in the plain tokens around it.  The literature's answer is a
windowed score: WinMax (Kirchenbauer et al. 2024, "On the reliability of watermarks for large
language models") takes the largest z-score over every window of every size and calibrates it on
plain text; scanning / segmentation detectors (e.g. WaterSeeker, Pan et al. 2024; Li, Li and Zhang 2024,
"Segmenting watermarked texts from language models") search for the watermarked segment.

**The statistic.**  Here the scan is the *local score* of sequence analysis (Karlin and Altschul
1990): each scored token :math:`t` with colour :math:`x_t \in \{0, 1\}` (green 1) scores

.. math:: s_t = a\,x_t - b\,(1 - x_t),\qquad
          H_n = \max_{0 \le i \le j \le n} \sum_{t=i+1}^{j} s_t = \max_t U_t,\quad U_t = \max(0, U_{t-1} + s_t),

with integers :math:`a, b \ge 1` whose ratio approximates that of the log-likelihood ratios of a
green rate :math:`\rho` against :math:`\gamma`, :math:`a/b \approx \ln(\rho/\gamma) / \ln((1-\gamma)/(1-\rho))`
(:func:`local_weights`).  :math:`H_n` is then (up to the lattice) the generalised likelihood ratio of
"one segment, at an unknown place and of unknown length, has green rate :math:`\rho`" against "no
segment": WinMax's maximum over windows of every size, with the segment's log-likelihood ratio in
place of its z-score.  On a whole watermarked text the best segment is (nearly) the whole text and
:math:`H_n` is the green count rescaled, so the local score pays only for the scan (the null of a
maximum is heavier than that of one sum: ``docs/results/fig_edit_scores``).

**The null, exact.**  Under the null the colours of a key-independent text (distinct contexts) are
i.i.d. Bernoulli(:math:`\gamma`), the default detector's null (:func:`sims.detect.stats.scores.score_redgreen`).
Then :math:`(U_t)` is a Markov chain on :math:`\{0, 1, \dots\}` and
:math:`P(H_n \ge k)` is the mass it sends to the absorbing state :math:`\{U \ge k\}` within n steps
(Mercier and Daudin 2001, "Exact distribution for the local score of one i.i.d. random sequence"):
O(n k) operations, run in log space (:func:`local_logsf`), so the tail is exact to rounding far
below 1e-300 (tested against 50-digit mpmath enumeration and run-length recursions and against
Monte Carlo, ``tests/detect/stats/test_local_scores.py``).  Repeated (context, token) pairs repeat colours
as for the green count; ``dedup`` scores each once.
"""

from __future__ import annotations

import math

import numpy as np

from sims.core import defaults
from sims.core import seeding as seeding_mod
from sims.detect.stats import _local_kernels as LK
from sims.detect.stats.nulls import LN10
from sims.detect.stats.scores import REDGREEN_ALGOS, DetectResult, _check_inputs, _stat_code, token_scores
from sims.watermarks import registry

LOCAL_ALGOS = REDGREEN_ALGOS  #: the green count's algorithms: context-keyed red-green watermarks and plain text
LOCAL_QMAX = 16  #: a + b at most: the lattice of the weights (states of the null chain grow with a)
RHO_MAX = 0.95  #: the largest target green rate (the hard watermark's is 1: a red token would cost infinitely)


def _check_rate(name: str, value, lo: float, hi: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating)) or not lo < float(value) < hi:
        raise ValueError(f"{name} must be in ({lo:g}, {hi:g}); got {value!r}")
    return float(value)


def local_weights(gamma: float, rho: float, qmax: int = LOCAL_QMAX) -> tuple[int, int]:
    r"""Integer weights (a, b) of a green and a red token, :math:`a + b \le` ``qmax``, whose ratio is the
    closest to the log-likelihood ratios' :math:`\ln(\rho/\gamma) / \ln((1-\gamma)/(1-\rho))` (module docstring).

    Parameters
    ----------
    gamma : float
        Null green probability, in (0, 1).
    rho : float
        Target green rate, in (gamma, 1).
    qmax : int, default LOCAL_QMAX
        Largest a + b, >= 2.

    Returns
    -------
    tuple of int
        (a, b), coprime.

    Examples
    --------
    >>> local_weights(0.25, 0.5)  # ln 2 / ln 1.5 = 1.71
    (7, 4)
    """
    gamma = _check_rate("gamma", gamma, 0.0, 1.0)
    rho = _check_rate("rho", rho, gamma, 1.0)
    if isinstance(qmax, bool) or int(qmax) != qmax or qmax < 2:
        raise ValueError(f"qmax must be an integer in [2, inf); got {qmax!r}")
    r = math.log(rho / gamma) / math.log((1.0 - gamma) / (1.0 - rho))
    pairs = [(a, b) for a in range(1, int(qmax)) for b in range(1, int(qmax) - a + 1) if math.gcd(a, b) == 1]
    return min(pairs, key=lambda ab: (abs(math.log(ab[0] / ab[1] / r)), ab[0] + ab[1]))


def local_rho(meta: dict, gamma: float | None = None) -> float:
    r"""The target green rate :math:`\rho` of a generation's record (module docstring), capped at ``RHO_MAX``.

    DualGA: :math:`\gamma + \Delta` (its target green probability); SRL / ATW: the green probability of
    a boost :math:`\delta` on a flat distribution, :math:`\gamma e^\delta / (\gamma e^\delta + 1 - \gamma)`
    (:math:`\delta` = ``defaults.DELTA`` where the record has none, e.g. plain text); hard: ``RHO_MAX``.
    The rule is the record's :meth:`sims.watermarks.registry.Boost.green_rate` (the flat-distribution one
    for an algorithm without a boost of one green list, or without a record).

    Parameters
    ----------
    meta : dict
        A generation's metadata.
    gamma : float, optional
        Green-list fraction (default the record's).

    Returns
    -------
    float
        :math:`\rho`.
    """
    gamma = float(meta["gamma"] if gamma is None else gamma)
    algo = meta.get("algo")
    boost = registry.get(algo).boost if algo in registry.names() else None
    rho = registry.flat_green_rate(meta, gamma) if boost is None else boost.green_rate(meta, gamma)
    return min(rho, RHO_MAX)


def local_score_reference(bits, scored, a: int, b: int) -> np.ndarray:
    """NumPy twin of :func:`sims.detect.stats._local_kernels.local_running` (the whole texts' local score H), by the
    definition: the largest sum over every segment of the scored tokens.

    Parameters
    ----------
    bits : array_like, shape (n, T)
        Green indicators.
    scored : array_like of bool, shape (n, T)
        Which tokens count.
    a, b : int
        Weights of a green (+a) and of a red (-b) token.

    Returns
    -------
    ndarray of int64, shape (n,)
        The local score H of each text (0 for an empty segment).
    """
    H = np.zeros(len(bits), dtype=np.int64)
    for i, (x, m) in enumerate(zip(np.asarray(bits), np.asarray(scored, dtype=bool))):
        s = np.where(x[m] > 0.5, a, -b)
        c = np.concatenate([[0], np.cumsum(s)])
        H[i] = max(0, max((c[j] - c[:j].min() for j in range(1, c.size)), default=0))
    return H


def local_logsf(k, n, gamma: float, a: int, b: int) -> np.ndarray:
    r"""Natural log of :math:`P(H_n \ge k)`, the local score's null tail for n i.i.d. Bernoulli(``gamma``)
    colours with weights (a, b) (module docstring), exact (Markov chain in log space).

    Parameters
    ----------
    k, n : array_like of int (broadcast), n >= 0; k <= 0 gives 0 (probability 1)
        Observed local score and number of scored tokens.
    gamma : float in (0, 1)
        Null green probability.
    a, b : int >= 1
        Weights of a green and of a red token.

    Returns
    -------
    ndarray
        ln :math:`P(H_n \ge k)`, shaped like the broadcast of ``k`` and ``n``.

    Examples
    --------
    >>> float(np.exp(local_logsf(2, 2, 0.5, 1, 1)))  # two greens in a row: 1/4
    0.25
    """
    gamma = _check_rate("gamma", gamma, 0.0, 1.0)
    for name, w in (("a", a), ("b", b)):
        if isinstance(w, bool) or int(w) != w or w < 1:
            raise ValueError(f"{name} must be an integer in [1, inf); got {w!r}")
    k, n = np.broadcast_arrays(np.asarray(k), np.asarray(n))
    for name, v in (("k", k), ("n", n)):
        if v.dtype.kind not in "iu" and not (v.dtype.kind == "f" and np.all(v == np.round(v))):
            raise ValueError(f"{name} must hold integers; got {v.ravel()[:3]}")
    if np.any(n < 0):
        raise ValueError(f"n must be >= 0; got {n[n < 0][:3]}")
    out = np.empty(k.size)
    LK.local_logsf_many(k.astype(np.int64).ravel(), n.astype(np.int64).ravel(), int(a), int(b), math.log(gamma), math.log1p(-gamma), out)
    return out.reshape(k.shape)


def local_segments(tokens, prompts, key: int, gamma: float, *, rho: float, vocab_size: int | None = None, h: int = defaults.H,
                   dedup: bool = False, green_kind: str = defaults.GREEN_KIND, lengths=None, prf: str = defaults.PRF,
                   seeding: str = seeding_mod.DEFAULT):
    """(Hrun, nrun, start, stop, g_eff, (a, b)): the local score and the scored tokens of every prefix
    ((n_texts, T) int arrays; the last column is the whole text), the positions [start, stop) of each text's
    best segment, the colours' null rate and the weights (arguments as :func:`score_local`).

    Parameters
    ----------
    tokens, prompts, key, gamma, rho, vocab_size, h, dedup, green_kind, lengths, prf, seeding :
        As :func:`score_local`.

    Returns
    -------
    tuple
        ``(Hrun, nrun, start, stop, g_eff, (a, b))`` as above.
    """
    bits, scored = token_scores(tokens, prompts, key, stat="green", gamma=gamma, h=h, green_kind=green_kind, dedup=dedup, vocab_size=vocab_size,
                                lengths=lengths, prf=prf, seeding=seeding)
    g_eff = _stat_code("green", gamma, green_kind, vocab_size)[3]
    a, b = local_weights(g_eff, rho)
    n_txt = bits.shape[0]
    Hrun = np.zeros(bits.shape, dtype=np.int64)
    start, stop = np.zeros(n_txt, dtype=np.int64), np.zeros(n_txt, dtype=np.int64)
    LK.local_running(np.ascontiguousarray(bits), np.ascontiguousarray(scored), a, b, Hrun, start, stop)
    return Hrun, np.cumsum(scored, axis=1), start, stop, g_eff, (a, b)


def score_local(tokens, prompts, key: int, gamma: float, *, rho: float, vocab_size: int | None = None, h: int = defaults.H, dedup: bool = False,
                green_kind: str = defaults.GREEN_KIND, lengths=None, prf: str = defaults.PRF, seeding: str = seeding_mod.DEFAULT) -> DetectResult:
    r"""Red-green detection by the local score (module docstring): the best segment's weighted green
    excess :math:`H_n` and its exact null tail :math:`P(H_n \ge H)`.

    Parameters
    ----------
    tokens, prompts, key, gamma, vocab_size, h, dedup, green_kind, lengths, prf, seeding
        As :func:`sims.detect.stats.scores.score_redgreen`.
    rho : float in (gamma, 1)
        The green rate of the segment sought; sets the weights (:func:`local_weights`).

    Returns
    -------
    DetectResult
        ``score`` = H (in lattice units), ``z`` nan, exact log10 p; texts with at most one scored token too short to test (p = 1).

    Examples
    --------
    >>> import sims
    >>> lm = sims.get_lm("tiny")
    >>> gen = sims.generate(lm, "srl", n=2, T=20, seed=0, key=42, gamma=0.25, delta=2.0, prompt_len=4)
    >>> r = score_local(gen.tokens, gen.prompts, 42, 0.25, rho=0.7, vocab_size=lm.vocab_size)
    >>> r.score.tolist(), [round(float(x), 3) for x in r.log10_p]
    ([65.0, 68.0], [-3.397, -3.728])
    """
    tokens, prompts, lengths = _check_inputs(tokens, prompts, vocab_size, h, lengths)
    Hrun, nrun, _, _, g_eff, (a, b) = local_segments(tokens, prompts, key, gamma, rho=rho, vocab_size=vocab_size, h=h, dedup=dedup,
                                                     green_kind=green_kind, lengths=lengths, prf=prf, seeding=seeding)
    if Hrun.shape[1] == 0:
        Hrun, nrun = np.zeros((Hrun.shape[0], 1), dtype=np.int64), np.zeros((Hrun.shape[0], 1), dtype=np.int64)
    H, n = Hrun[:, -1], nrun[:, -1]
    short = n <= 1
    logp = np.where(short, 0.0, local_logsf(H, n, g_eff, a, b) / LN10)
    return DetectResult(n, H.astype(np.float64), np.full(n.size, np.nan), logp, short)


def _generation_args(gen, key, gamma, rho, algo) -> tuple[tuple, dict]:
    m = gen.meta
    gamma = m["gamma"] if gamma is None else gamma
    if (algo or m["algo"]) != registry.NULL and abs(float(gamma) - float(m["gamma"])) > 1e-12:
        raise ValueError(f"gamma must equal the generation's gamma {m['gamma']!r} (gamma mismatch between generation and detection); got {gamma!r}")
    rho = local_rho(m, gamma) if rho is None else rho
    return ((gen.tokens, gen.prompts[:, -m["h"]:], m["key"] if key is None else key, gamma),
            dict(rho=rho, vocab_size=m["vocab_size"], h=m["h"], green_kind=m.get("green_kind", defaults.GREEN_KIND), lengths=gen.lengths,
                 prf=m.get("prf", defaults.PRF), seeding=seeding_mod.seeding_of(m)))


def score_local_generation(gen, *, key: int | None = None, gamma: float | None = None, rho: float | None = None, dedup: bool = False,
                           algo: str | None = None) -> DetectResult:
    """:func:`score_local` of a generation with its record's settings; ``rho`` defaults to :func:`local_rho` of the record.

    Parameters
    ----------
    gen : Generation
        The texts.
    key : int, optional
        The key (default the generation's).
    gamma : float, optional
        Green-list fraction (default the generation's).
    rho : float, optional
        Target green rate.
    dedup : bool, default False
        Score each (context, token) pair once.
    algo : str, optional
        Algorithm whose target rate to use (default the generation's).

    Returns
    -------
    DetectResult
        The local score of each text and its exact p-value.
    """
    args, kw = _generation_args(gen, key, gamma, rho, algo)
    return score_local(*args, dedup=dedup, **kw)


def local_prefix_log10p(gen, lengths, *, key: int | None = None, rho: float | None = None, dedup: bool = False) -> np.ndarray:
    """(n_texts, len(lengths)) exact log10 p of the local score of each text's first ``lengths`` tokens
    (capped at the text's length); 0 where at most one token is scored.

    Parameters
    ----------
    gen : Generation
        The texts (its record gives gamma, h, seeding).
    lengths : array_like of int
        Prefix lengths.
    key : int, optional
        The key (default the generation's).
    rho : float, optional
        Target green rate (default :func:`local_rho` of the record).
    dedup : bool, default False
        Score each (context, token) pair once.

    Returns
    -------
    ndarray, shape (n_texts, len(lengths))
        log10 p of each prefix's local score.
    """
    args, kw = _generation_args(gen, key, None, rho, None)
    Hrun, nrun, _, _, g_eff, (a, b) = local_segments(*args, dedup=dedup, **kw)
    L = np.clip(np.asarray(lengths, dtype=np.int64), 1, max(1, Hrun.shape[1])) - 1
    if Hrun.shape[1] == 0:
        return np.zeros((Hrun.shape[0], L.size))
    H, n = Hrun[:, L], nrun[:, L]
    return np.where(n <= 1, 0.0, local_logsf(H, n, g_eff, a, b) / LN10)
