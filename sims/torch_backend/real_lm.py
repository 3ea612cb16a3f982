"""Experiments on a real LM: batched generation over a prompt set, detection, evaluate.

:func:`generate_texts` buckets prompts of similar lengths (:func:`.batch.buckets`), runs each
bucket through an engine (``"loop"``: :func:`.generate_torch.generate_with_processor`, any causal LM;
``"static"``: :func:`.static_decode.generate_static`, Llama family) and concatenates the
buckets back in prompt order into one :class:`~sims.core.record.Generation`; row i always
draws from the stream ``(seed, i)``, so the texts do not depend on the batch size.  A progress
bar counts tokens (tokens/s shown).  A batch that does not fit in memory is halved until one
does (said on stderr, the size used kept in ``meta["batch"]``); nothing already generated is lost.

:func:`sims.generate` calls it for a real LM opened with :func:`sims.get_lm` (:class:`sims.lm.door.LM`);
the model's next-token distributions along saved texts are :func:`sims.lm.real.oracle.teacher_forced_probs`.
"""

from __future__ import annotations

import sys

import numpy as np
import torch

from sims.core import defaults
from sims.core.progress import progress
from sims.core.record import RECORDS, Generation
from sims.lm.real import batch as batching
from sims.torch_backend.generate_torch import generate_with_processor
from sims.torch_backend.processors import make_processor
from sims.torch_backend.static_decode import generate_static
from sims.watermarks import registry
from sims.watermarks.generate import algo_params

#: The decoding engines: ``loop`` (any causal LM, transformers forward) and ``static`` (Llama family, static KV
#: cache, fused kernels).
ENGINES = ("loop", "static")
CPU_BATCH = 16  #: on a CPU, throughput stops growing around here (2-16 cores)
#: Rows per forward pass at most on a GPU (:func:`default_batch`).
MAX_BATCH = 256


def default_batch(model, max_len: int) -> int:
    """The batch the machine holds for texts of ``max_len`` tokens.

    On a CPU :data:`CPU_BATCH`; on a GPU the rows whose KV cache (2 x layers x kv_heads x head_dim x ``max_len``
    x dtype bytes) plus two float32 logit rows fit in half the free memory, capped at :data:`MAX_BATCH`.

    Parameters
    ----------
    model : transformers causal LM
        The model (its config and the device of its weights).
    max_len : int
        Prompt plus generated tokens per row.

    Returns
    -------
    int
        Rows per forward pass, >= 1.
    """
    p = next(model.parameters())
    if p.device.type != "cuda":
        return CPU_BATCH
    cfg = model.config
    layers = getattr(cfg, "num_hidden_layers", None) or cfg.n_layer
    heads = getattr(cfg, "num_attention_heads", None) or cfg.n_head
    kv = getattr(cfg, "num_key_value_heads", None) or heads
    hidden = getattr(cfg, "hidden_size", None) or cfg.n_embd
    hd = getattr(cfg, "head_dim", None) or hidden // heads
    row = 2 * layers * kv * hd * max_len * p.element_size() + 2 * 4 * cfg.vocab_size
    free, _ = torch.cuda.mem_get_info(p.device)
    return int(max(1, min(MAX_BATCH, free // 2 // row)))


def _concat(parts: list[tuple[np.ndarray, Generation]], n: int) -> Generation:
    """One Generation of ``n`` rows from per-bucket ones (row indices, generation)."""
    P = max(g.prompts.shape[1] for _, g in parts)
    T = parts[0][1].tokens.shape[1]
    tokens = np.empty((n, T), dtype=np.int64)
    prompts = np.full((n, P), Generation.PAD, dtype=np.int64)
    lens = np.empty(n, dtype=np.int64)
    lengths = np.empty(n, dtype=np.int64)
    rec = {k: np.empty((n, T)) for k in RECORDS}
    for idx, g in parts:
        tokens[idx] = g.tokens
        prompts[idx, P - g.prompts.shape[1]:] = g.prompts
        lens[idx] = g.prompt_lens
        lengths[idx] = g.lengths
        for k in RECORDS:
            rec[k][idx] = getattr(g, k)
    meta = dict(parts[0][1].meta)
    meta["seconds"] = sum(g.meta["seconds"] for _, g in parts)
    return Generation(tokens, prompts, **rec, meta=meta, prompt_lens=lens, lengths=lengths)


def generate_texts(model, prompts: list, T: int, algo: str, *, seed: int = 0, key: int = defaults.KEY, batch: int | None = None,
                   engine: str = "loop", vocab_size: int | None = None, lm: str = "", h: int = defaults.H,
                   show: bool | None = None, stop_ids=(), **params) -> Generation:
    """``T`` tokens after each of ``prompts`` (id sequences of any lengths) with ``algo``.

    Parameters
    ----------
    model : transformers causal LM
        The model.
    prompts : list of 1-d id sequences
        Row i of the result is prompt i.
    T, algo, seed, key, h, **params
        As :func:`sims.watermarks.generate.generate_synthetic` (``params``: gamma, delta, Delta, eta,
        lam1, M, tau, alpha, green_kind, prf, seeding; ``prf="siphash"`` takes a 128-bit ``key`` and is
        kept with the key in ``meta``, so that :func:`sims.score` detects with it; so is a ``seeding``
        scheme other than ``"lefthash"`` (:mod:`sims.core.seeding`), the green lists of the processor
        bit-identical to the synthetic generator's).
    batch : int, optional
        Rows per forward pass (default :func:`default_batch`); halved while a batch does not fit in memory.
    engine : {"loop", "static"}
        The decoding engine (:data:`ENGINES`).
    vocab_size : int, optional
        Ids sampled (the tokenizer's length; default the model's).
    lm : str
        Name kept in ``meta["lm"]`` (how ``sims detect`` / ``attack`` reopen the model, :func:`sims.get_lm`).
    show : bool, optional
        Force the progress bar on (True) or off (False); None: as :func:`sims.core.progress.shown` and the terminal decide.
    stop_ids : collection of int
        End tokens (:func:`.model.stop_ids`; loop engine): a row ends at the first it samples
        (:func:`.generate_torch.generate_with_processor`).  Default none: every row has ``T`` tokens.

    Returns
    -------
    Generation
        The texts in prompt order, with the float64 records, the prompts left-padded to one width and ``meta``
        (the algorithm's resolved parameters, ``lm``, ``batch`` used, ``engine``, ``seconds``).

    Raises
    ------
    ValueError
        If ``engine`` is unknown, ``stop_ids`` is given with the static engine, the algorithm or a parameter is
        refused, a prompt does not fit the context window with ``T`` tokens, ``batch`` < 1, or even one row does
        not fit in memory.
    """
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}; got {engine!r}")
    if len(stop_ids) and engine != "loop":
        raise ValueError(f"stop_ids needs engine='loop' (the static engine decodes a fixed T); got engine={engine!r}")
    registry.get(algo)
    ids, lens = batching.pad_left(prompts)
    n = len(lens)
    batching.check_prompts(lens, T, h=h, window=batching.context_window(model.config))
    make_processor(algo, vocab_size=vocab_size or model.config.vocab_size, key=key, h=h, **params)  # bad parameters fail here
    B = default_batch(model, ids.shape[1] + T) if batch is None else int(batch)
    if B < 1:
        raise ValueError(f"batch must be in [1, inf); got {batch!r}")
    parts, todo = [], list(batching.buckets(lens, B))
    with progress(n * T, f"{lm or 'lm'}/{algo}: {n} prompts", unit="tok", force=show) as bar:
        while todo:
            idx = todo.pop(0)
            rows = [prompts[i] for i in idx]
            try:
                if engine == "loop":
                    proc = make_processor(algo, vocab_size=vocab_size or model.config.vocab_size, key=key, h=h, max_steps=T, **params)
                    g = generate_with_processor(model, rows, T, proc, seed=seed, rows=idx, vocab_size=vocab_size, stop_ids=stop_ids)
                else:
                    g = generate_static(model, rows, T, algo=algo, key=key, seed=seed, rows=idx, vocab_size=vocab_size, h=h, **params)
            except torch.OutOfMemoryError:
                if len(idx) == 1:
                    raise ValueError(f"even batch 1 does not fit in memory (prompt of row {int(idx[0])}, T={T}); "
                                     "lower T or use a smaller model / dtype") from None
                half = (len(idx) + 1) // 2
                B = min(B, half)
                sys.stderr.write(f"batch {len(idx)} does not fit in memory; continuing with batch {half} (pass --batch {half})\n")
                if torch.cuda.is_available():
                    torch.cuda.empty_cache()
                todo[:0] = [idx[:half], idx[half:]]
                continue
            parts.append((idx, g))
            bar.update(len(idx) * T)
    out = _concat(parts, n)
    _, info = algo_params(algo, **{k: v for k, v in params.items() if k not in ("green_kind", "prf", "seeding")})
    out.meta.update(info, lm=lm, batch=B, engine=engine if engine == "loop" else out.meta["engine"])
    return out
