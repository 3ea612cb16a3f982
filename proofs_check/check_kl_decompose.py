"""Prop. KL_decompose: sequence KL = sum of stepwise conditional KLs (enumeration), and the
realised per-token sum recorded by the generator is an unbiased estimate of it (Monte Carlo)."""

import numpy as np

from sims.generate import generate
from sims.lm import get_lm

from ._check import Check
from ._exact import ALGOS, sequence_laws

RESULT = "prop:KL_decompose"


def run(quick: bool, rng) -> list[Check]:
    lm = get_lm("tiny")
    prompt, T, key = np.array([2]), 3 if quick else 4, 17
    out = []
    worst = 0.0
    for algo in ALGOS:
        p, q, stepwise = sequence_laws(algo, lm, key, prompt, T)
        with np.errstate(divide="ignore", invalid="ignore"):
            seq_kl = float(np.sum(np.where(q > 0, q * np.log(q / p), 0.0)))
        worst = max(worst, abs(seq_kl - stepwise) / max(seq_kl, 1e-300))
    out.append(Check(RESULT, f"max rel. |KL(q||p) - sum_t cond. KL| over {len(ALGOS)} watermarks, V=6, T={T}", worst, "0", "1e-12",
                     worst < 1e-12, "exact enumeration of all 6^T sequences in double precision"))
    # Monte Carlo: the generator's realised sum of per-token KLs averages to the sequence KL
    n = 4000 if quick else 40000
    for algo in ("srl", "dualga"):
        p, q, _ = sequence_laws(algo, lm, key, prompt, T)
        exact = float(np.sum(np.where(q > 0, q * np.log(q / p), 0.0)))
        gen = generate(lm, algo, n=n, T=T, seed=int(rng.integers(2**31)), key=key, prompts=np.tile(prompt, (n, 1)),
                       delta=2.0, Delta=0.3, alpha=1.0)
        s = gen.kl.sum(axis=1)
        z = (s.mean() - exact) / (s.std(ddof=1) / np.sqrt(n))
        out.append(Check(RESULT, f"{algo}: z of mean realised sum of KL_t vs exact sequence KL", z, "|z| small", "|z| < 3.29",
                         abs(z) < 3.29, f"two-sided z-test at alpha = 1e-3 over n = {n} generated sequences"))
    return out
