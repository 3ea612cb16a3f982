"""Generate + detect: the paper's Table exp_performance quantities on a synthetic LM."""

from __future__ import annotations

import time

import numpy as np

from . import detect
from .generate import generate
from .lm import get_lm

FPRS = (1e-4, 1e-6)


def clopper_pearson(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Exact binomial confidence interval for k successes in n trials."""
    from scipy.stats import beta

    a = (1 - level) / 2
    lo = 0.0 if k == 0 else float(beta.ppf(a, k, n - k + 1))
    hi = 1.0 if k == n else float(beta.ppf(1 - a, k + 1, n - k))
    return lo, hi


def evaluate(lm_name: str, algo: str, *, n: int, T: int, seed: int, key: int = 15485863, dedup: bool = False,
             n_null: int | None = None, return_arrays: bool = False, **params) -> dict:
    """Watermarked and unwatermarked texts of one LM, scored with the key: distortion and detection.

    Returns kl_per_token (exact, mean over tokens), realized_dg, tpr_at_1e-4 / 1e-6 (thresholds
    p <= alpha from the exact null), empirical_fpr_at_1e-4 with its 95% Clopper-Pearson CI on
    ``n_null`` unwatermarked texts (default n) of the same LM, median_log10_p, z_mean,
    tokens_to_detect_median (red-green algorithms, p <= 1e-4), mean_entropy, tokens/s.
    """
    lm = get_lm(lm_name)
    t0 = time.perf_counter()
    gen = generate(lm, algo, n=n, T=T, seed=seed, key=key, **params)
    gen_s = time.perf_counter() - t0
    res = detect.score(gen, lm, dedup=dedup)
    null = generate(lm, "none", n=n_null or n, T=T, seed=seed + 1_000_003, key=key)
    null.meta.update(algo=algo, gamma=gen.meta["gamma"], h=gen.meta["h"])  # score as if watermarked with this key
    res0 = detect.score(null, lm, dedup=dedup)
    out = dict(
        lm=lm_name, algo=algo, n=n, T=T, seed=seed, key=key, params={k: v for k, v in gen.meta.items() if k in ("gamma", "delta", "Delta", "eta", "lam1", "tau", "alpha")},
        kl_per_token=float(gen.kl.mean()), kl_per_text_sd=float(gen.kl.mean(axis=1).std()),
        realized_dg=float(gen.dg.mean()), realized_dg_per_text_sd=float(gen.dg.mean(axis=1).std()),
        mean_entropy=float(gen.entropy.mean()),
        median_log10_p=float(np.median(res.log10_p)), z_mean=float(np.nanmean(res.z)) if np.isfinite(res.z).any() else None,
        tokens_per_s=n * T / gen_s,
    )
    for a in FPRS:
        out[f"tpr_at_{a:.0e}".replace("e-0", "e-")] = float(np.mean(res.log10_p <= np.log10(a)))
    k = int(np.sum(res0.log10_p <= -4.0))
    out["empirical_fpr_at_1e-4"] = k / res0.log10_p.size
    out["empirical_fpr_at_1e-4_ci95"] = clopper_pearson(k, res0.log10_p.size)
    if algo in detect.REDGREEN_ALGOS:
        pref = detect.redgreen_prefix_log10p(gen.tokens, gen.prompts, key, gen.meta["gamma"], vocab_size=lm.vocab_size, h=gen.meta["h"])
        ttd = detect.tokens_to_detect(pref, -4.0)
        out["tokens_to_detect_median"] = float(np.nanmedian(ttd)) if np.isfinite(ttd).any() else None
    else:
        out["tokens_to_detect_median"] = None
    if return_arrays:
        out["arrays"] = dict(kl=gen.kl.mean(axis=1), dg=gen.dg.mean(axis=1), log10_p=res.log10_p, z=res.z, null_log10_p=res0.log10_p)
    return out
