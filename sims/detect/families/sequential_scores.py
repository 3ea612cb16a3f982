r"""Anytime-valid e-processes for the detection score families (:class:`sims.detect.families.score_families.Score`).

A score family whose statistic is a sum of per-token terms of known null law gets the tilt
e-process of that law (:mod:`sims.detect.anytime.sequential_laws`): the mixture over a grid of exponential
tilts, flagged the first time it reaches 1/alpha (Ville's inequality: under the null a text is ever
flagged with probability at most alpha, however it is read or stopped).

===========  ==========================================  ===========================================
score        per-token term (scored tokens)              null law and bets
===========  ==========================================  ===========================================
``green``    green indicator                             Bernoulli(gamma): the ``redgreen`` e-process
``ems-ars``  :math:`-\ln(1 - Y_t)`                       Exp(1): the ``ems`` e-process
``ems-log``  :math:`\ln Y_t`                             -Exp(1) (:func:`~sims.detect.anytime.sequential_laws.log_uniform_law`);
                                                         bet j: Y ~ Beta(1 + theta_j, 1), factor
                                                         :math:`(1 + \theta_j) Y_t^{\theta_j}`,
                                                         :math:`\theta_j = f_j / (1 - f_j)`
===========  ==========================================  ===========================================

(:math:`Y_t` = the key's uniform of the chosen token; i.i.d. U(0, 1) under the null when each
(context, token) pair is scored once.)  The other families (``lr``, ``ems-opt``, ``ems-hc``,
``ems-trgof``) are refused by name: ``lr``'s weights and ``ems-opt``'s lattice need a model or a
class parameter per token, and HC / Tr-GoF are not sums.
"""

from __future__ import annotations

import numpy as np

from sims.core import defaults
from sims.detect.anytime import e_mixtures
from sims.detect.anytime.sequential_laws import log_uniform_law, sequential_values
from sims.detect.families import detectors, score_families
from sims.detect.stats import scores
from sims.detect.stats.gumbel_scores import log_pivot

SEQUENTIAL_SCORES = ("green", "ems-ars", "ems-log")
"""Registered score families with an e-process here."""


def check_score(name: str, algo: str) -> str:
    """``name`` if it is a registered score family of ``algo`` with an e-process, else a ValueError naming it.

    Parameters
    ----------
    name : str
        A score family name (:func:`sims.detect.families.score_families.score_names`).
    algo : str
        The algorithm it must score.

    Returns
    -------
    str
        ``name``, one of :data:`SEQUENTIAL_SCORES`.
    """
    score_families.get_score(name, algo)  # unknown or inapplicable: the score table's message
    if name not in SEQUENTIAL_SCORES:
        raise ValueError(f"score {name!r} has no anytime-valid e-process (scores with one: {SEQUENTIAL_SCORES})")
    return name


def ems_log_terms(v) -> np.ndarray:
    r"""The ``ems-log`` token terms :math:`\ln Y` from EMS token scores ``v`` :math:`= -\ln(1 - Y)`.

    Parameters
    ----------
    v : float array
        EMS token scores :math:`-\ln(1 - Y_t)` (:func:`sims.detect.stats.scores.token_scores` with ``stat="ems"``).

    Returns
    -------
    float array
        :math:`\ln Y_t`, same shape; -Exp(1) under the null.
    """
    return log_pivot(v)


def sequential_score_family(gen, name: str, *, alpha: float = defaults.FPR, dedup: bool = True, key: int | None = None, algo: str | None = None,
                            gamma: float | None = None, grid=None) -> e_mixtures.SequentialResult:
    """Anytime-valid detection of a generation with the registered score family ``name`` (module docstring).

    Parameters
    ----------
    gen : Generation
    name : one of :data:`SEQUENTIAL_SCORES`
        A score family of ``algo`` (:func:`sims.detect.families.score_families.get_score`).
    alpha : float in (0, 1)
        Level: under the null P(some prefix is flagged) <= alpha.
    dedup : bool
        Score each (context, token) pair once (default True: the i.i.d. null needs it on repetitive text).
    key, algo, gamma : optional
        Default the generation's.
    grid : optional
        The bets' fractions (:data:`sims.detect.anytime.e_mixtures.GRID`).

    Returns
    -------
    SequentialResult
        ``score`` the summed token terms.

    Examples
    --------
    >>> import sims
    >>> from sims.detect.families.sequential_scores import sequential_score_family
    >>> gen = sims.generate(sims.get_lm("news"), "ems", n=3, T=200, seed=0, key=7)
    >>> bool(sequential_score_family(gen, "ems-log", alpha=1e-4).detected.all())
    True
    """
    m = gen.meta
    algo = m["algo"] if algo is None else algo
    check_score(name, algo)
    alpha = e_mixtures.check_alpha(alpha)
    if name != "ems-log":  # green and ems-ars are the families' default e-processes
        return detectors.sequential_score(gen, alpha=alpha, dedup=dedup, key=key, gamma=gamma, algo=algo, grid=grid)
    key = m["key"] if key is None else key
    v, scored = scores.token_scores(gen.tokens, gen.prompts[:, -m["h"]:], key, stat="ems", h=m["h"], dedup=dedup, vocab_size=m["vocab_size"],
                                    lengths=gen.lengths)
    return sequential_values(np.where(scored, ems_log_terms(v), 0.0), scored, log_uniform_law(), alpha=alpha, lengths=gen.lengths, grid=grid)
