"""Prop. negative_DLoP: the deterministic LM q~ on the most likely sequence has lower expected
log-perplexity than p (DLoP < 0) while KL(q~ || p) > 0."""

import numpy as np

from sims.lm import get_lm

from ._check import Check
from ._exact import sequence_laws

RESULT = "prop:negative_DLoP"


def run(quick: bool, rng) -> list[Check]:
    lm = get_lm("tiny")
    T = 3
    p, _, _ = sequence_laws(None, lm, 0, np.array([4]), T)  # p_eval = p
    star = int(np.argmax(p))
    lop_q = -np.log(p[star]) / T  # q~ puts all mass on y*
    lop_p = float(np.sum(p * -np.log(p)) / T)
    kl = -np.log(p[star])  # KL(q~ || p) for a point mass
    return [
        Check(RESULT, "DLoP(q~, p) = LoP(q~) - LoP(p)", lop_q - lop_p, "< 0", "strict", lop_q - lop_p < 0, "exact enumeration of the 216 sequences of the tiny LM"),
        Check(RESULT, "KL(q~ || p)", kl, "> 0", "strict", kl > 0, "point mass on the argmax sequence"),
    ]
