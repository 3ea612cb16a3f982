"""Torch backend on a CPU, SmolLM2-135M-Instruct, prompts of mixed lengths (lfqa, chat template):

* DualGA at batch 16 (bucketed, left-padded, :func:`sims.torch_backend.real_lm.generate_texts`)
  vs the batch-1 path (the same code one prompt at a time, on a subset): tokens/s ratio, goal >= 5x;
* vs transformers ``generate`` at the same batch, the same left padding, sampling, no
  watermark: time ratio ours / theirs, goal <= 1.25.

Sizes (2 shared cores): N_PROMPTS prompts x T tokens at batch 16, batch 1 on the first N_SERIAL
prompts.  Results in bench/results/bench_torch.json (python -m bench --only bench_torch).  GPU
figures (static engine, CUDA graphs) are :mod:`bench.bench_gpu`.
"""

from __future__ import annotations

import time

import numpy as np
import torch

N_PROMPTS, T, BATCH, N_SERIAL = 32, 100, 16, 4


def main(argv=None) -> dict:
    from sims.lm.real import batch as batching
    from sims.lm.real.model import load
    from sims.lm.real.prompts import prompt_ids
    from sims.torch_backend.real_lm import generate_texts

    torch.manual_seed(0)
    model, tok = load("smollm2")
    V = len(tok)
    prompts = prompt_ids("lfqa", N_PROMPTS, tokenizer=tok)
    lens = [len(p) for p in prompts]
    kw = dict(seed=0, vocab_size=V, lm="smollm2", show=False)

    t0 = time.perf_counter()
    generate_texts(model, prompts, T, "dualga", batch=BATCH, **kw)
    ours = time.perf_counter() - t0
    t0 = time.perf_counter()
    generate_texts(model, prompts[:N_SERIAL], T, "dualga", batch=1, **kw)
    serial = time.perf_counter() - t0

    # transformers generate: the same buckets, the same left padding, sampling, no watermark
    pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
    t0 = time.perf_counter()
    for idx in batching.buckets(lens, BATCH):
        ids, _ = batching.pad_left([prompts[i] for i in idx])
        x, mask, _ = batching.model_inputs(ids, "cpu")
        x = torch.where(mask.bool(), x, pad)
        with torch.no_grad():
            model.generate(input_ids=x, attention_mask=mask, do_sample=True, top_k=0, top_p=1.0, max_new_tokens=T,
                           min_new_tokens=T, pad_token_id=pad)
    peer = time.perf_counter() - t0

    tps, tps1, tps_peer = N_PROMPTS * T / ours, N_SERIAL * T / serial, N_PROMPTS * T / peer
    res = dict(model="SmolLM2-135M-Instruct", device="cpu", threads=torch.get_num_threads(), prompts=N_PROMPTS, T=T, batch=BATCH,
               serial_prompts=N_SERIAL, prompt_lens=dict(min=int(min(lens)), max=int(max(lens)), mean=float(np.mean(lens))),
               dualga_batch_tokens_per_s=tps, dualga_batch1_tokens_per_s=tps1, transformers_generate_tokens_per_s=tps_peer,
               speedup_vs_batch1=tps / tps1, time_ratio_vs_transformers=peer and ours / peer)
    print(f"SmolLM2 CPU, {N_PROMPTS} prompts (lengths {min(lens)}-{max(lens)}) x {T} tokens: DualGA batch {BATCH} {tps:.1f} tok/s | "
          f"batch 1 {tps1:.1f} tok/s -> {tps / tps1:.2f}x (goal >= 5) | transformers generate (no watermark) {tps_peer:.1f} tok/s "
          f"-> ours/theirs time {ours / peer:.2f} (goal <= 1.25)")
    return res
