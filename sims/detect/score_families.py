"""The detection score families, registered as detector families of the algorithm registry.

Each family is one :class:`sims.watermarks.registry.Score` record (name, the algorithms it
scores, whether it reads the LM, its statistic and its null, the function that scores a
generation); ``sims detect --score NAME``, a sweep grid's ``score`` key
(:mod:`sims.experiments.sweep_grid`) and ``paper_figs/fig_scores.py`` read them through
:func:`sims.watermarks.registry.score_names` / :func:`~sims.watermarks.registry.get_score`, which
refuse an unknown or inapplicable score with one message.  ``green`` and ``ems-ars`` are today's
default detectors (:mod:`sims.detect.scores`); the others live in :mod:`sims.detect.gumbel_scores`
and :mod:`sims.detect.lr_scores`, ``green-local`` (the red-green scan for spliced or partly rewritten text) in
:mod:`sims.detect.local_scores`; ``hits`` is the keyed-order default (ITS / UW) and ``its-edit`` its
edit-tolerant alignment (:mod:`sims.detect.edit_scores`).  This module is imported by :mod:`sims.detect`,
so every reader of the registry sees the families.
"""

from __future__ import annotations

from sims.detect import detectors, edit_scores, gumbel_scores, local_scores, lr_scores, scores
from sims.watermarks import registry
from sims.watermarks.registry import Score


def _green(gen, lm, *, key, gamma, dedup, algo, **_):
    return detectors.score(gen, dedup=dedup, key=key, gamma=gamma, algo=algo)


def _green_local(gen, lm, *, key, gamma, dedup, algo, rho=None, **_):
    return local_scores.score_local_generation(gen, key=key, gamma=gamma, rho=rho, dedup=dedup, algo=algo)


def _lm_of(gen, lm):
    if lm is None:
        from sims.lm.synthetic import lm_from_meta

        lm = lm_from_meta(gen.meta)
    return lm


def _lr(gen, lm, *, key, gamma, dedup, algo, delta=None, **_):
    return lr_scores.score_lr(gen, _lm_of(gen, lm), key=key, gamma=gamma, delta=delta)


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


_EMS = ("ems",)
for _s in (
    Score("green", scores.REDGREEN_ALGOS, False, "green count", "binomial upper tail", _green, default=True),
    Score("green-local", local_scores.LOCAL_ALGOS, False, "best segment's green log-likelihood ratio (local score, integer weights)",
          "local-score Markov chain (exact, log space)", _green_local),
    Score("lr", lr_scores.LR_ALGOS, True, "sum of quantised LR weights of green tokens", "weighted Bernoulli lattice, tilted", _lr),
    Score("ems-ars", _EMS, False, "sum of -ln(1 - Y)", "Gamma(n, 1) upper tail", _gumbel("ems-ars"), default=True),
    Score("ems-log", _EMS, False, "sum of ln Y", "Gamma(n, 1) lower tail", _gumbel("ems-log")),
    Score("ems-opt", _EMS, False, "sum of quantised h_Delta(Y)", "lattice convolution, tilted FFT", _gumbel("ems-opt")),
    Score("ems-hc", _EMS, False, "higher criticism of 1 - Y", "order statistics crossing (exact recursion)", _gumbel("ems-hc")),
    Score("ems-trgof", _EMS, False, "Tr-GoF (phi_s divergence) of 1 - Y", "order statistics crossing (exact recursion)", _gumbel("ems-trgof")),
    Score("hits", scores.KEYED_ORDER_ALGOS, True, "keyed-order hit count", "Poisson-binomial upper tail (exact DP)", _hits, default=True),
    Score("its-edit", edit_scores.EDIT_ALGOS, True, "best key alignment of -ln p(y) weighted hits, less gaps",
          "permutation over fresh keys (exact, resolution 1e-4)", _its_edit),
):
    registry.register_score(_s)

FAMILIES: dict[str, Score] = {n: registry.get_score(n) for n in registry.score_names()}
"""The registered families by name (a view of the registry at import)."""
SCORE_NAMES = tuple(FAMILIES)


def score_generation(gen, name: str, lm=None, *, key: int | None = None, gamma: float | None = None, dedup: bool = False,
                     algo: str | None = None, delta: float | None = None, Delta: float = gumbel_scores.OPT_DELTA,
                     s: float = gumbel_scores.TRGOF_S, rho: float | None = None):
    """Score every text of ``gen`` with the registered family ``name``; a :class:`~sims.detect.scores.DetectResult`.

    ``algo`` (default the generation's) must be one the family scores
    (:func:`sims.watermarks.registry.get_score` refuses it otherwise); ``lm`` defaults to the
    generation's synthetic LM for families that read it; ``delta`` is the LR score's boost (default
    the generation's, :func:`sims.detect.lr_scores.lr_delta`); ``Delta`` and ``s`` parametrise
    ``ems-opt`` and ``ems-trgof``; ``rho`` the green rate ``green-local`` seeks (default
    :func:`sims.detect.local_scores.local_rho` of the record).
    """
    m = gen.meta
    algo = m["algo"] if algo is None else algo
    fam = registry.get_score(name, algo)
    key = m["key"] if key is None else key
    return fam.scorer(gen, lm, key=key, gamma=gamma, dedup=dedup, algo=algo, delta=delta, Delta=Delta, s=s, rho=rho)
