"""Prop. KL_cvx and Example ems: KL of the key-averaged model <= key-average of KL; EMS and
inverse-transform sampling are marginally distortion-free with expected per-key KL = entropy."""

import numpy as np
from scipy.stats import chisquare

import theory
from sims.lm import get_lm

from ._check import Check
from ._exact import default_params, step_dist

RESULT = "prop:KL_cvx / eg:ems"


def run(quick: bool, rng) -> list[Check]:
    lm = get_lm("tiny")
    prefix = np.array([3])
    p = lm.probs(prefix)
    n_keys = 4000 if quick else 40000
    keys = rng.integers(0, 2**62, size=n_keys)
    out = []
    for algo in ("srl", "ems", "uw-delta", "uw-gamma", "its"):
        params = default_params(algo)
        qs = np.array([step_dist(algo, lm, int(k), prefix, int(k % 97), params.get("lam1", 0.0), params)[0] for k in keys])
        with np.errstate(divide="ignore", invalid="ignore"):
            per_key = np.sum(np.where(qs > 0, qs * np.log(qs / p), 0.0), axis=1)
        qbar = qs.mean(axis=0)
        lhs = float(np.sum(np.where(qbar > 0, qbar * np.log(qbar / p), 0.0)))
        out.append(Check(RESULT, f"{algo}: mean_key KL(q||p) - KL(mean_key q || p)", per_key.mean() - lhs, ">= 0", "exact (Jensen)",
                         per_key.mean() - lhs >= -1e-15, f"{n_keys} random keys at one context of the tiny LM"))
        if algo in ("ems", "its", "uw-delta"):
            # point masses: the chosen token's frequency over keys must follow p
            counts = np.bincount(np.argmax(qs, axis=1), minlength=lm.vocab_size)
            pv = chisquare(counts, n_keys * p).pvalue
            out.append(Check(RESULT, f"{algo}: chi-square p-value of E_key q = p", pv, "> 1e-3", "alpha = 1e-3", pv > 1e-3, f"{n_keys} keys, {lm.vocab_size} cells"))
            H = theory.entropy(p)
            z = (per_key.mean() - H) / (per_key.std(ddof=1) / np.sqrt(n_keys))
            out.append(Check(RESULT, f"{algo}: z of mean per-key KL vs entropy of p", z, f"E = H(p) = {H:.4f}", "|z| < 3.29", abs(z) < 3.29, "two-sided z-test at alpha = 1e-3"))
    return out
