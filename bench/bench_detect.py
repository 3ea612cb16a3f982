"""Detection throughput: our exact red-green detector vs transformers' WatermarkDetector on the
same token arrays (64 x 200 tokens for the peer; larger arrays for ours).

Goal (issue 4): >= 5e7 tokens/s without dedup and >= 1e7 with dedup on this 2-core machine.
The peer scores with its own green lists (lefthash); for speed that does not matter.
"""

from __future__ import annotations

import time

import numpy as np

from sims import detect


def _tps(f, n_tokens: int, repeat: int = 3) -> float:
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t0)
    return n_tokens / best


def main(argv=None) -> dict:
    import torch
    from transformers import LlamaConfig, WatermarkDetector, WatermarkingConfig

    rng = np.random.default_rng(0)
    V = 32000
    small = rng.integers(0, V, size=(64, 201))
    big = rng.integers(0, V, size=(20000, 201))
    res = {}
    cfg = WatermarkingConfig(greenlist_ratio=0.25, bias=2.0, hashing_key=15485863, seeding_scheme="lefthash", context_width=1)
    peer = WatermarkDetector(model_config=LlamaConfig(vocab_size=V), device="cpu", watermarking_config=cfg, ignore_repeated_ngrams=False)
    ids = torch.tensor(small)
    res["peer_tokens_per_s"] = _tps(lambda: peer(ids), small.size, 2)
    for dedup in (False, True):
        f = lambda: detect.score_redgreen(big[:, 1:], big[:, :1], 15485863, 0.25, vocab_size=V, dedup=dedup)  # noqa: E731
        f()
        res[f"ours_dedup_{dedup}_tokens_per_s"] = _tps(f, big[:, 1:].size)
        # the counting kernel alone (the exact p-values are a per-text cost)
        g = lambda: detect._scan(big[:, 1:], big[:, :1], np.uint64(15485863), 1, dedup, 0, 2**51)  # noqa: E731
        res[f"ours_counts_only_dedup_{dedup}_tokens_per_s"] = _tps(g, big[:, 1:].size)
    res["ratio_ours_over_peer"] = res["ours_dedup_False_tokens_per_s"] / res["peer_tokens_per_s"]
    for k, v in res.items():
        print(f"{k:42s} {v:12.3e}")
    return res
