"""The loop engine: a batched decoding loop over any transformers causal LM, with a KV cache,
left-padded prompts of mixed lengths, the watermark processors and on-device records.

Each step runs the model on the new tokens (attention mask and position ids of
:mod:`.batch`, so a row's logits do not depend on its padding), applies the processor to the
last position's logits and draws every row's token by :func:`.fused.inverse_cdf` with the
uniform number t of the row's own counter stream ``stream_key(seed, row)``
(:mod:`sims.core.rng`): a row's text is a function of (seed, row index, prompt) alone,
whatever its batch-mates.  Records stay on the device until the batch ends; whole logits are
never kept.  The result is the package's one record, :class:`sims.core.record.Generation`.
"""

from __future__ import annotations

import time

import numpy as np
import torch

from sims.core import seeding
from sims.core.record import RECORDS, Generation
from sims.core.rng import stream_key
from sims.lm.real import batch as batching
from sims.lm.real.model import cached_forward, new_cache
from sims.torch_backend.fused import check_nan, inverse_cdf
from sims.torch_backend.prf_torch import _s64, counter_uniform
from sims.watermarks import registry

PARAMS = tuple(p for p in registry.PARAMS if p != "gamma")  #: processor attributes copied into meta


def row_keys(seed: int, rows, device) -> torch.Tensor:
    """Per row, the key of its sampling stream, ``stream_key(seed, row)``, as int64 (two's complement).

    Parameters
    ----------
    seed : int
        The generation's seed.
    rows : iterable of int
        The rows' indices in the whole generation (so a row's stream does not depend on its batch).
    device : torch.device or str
        Where the keys live.

    Returns
    -------
    torch.Tensor
        (len(rows),) int64.
    """
    return torch.tensor([_s64(int(stream_key(seed, int(r)))) for r in rows], dtype=torch.int64, device=device)


def processor_meta(processor, V: int, seed: int) -> dict:
    """The ``Generation.meta`` of a processor's texts (the synthetic generator's keys).

    Parameters
    ----------
    processor : object
        A logits processor of :mod:`sims.torch_backend.processors` (or None-like: its missing attributes take the
        unwatermarked defaults).
    V : int
        Vocabulary size sampled.
    seed : int
        The generation's seed.

    Returns
    -------
    dict
        ``algo``, ``key``, ``gamma``, ``h``, ``vocab_size``, ``green_kind``, ``seed``, the registry parameters the
        processor holds, and ``prf`` / ``seeding`` / ``clusters`` where other than the defaults.
    """
    meta = dict(algo=getattr(processor, "name", "none"), key=getattr(processor, "key", 0), gamma=getattr(processor, "gamma", 0.25),
                h=getattr(processor, "h", 1), vocab_size=int(V), green_kind=getattr(processor, "green_kind", "bernoulli"), seed=int(seed))
    meta.update({k: float(getattr(processor, k)) for k in PARAMS if getattr(processor, k, None) is not None})
    if getattr(processor, "prf", "splitmix64") != "splitmix64":
        meta["prf"] = processor.prf
    if getattr(processor, "seeding", "lefthash") != "lefthash":  # recorded where not lefthash, as the synthetic generator does
        meta["seeding"] = str(processor.seeding)
    if getattr(processor, "cluster_of", None) is not None:  # semantic seeding by the LM's own clusters: named for detection
        meta["clusters"] = seeding.store_clusters(processor.cluster_of.cpu().numpy())
    return meta


def records_or_nan(stacked: dict, B: int, T: int) -> dict:
    """float64 host arrays of every field of RECORDS.

    Parameters
    ----------
    stacked : dict of str to torch.Tensor
        (B, t) records the processor kept.
    B, T : int
        Rows and tokens of the generation.

    Returns
    -------
    dict of str to numpy.ndarray
        (B, T) per field of :data:`sims.core.record.RECORDS`: nan where the processor keeps none, and past
        the steps it ran when a batch ended early.
    """
    out = {k: np.full((B, T), np.nan) for k in RECORDS}
    for k in RECORDS:
        if k in stacked:
            a = stacked[k].double().cpu().numpy()
            out[k][:, : a.shape[1]] = a
    return out


@torch.no_grad()
def generate_with_processor(model, prompts, T: int, processor=None, *, seed: int = 0, rows=None, vocab_size: int | None = None,
             stop_ids=()) -> Generation:
    """Sample ``T`` tokens after each prompt, watermarked by ``processor`` (None: plain sampling).

    Parameters
    ----------
    model : transformers causal LM (any family: Llama, Qwen2, Mistral, GPT-2, OPT, ...)
    prompts : list of 1-d id sequences, or ids (B, P) left-padded with -1 (:func:`.batch.pad_left`)
    T : int
        Tokens generated per row (at most ``T`` with ``stop_ids``).
    processor : a processor of :mod:`.processors` (:func:`.processors.make_processor`), or None
    seed : int
        Sampling seed; row b draws from the counter stream ``stream_key(seed, rows[b])``.
    rows : sequence of int, optional
        The rows' global indices (default 0..B-1), so that a row bucketed into any batch draws
        the same text.
    vocab_size : int, optional
        Ids sampled (default ``model.config.vocab_size``; the tokenizer's length when the
        model's logits are padded past it).
    stop_ids : collection of int
        End tokens (:func:`.model.stop_ids`): a row ends at the first of them it samples (kept
        as its last token), the rest of the row is ``Generation.PAD`` with nan records, and its
        length goes to ``lengths``; decoding stops when every row has ended.  Empty (the
        default): every row has ``T`` tokens, as in the paper's fixed-length experiments.

    Returns
    -------
    Generation
        With ``prompt_lens``, float64 records (nan without a processor) and ``meta`` (algo,
        parameters, key, gamma, h, vocab_size, seed, engine, seconds).
    """
    ids, lens = batching.pad_left(prompts)
    B, P = ids.shape
    rows = np.arange(B) if rows is None else np.asarray(rows, dtype=np.int64)
    if rows.shape != (B,):
        raise ValueError(f"rows must hold one index per prompt ({B}); got shape {rows.shape}")
    h = getattr(processor, "h", 1)
    batching.check_prompts(lens, T, h=h, window=batching.context_window(model.config), rows=rows)
    V = int(vocab_size or model.config.vocab_size)
    device = next(model.parameters()).device
    inp, attn, pos = batching.model_inputs(ids, device)
    seq = torch.as_tensor(ids, device=device)  # what the processors read: pads stay -1, left of h real tokens
    keys = row_keys(seed, rows, device)
    out = torch.empty((B, T), dtype=torch.int64, device=device)
    first_nan = torch.full((B,), -1, dtype=torch.int64, device=device)
    stop = torch.as_tensor(sorted(int(i) for i in stop_ids), dtype=torch.int64, device=device) if len(stop_ids) else None
    lengths = torch.full((B,), T, dtype=torch.int64, device=device)
    cache = new_cache(model)
    t0 = time.perf_counter()
    for t in range(T):
        res = cached_forward(model, cache, input_ids=inp, attention_mask=attn, position_ids=pos, logits_to_keep=1)
        scores = res.logits[:, -1, :].float()
        first_nan = torch.where(torch.isnan(scores[:, :V]).any(-1) & (first_nan < 0), t, first_nan)
        if processor is not None:
            scores = processor(seq, scores)
        nxt = inverse_cdf(scores[:, :V], counter_uniform(keys, torch.tensor(t, device=device)))
        out[:, t] = nxt
        if stop is not None:
            lengths = torch.where(torch.isin(nxt, stop) & (lengths == T), t + 1, lengths)
            if bool((lengths < T).all()):
                break
        seq = torch.cat([seq, nxt[:, None]], dim=1)
        inp = nxt[:, None]
        attn = torch.cat([attn, torch.ones((B, 1), dtype=attn.dtype, device=device)], dim=1)
        pos = pos[:, -1:] + 1
    check_nan(first_nan, rows)
    stacked = processor.stacked() if processor is not None else {}
    seconds = time.perf_counter() - t0
    meta = processor_meta(processor, V, seed)
    meta.update(engine="loop", seconds=seconds)
    lengths = lengths.cpu().numpy()
    past_end = np.arange(T)[None, :] >= lengths[:, None]
    tokens = np.where(past_end, Generation.PAD, out.cpu().numpy())
    rec = records_or_nan(stacked, B, T)
    for a in rec.values():
        a[past_end] = np.nan
    return Generation(tokens, ids, **rec, meta=meta, prompt_lens=lens, lengths=lengths)
