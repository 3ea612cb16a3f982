"""The detection score families as one table (name -> what it scores, what it needs, its null).

``sims detect --score NAME`` and the experiments read :data:`FAMILIES`; registering a family
with the algorithm registry is a row of this table.  ``green`` and ``ems-ars`` are today's
default detectors (:mod:`sims.detect.scores`); the others live in :mod:`sims.detect.gumbel_scores`
and :mod:`sims.detect.lr_scores`.
"""

from __future__ import annotations

from dataclasses import dataclass

from sims.detect import gumbel_scores, lr_scores, scores


@dataclass(frozen=True)
class ScoreFamily:
    """One detector family: ``algos`` it detects, whether it reads the LM, the statistic and its null."""

    name: str
    algos: tuple[str, ...]
    needs_lm: bool
    statistic: str
    null: str


_EMS = ("ems",)
FAMILIES: dict[str, ScoreFamily] = {f.name: f for f in (
    ScoreFamily("green", scores.REDGREEN_ALGOS, False, "green count", "binomial upper tail"),
    ScoreFamily("lr", lr_scores.LR_ALGOS, True, "sum of quantised LR weights of green tokens", "weighted Bernoulli lattice, tilted"),
    ScoreFamily("ems-ars", _EMS, False, "sum of -ln(1 - Y)", "Gamma(n, 1) upper tail"),
    ScoreFamily("ems-log", _EMS, False, "sum of ln Y", "Gamma(n, 1) lower tail"),
    ScoreFamily("ems-opt", _EMS, False, "sum of quantised h_Delta(Y)", "lattice convolution, tilted FFT"),
    ScoreFamily("ems-hc", _EMS, False, "higher criticism of 1 - Y", "order statistics crossing (exact recursion)"),
    ScoreFamily("ems-trgof", _EMS, False, "Tr-GoF (phi_s divergence) of 1 - Y", "order statistics crossing (exact recursion)"),
)}
SCORE_NAMES = tuple(FAMILIES)


def score_generation(gen, name: str, lm=None, *, key: int | None = None, gamma: float | None = None, dedup: bool = False,
                     algo: str | None = None, delta: float | None = None, Delta: float = gumbel_scores.OPT_DELTA,
                     s: float = gumbel_scores.TRGOF_S):
    """Score every text of ``gen`` with family ``name``; a :class:`~sims.detect.scores.DetectResult`.

    ``algo`` (default the generation's) must be one the family detects; ``lm`` defaults to the
    generation's synthetic LM for families that read it; ``delta`` is the LR score's boost (default
    the generation's, :func:`sims.detect.lr_scores.lr_delta`); ``Delta`` and ``s`` parametrise
    ``ems-opt`` and ``ems-trgof``.
    """
    if name not in FAMILIES:
        raise ValueError(f"score must be one of {SCORE_NAMES}; got {name!r}")
    fam, m = FAMILIES[name], gen.meta
    algo = m["algo"] if algo is None else algo
    if algo not in fam.algos:
        raise ValueError(f"score {name!r} detects algo one of {fam.algos}; got algo {algo!r}")
    key = m["key"] if key is None else key
    if name == "green":
        return scores.score(gen, dedup=dedup, key=key, gamma=gamma, algo=algo)
    if name == "lr":
        if lm is None:
            from sims.lm.synthetic import lm_from_meta

            lm = lm_from_meta(m)
        return lr_scores.score_lr(gen, lm, key=key, gamma=gamma, delta=delta)
    return gumbel_scores.score_gumbel(gen.tokens, gen.prompts[:, -m["h"]:], key, name, Delta=Delta, s=s, vocab_size=m["vocab_size"], h=m["h"],
                                      dedup=dedup, lengths=gen.lengths)
