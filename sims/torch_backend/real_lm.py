"""Experiments on a real LM: batched generation over a prompt set, detection, evaluate.

:func:`generate_texts` buckets prompts of similar lengths (:func:`.batch.buckets`), runs each
bucket through an engine (``"loop"``: :func:`.generate_torch.generate`, any causal LM;
``"static"``: :func:`.static_decode.generate_static`, Llama family) and concatenates the
buckets back in prompt order into one :class:`~sims.core.record.Generation`; row i always
draws from the stream ``(seed, i)``, so the texts do not depend on the batch size.  A progress
bar counts tokens (tokens/s shown).  A batch that does not fit in memory is halved until one
does (said on stderr, the size used kept in ``meta["batch"]``); nothing already generated is lost.

:func:`score` is :func:`sims.detect.scores.score` with the model's teacher-forced
probabilities for ITS / UW (batched, one chunk of rows in memory at a time), and
:func:`evaluate` returns the keys of :func:`sims.experiments.evaluate.evaluate`.
"""

from __future__ import annotations

import sys
import time

import numpy as np
import torch

from sims.core import defaults
from sims.core.progress import progress
from sims.core.record import RECORDS, Generation
from sims.detect import scores as detect
from sims.experiments.evaluate import NULL_SEED_OFFSET, check_watermark, redgreen_ttd, summarize
from sims.torch_backend import batch as batching
from sims.torch_backend.generate_torch import generate
from sims.torch_backend.lm_oracle import ModelOracle
from sims.torch_backend.model import load, sampled_vocab, stop_ids
from sims.torch_backend.processors import make_processor
from sims.torch_backend.prompts import prompt_ids
from sims.torch_backend.static_decode import generate_static
from sims.watermarks import registry
from sims.watermarks.generate import algo_params

ENGINES = ("loop", "static")
CPU_BATCH = 16  # on a CPU, throughput stops growing around here (2-16 cores)
MAX_BATCH = 256
PROBS_BYTES = 1 << 28  # teacher-forced probabilities held at once (bytes)


def default_batch(model, max_len: int) -> int:
    """The batch the machine holds: on a CPU ``CPU_BATCH``; on a GPU the rows whose KV cache
    (2 x layers x kv_heads x head_dim x ``max_len`` x dtype bytes) plus two float32 logit rows
    fit in half the free memory, capped at ``MAX_BATCH``."""
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
    prompts : list of 1-d id sequences (row i of the result is prompt i)
    T, algo, seed, key, h, **params :
        As :func:`sims.watermarks.generate.generate` (``params``: gamma, delta, Delta, eta,
        lam1, M, tau, alpha, green_kind, prf; ``prf="siphash"`` takes a 128-bit ``key`` and is
        kept with the key in ``meta``, so that :func:`score` detects with it).
    batch : int, optional
        Rows per forward pass (default :func:`default_batch`).
    engine : {"loop", "static"}
    vocab_size : int, optional
        Ids sampled (the tokenizer's length; default the model's).
    lm : str
        Name kept in ``meta["lm"]`` (how ``sims detect`` / ``attack`` reload the model).
    stop_ids : collection of int
        End tokens (:func:`.model.stop_ids`; loop engine): a row ends at the first it samples
        (:func:`.generate_torch.generate`).  Default none: every row has ``T`` tokens.
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
                    g = generate(model, rows, T, proc, seed=seed, rows=idx, vocab_size=vocab_size, stop_ids=stop_ids)
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
    _, info = algo_params(algo, **{k: v for k, v in params.items() if k not in ("green_kind", "prf")})
    out.meta.update(info, lm=lm, batch=B, engine=engine if engine == "loop" else out.meta["engine"])
    return out


def teacher_forced_probs(model, gen: Generation, vocab_size: int | None = None, chunk: int | None = None):
    """``step_probs(i)``: the model's (T, V) next-token distributions along text i (float64),
    computed for ``chunk`` rows per forward pass (left-padded, masked) and kept one chunk at a time
    (default: as many rows as ``PROBS_BYTES`` of float32 probabilities allow)."""
    V = int(vocab_size or gen.meta["vocab_size"])
    n, T = gen.tokens.shape
    chunk = chunk or max(1, PROBS_BYTES // (4 * T * V))
    device = next(model.parameters()).device
    cache: dict = {}

    @torch.no_grad()
    def step_probs(i):
        start = (i // chunk) * chunk
        if cache.get("start") != start:
            rows = range(start, min(n, start + chunk))
            # a row that ended early is filled with id 0 past its end: causal attention keeps its
            # real steps' distributions, and the filled ones are never read
            seqs = [np.concatenate([gen.prompt(r), np.maximum(gen.tokens[r], 0)]) for r in rows]
            ids, lens = batching.pad_left(seqs)
            x, mask, pos = batching.model_inputs(ids, device)
            logits = model(input_ids=x, attention_mask=mask, position_ids=pos).logits[:, -T - 1 : -1, :V]
            cache.update(start=start, probs=torch.softmax(logits.float(), -1).cpu())
        return cache["probs"][i - start].double().numpy()

    return step_probs


def score(gen: Generation, model=None, *, dedup: bool = False, key: int | None = None, gamma: float | None = None,
          algo: str | None = None) -> detect.DetectResult:
    """:func:`sims.detect.scores.score` for texts of a real LM; ITS / UW read the model's
    teacher-forced probabilities (``model`` default: ``load(gen.meta["lm"])``)."""
    algo = gen.meta["algo"] if algo is None else algo
    if registry.get(algo).family != "keyed":
        return detect.score(gen, None, dedup=dedup, key=key, gamma=gamma, algo=algo)
    if model is None:
        model, _ = load(gen.meta["lm"])
    return detect.score_keyed_order(gen, teacher_forced_probs(model, gen), key=key, algo=algo)


def evaluate(lm: str, algo: str, *, n: int, T: int, seed: int = 0, key: int = defaults.KEY, prompts: str = "lfqa",
             batch: int | None = None, engine: str = "loop", dedup: bool = False, n_null: int | None = None, h: int = defaults.H,
             dtype=None, return_arrays: bool = False, **params) -> dict:
    """Watermarked and unwatermarked texts of a real LM, scored with the key: the keys of
    :func:`sims.experiments.evaluate.evaluate` (KL, realised DG, entropy, TPR at 1e-4 / 1e-6
    with Clopper-Pearson intervals, empirical FPR on the controls, tokens to detect, speeds).

    ``lm``: ``smollm2``, a random test model or a local folder (:func:`.model.load`);
    ``prompts``: lfqa, news or a JSONL file (random ids of mixed lengths for the random
    models).  The ``n_null`` (default ``n``) controls are unwatermarked texts after the same
    prompts (cycled), seed ``seed + NULL_SEED_OFFSET``, scored with the watermark's detector.
    """
    check_watermark(algo, **params)
    n_null = int(n) if n_null is None else int(n_null)
    if n_null < 1:
        raise ValueError(f"n_null must be in [1, inf); got {n_null}")
    model, tok = load(lm, dtype=dtype)
    V = sampled_vocab(model, tok)
    ids = prompt_ids(prompts, n, tokenizer=tok, vocab_size=V, seed=seed)
    kw = dict(key=key, batch=batch, engine=engine, vocab_size=V, lm=lm, h=h)
    t0 = time.perf_counter()
    gen = generate_texts(model, ids, T, algo, seed=seed, **kw, **params)
    gen_s = time.perf_counter() - t0
    null = generate_texts(model, [ids[i % n] for i in range(n_null)], T, "none", seed=seed + NULL_SEED_OFFSET, **kw,
                          gamma=gen.meta["gamma"])
    t0 = time.perf_counter()
    res = score(gen, model, dedup=dedup)
    det_s = time.perf_counter() - t0
    null.meta["key"] = gen.meta["key"]
    res0 = score(null, model, dedup=dedup, algo=algo)
    return summarize(gen, res, res0, redgreen_ttd(gen, dedup), lm=lm, n_null=n_null, seed=seed, key=key, dedup=dedup,
                     gen_seconds=gen_s, det_seconds=det_s, return_arrays=return_arrays)


def _load_on(lm: str, dtype=None, device=None):
    """(model on ``device``, tokenizer, sampled vocabulary) of LM ``lm`` loaded by name; the device
    defaults to the GPU when there is one, else the CPU."""
    model, tok = load(lm, dtype=dtype)
    model = model.to(device or ("cuda" if torch.cuda.is_available() else "cpu"))
    return model, tok, sampled_vocab(model, tok)


def oracle_on(lm: str, dtype=None, device=None) -> ModelOracle:
    """The next-token probabilities :func:`generate_on` samples from, as a :class:`.lm_oracle.ModelOracle`
    (the LM-dependent attacks and UW / ITS detection of those texts ask it)."""
    model, _, V = _load_on(lm, dtype, device)
    return ModelOracle(model, V)


def generate_on(lm: str, algo: str, *, n: int, T: int, seed: int = 0, prompts: str = "lfqa", dtype=None, device=None,
                stop_at_eos: bool = False, **kw) -> Generation:
    """:func:`generate_texts` on LM ``lm`` (loaded by name) after ``n`` prompts of the set ``prompts``,
    on ``device`` (default: the GPU when there is one, else the CPU); ``stop_at_eos``: each row
    ends at the model's first end token (:func:`.model.stop_ids`)."""
    model, tok, V = _load_on(lm, dtype, device)
    stops = stop_ids(model, tok) if stop_at_eos else ()
    return generate_texts(model, prompt_ids(prompts, n, tokenizer=tok, vocab_size=V, seed=seed), T, algo, seed=seed, vocab_size=V,
                          lm=lm, stop_ids=stops, **kw)


def steal_texts(lm: str, algo: str, *, n: int, n_eval: int, T: int, seed: int = 0, key=defaults.KEY, h: int = defaults.H,
                prompts: str = "lfqa", use_base: bool = False, batch: int | None = None, dtype=None, device=None,
                **params) -> tuple[Generation, Generation | None, Generation]:
    """A stealing attacker's texts on LM ``lm`` (:mod:`sims.experiments.steal`): ``n`` watermarked
    texts of ``algo``, optionally ``n`` base texts, and ``n_eval`` held-out base texts.

    The held-out texts follow the last ``n_eval`` prompts of the set ``prompts`` (sampling seed
    ``seed + EVAL_SEED_OFFSET``); the watermarked texts cycle over the other prompts (row i after
    prompt ``i mod (set size - n_eval)``, seed ``seed``; rows that share a prompt still differ,
    each drawing from its own stream), the base texts likewise with seed ``seed + BASE_SEED_OFFSET``.
    Random test models (no tokenizer) draw ``n + n_eval`` random prompts.

    Returns
    -------
    (wm, base or None, held_out) : Generation
    """
    from sims.experiments.steal import BASE_SEED_OFFSET, EVAL_SEED_OFFSET

    if int(n) < 1 or int(n_eval) < 1:
        raise ValueError(f"n and n_eval must be in [1, inf); got n={n}, n_eval={n_eval}")
    model, tok = load(lm, dtype=dtype)
    model = model.to(device or ("cuda" if torch.cuda.is_available() else "cpu"))
    V = sampled_vocab(model, tok)
    ids = prompt_ids(prompts, None if tok is not None else int(n) + int(n_eval), tokenizer=tok, vocab_size=V, seed=seed)
    if len(ids) <= int(n_eval):
        raise ValueError(f"n_eval must be below the {len(ids)} prompts of {prompts!r} (the rest prompt the stolen texts); got {n_eval}")
    pool, held = ids[: len(ids) - int(n_eval)], ids[len(ids) - int(n_eval) :]
    rows = [pool[i % len(pool)] for i in range(int(n))]
    kw = dict(key=key, h=h, vocab_size=V, lm=lm, batch=batch)
    wm = generate_texts(model, rows, T, algo, seed=seed, **kw, **params)
    null = {k: params[k] for k in ("prf",) if k in params} | {"gamma": wm.meta["gamma"]}
    base = generate_texts(model, rows, T, "none", seed=seed + BASE_SEED_OFFSET, **kw, **null) if use_base else None
    held_out = generate_texts(model, held, T, "none", seed=seed + EVAL_SEED_OFFSET, **kw, **null)
    return wm, base, held_out
