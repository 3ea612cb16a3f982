"""Prop. info_lower_bound: for every watermark, the optimal test's alpha + beta (= 1 - TV, Le Cam)
is at least the Bretagnolle-Huber bound 1 - sqrt(1 - exp(-KL))."""

import numpy as np

import theory
from sims.lm import get_lm

from ._check import Check
from ._exact import ALGOS, sequence_laws

RESULT = "prop:info_lower_bound"


def run(quick: bool, rng) -> list[Check]:
    lm = get_lm("tiny")
    T = 3 if quick else 4
    out = []
    for algo in ALGOS:
        p, q, _ = sequence_laws(algo, lm, 31, np.array([1]), T)
        with np.errstate(divide="ignore", invalid="ignore"):
            kl = float(np.sum(np.where(q > 0, q * np.log(q / p), 0.0)))
        err = theory.optimal_test_error(q, p)
        bh = theory.bretagnolle_huber(kl)
        out.append(Check(RESULT, f"{algo}: (1 - TV) - BH(KL), V=6, T={T}", err - bh, ">= 0", "-1e-12",
                         err - bh >= -1e-12, "exact enumeration of all sequences; Le Cam gives the optimal alpha + beta"))
    return out
