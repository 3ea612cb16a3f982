"""A key-holding attack oracle for every detector: replace the tokens that add most to the score.

The colour oracle (:func:`sims.attack` ``"color"``) turns green tokens red, which means nothing
for EMS or UW.  This oracle ranks a text's tokens by their contribution to the detector's
statistic and replaces the top ``rate`` share, left to right, by the LM's most probable token
that contributes little.  The families with per-token marks
(:meth:`sims.detect.families.DetectorFamily.marks`) rank by them:

* red-green (SRL, DualGA, ATW, MorphMark, Unigram, DiPmark) and the entropy-gated family (SWEET):
  contribution 1{y green} (SWEET: at the positions its gate counts); replacement the most probable
  red token under the text's own green lists (the colour oracle;
  :func:`sims.experiments._attack_kernels.most_probable_red`).
* EMS (EMS, PF, GumbelSoft) and EMS at positions (EXP): contribution :math:`-\\ln(1 - r_{t,y})`
  (eq. ems_zscore's summand, null mean 1), r keyed by the context (EMS) or by the key vector
  :math:`\\xi_{t \\bmod n}` (EXP); replacement the most probable token with :math:`r_{t,y} < 1/2`
  (contribution < ln 2).

The others (UW, ITS, SynthID) count every watermarked token as a hit, worth :math:`-\\ln \\pi_t` with
:math:`\\pi_t = p_t(y_t)` to the Poisson-binomial tail; replacement the most probable other token (for
UW-delta never a hit; for UW-gamma a hit only if it lies in the kept half).
"""

from __future__ import annotations

import copy

import numpy as np

MARKED = ("redgreen", "entropy_gated", "ems", "ems_position")
"""The detector families whose per-token marks rank the oracle's targets (module docstring)."""


def _family(gen) -> str:
    from sims.watermarks import registry

    return registry.get(gen.meta["algo"]).family


def oracle_contributions(gen, lm) -> np.ndarray:
    """Each token's contribution to the detector's statistic, shape ``gen.tokens.shape`` (module docstring): the
    family's marks without dedup (zero outside an entropy gate), else :math:`-\\ln p_t(y_t)`."""
    from sims.detect import families
    from sims.lm.synthetic import lm_step_probs

    fam = _family(gen)
    if fam in MARKED:
        marks = families.get(fam).marks(gen, gen.meta["key"], gamma=gen.meta.get("gamma"), dedup=False, lm=lm)
        return marks.values if marks.gate is None else np.where(marks.gate, marks.values, 0.0)
    step = lm_step_probs(lm, gen)
    return np.stack([-np.log(step(i)[np.arange(gen.tokens.shape[1]), gen.tokens[i]]) for i in range(len(gen.tokens))])


def _replacement(gen, fam: str, p: np.ndarray, ctx: np.ndarray, t: int, y: int) -> int:
    """The oracle's token in place of ``y`` at generated position ``t`` after ``ctx``, ``p`` the LM's next-token
    probabilities there (module docstring)."""
    from sims.core import keys, prf
    from sims.core.windows import last
    from sims.detect.stats.exp_scores import exp_n_of
    from sims.experiments._attack_kernels import most_probable_outside, most_probable_red

    m = gen.meta
    if fam == "ems":
        return most_probable_outside(p, m["key"], last(ctx, m["h"]), stream=prf.EMS)
    if fam == "ems_position":  # the key vector's hash is the context hash of the one-token window [t mod n]
        return most_probable_outside(p, m["key"], np.array([t % exp_n_of(m, m["algo"])]), stream=keys.EXP_STREAM)
    if fam in MARKED:
        return most_probable_red(p, m, ctx)
    p = p.copy()
    p[y] = -1.0
    return int(np.argmax(p))


def score_oracle(gen, lm, rate: float, *, contrib: np.ndarray | None = None):
    """Attack every text of ``gen`` (a :class:`sims.Generation` of ``lm``) at ``rate`` (share of tokens).

    ``contrib``: :func:`oracle_contributions` of ``gen``, computed once for several rates (default: computed here)."""
    from sims.core.record import Generation

    if not 0.0 <= rate <= 1.0:
        raise ValueError(f"rate must be in [0, 1]; got {rate!r}")
    if contrib is None:
        contrib = oracle_contributions(gen, lm)
    if contrib.shape != gen.tokens.shape:
        raise ValueError(f"contrib must have the texts' shape {gen.tokens.shape}; got {contrib.shape}")
    fam = _family(gen)
    tokens = gen.tokens.copy()
    n, T = tokens.shape
    m = int(round(rate * T))
    for i in range(n):
        for t in sorted(np.argsort(-contrib[i], kind="stable")[:m]):
            ctx = np.concatenate([gen.prompts[i], tokens[i, :t]])
            tokens[i, t] = _replacement(gen, fam, lm.next_probs(ctx), ctx, t, tokens[i, t])
    nan = np.full(tokens.shape, np.nan)
    meta = copy.deepcopy(gen.meta)
    meta.setdefault("attacks", []).append(dict(kind="score_oracle", rate=float(rate), seed=0, n_changed=int(np.sum(tokens != gen.tokens))))
    return Generation(tokens, gen.prompts.copy(), nan, nan.copy(), nan.copy(), nan.copy(), nan.copy(), meta, prompt_lens=gen.prompt_lens.copy())
