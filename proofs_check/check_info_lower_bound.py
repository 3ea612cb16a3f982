r"""Prop. info_lower_bound (Le Cam + Bretagnolle-Huber).

.. math:: \inf_D \alpha_p(D, x) + \beta(D, x) = 1 - \mathrm{TV}(q, p) \ge 1 - \sqrt{1 - e^{-D_{kl}(q\|p)}}

checked for every watermark of the package on the "tiny" LM (V = 6) by enumerating all
:math:`V^T` continuations of one prompt: TV and KL are computed on the full sequence
laws, so both sides are exact up to rounding.  Before that, the enumerated model
(:mod:`proofs_check._exact`) is tested against the package's generator: generated
sequences never leave the support of the enumerated q, the generator's recorded
:math:`D_{kl}(q_1 \| p_1)` equals the enumerated one, and sequence frequencies follow q
(chi-square).
"""

import numpy as np
from scipy.stats import chisquare

import theory
from proofs_check._check import Check
from proofs_check._exact import EXACT_ALGOS, default_params, sequence_laws
from sims.lm.synthetic import open_synthetic
from sims.watermarks import registry
from sims.watermarks.generate import generate_synthetic

RESULT = "prop:info_lower_bound"
BH_TOL = 1e-12  # rounding of sums over 6^T sequences
KL_RECORD_TOL = 1e-12  # generator's KL record vs the enumerated one
ALPHA = 1e-3  # level of the chi-square goodness-of-fit of the enumerated model
MIN_EXPECTED = 5.0  # cells with fewer expected counts are pooled (chi-square validity)


def _gof(tokens: np.ndarray, q_seq: np.ndarray, V: int) -> tuple[float, float]:
    """Mass of generated sequences outside supp(q) and the chi-square p-value on supp(q)."""
    idx = tokens[:, 0] * V + tokens[:, 1]
    counts = np.bincount(idx, minlength=V * V).astype(float)
    outside = float(counts[q_seq == 0].sum() / len(idx))
    exp = q_seq * len(idx)
    big = exp >= MIN_EXPECTED
    obs_c = np.append(counts[big], counts[~big & (q_seq > 0)].sum())
    exp_c = np.append(exp[big], exp[~big & (q_seq > 0)].sum())
    keep = exp_c > 0
    if keep.sum() < 2:
        return outside, 1.0
    return outside, float(chisquare(obs_c[keep], exp_c[keep] * obs_c[keep].sum() / exp_c[keep].sum()).pvalue)


def run(quick: bool, rng) -> list[Check]:
    """Validate the enumerated model against sims.watermarks.generate, then Le Cam vs BH for every watermark.

    Parameters
    ----------
    quick : bool
        ``--quick``: 20000 Monte Carlo texts and sequences of 3 tokens, instead of 200000 and 4.
    rng : numpy.random.Generator
        The module's generator, seeded ``[seed, crc32(module name)]`` by ``python -m proofs_check``.

    Returns
    -------
    list of proofs_check._check.Check
        One row of the report per quantity checked: measured against claimed at the stated tolerance.
    """
    lm = open_synthetic("tiny")
    V, key, prompt = lm.vocab_size, 31, np.array([1])
    n = 20000 if quick else 200000
    worst_out, worst_kl, min_p = 0.0, 0.0, 1.0
    for algo in EXACT_ALGOS:
        _, q2, _ = sequence_laws(algo, lm, key, prompt, 2)
        _, q1, kl1 = sequence_laws(algo, lm, key, prompt, 1)
        prm = default_params(algo)
        gen = generate_synthetic(lm, algo, n=n, T=2, seed=int(rng.integers(2**31)), key=key, prompts=np.tile(prompt, (n, 1)),
                       **registry.own(algo, prm))
        outside, pv = _gof(gen.tokens, q2, V)
        worst_out, min_p = max(worst_out, outside), min(min_p, pv)
        worst_kl = max(worst_kl, float(np.max(np.abs(gen.kl[:, 0] - kl1))))
    out = [
        Check(RESULT, "model check: generated mass outside supp(enumerated q), all watermarks", worst_out, "0", "exact",
              worst_out == 0.0, f"{n} generated 2-token texts per watermark vs the enumerated law"),
        Check(RESULT, "model check: max |generator KL_1 - enumerated KL_1|", worst_kl, "0", f"{KL_RECORD_TOL:g}",
              worst_kl < KL_RECORD_TOL, "first step, fixed prompt: one exact number per watermark"),
        Check(RESULT, f"model check: min chi-square p over {len(EXACT_ALGOS)} watermarks", min_p, f"> {ALPHA / len(EXACT_ALGOS):.2g}",
              f"Bonferroni alpha = {ALPHA:g}", min_p > ALPHA / len(EXACT_ALGOS),
              f"{n} texts, cells with < {MIN_EXPECTED:g} expected pooled; deterministic schemes have one cell (p = 1)"),
    ]
    T = 3 if quick else 4
    api_gap = 0.0  # theory's public functions against the direct sums: a mismatch fails its own row
    for algo in ("none",) + EXACT_ALGOS:
        p, q, _ = sequence_laws(None if algo == "none" else algo, lm, key, prompt, T)
        with np.errstate(divide="ignore", invalid="ignore"):
            kl = float(np.sum(np.where(q > 0, q * np.log(q / p), 0.0)))
        err = 1.0 - 0.5 * float(np.abs(q - p).sum())  # Le Cam: optimal alpha + beta
        bh = 1.0 - np.sqrt(-np.expm1(-kl))
        api_gap = max(api_gap, abs(theory.optimal_test_error(q, p) - err), abs(theory.bretagnolle_huber(kl) - bh))
        out.append(Check(RESULT, f"{algo}: (1 - TV) - (1 - sqrt(1 - e^-KL)), V={V}, T={T}", err - bh, ">= 0", f"-{BH_TOL:g}",
                         err - bh >= -BH_TOL, f"exact enumeration of {V}^{T} sequences; KL = {kl:.4g}, 1 - TV = {err:.4g}"))
    out.append(Check(RESULT, f"max |theory.optimal_test_error - (1 - TV)|, |theory.bretagnolle_huber - direct| over {len(EXACT_ALGOS) + 1} laws",
                     api_gap, "0", f"{BH_TOL:g}", api_gap <= BH_TOL,
                     "the public functions against the direct sums on the same enumerated laws"))
    return out
