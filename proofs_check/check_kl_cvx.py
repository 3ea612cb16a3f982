r"""Prop. KL_cvx and Example ems.

Prop. KL_cvx: :math:`D_{kl}(E_K[q] \| p) \le E_K[D_{kl}(q \| p)]` (convexity + Jensen).
Example ems: EMS and inverse-transform sampling (and UW's reweights) are marginally
distortion-free, :math:`E_K[q_t] = p_t`, while a point-mass scheme's expected per-key KL
is the entropy :math:`H(p_t)`.

Two independent routes: (1) the exact per-key distributions of :mod:`proofs_check._exact`
over random keys (Jensen's gap is a deterministic inequality on the empirical key
distribution, so it is checked to rounding); (2) the package's own generator
:func:`sims.watermarks.generate.generate_synthetic`, one key per call, whose first tokens over keys must follow
p (chi-square) and whose recorded per-token KL must be :math:`-\log p(y)` (recomputed from
``lm.probs``) with mean :math:`H(p)` (z-test).
"""

import numpy as np
from scipy.stats import chisquare, norm

import theory
from proofs_check._check import Check
from proofs_check._exact import EXACT_ALGOS, default_params, initial_state, kl_vec, step
from proofs_check._numba import single_thread
from sims.lm.synthetic import open_synthetic
from sims.watermarks import registry
from sims.watermarks.generate import generate_synthetic

RESULT = "prop:KL_cvx / eg:ems"
JENSEN_TOL = 1e-12  # rounding of means of 1e3..1e4 numbers of size O(1)
RECORD_TOL = 1e-12  # generator's KL record vs -log p(y) from lm.probs (two float64 softmaxes)
ALPHA = 1e-3  # level of every chi-square and two-sided z-test in this module
Z_CRIT = float(norm.isf(ALPHA / 2))
POINT_MASS = registry.names(point_mass=True)


def run(quick: bool, rng) -> list[Check]:
    """Jensen's gap per watermark; distortion-freeness and E KL = H(p) through the generator.

    Parameters
    ----------
    quick : bool
        ``--quick``: 3000 keys and generated texts instead of 40000.
    rng : numpy.random.Generator
        The module's generator, seeded ``[seed, crc32(module name)]`` by ``python -m proofs_check``.

    Returns
    -------
    list of proofs_check._check.Check
        One row of the report per quantity checked: measured against claimed at the stated tolerance.
    """
    lm = open_synthetic("tiny")
    prefix = np.array([3])
    p = lm.probs(prefix)
    H = theory.entropy(p)
    n_keys = 3000 if quick else 40000
    keys = rng.integers(0, 2**62, size=n_keys)
    out = []
    for algo in EXACT_ALGOS:
        params = default_params(algo)
        qs = np.array([step(algo, lm, int(k), prefix, 0, initial_state(params), params)[0] for k in keys])
        per_key = np.array([kl_vec(q, p) for q in qs])
        gap = float(per_key.mean() - kl_vec(qs.mean(axis=0), p))
        out.append(Check(RESULT, f"{algo}: mean_key KL(q||p) - KL(mean_key q || p)", gap, ">= 0", f"-{JENSEN_TOL:g}",
                         gap >= -JENSEN_TOL, f"{n_keys} random keys at one context of the tiny LM (exact q per key)"))
    n_gen = 3000 if quick else 40000
    for algo in registry.names(distortion_free=True)[1:]:  # the watermarks (not "none")
        toks, kls = np.empty(n_gen, dtype=np.int64), np.empty(n_gen)
        with single_thread():
            for j, k in enumerate(keys[:n_gen]):
                g = generate_synthetic(lm, algo, n=1, T=1, seed=j, key=int(k), prompts=prefix[None, :])
                toks[j], kls[j] = g.tokens[0, 0], g.kl[0, 0]
        pv = float(chisquare(np.bincount(toks, minlength=lm.vocab_size), n_gen * p).pvalue)
        out.append(Check(RESULT, f"{algo} (sims.watermarks.generate): chi-square p-value of E_key q = p", pv, f"> {ALPHA:g}", f"alpha = {ALPHA:g}",
                         pv > ALPHA, f"first token of {n_gen} generations, one random key each, {lm.vocab_size} cells"))
        if algo in POINT_MASS:
            err = float(np.max(np.abs(kls + np.log(p[toks]))))
            out.append(Check(RESULT, f"{algo} (sims.watermarks.generate): max |recorded KL - (-log p(y))|", err, "0 (point mass)", f"{RECORD_TOL:g}",
                             err < RECORD_TOL, "KL of a point mass at y is -log p(y); p from lm.probs (NumPy path)"))
            z = float((kls.mean() - H) / (kls.std(ddof=1) / np.sqrt(n_gen)))
            out.append(Check(RESULT, f"{algo} (sims.watermarks.generate): z of mean per-key KL vs H(p)", z, f"E = H(p) = {H:.4f}", f"|z| < {Z_CRIT:.2f}",
                             abs(z) < Z_CRIT, f"two-sided z-test at alpha = {ALPHA:g}, n = {n_gen} keys"))
    return out
