"""A batched decoding loop with a KV cache, the watermark processors, and on-device records."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import torch

from sims.torch_backend.processors import ATWProcessor, AutoCovProcessor, DualGAProcessor, EMSProcessor, KeyedOrderProcessor, SRLProcessor

ALGOS = ("none", "srl", "dualga", "autocov", "atw", "ems", "its", "uw-delta", "uw-gamma")


def make_processor(algo: str, vocab_size: int, key: int, *, gamma=None, delta=None, Delta=None, eta=None, lam1=None, tau=1.0, alpha=2.0, h=1):
    if algo == "none":
        return None
    if algo == "srl":
        return SRLProcessor(key, 0.25 if gamma is None else gamma, vocab_size, 2.0 if delta is None else delta, h)
    if algo == "atw":
        return ATWProcessor(key, 0.25 if gamma is None else gamma, vocab_size, 2.0 if delta is None else delta, alpha, h)
    if algo == "dualga":
        return DualGAProcessor(key, vocab_size, 0.3 if Delta is None else Delta, gamma, 0.5 if eta is None else eta, lam1, h=h)
    if algo == "autocov":
        return AutoCovProcessor(key, vocab_size, 0.3 if Delta is None else Delta, gamma, 0.5 if eta is None else eta, lam1, h=h)
    if algo == "ems":
        return EMSProcessor(key, vocab_size, tau, h)
    if algo in ("its", "uw-delta", "uw-gamma"):
        return KeyedOrderProcessor(key, vocab_size, algo, h)
    raise ValueError(f"algo must be one of {ALGOS} for the torch backend; got {algo!r}")


@dataclass
class TorchGeneration:
    tokens: np.ndarray  # (B, T) generated ids
    prompts: np.ndarray  # (B, P) prompt ids (left-padded rows are not supported: equal lengths)
    records: dict
    seconds: float
    meta: dict


@torch.no_grad()
def generate(model, prompts: torch.LongTensor, T: int, processor=None, seed: int = 0, vocab_size: int | None = None) -> TorchGeneration:
    """Sample ``T`` tokens for each row of ``prompts`` (B, P) with the processor applied to every step.

    Sampling uses a seeded ``torch.Generator``; the processor's records stay on the device
    until the end.  Rows must share one prompt length (batch prompts of equal length).
    """
    if prompts.ndim != 2 or prompts.shape[1] < 1:
        raise ValueError(f"prompts must be (batch, length >= 1); got {tuple(prompts.shape)}")
    max_pos = getattr(model.config, "max_position_embeddings", None)
    if max_pos is not None and prompts.shape[1] + T > max_pos:
        raise ValueError(f"prompt length + T must be at most the context window {max_pos}; got {prompts.shape[1] + T}")
    V = vocab_size or model.config.vocab_size
    gen = torch.Generator(device=prompts.device).manual_seed(seed)
    ids = prompts
    past = None
    out = []
    t0 = time.perf_counter()
    inp = prompts
    for _ in range(T):
        res = model(input_ids=inp, past_key_values=past, use_cache=True)
        past = res.past_key_values
        scores = res.logits[:, -1, :].float()
        if processor is not None:
            scores = processor(ids, scores)
        probs = torch.softmax(scores[:, :V].double(), dim=-1)
        nxt = torch.multinomial(probs, 1, generator=gen)
        out.append(nxt)
        ids = torch.cat([ids, nxt], dim=1)
        inp = nxt
    seconds = time.perf_counter() - t0
    tokens = torch.cat(out, dim=1)
    records = {k: v.cpu().numpy() for k, v in processor.stacked().items()} if processor is not None else {}
    meta = dict(algo=getattr(processor, "name", "none"), key=getattr(processor, "key", 0), gamma=getattr(processor, "gamma", 0.25),
                h=getattr(processor, "h", 1), vocab_size=V)
    return TorchGeneration(tokens.cpu().numpy(), prompts.cpu().numpy(), records, seconds, meta)
