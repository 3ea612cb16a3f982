"""A fitted synthetic LM (:mod:`sims.lm.fitted`) beside the real LM it was fitted to.

The real side is stored in the repository (``sims/lm/data/<name>-stats.npz``: per-token
entropy, collision probability, top mass and green masses under random keys recorded by
:func:`sims.torch_backend.lm_stats.record_stats`; ``<name>-reference.json``: SRL / DualGA on
the real LM, :func:`sims.torch_backend.lm_stats.reference_runs`), so that nothing here runs
the real LM.  The synthetic side generates with the same n, T and watermark configurations.
"""

from __future__ import annotations

import json
import pathlib

import numpy as np

from sims.detect.stats import scores as detect
from sims.lm import fitted
from sims.lm.synthetic import SyntheticLM
from sims.watermarks.generate import generate_synthetic

DATA = pathlib.Path(fitted.__file__).parent / "data"
STATS_KEYS = (1000, 1001, 1002, 1003)  #: keys of the recorded G_t (sims.torch_backend.lm_stats.STATS_KEY0 + k)


def load_reference(name: str = "smollm2") -> tuple[dict, dict]:
    """(per-token statistics, watermark summary) of the real LM ``name`` stored in ``sims/lm/data``."""
    with np.load(DATA / f"{name}-stats.npz") as f:
        st = {k: f[k].astype(np.float64) for k in f.files if k != "meta"}
        st["meta"] = json.loads(str(f["meta"]))
    ref = json.loads((DATA / f"{name}-reference.json").read_text())
    return st, ref


def token_statistics(lm: SyntheticLM, n: int, T: int, seed: int = 0) -> dict:
    """Unwatermarked text of ``lm``: per-token entropy (n, T) and G_t at gamma 0.25 / 0.5 under
    the keys ``STATS_KEYS`` (n, T, keys) -- the same records as the real LM's."""
    out = {}
    for gamma, name in ((0.25, "G25"), (0.5, "G50")):
        gs = [generate_synthetic(lm, "none", n=n, T=T, seed=seed, key=k, gamma=gamma) for k in STATS_KEYS]
        out[name] = np.stack([g.G for g in gs], axis=-1)
        out["entropy"] = gs[0].entropy
    return out


def distribution_summary(st: dict) -> dict:
    """The distributional statistics compared: per-text mean entropy, ACF at lags 1-10 and 20,
    G_t quantiles and spread."""
    H = st["entropy"]
    qs = (0.1, 0.25, 0.5, 0.75, 0.9)
    return {"mean_entropy": float(H.mean()), "text_mean_entropy_sd": float(H.mean(axis=1).std()),
            "acf": fitted.entropy_acf(H).tolist(), "acf_lags": list(fitted.ACF_LAGS),
            "G25_sd": float(st["G25"].std()), "G50_sd": float(st["G50"].std()),
            "G25_quantiles": np.quantile(st["G25"], qs).tolist(), "G50_quantiles": np.quantile(st["G50"], qs).tolist()}


def compare_distributions(real: dict, synth: dict) -> dict:
    """Two-sample KS distances (per-text mean entropy, per-token entropy, G_t) and the summaries."""
    return {"ks_text_mean_entropy": fitted.ks_distance(real["entropy"].mean(axis=1), synth["entropy"].mean(axis=1)),
            "ks_token_entropy": fitted.ks_distance(real["entropy"], synth["entropy"]),
            "ks_G25": fitted.ks_distance(real["G25"], synth["G25"]), "ks_G50": fitted.ks_distance(real["G50"], synth["G50"]),
            "real": distribution_summary(real), "synthetic": distribution_summary(synth)}


def watermark_summary(lm: SyntheticLM, configs: dict, n: int, T: int, seed: int = 0, key: int = 15485863) -> dict:
    """Each stored configuration on ``lm``: KL per token, realised DG and TPR at FPR 1e-4 (exact
    red-green test), with standard errors over the n texts -- the summary the real LM's runs have."""
    out = {}
    for name, c in configs.items():
        g = generate_synthetic(lm, c["algo"], n=n, T=T, seed=seed, key=key, **c["params"])
        lp = detect.score_redgreen(g.tokens, g.prompts, key, g.meta["gamma"], vocab_size=lm.vocab_size).log10_p
        kl, dg = g.kl.mean(axis=1), g.dg.mean(axis=1)
        tpr = float(np.mean(lp <= -4))
        out[name] = {"n": n, "kl_per_token": float(kl.mean()), "kl_se": float(kl.std(ddof=1) / np.sqrt(n)),
                     "realized_dg": float(dg.mean()), "dg_se": float(dg.std(ddof=1) / np.sqrt(n)),
                     "tpr_at_1e-4": tpr, "tpr_se": float(np.sqrt(tpr * (1 - tpr) / n))}
    return out
