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

#: Folder of the stored real-LM records (``sims/lm/data``: ``<name>-stats.npz`` and ``<name>-reference.json``).
DATA = pathlib.Path(fitted.__file__).parent / "data"
STATS_KEYS = (1000, 1001, 1002, 1003)  #: keys of the recorded G_t (sims.torch_backend.lm_stats.STATS_KEY0 + k)


def load_reference(name: str = "smollm2") -> tuple[dict, dict]:
    """The stored records of the real LM ``name``: its per-token statistics and its watermark summary.

    Parameters
    ----------
    name : str, optional
        The real LM (default ``"smollm2"``), whose files ``<name>-stats.npz`` and ``<name>-reference.json`` lie
        in :data:`DATA`.

    Returns
    -------
    stats : dict
        The arrays of :func:`sims.torch_backend.lm_stats.record_stats` as float64 (``entropy``, ``G25``, ``G50``,
        ...) and ``meta``.
    reference : dict
        The SRL / DualGA runs on the real LM (:func:`sims.torch_backend.lm_stats.reference_runs`).
    """
    with np.load(DATA / f"{name}-stats.npz") as f:
        st = {k: f[k].astype(np.float64) for k in f.files if k != "meta"}
        st["meta"] = json.loads(str(f["meta"]))
    ref = json.loads((DATA / f"{name}-reference.json").read_text())
    return st, ref


def token_statistics(lm: SyntheticLM, n: int, T: int, seed: int = 0) -> dict:
    """Unwatermarked text of ``lm``: per-token entropy and G_t, the same records as the real LM's.

    Parameters
    ----------
    lm : sims.lm.synthetic.SyntheticLM
        The synthetic (fitted) LM.
    n, T : int
        Texts and tokens per text.
    seed : int, optional
        Seed of the texts.

    Returns
    -------
    dict
        ``entropy`` (n, T); ``G25`` and ``G50`` (n, T, keys): G_t, the green mass at gamma 0.25 and 0.5, under
        each key of :data:`STATS_KEYS`.
    """
    out = {}
    for gamma, name in ((0.25, "G25"), (0.5, "G50")):
        gs = [generate_synthetic(lm, "none", n=n, T=T, seed=seed, key=k, gamma=gamma) for k in STATS_KEYS]
        out[name] = np.stack([g.G for g in gs], axis=-1)
        out["entropy"] = gs[0].entropy
    return out


def distribution_summary(st: dict) -> dict:
    """The distributional statistics compared between the real and the synthetic LM.

    Parameters
    ----------
    st : dict
        Records with ``entropy`` (n, T), ``G25`` and ``G50`` (:func:`token_statistics`, :func:`load_reference`).

    Returns
    -------
    dict
        ``mean_entropy``, ``text_mean_entropy_sd`` (of per-text means), ``acf`` of the entropy at
        ``acf_lags`` (1-10 and 20, :func:`sims.lm.fitted.entropy_acf`), and the standard deviation and the
        0.1 / 0.25 / 0.5 / 0.75 / 0.9 quantiles of G_t at each gamma.
    """
    H = st["entropy"]
    qs = (0.1, 0.25, 0.5, 0.75, 0.9)
    return {"mean_entropy": float(H.mean()), "text_mean_entropy_sd": float(H.mean(axis=1).std()),
            "acf": fitted.entropy_acf(H).tolist(), "acf_lags": list(fitted.ACF_LAGS),
            "G25_sd": float(st["G25"].std()), "G50_sd": float(st["G50"].std()),
            "G25_quantiles": np.quantile(st["G25"], qs).tolist(), "G50_quantiles": np.quantile(st["G50"], qs).tolist()}


def compare_distributions(real: dict, synth: dict) -> dict:
    """Two-sample Kolmogorov-Smirnov distances between the real and the synthetic records, and their summaries.

    Parameters
    ----------
    real, synth : dict
        Records of the real LM (:func:`load_reference`) and of the synthetic one (:func:`token_statistics`).

    Returns
    -------
    dict
        ``ks_text_mean_entropy``, ``ks_token_entropy``, ``ks_G25``, ``ks_G50``
        (:func:`sims.lm.fitted.ks_distance`), and ``real`` / ``synthetic``: :func:`distribution_summary` of each.
    """
    return {"ks_text_mean_entropy": fitted.ks_distance(real["entropy"].mean(axis=1), synth["entropy"].mean(axis=1)),
            "ks_token_entropy": fitted.ks_distance(real["entropy"], synth["entropy"]),
            "ks_G25": fitted.ks_distance(real["G25"], synth["G25"]), "ks_G50": fitted.ks_distance(real["G50"], synth["G50"]),
            "real": distribution_summary(real), "synthetic": distribution_summary(synth)}


def watermark_summary(lm: SyntheticLM, configs: dict, n: int, T: int, seed: int = 0, key: int = 15485863) -> dict:
    """Each stored watermark configuration run on ``lm``: the summary the real LM's runs have.

    Parameters
    ----------
    lm : sims.lm.synthetic.SyntheticLM
        The synthetic (fitted) LM.
    configs : dict
        Configuration name -> ``{"algo": ..., "params": {...}}``, as in the real LM's reference file.
    n, T : int
        Texts and tokens per text.
    seed : int, optional
        Seed of the texts.
    key : int, optional
        Watermark key.

    Returns
    -------
    dict
        Configuration name -> ``n``, ``kl_per_token`` and ``kl_se``, ``realized_dg`` and ``dg_se``,
        ``tpr_at_1e-4`` (exact red-green test, log10 p <= -4) and ``tpr_se``: means over the texts with their
        standard errors.
    """
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
