"""Torch backend on CPU: per-step cost of our DualGA / SRL processors vs transformers'
WatermarkLogitsProcessor at vocab 32k and 128k, batch 1 and 16; and SmolLM2 end-to-end
generation with DualGA vs none in the same loop (overhead %).

GPU figures (the H100 goals) are in :mod:`bench.bench_gpu`.
"""

from __future__ import annotations

import time

import torch


def _per_call(f, reps: int) -> float:
    for _ in range(3):
        f()
    t0 = time.perf_counter()
    for _ in range(reps):
        f()
    return (time.perf_counter() - t0) / reps


def main(argv=None) -> dict:
    from transformers.generation.logits_process import WatermarkLogitsProcessor

    from sims.torch_backend.generate_torch import generate, make_processor
    from sims.torch_backend.model import load
    from sims.torch_backend.processors import DualGAProcessor, SRLProcessor

    torch.manual_seed(0)
    res = {}
    for V in (32000, 128000):
        for B in (1, 16):
            ids = torch.randint(0, V, (B, 8))
            scores = torch.randn(B, V)
            peer = WatermarkLogitsProcessor(vocab_size=V, device="cpu", greenlist_ratio=0.25, bias=2.0, hashing_key=15485863,
                                            seeding_scheme="lefthash", context_width=1)
            ours_d = DualGAProcessor(key=1, vocab_size=V, Delta=0.3)
            ours_s = SRLProcessor(key=1, gamma=0.25, vocab_size=V, delta=2.0)
            reps = 20 if V * B > 1e6 else 60
            t_peer = _per_call(lambda: peer(ids, scores.clone()), reps)
            t_d = _per_call(lambda: ours_d(ids, scores), reps)
            t_s = _per_call(lambda: ours_s(ids, scores), reps)
            res[f"V{V}_B{B}"] = dict(peer_us=t_peer * 1e6, dualga_us=t_d * 1e6, srl_us=t_s * 1e6, peer_over_dualga=t_peer / t_d)
            print(f"V={V:6d} B={B:2d}: transformers {t_peer * 1e6:9.0f} us | ours DualGA {t_d * 1e6:9.0f} us | SRL {t_s * 1e6:9.0f} us | peer/DualGA {t_peer / t_d:5.2f}")
    model, tok = load("smollm2")
    ids = tok("The history of the printing press", return_tensors="pt")["input_ids"].repeat(4, 1)
    V = len(tok)
    times = {}
    for algo in ("none", "dualga", "none", "dualga"):
        g = generate(model, ids, 64, make_processor(algo, V, 1, Delta=0.3), seed=0, vocab_size=V)
        times.setdefault(algo, []).append(g.seconds)
    t_none, t_d = min(times["none"]), min(times["dualga"])
    res["smollm2_cpu_batch4_T64"] = dict(none_s=t_none, dualga_s=t_d, overhead_pct=100 * (t_d / t_none - 1), tokens_per_s_dualga=4 * 64 / t_d)
    print(f"SmolLM2 CPU, batch 4 x 64 tokens: none {t_none:.2f} s, DualGA {t_d:.2f} s -> overhead {100 * (t_d / t_none - 1):+.1f} % (goal <= 5 %)")
    return res
