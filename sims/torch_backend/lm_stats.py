"""Per-token statistics of a real LM's next-token distributions, and its watermarked reference runs.

:func:`record_stats` samples ``T`` tokens (temperature 1, no truncation: the same sampling
as :func:`.generate_torch.generate_with_processor`) after each of ``n`` real prompts and records, at every
step t of text i, from the model's exact :math:`p_t`:

* ``entropy`` :math:`H(p_t)`, ``top`` :math:`\\max_k p_{t,k}`, ``coll`` :math:`\\sum_k p_{t,k}^2`
  (the variance of the green mass under a random key is :math:`\\gamma(1-\\gamma)\\sum_k p_k^2`);
* ``G25``, ``G50``: the green mass :math:`G_t` of Bernoulli green lists (context width 1)
  under ``n_keys`` random keys, gamma = 0.25 and 0.5, shape (n, T, n_keys);
* ``tokens`` (the sampled ids) and ``prompt_lens``.

:func:`reference_runs` generates with SRL / DualGA processors on the same prompts and
summarises realised DG, KL per token and the detection rate at FPR 1e-4 (the exact
red-green test of :func:`sims.detect.stats.scores.score_redgreen`), the real-LM side of the
validation of :mod:`sims.lm.fitted`.

Prompts are batched in buckets of equal token length (:func:`prompt_batches`): the largest
buckets of the set are used first, so the ``n`` prompts are the set's commonest lengths.
"""

from __future__ import annotations

import numpy as np
import torch

from sims.core.progress import progress
from sims.detect.stats import scores as detect
from sims.lm.real import prompts as prompt_sets
from sims.lm.real.model import load, sampled_vocab
from sims.torch_backend import prf_torch
from sims.torch_backend.generate_torch import generate_with_processor
from sims.torch_backend.processors import make_processor

STATS_KEY0 = 1000  #: the random keys of the G_t records are STATS_KEY0, STATS_KEY0 + 1, ...


def prompt_batches(tok, prompts: str, n: int, max_batch: int = 16, vocab_size: int = 512, seed: int = 0) -> list[torch.LongTensor]:
    """``n`` prompts of set ``prompts`` as batches of equal length, the largest buckets of the set first.

    Parameters
    ----------
    tok : transformers tokenizer or None
        The tokenizer; None (a tokenizer-less model such as ``random-llama``): random 8-token prompts.
    prompts : str
        ``lfqa``, ``news`` or a JSONL file.
    n : int
        Prompts, >= 1.
    max_batch : int, optional
        Rows per batch at most.
    vocab_size : int, optional
        Ids of the random prompts.
    seed : int, optional
        Seed of the random prompts.

    Returns
    -------
    list of torch.LongTensor
        (rows, length) batches.

    Raises
    ------
    ValueError
        If ``n`` < 1 or exceeds the prompts of the set.
    """
    if int(n) < 1:
        raise ValueError(f"n must be in [1, inf); got {n!r}")
    if tok is None:
        ids = np.random.default_rng(seed).integers(0, vocab_size, size=(n, 8))
        return [torch.as_tensor(ids[i : i + max_batch]) for i in range(0, n, max_batch)]
    if prompts == "lfqa":
        texts, chat = prompt_sets.lfqa_questions(), True
    elif prompts == "news":
        texts, chat = prompt_sets.news_prompts(), False
    else:
        texts, chat = prompt_sets.load_jsonl(prompts), True
    buckets: dict[int, list[torch.Tensor]] = {}
    for t in texts:
        ids = torch.as_tensor(prompt_sets.encode(tok, t, chat))
        buckets.setdefault(ids.shape[0], []).append(ids)
    if sum(len(b) for b in buckets.values()) < n:
        raise ValueError(f"n must be at most the {len(texts)} prompts of set {prompts!r}; got {n}")
    out, left = [], int(n)
    for length in sorted(buckets, key=lambda L: (-len(buckets[L]), L)):
        rows = buckets[length][:left]
        left -= len(rows)
        out += [torch.stack(rows[i : i + max_batch]) for i in range(0, len(rows), max_batch)]
        if left == 0:
            break
    return out


class StatsRecorder:
    """A pass-through processor that records the statistics of :func:`record_stats` at each step.

    Parameters
    ----------
    vocab_size : int
        V, the ids sampled.
    n_keys : int, optional
        Random keys of the G_t records (``STATS_KEY0 + k``).
    """

    name = "none"

    def __init__(self, vocab_size: int, n_keys: int = 4):
        self.vocab_size, self.n_keys = int(vocab_size), int(n_keys)
        self.records: dict[str, list[torch.Tensor]] = {k: [] for k in ("entropy", "top", "coll", "G25", "G50")}
        self._table = prf_torch.token_table(self.vocab_size)

    def __call__(self, input_ids, scores):
        p = torch.softmax(scores[:, : self.vocab_size].double(), dim=-1)
        self.records["entropy"].append(-torch.xlogy(p, p).sum(-1))
        self.records["top"].append(p.max(-1).values)
        self.records["coll"].append((p * p).sum(-1))
        for gamma, name in ((0.25, "G25"), (0.5, "G50")):
            gs = []
            for k in range(self.n_keys):
                ctx = prf_torch.context_hash(STATS_KEY0 + k, input_ids[:, -1:])
                gs.append((p * prf_torch.green_mask(ctx, self.vocab_size, gamma, table=self._table)).sum(-1))
            self.records[name].append(torch.stack(gs, dim=-1))
        return scores

    def stacked(self) -> dict[str, torch.Tensor]:
        """The records of the steps taken.

        Returns
        -------
        dict of str to torch.Tensor
            ``entropy``, ``top``, ``coll`` (B, t) and ``G25``, ``G50`` (B, t, n_keys).
        """
        return {k: torch.stack(v, dim=1) for k, v in self.records.items()}


def _load(model_name: str):
    model, tok = load(model_name)
    V = sampled_vocab(model, tok)
    return model, tok, V


def record_stats(model_name: str = "smollm2", prompts: str = "lfqa", *, n: int = 64, T: int = 200, seed: int = 0, n_keys: int = 4,
                 max_batch: int = 16) -> dict:
    """Sample ``T`` tokens after ``n`` prompts and record the per-token statistics (module docstring).

    Parameters
    ----------
    model_name : str, optional
        The real LM (:func:`sims.lm.real.model.load`).
    prompts : str, optional
        ``lfqa``, ``news`` or a JSONL file.
    n : int, optional
        Prompts (one text each).
    T : int, optional
        Tokens per text, >= 2.
    seed : int, optional
        Seed of the sampling.
    n_keys : int, optional
        Random keys of the G_t records.
    max_batch : int, optional
        Rows per forward pass.

    Returns
    -------
    dict
        (n, T) ``entropy``, ``top``, ``coll``; (n, T, n_keys) ``G25``, ``G50``; ``tokens``; ``prompt_lens``; and
        ``meta`` (model, prompts, n, T, seed, vocab_size, n_keys, keys).

    Raises
    ------
    ValueError
        If ``T`` < 2 or ``n`` is out of range.
    """
    if int(T) < 2:
        raise ValueError(f"T must be in [2, inf); got {T!r}")
    model, tok, V = _load(model_name)
    torch.manual_seed(seed)
    parts: dict[str, list[np.ndarray]] = {}
    for b, ids in enumerate(progress(prompt_batches(tok, prompts, n, max_batch, V, seed), desc=f"{model_name} stats")):
        rec = StatsRecorder(V, n_keys)
        g = generate_with_processor(model, ids, int(T), rec, seed=seed + b, vocab_size=V)
        for k, v in rec.stacked().items():
            parts.setdefault(k, []).append(v.cpu().numpy())
        parts.setdefault("tokens", []).append(g.tokens)
        parts.setdefault("prompt_lens", []).append(np.full(ids.shape[0], ids.shape[1]))
    out = {k: np.concatenate(v) for k, v in parts.items()}
    out["meta"] = dict(model=model_name, prompts=prompts, n=int(n), T=int(T), seed=int(seed), vocab_size=int(V), n_keys=int(n_keys),
                       keys=[STATS_KEY0 + k for k in range(n_keys)])
    return out


#: the validation's configurations: (algo, parameters)
REFERENCE_CONFIGS = tuple(("srl", dict(gamma=g, delta=d)) for g in (0.25, 0.5) for d in (1.0, 2.0, 5.0)) + tuple(
    ("dualga", dict(Delta=D)) for D in (0.2, 0.3))


def config_name(algo: str, params: dict) -> str:
    """The name of a reference configuration: the algorithm and its sorted parameters (``srl-delta2-gamma0.25``).

    Parameters
    ----------
    algo : str
        The algorithm.
    params : dict
        Its parameters.

    Returns
    -------
    str
    """
    return algo + "".join(f"-{k}{v:g}" for k, v in sorted(params.items()))


def reference_runs(model_name: str = "smollm2", prompts: str = "lfqa", *, n: int = 64, T: int = 200, seed: int = 0, key: int = 15485863,
                   configs=REFERENCE_CONFIGS, max_batch: int = 16) -> dict:
    """Watermarked generation on the real LM for each configuration: per-text KL, DG and log10 p.

    Parameters
    ----------
    model_name : str, optional
        The real LM.
    prompts : str, optional
        The prompt set.
    n, T : int, optional
        Texts and tokens per text.
    seed : int, optional
        Sampling seed.
    key : int, optional
        Watermark key.
    configs : sequence of (str, dict), optional
        (algo, parameters) pairs (default :data:`REFERENCE_CONFIGS`).
    max_batch : int, optional
        Rows per forward pass.

    Returns
    -------
    dict
        ``{config_name: dict(algo, params, kl, dg, log10_p)}`` with per-text arrays (length n);
        :func:`summarise` reduces them.
    """
    model, tok, V = _load(model_name)
    batches = prompt_batches(tok, prompts, n, max_batch, V, seed)
    out = {}
    for algo, params in progress(configs, desc=f"{model_name} watermarks"):
        kl, dg, lp = [], [], []
        for b, ids in enumerate(batches):
            proc = make_processor(algo, vocab_size=V, key=key, **params)
            g = generate_with_processor(model, ids, int(T), proc, seed=seed + b, vocab_size=V)
            kl.append(g.kl.mean(axis=1))
            dg.append(g.dg.mean(axis=1))
            lp.append(detect.score_redgreen(g.tokens, g.prompts[:, -g.meta["h"]:], key, g.meta["gamma"], vocab_size=V).log10_p)
        out[config_name(algo, params)] = dict(algo=algo, params=params, kl=np.concatenate(kl), dg=np.concatenate(dg), log10_p=np.concatenate(lp))
    return out


def summarise(runs: dict) -> dict:
    """Means with standard errors over texts: KL per token, realised DG, TPR at FPR 1e-4.

    Parameters
    ----------
    runs : dict
        :func:`reference_runs`'s output.

    Returns
    -------
    dict
        Per configuration: ``algo``, ``params``, ``n``, ``kl_per_token`` and ``kl_se``, ``realized_dg`` and
        ``dg_se``, ``tpr_at_1e-4`` (log10 p <= -4) and ``tpr_se``.
    """
    res = {}
    for name, r in runs.items():
        n = len(r["kl"])
        tpr = float(np.mean(r["log10_p"] <= -4))
        res[name] = {"algo": r["algo"], "params": r["params"], "n": n, "kl_per_token": float(np.mean(r["kl"])),
                     "kl_se": float(np.std(r["kl"], ddof=1) / np.sqrt(n)), "realized_dg": float(np.mean(r["dg"])),
                     "dg_se": float(np.std(r["dg"], ddof=1) / np.sqrt(n)), "tpr_at_1e-4": tpr,
                     "tpr_se": float(np.sqrt(tpr * (1 - tpr) / n))}
    return res
