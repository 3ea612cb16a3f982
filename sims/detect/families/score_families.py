"""The detection score families: the scores a detector may use, each one :class:`Score` record registered here.

Each family is one :class:`Score` record (name, the algorithms it scores, whether it reads the LM,
its statistic and its null, the function that scores a generation), registered by the explicit
:func:`register_score` calls of this module; ``sims detect --score NAME``, a sweep grid's ``score``
key (:mod:`sims.sweep.grid`) and ``paper_figs/fig_scores.py`` read them through
:func:`score_names` / :func:`get_score`, which refuse an unknown or inapplicable score with one
message.  ``green`` and ``ems-ars`` are today's
default detectors (:mod:`sims.detect.stats.scores`); the others live in :mod:`sims.detect.stats.gumbel_scores`
and :mod:`sims.detect.stats.lr_scores`, ``ewd`` (the entropy-weighted green count) in :mod:`sims.detect.stats.ewd_scores`,
``green-local`` (the red-green scan for spliced or partly rewritten text) in
:mod:`sims.detect.stats.local_scores`; ``hits`` is the keyed-order default (ITS / UW) and ``its-edit`` its
edit-tolerant alignment (:mod:`sims.detect.stats.edit_scores`); ``ems-edit`` aligns EMS text past inserted
tokens (:mod:`sims.detect.stats.ems_edit`).  The table is this module's own: no other
module's table is filled by importing it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from sims.core import defaults
from sims.detect.families import detectors
from sims.detect.stats import edit_scores, ems_edit, ewd_scores, exp_scores, gumbel_scores, local_scores, lr_scores, scores
from sims.detect.stats.marks import check_fpr
from sims.watermarks import registry


@dataclass(frozen=True)
class Score:
    """One detection score family: a detector of the algorithms it applies to.

    Attributes
    ----------
    name : str
        What ``sims detect --score``, a sweep grid's ``score`` key and the figures call it.
    algos : tuple of str
        The registered algorithms whose texts it scores with an exact null.
    needs_lm : bool
        It reads the LM's next-token probabilities (the likelihood-ratio score).
    statistic, null : str
        What it sums or maximises, and how its null tail is computed.
    scorer : callable
        ``scorer(gen, lm, *, key, gamma, dedup, algo, **options) -> DetectResult``.
    default : bool
        Today's default detector of its algorithms (the green count, the EMS sum).
    """

    name: str
    algos: tuple[str, ...]
    needs_lm: bool
    statistic: str
    null: str
    scorer: Callable
    default: bool = False


_SCORES: dict[str, Score] = {}


def register_score(score: Score) -> Score:
    """Add detector score family ``score`` (its name unused, its algorithms registered); returns it.

    Parameters
    ----------
    score : Score
        The record; its ``name`` must be new and its ``algos`` a non-empty tuple of registered algorithms.

    Returns
    -------
    Score
        ``score`` itself.
    """
    if score.name in _SCORES:
        raise ValueError(f"score {score.name!r} is registered already")
    unknown = [a for a in score.algos if a not in registry.names()]
    if unknown or not score.algos:
        raise ValueError(f"score {score.name!r}: algos must be registered algorithms {registry.names()}; got {score.algos}")
    _SCORES[score.name] = score
    return score


def score_names(algo: str | None = None) -> tuple[str, ...]:
    """The registered score families in registration order; with ``algo``, those that score its texts (default first).

    Parameters
    ----------
    algo : str, optional
        A registered algorithm; None: every score family.

    Returns
    -------
    tuple of str
        The score names; with ``algo``, its default detector's first, then the others in registration order.
    """
    if algo is None:
        return tuple(_SCORES)
    registry.get(algo)
    fits = [s for s in _SCORES.values() if algo in s.algos]
    return tuple(s.name for s in sorted(fits, key=lambda s: not s.default))


def get_score(name: str, algo: str | None = None) -> Score:
    """The score family ``name``; with ``algo``, checked to apply to its texts.

    Parameters
    ----------
    name : str
        A registered score name (:func:`score_names`).
    algo : str, optional
        An algorithm the score must apply to; None: no check.

    Returns
    -------
    Score
        The registered record.

    Raises
    ------
    ValueError
        Naming the score and the registered ones (unknown name), or the algorithm and the scores that apply to it
        (inapplicable score).
    """
    s = _SCORES.get(name) if isinstance(name, str) else None
    if s is None:
        raise ValueError(f"score must be one of {tuple(_SCORES)}; got {name!r}")
    if algo is not None and algo not in s.algos:
        raise ValueError(f"score {name!r} does not apply to algo {algo!r} (it scores {s.algos}); scores of {algo!r}: {score_names(algo)}")
    return s


def _green(gen, lm, *, key, gamma, dedup, algo, **_):
    return detectors.score(gen, dedup=dedup, key=key, gamma=gamma, algo=algo)


def _green_local(gen, lm, *, key, gamma, dedup, algo, rho=None, **_):
    return local_scores.score_local_generation(gen, key=key, gamma=gamma, rho=rho, dedup=dedup, algo=algo)


def _lm_of(gen, lm):
    if lm is None:  # the generation's LM behind the one door: a synthetic one's tables, a real one's softmax
        from sims.lm.door import lm_of

        lm = lm_of(gen.meta)
    return lm


def _lr(gen, lm, *, key, gamma, dedup, algo, delta=None, **_):
    return lr_scores.score_lr(gen, _lm_of(gen, lm), key=key, gamma=gamma, delta=delta)


def _ewd(gen, lm, *, key, gamma, dedup, algo, delta=None, **_):
    return ewd_scores.score_ewd(gen, _lm_of(gen, lm), key=key, gamma=gamma, dedup=dedup, algo=algo, delta=delta)


def _gumbel(name):
    def scorer(gen, lm, *, key, gamma, dedup, algo, Delta=gumbel_scores.OPT_DELTA, s=gumbel_scores.TRGOF_S, **_):
        m = gen.meta
        return gumbel_scores.score_gumbel(gen.tokens, gen.prompts[:, -m["h"]:], key, name, Delta=Delta, s=s, vocab_size=m["vocab_size"],
                                          h=m["h"], dedup=dedup, lengths=gen.lengths)
    return scorer


def _hits(gen, lm, *, key, gamma, dedup, algo, **_):
    return detectors.score(gen, _lm_of(gen, lm), key=key, algo=algo)


def _its_edit(gen, lm, *, key, **_):
    return edit_scores.score_its_edit(gen, _lm_of(gen, lm), key=key)


def _ems_edit(gen, lm, *, key, **_):
    return ems_edit.score_ems_edit(gen, key=key)


def _exp_edit(gen, lm, *, key, algo, **_):
    return exp_scores.score_exp_edit(gen, key=key, algo=algo)


_EMS = registry.names(family="ems")  # Y = r_y is uniform under H0 whatever the keyed sampling rule: every null exact
for _s in (
    Score("green", scores.REDGREEN_ALGOS, False, "green count", "binomial upper tail", _green, default=True),
    Score("green-local", local_scores.LOCAL_ALGOS, False, "best segment's green log-likelihood ratio (local score, integer weights)",
          "local-score Markov chain (exact, log space)", _green_local),
    Score("lr", lr_scores.LR_ALGOS, True, "sum of quantised LR weights of green tokens", "weighted Bernoulli lattice, tilted", _lr),
    Score("ewd", ewd_scores.EWD_ALGOS, True, "sum of lattice-rounded spike-entropy weights of green tokens (EWD)",
          "weighted Bernoulli lattice, exact log-space convolution", _ewd),
    Score("ems-ars", _EMS, False, "sum of -ln(1 - Y)", "Gamma(n, 1) upper tail", _gumbel("ems-ars"), default=True),
    Score("ems-log", _EMS, False, "sum of ln Y", "Gamma(n, 1) lower tail", _gumbel("ems-log")),
    Score("ems-opt", _EMS, False, "sum of quantised h_Delta(Y)", "lattice convolution, tilted FFT", _gumbel("ems-opt")),
    Score("ems-hc", _EMS, False, "higher criticism of 1 - Y", "order statistics crossing (exact recursion)", _gumbel("ems-hc")),
    Score("ems-trgof", _EMS, False, "Tr-GoF (phi_s divergence) of 1 - Y", "order statistics crossing (exact recursion)", _gumbel("ems-trgof")),
    Score("hits", scores.KEYED_ORDER_ALGOS, True, "keyed-order hit count", "Poisson-binomial upper tail (exact DP)", _hits, default=True),
    Score("its-edit", edit_scores.EDIT_ALGOS, True, "best key alignment of -ln p(y) weighted hits, less gaps",
          "permutation over fresh keys (exact, resolution 1e-4)", _its_edit),
    Score("ems-edit", ems_edit.EMS_EDIT_ALGOS, False, "best insertion alignment of -ln(1 - Y), less gaps (EXP-edit)",
          "permutation over fresh keys (exact, resolution 1e-4)", _ems_edit),
    Score("exp-edit", exp_scores.EXP_EDIT_ALGOS, False, "best Levenshtein alignment of -ln(1 - xi_{j, y_t}) with the key sequence, less gaps",
          "permutation over fresh keys (exact, resolution 1e-4)", _exp_edit),
):
    register_score(_s)

SCORES: dict[str, Score] = {n: get_score(n) for n in score_names()}
"""The registered families by name."""
#: The registered score families' names, in registration order (``sims detect --score``'s choices).
SCORE_NAMES = tuple(SCORES)


def score_generation(gen, name: str, lm=None, *, key: int | None = None, gamma: float | None = None, dedup: bool = False,
                     algo: str | None = None, delta: float | None = None, Delta: float = gumbel_scores.OPT_DELTA,
                     s: float = gumbel_scores.TRGOF_S, rho: float | None = None, fpr: float = defaults.FPR):
    """Score every text of ``gen`` with the registered family ``name``; a :class:`~sims.detect.stats.scores.DetectResult`.

    ``algo`` (default the generation's) must be one the family scores
    (:func:`get_score` refuses it otherwise); ``lm`` defaults to the
    generation's LM for families that read it (:func:`sims.lm.door.lm_of`: a synthetic LM's tables, a real LM's softmax); ``delta`` is the LR
    score's boost (default the generation's, :func:`sims.detect.stats.lr_scores.lr_delta`) and the boost of EWD's spike-entropy
    modulus (default :func:`sims.detect.stats.ewd_scores.ewd_delta`); ``Delta`` and ``s`` parametrise
    ``ems-opt`` and ``ems-trgof``; ``rho`` the green rate ``green-local`` seeks (default
    :func:`sims.detect.stats.local_scores.local_rho` of the record); ``fpr`` the level of the result's decision
    (:attr:`~sims.detect.stats.scores.DetectResult.watermarked`, default 1e-4).

    Parameters
    ----------
    gen : Generation
        The texts and their record (``meta``: algorithm, key, gamma, h).
    name : str
        The registered score family (:func:`score_names`).
    lm : LM or SyntheticLM, optional
        The LM of the families that read it (``lr``, ``ewd``, ``hits``, ``its-edit``); None: the generation's.
    key : int, optional
        The detection key; None: the generation's.
    gamma : float, optional
        The green-list ratio; None: the generation's.
    dedup : bool
        Score each (context, token) pair once (default False).
    algo : str, optional
        The algorithm whose texts are scored; None: the generation's.
    delta : float, optional
        The LR score's boost and EWD's spike-entropy boost (see above).
    Delta : float
        ``ems-opt``'s lattice parameter (default :data:`sims.detect.stats.gumbel_scores.OPT_DELTA`).
    s : float
        ``ems-trgof``'s divergence index (default :data:`sims.detect.stats.gumbel_scores.TRGOF_S`).
    rho : float, optional
        The green rate ``green-local`` seeks (see above).
    fpr : float in (0, 1)
        The false-positive rate of the result's decision.

    Returns
    -------
    DetectResult
        One entry per text: the family's statistic, its exact null log10 p-value and the scored token count.
    """
    fpr = check_fpr(fpr)
    m = gen.meta
    algo = m["algo"] if algo is None else algo
    fam = get_score(name, algo)
    key = m["key"] if key is None else key
    res = fam.scorer(gen, lm, key=key, gamma=gamma, dedup=dedup, algo=algo, delta=delta, Delta=Delta, s=s, rho=rho)
    return dataclasses.replace(res, fpr=fpr)
