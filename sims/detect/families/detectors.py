"""A generation's detectors: its algorithm's detector family scores it (fixed length, anytime-valid, many keys).

Each function looks up the family of the algorithm (:func:`sims.detect.families.of`, the generation's
algorithm unless ``algo`` names another) and asks it: :func:`score` (the fixed-length statistic and
its exact p-value), :func:`sequential_score` (the anytime-valid e-process), :func:`score_keys` (every
key's exact p-value).  Nothing here compares a family's or an algorithm's name.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from sims.core import defaults
from sims.detect import families
from sims.detect.anytime.e_mixtures import SequentialResult
from sims.detect.multiple import check_keys
from sims.detect.stats.marks import check_fpr
from sims.detect.stats.scores import DetectResult


def score(gen, lm=None, *, dedup: bool = False, key: int | None = None, gamma: float | None = None, algo: str | None = None,
          stat: str | None = None, params: dict | None = None, fpr: float = defaults.FPR) -> DetectResult:
    """The detector matching a :class:`~sims.watermarks.generate.Generation`'s algorithm: its
    record's detector family (:func:`sims.detect.families.of`) scores the texts.

    red-green (none, srl, hard, dualga, atw): :func:`score_redgreen`; ``autocov``:
    :func:`score_autocov`; ``ems``: :func:`score_ems`; keyed (its / uw-delta / uw-gamma):
    :func:`score_keyed_order` (needs ``lm``); entropy-gated (sweet): the green count over the positions where the LM's
    entropy exceeds the record's ``alpha``, :mod:`sims.detect.stats.gated_scores` (needs ``lm``); tournament (synthid):
    :func:`sims.detect.stats.tournament_scores.score_tournament`, its ``stat`` "mean" (default) or "weighted".

    ``key`` defaults to the generation's (another key scores the text as a stranger would:
    the null).  ``gamma`` defaults to the generation's; a different gamma for a watermarked
    generation is refused (a gamma mismatch between generation and detection gives a
    meaningless test).  ``algo`` (default the generation's) picks the detector, e.g. to
    score unwatermarked ("none") texts with a watermark's detector.  ``params``: the parameters of
    ``algo`` the detector reads (the tournament's ``m`` and ``mask_repeated``), default the
    generation's where it is of ``algo``, else the registry's defaults.

    Parameters
    ----------
    gen : Generation
        The texts and their record (``meta`` names algorithm, key, gamma, h).
    lm : LM or SyntheticLM, optional
        The LM (:func:`sims.get_lm`), needed by the keyed-order detectors only.
    dedup : bool
        Score each (context, token) pair once.
    key, gamma, algo : optional
        Overrides of the generation's key, green-list ratio and algorithm (see above).
    stat, params : optional
        The tournament family's statistic (``"mean"`` default, ``"weighted"``) and parameters (see above).
    fpr : float in (0, 1)
        The false-positive rate of the result's decision :attr:`~sims.detect.stats.scores.DetectResult.watermarked`
        (default 1e-4, as ``sims detect --fpr``).

    Returns
    -------
    DetectResult
        One entry per text.

    References
    ----------
    Towards Better Statistical Understanding of Watermarking LLMs, the z-score eq. (7) (eq:z_score), the exact
    p-values eqs. (17)-(19) of App. F (eq:three_brick_p, eq:ems_zscore, eq:ems_pval) and Prop. B.1
    (prop:type_I&II).

    Examples
    --------
    >>> import sims
    >>> lm = sims.get_lm("tiny")
    >>> gen = sims.generate(lm, "srl", n=2, T=20, seed=0, key=42, gamma=0.25, delta=2.0, prompt_len=4)
    >>> r = sims.score(gen)
    >>> [round(float(x), 3) for x in r.log10_p]
    [-3.736, -3.736]
    >>> r.fpr, r.watermarked.tolist(), sims.score(gen, fpr=1e-3).watermarked.tolist()
    (0.0001, [False, False], [True, True])
    """
    m = gen.meta
    algo = m["algo"] if algo is None else algo
    family = families.of(algo)
    key = m["key"] if key is None else key
    fpr = check_fpr(fpr)
    return dataclasses.replace(family.score(gen, lm, algo=algo, key=key, dedup=dedup, gamma=gamma, stat=stat, params=params), fpr=fpr)


def sequential_score(gen, lm=None, *, alpha: float = defaults.FPR, dedup: bool = True, key: int | None = None, gamma: float | None = None,
                     algo: str | None = None, grid=None) -> SequentialResult:
    """The anytime-valid detector matching a generation's algorithm (as :func:`sims.detect.families.detectors.score`):
    its detector family's e-process (:meth:`sims.detect.families.DetectorFamily.sequential`).

    ``dedup`` applies to the red-green, AutoCov and EMS families; the tournament family (SynthID)
    skips repeated contexts by its own ``mask_repeated`` (the generation's, else the registry's default).

    Parameters
    ----------
    gen : Generation
        The texts and their record (``meta`` names algorithm, key, gamma, h).
    lm : LM or SyntheticLM, optional
        The LM, needed by the keyed-order and entropy-gated families only.
    alpha : float in (0, 1)
        The level: a text is flagged once its e-value reaches 1/alpha, so that a null text is ever flagged with
        probability at most alpha (default 1e-4).
    dedup : bool
        Bet on each (context, token) pair once (default True).
    key, gamma, algo : optional
        Overrides of the generation's key, green-list ratio (a mismatch with a watermarked generation's is refused:
        :func:`sims.detect.families.check_gamma`) and algorithm.
    grid : array, optional
        The e-process mixture's grid of bets; None: the default grid.

    Returns
    -------
    SequentialResult
        One entry per text: scored count, summed statistic, final log e-value and stopping time (-1: never).

    Examples
    --------
    >>> import sims
    >>> from sims.detect.families.detectors import sequential_score
    >>> gen = sims.generate(sims.get_lm("news"), "srl", n=4, T=200, seed=0, key=7, delta=2.0)
    >>> r = sequential_score(gen, alpha=1e-4)
    >>> bool(r.detected.all()), bool((r.stop < 200).all())
    (True, True)
    """
    m = gen.meta
    algo = m["algo"] if algo is None else algo
    family = families.of(algo)
    key = m["key"] if key is None else key
    gamma = families.check_gamma(m, gamma)
    return family.sequential(gen, lm, algo=algo, key=key, dedup=dedup, gamma=gamma, alpha=alpha, grid=grid)


def score_keys(gen, keys, lm=None, *, dedup: bool = True, gamma: float | None = None, algo: str | None = None,
               step_probs=None) -> tuple[np.ndarray, np.ndarray]:
    """Exact log10 p-value of every text of ``gen`` under every key, for every detector family of the
    registry (the family of ``algo``, default the generation's: :meth:`sims.detect.families.DetectorFamily.many_keys`).

    Red-green and EMS hash every key in one pass over the tokens (:func:`score_redgreen_keys`, the
    EMS sum's Gamma(n, 1) tail); the other families are scored key by key (keyed orders read the
    model's probabilities once: ``lm`` or ``step_probs``; the tournament family ignores ``dedup``: its
    ``mask_repeated`` skips repeated contexts).

    Parameters
    ----------
    gen : Generation
        The texts and their record (``meta`` names algorithm, gamma, h).
    keys : sequence of int
        The K keys to score under (checked by :func:`sims.detect.multiple.check_keys`).
    lm : LM or SyntheticLM, optional
        The LM, needed by the keyed-order and entropy-gated families (unless ``step_probs`` is given).
    dedup : bool
        Score each (context, token) pair once (default True; ignored by the tournament family).
    gamma, algo : optional
        Overrides of the generation's green-list ratio and algorithm.
    step_probs : array, optional
        The LM's next-token probabilities at every position of ``gen`` (keyed orders), read once for all keys.

    Returns
    -------
    log10_p, n_scored : (K, n) arrays
        Exact log10 p-value and scored token count of text ``i`` under key ``keys[k]``.

    Examples
    --------
    >>> import sims
    >>> from sims.detect.families.detectors import score_keys
    >>> from sims.detect.multiple import holm
    >>> gen = sims.generate(sims.get_lm("news"), "ems", n=2, T=100, seed=0, key=5)
    >>> lp, _ = score_keys(gen, [3, 4, 5, 6])
    >>> holm(lp, 1e-4).T.tolist()  # only key 5 marked the texts
    [[False, False, True, False], [False, False, True, False]]
    """
    keys = check_keys(keys)
    algo = gen.meta["algo"] if algo is None else algo
    return families.of(algo).many_keys(gen, keys, lm, algo=algo, dedup=dedup, gamma=gamma, step_probs=step_probs)
