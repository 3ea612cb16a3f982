"""A key-holding attack oracle for every detector: replace the tokens that add most to the score.

The colour oracle (:func:`sims.attack` ``"color"``) turns green tokens red, which means nothing
for EMS or UW.  This oracle ranks a text's tokens by their contribution to the detector's
statistic and replaces the top ``rate`` share, left to right, by the LM's most probable token
that contributes little:

* red-green (SRL, DualGA, ATW): contribution 1{y green}; replacement the most probable red token
  (the colour oracle).
* EMS: contribution :math:`-\\ln(1 - r_{t,y})` (eq. ems_zscore's summand, null mean 1);
  replacement the most probable token with :math:`r_{t,y} < 1/2` (contribution < ln 2).
* UW / ITS: every watermarked token is a hit, worth :math:`-\\ln \\pi_t` with
  :math:`\\pi_t = p_t(y_t)` to the Poisson-binomial tail; replacement the most probable other
  token (for UW-delta never a hit; for UW-gamma a hit only if it lies in the kept half).
"""

from __future__ import annotations

import copy

import numpy as np


def oracle_contributions(gen, lm) -> np.ndarray:
    """Each token's contribution to the detector's statistic, shape ``gen.tokens.shape`` (module docstring);
    the red-green ones under the generation's seeding scheme."""
    from sims.core import seeding
    from sims.detect.stats import scores as detect
    from sims.lm.synthetic import lm_step_probs

    algo, key, h = gen.meta["algo"], gen.meta["key"], gen.meta["h"]
    first_ctx = gen.prompts[:, -h:]  # a real LM's prompts are left-padded with -1
    if algo == "ems":
        return detect.token_scores(gen.tokens, first_ctx, key, stat="ems", h=h, vocab_size=lm.vocab_size)[0]
    if algo in detect.REDGREEN_ALGOS:
        return detect.token_scores(gen.tokens, first_ctx, key, gamma=gen.meta["gamma"], h=h, vocab_size=lm.vocab_size,
                                   seeding=gen.meta.get("seeding", seeding.DEFAULT))[0]
    step = lm_step_probs(lm, gen)
    return np.stack([-np.log(step(i)[np.arange(gen.tokens.shape[1]), gen.tokens[i]]) for i in range(len(gen.tokens))])


def score_oracle(gen, lm, rate: float, *, contrib: np.ndarray | None = None):
    """Attack every text of ``gen`` (a :class:`sims.Generation` of ``lm``) at ``rate`` (share of tokens).

    ``contrib``: :func:`oracle_contributions` of ``gen``, computed once for several rates (default: computed here)."""
    from sims.core import prf, seeding
    from sims.core.record import Generation
    from sims.detect.stats import scores as detect
    from sims.experiments._attack_kernels import most_probable_outside

    if not 0.0 <= rate <= 1.0:
        raise ValueError(f"rate must be in [0, 1]; got {rate!r}")
    algo, key, h = gen.meta["algo"], gen.meta["key"], gen.meta["h"]
    if contrib is None:
        contrib = oracle_contributions(gen, lm)
    if contrib.shape != gen.tokens.shape:
        raise ValueError(f"contrib must have the texts' shape {gen.tokens.shape}; got {contrib.shape}")
    scheme = gen.meta.get("seeding", seeding.DEFAULT)
    tokens = gen.tokens.copy()
    n, T = tokens.shape
    m = int(round(rate * T))
    for i in range(n):
        for t in sorted(np.argsort(-contrib[i], kind="stable")[:m]):
            ctx = np.concatenate([gen.prompts[i], tokens[i, :t]])
            p = lm.next_probs(ctx)
            if algo == "ems":
                tokens[i, t] = most_probable_outside(p, key, ctx[-h:], stream=prf.EMS)
            elif algo in detect.REDGREEN_ALGOS:
                tokens[i, t] = most_probable_outside(p, key, ctx[-h:], gamma=gen.meta["gamma"], scheme=scheme)
            else:
                p = p.copy()
                p[tokens[i, t]] = -1.0
                tokens[i, t] = int(np.argmax(p))
    nan = np.full(tokens.shape, np.nan)
    meta = copy.deepcopy(gen.meta)
    meta.setdefault("attacks", []).append(dict(kind="score_oracle", rate=float(rate), seed=0, n_changed=int(np.sum(tokens != gen.tokens))))
    return Generation(tokens, gen.prompts.copy(), nan, nan.copy(), nan.copy(), nan.copy(), nan.copy(), meta, prompt_lens=gen.prompt_lens.copy())
