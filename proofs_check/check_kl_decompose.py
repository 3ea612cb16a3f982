r"""Prop. KL_decompose: the sequence KL is the sum of the stepwise conditional KLs,

.. math:: D_{kl}(q(x) \| p(x)) = \sum_{t=1}^{T} E_{y_{[t-1]} \sim q}\bigl[D_{kl}(q_t(\cdot|y_{[t-1]}) \| p_t(\cdot|y_{[t-1]}))\bigr],

so the realised per-token sum :math:`\sum_t D_{kl,t}` recorded along one generated text
is an unbiased estimate of the sequence KL.

1. Exact enumeration of all :math:`6^T` sequences of the "tiny" LM for every watermark.
2. Tiny LM, Monte Carlo: the generator's realised sums average to the enumerated KL.
3. Larger LM ("news", V = 2000, order 2), where nothing can be enumerated: along each
   generated text the realised conditional-KL sum A and the log-likelihood ratio
   :math:`B = \sum_t \log q_t(y_t)/p_t(y_t)` are both unbiased for the sequence KL, so
   :math:`A - B` has mean 0 (a martingale).  q_t, KL_t and DualGA's lambda recursion are
   recomputed here from ``lm.probs`` and the key's green list (NumPy), independently of
   the Numba generator, whose KL record is compared with them as well.
"""

import numpy as np
from scipy.stats import norm

import theory
from proofs_check._check import Check
from proofs_check._exact import EXACT_ALGOS, default_params, kl_vec, sequence_laws
from sims.core import defaults, prf
from sims.lm.synthetic import open_synthetic
from sims.watermarks import registry
from sims.watermarks.generate import generate_synthetic

RESULT = "prop:KL_decompose"
ENUM_TOL = 1e-12  # relative rounding of sums over 6^T sequences
RECORD_TOL = 1e-9  # generator's KL record vs the NumPy recomputation (float64, V = 2000, lambda recursion over T steps)
ALPHA = 1e-3  # level of every two-sided z-test in this module
Z_CRIT = float(norm.isf(ALPHA / 2))


def _replay(lm, gen, algo: str, prm: dict) -> tuple[np.ndarray, np.ndarray, float]:
    """Per text: sum_t KL(q_t||p_t), sum_t log q_t(y_t)/p_t(y_t) (recomputed from lm.probs), and the
    largest gap to the generator's KL record."""
    n, T = gen.tokens.shape
    A, B = np.zeros(n), np.zeros(n)
    worst = 0.0
    for i in range(n):
        seq = np.concatenate([gen.prompts[i], gen.tokens[i]])
        P = gen.prompts.shape[1]
        lam = prm["lam1"]
        for t in range(T):
            p = lm.probs(seq[: P + t])
            green = prf.green_mask(prf.context_hash(gen.meta["key"], seq[P + t - 1 : P + t]), lm.vocab_size, prm["gamma"])
            d = prm["delta"] if algo == "srl" else lam
            q = p * np.exp(d * green)
            q /= q.sum()
            kl = kl_vec(q, p)
            worst = max(worst, abs(kl - gen.kl[i, t]))
            y = seq[P + t]
            A[i] += kl
            B[i] += np.log(q[y]) - np.log(p[y])
            if algo == "dualga":
                lam = theory.dualga_update(lam, q[green].sum() - p[green].sum(), prm["Delta"], prm["eta"], prm["M"])
    return A, B, worst


def run(quick: bool, rng) -> list[Check]:
    """Enumeration on the tiny LM; Monte Carlo unbiasedness on the tiny and a 2000-token LM.

    Parameters
    ----------
    quick : bool
        ``--quick``: enumeration over 3 tokens and fewer Monte Carlo texts (4000 instead of 40000; 150 of 30 tokens instead of 1500 of 100).
    rng : numpy.random.Generator
        The module's generator, seeded ``[seed, crc32(module name)]`` by ``python -m proofs_check``.

    Returns
    -------
    list of proofs_check._check.Check
        One row of the report per quantity checked: measured against claimed at the stated tolerance.
    """
    lm = open_synthetic("tiny")
    prompt, T, key = np.array([2]), 3 if quick else 4, 17
    worst = 0.0
    for algo in EXACT_ALGOS:
        p, q, stepwise = sequence_laws(algo, lm, key, prompt, T)
        seq_kl = kl_vec(q, p)
        worst = max(worst, abs(seq_kl - stepwise) / max(seq_kl, 1e-300))
    out = [Check(RESULT, f"max rel. |KL(q||p) - sum_t cond. KL| over {len(EXACT_ALGOS)} watermarks, V=6, T={T}", worst, "0", f"{ENUM_TOL:g}",
                 worst < ENUM_TOL, f"exact enumeration of all 6^{T} sequences in double precision")]
    n = 4000 if quick else 40000
    for algo in ("srl", "dualga", "autocov"):
        p, q, _ = sequence_laws(algo, lm, key, prompt, T)
        exact = kl_vec(q, p)
        gen = generate_synthetic(lm, algo, n=n, T=T, seed=int(rng.integers(2**31)), key=key, prompts=np.tile(prompt, (n, 1)),
                       **registry.own(algo, dict(delta=defaults.DELTA, Delta=defaults.TARGET_DG)))
        s = gen.kl.sum(axis=1)
        z = float((s.mean() - exact) / (s.std(ddof=1) / np.sqrt(n)))
        out.append(Check(RESULT, f"tiny LM, {algo}: z of mean realised sum of KL_t vs enumerated KL", z, "0 (unbiased)", f"|z| < {Z_CRIT:.2f}",
                         abs(z) < Z_CRIT, f"two-sided z-test at alpha = {ALPHA:g} over n = {n} generated texts, T = {T}"))
    big = open_synthetic("news", vocab_size=2000)
    n, T = (150, 30) if quick else (1500, 100)
    for algo in ("srl", "dualga"):
        prm = default_params(algo)
        gen = generate_synthetic(big, algo, n=n, T=T, seed=int(rng.integers(2**31)), key=23, **registry.own(algo, dict(delta=prm["delta"], Delta=prm["Delta"])))
        A, B, rec = _replay(big, gen, algo, prm)
        D = A - B
        z = float(D.mean() / (D.std(ddof=1) / np.sqrt(n)))
        out.append(Check(RESULT, f"news LM (V=2000), {algo}: z of mean(sum KL_t - sum log q/p)", z, "0 (both unbiased for the sequence KL)",
                         f"|z| < {Z_CRIT:.2f}", abs(z) < Z_CRIT,
                         f"paired two-sided z-test at alpha = {ALPHA:g}, n = {n} texts of T = {T}; mean sum KL_t = {A.mean():.4f}, mean LLR = {B.mean():.4f}"))
        out.append(Check(RESULT, f"news LM, {algo}: max |generator KL_t - NumPy recomputation|", rec, "0", f"{RECORD_TOL:g}", rec < RECORD_TOL,
                         "q_t rebuilt from lm.probs, the key's green list and (DualGA) the lambda recursion"))
    return out
