"""A fast watermarked decoding loop: a static KV cache and, on CUDA, whole steps in CUDA graphs.

:class:`StaticLlama` runs a transformers Llama-family model (Llama, SmolLM2, Mistral, Qwen2:
RMSNorm, rotary embeddings, grouped-query attention, SwiGLU) from the model's own weight
tensors, with the keys and values in preallocated (layers, B, kv_heads, L, head_dim) buffers.
A decoding step touches only fixed addresses, so :func:`generate_static` captures
forward pass + watermark (:class:`.fused.FusedBoost`) + sampling + bookkeeping as one CUDA
graph per attention-length bucket and replays it: no Python, no kernel-launch gaps, no host
synchronisation until the end.  On the CPU the same step runs eagerly (what the tests check
against transformers' own forward).

Prompts of mixed lengths are left-padded (:mod:`.batch`): cache slot j is column j of every
row, a row's rotary positions count its real tokens only (``slot - pad``), and its attention
never reaches a pad slot, so a row's logits equal those of the row alone.

Watermark and sampling are :meth:`.fused.FusedBoost.sample` for none / srl / dualga (fused,
CUDA-graph capturable): inverse-CDF sampling from the boosted distribution with the uniform
number t of the row's counter stream ``stream_key(seed, row)`` -- the loop engine's
(:mod:`.generate_torch`), so both engines draw the same tokens for the same seed.  Every other
algorithm runs its processor (:mod:`.processors`) on the static decoder's logits and samples
through :func:`.fused.inverse_cdf` with the same uniforms (eager, no CUDA graph).
"""

from __future__ import annotations

import math
import time

import numpy as np
import torch
import torch.nn.functional as F

from sims.core import defaults
from sims.core.record import Generation
from sims.core.rng import stream_key
from sims.lm.real import batch as batching
from sims.torch_backend.fused import FusedBoost, check_nan, default_backend, inverse_cdf, triton_next_pow2, triton_usable
from sims.torch_backend.generate_torch import processor_meta, records_or_nan, row_keys
from sims.torch_backend.prf_torch import counter_uniform
from sims.torch_backend.processors import make_processor
from sims.watermarks import registry
from sims.watermarks.generate import algo_params

FUSED_ALGOS = registry.names(fused=True)  #: one fused step (FusedBoost), CUDA graphs on a GPU
#: Attention-length bucket of the static decoder: each step attends to the filled slots rounded up to a multiple of
#: BUCKET, and one CUDA graph is captured per bucket.
BUCKET = 64


class StaticLlama:
    """Decoder over ``model``'s weights with a static KV cache of ``batch`` rows x ``max_len`` positions.

    Parameters
    ----------
    model : transformers causal LM
        A Llama-family model (SiLU MLP, ``model.layers``, rotary embeddings).
    batch : int
        Rows of the cache.
    max_len : int
        Positions of the cache (prompt plus generated tokens), within the context window and any sliding window.
    kernels : {"auto", "triton", "torch"}, optional
        "triton" runs single-token steps through the fused kernels of :mod:`._triton_llama` (the default on
        CUDA); "torch" runs every step eagerly.

    Raises
    ------
    ValueError
        If the model is not of the Llama family, ``max_len`` is out of range, or ``kernels`` is unknown or
        ``"triton"`` where Triton cannot run.
    """

    def __init__(self, model, batch: int, max_len: int, kernels: str = "auto"):
        cfg = model.config
        if getattr(cfg, "hidden_act", "silu") != "silu" or not hasattr(model, "model") or not hasattr(model.model, "layers"):
            raise ValueError(f"StaticLlama needs a Llama-family model (SiLU MLP, model.layers); got {type(model).__name__}")
        max_pos = getattr(cfg, "max_position_embeddings", max_len)
        if not (1 <= max_len <= max_pos):
            raise ValueError(f"max_len must be in [1, {max_pos}] (the context window); got {max_len}")
        window = getattr(cfg, "sliding_window", None) if getattr(cfg, "use_sliding_window", True) else None
        if window is not None and max_len > window:
            raise ValueError(f"max_len must be at most the sliding window {window} (StaticLlama attends to every slot); got {max_len}")
        m = model.model
        p = next(model.parameters())
        self.device, self.dtype = p.device, p.dtype
        self.nh = cfg.num_attention_heads
        self.nkv = getattr(cfg, "num_key_value_heads", None) or self.nh
        self.hd = getattr(cfg, "head_dim", None) or cfg.hidden_size // self.nh
        self.eps = cfg.rms_norm_eps
        self.B, self.L = int(batch), int(max_len)
        self.embed = m.embed_tokens.weight
        self.norm = m.norm.weight
        self.head = model.lm_head.weight
        self.layers = []
        for layer in m.layers:
            a, mlp = layer.self_attn, layer.mlp
            wqkv = torch.cat([a.q_proj.weight, a.k_proj.weight, a.v_proj.weight])
            bqkv = None if a.q_proj.bias is None else torch.cat([a.q_proj.bias, a.k_proj.bias, a.v_proj.bias])
            wgu = torch.cat([mlp.gate_proj.weight, mlp.up_proj.weight])
            self.layers.append((layer.input_layernorm.weight, wqkv, bqkv, a.o_proj.weight, a.o_proj.bias,
                                layer.post_attention_layernorm.weight, wgu, mlp.down_proj.weight))
        shape = (len(self.layers), self.B, self.nkv, self.L, self.hd)
        self.k = torch.zeros(shape, device=self.device, dtype=self.dtype)
        self.v = torch.zeros(shape, device=self.device, dtype=self.dtype)
        pos = torch.arange(self.L, device=self.device)
        cos, sin = m.rotary_emb(self.embed[:1], pos[None])
        self.cos, self.sin = cos[0].to(self.dtype).contiguous(), sin[0].to(self.dtype).contiguous()  # (L, head_dim)
        self.arange = pos
        self.pads = torch.zeros(self.B, dtype=torch.long, device=self.device)  # left padding of each row
        if kernels not in ("auto", "triton", "torch"):
            raise ValueError(f"kernels must be 'auto', 'triton' or 'torch'; got {kernels!r}")
        if kernels == "triton" and not triton_usable(self.device):
            raise ValueError(f"kernels 'triton' needs the triton package and a CUDA device (or TRITON_INTERPRET=1); got {self.device}")
        self.kernels = default_backend(self.device) if kernels == "auto" else kernels

    def _rms(self, x, w):
        xf = x.float()
        return w * (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)).to(x.dtype)

    @staticmethod
    def _rotate(x, cos, sin):
        half = x.shape[-1] // 2
        return x * cos + torch.cat((-x[..., half:], x[..., :half]), dim=-1) * sin

    def set_pads(self, pads) -> None:
        """Left padding of each row: slots [0, pads[b]) of row b are never attended to.

        Parameters
        ----------
        pads : array_like of int
            (B,) pad slots per row.
        """
        self.pads.copy_(torch.as_tensor(pads, dtype=torch.long, device=self.device))

    def _mask(self, positions, kv_len):
        """(B, 1, n, kv_len): slot j is visible to the query at slot i iff pad_b <= j <= i; a pad
        query sees itself only (finite outputs that no real query reads)."""
        j = self.arange[None, None, :kv_len]
        i = positions[None, :, None]
        return (((j <= i) & (j >= self.pads[:, None, None])) | (j == i))[:, None]

    def forward(self, ids: torch.Tensor, positions: torch.Tensor, kv_len: int) -> torch.Tensor:
        """Logits of the last position, for tokens ``ids`` at cache slots ``positions``.

        The rotary position of row b is ``slot - pads[b]``; attends to cache slots [pads[b], kv_len), writing the new
        keys and values at ``positions``.

        Parameters
        ----------
        ids : torch.Tensor
            (B, n) token ids.
        positions : torch.Tensor
            (n,) their cache slots.
        kv_len : int
            Slots attended to.

        Returns
        -------
        torch.Tensor
            (B, V) logits.
        """
        B, n = ids.shape
        if n == 1 and self.kernels == "triton":
            return self._decode_triton(ids, positions, kv_len)
        x = F.embedding(ids, self.embed)
        rot = (positions[None, :] - self.pads[:, None]).clamp(min=0)  # (B, n)
        cos, sin = self.cos[rot][:, None], self.sin[rot][:, None]
        allowed = self._mask(positions, kv_len)
        q_end, k_end = self.nh * self.hd, (self.nh + self.nkv) * self.hd
        for i, (ln1, wqkv, bqkv, wo, bo, ln2, wgu, wdown) in enumerate(self.layers):
            qkv = F.linear(self._rms(x, ln1), wqkv, bqkv)
            q = qkv[..., :q_end].view(B, n, self.nh, self.hd).transpose(1, 2)
            k = qkv[..., q_end:k_end].view(B, n, self.nkv, self.hd).transpose(1, 2)
            v = qkv[..., k_end:].view(B, n, self.nkv, self.hd).transpose(1, 2)
            q, k = self._rotate(q, cos, sin), self._rotate(k, cos, sin)
            self.k[i].index_copy_(2, positions, k)
            self.v[i].index_copy_(2, positions, v)
            att = F.scaled_dot_product_attention(q, self.k[i][:, :, :kv_len], self.v[i][:, :, :kv_len],
                                                 attn_mask=allowed, enable_gqa=self.nkv != self.nh)
            x = x + F.linear(att.transpose(1, 2).reshape(B, n, q_end), wo, bo)
            gate, up = F.linear(self._rms(x, ln2), wgu).chunk(2, dim=-1)
            x = x + F.linear(F.silu(gate) * up, wdown)
        return F.linear(self._rms(x[:, -1], self.norm), self.head).float()


    def _decode_triton(self, ids, positions, kv_len):
        """One token per row through the fused kernels; same arithmetic as :meth:`forward`."""
        from sims.torch_backend import _triton_llama as k

        B, H, D = ids.shape[0], self.embed.shape[1], self.hd
        x = F.embedding(ids[:, 0], self.embed)
        h = torch.empty_like(x)
        q = torch.empty(B, self.nh, 1, D, device=x.device, dtype=x.dtype)
        allowed = self._mask(positions, kv_len)
        rot = (positions[0] - self.pads).clamp(min=0)  # (B,) rotary position of each row
        hb = triton_next_pow2(H)
        y = None
        for i, (ln1, wqkv, bqkv, wo, bo, ln2, wgu, wdown) in enumerate(self.layers):
            k.add_rmsnorm[(B,)](x, x if y is None else y, ln1, h, H, self.eps, HAS_Y=y is not None, BLOCK=hb)
            qkv = F.linear(h, wqkv, bqkv)
            kc, vc = self.k[i], self.v[i]
            k.rope_cache[(B,)](qkv, self.cos, self.sin, positions, rot, q, kc, vc, kc.stride(0), kc.stride(1), NH=self.nh,
                               NKV=self.nkv, NH_P2=triton_next_pow2(self.nh), NKV_P2=triton_next_pow2(self.nkv), D=D)
            att = F.scaled_dot_product_attention(q, kc[:, :, :kv_len], vc[:, :, :kv_len], attn_mask=allowed,
                                                 enable_gqa=self.nkv != self.nh)
            y = F.linear(att.reshape(B, self.nh * D), wo, bo)
            k.add_rmsnorm[(B,)](x, y, ln2, h, H, self.eps, HAS_Y=True, BLOCK=hb)
            gu = F.linear(h, wgu)
            inter = gu.shape[-1] // 2
            act = torch.empty(B, inter, device=x.device, dtype=x.dtype)
            k.silu_mul[(B, -(-inter // 1024))](gu, act, inter, BLOCK=1024)
            y = F.linear(act, wdown)
        k.add_rmsnorm[(B,)](x, y, self.norm, h, H, self.eps, HAS_Y=True, BLOCK=hb)
        return F.linear(h, self.head).float()


class _Loop:
    """Static buffers and one decoding step (model, then watermark + sampling) on them.

    ``sampler``: a :class:`.fused.FusedBoost` (fused path), or a processor of
    :mod:`.processors` with ``keys`` (the rows' sampling stream keys) for the eager path."""

    def __init__(self, dec: StaticLlama, prompts, T, sampler, keys: torch.Tensor | None = None):
        self.dec, self.sampler, self.keys = dec, sampler, keys
        self.tokens = torch.zeros(prompts.shape[0], T, dtype=torch.long, device=dec.device)
        self.pos = torch.full((1,), prompts.shape[1], dtype=torch.long, device=dec.device)
        self.window = prompts[:, -sampler.h :].clone()
        self.seq = prompts.clone() if keys is not None else None  # the processors read the history
        self.t = 0

    def sample(self, logits):
        if self.keys is None:
            self.sampler.sample(self.window, logits, self.tokens)
            return
        V = self.sampler.vocab_size
        nxt = inverse_cdf(self.sampler(self.seq, logits)[:, :V], counter_uniform(self.keys, torch.tensor(self.t, device=logits.device)))
        self.tokens[:, self.t] = nxt
        self.seq = torch.cat([self.seq, nxt[:, None]], dim=1)
        self.window = self.seq[:, -self.sampler.h :]
        self.t += 1

    def step(self, kv_len):
        logits = self.dec.forward(self.window[:, -1:], self.pos, kv_len)
        self.pos += 1
        self.sample(logits)


@torch.no_grad()
def generate_static(model, prompts, T: int, *, algo: str = "dualga", key: int = defaults.KEY, seed: int = 0, rows=None,
                    vocab_size: int | None = None, h: int = defaults.H, cuda_graph: bool | None = None, backend: str = "auto",
                    kernels: str = "auto", records: bool = True, **params) -> Generation:
    """Sample ``T`` tokens after each prompt with ``algo`` (any of :data:`.processors.PROCESSOR_ALGOS`) on the static decoder.

    none / srl / dualga with SplitMix64 left-hash green lists run fused (:class:`.fused.FusedBoost`; ``backend`` picks its
    kernels, ``cuda_graph`` (default: on CUDA) captures each step per attention-length bucket of :data:`BUCKET`); the
    others run their processor eagerly.

    Parameters
    ----------
    model : transformers causal LM
        A Llama-family model (:class:`StaticLlama`).
    prompts : list of id sequences or numpy.ndarray
        Id sequences, or ids left-padded with -1.
    T : int
        Tokens per row.
    algo : str, optional
        The algorithm.
    key : int, optional
        Watermark key.
    seed : int, optional
        Sampling seed; row b draws from the counter stream ``stream_key(seed, rows[b])``.
    rows : sequence of int, optional
        The rows' global indices (default 0..B-1).
    vocab_size : int, optional
        Ids sampled (default the model's).
    h : int, optional
        Context width of the green lists.
    cuda_graph : bool, optional
        Capture the fused steps in CUDA graphs (default: on CUDA).
    backend : str, optional
        The :class:`.fused.FusedBoost` backend (``"auto"``, ``"triton"``, ``"numba"``, ``"torch"``).
    kernels : str, optional
        The model's kernels (:class:`StaticLlama`).
    records : bool, optional
        False with ``algo="none"`` skips green lists and records (the bare baseline).
    **params
        The algorithm's parameters (``gamma``, ``delta``, ``Delta``, ``eta``, ``lam1``, ``M``, ``tau``,
        ``alpha``; defaults of :func:`sims.watermarks.generate.algo_params`).

    Returns
    -------
    Generation
        The same record as the loop engine's (:func:`.generate_torch.generate_with_processor`).
    """
    registry.get(algo)
    ids, lens = batching.pad_left(prompts)
    B, P = ids.shape
    rows = np.arange(B) if rows is None else np.asarray(rows, dtype=np.int64)
    batching.check_prompts(lens, T, h=h, window=batching.context_window(model.config), rows=rows)
    V = int(vocab_size or model.config.vocab_size)
    dec = StaticLlama(model, B, P + T, kernels=kernels)
    dec.set_pads(P - lens)
    inp = torch.as_tensor(ids, device=dec.device).clamp(min=0)
    if algo in FUSED_ALGOS and params.get("prf", defaults.PRF) == defaults.PRF and params.get("seeding", "lefthash") == "lefthash":
        # the fused kernels hash lefthash with SplitMix64; another seeding scheme runs the processor
        registry.check_params(algo, **{k: v for k, v in params.items() if k != "prf"})
        _, info = algo_params(algo, **{k: v for k, v in params.items() if k != "prf"})
        dual = "eta" in registry.get(algo).params  # lambda learned online (DualGA), else a fixed boost delta (none: 0)
        lam1, eta, Delta = (info["lam1"], info["eta"], info["Delta"]) if dual else (info["delta"] or 0.0, 0.0, 0.0)
        sampler = FusedBoost(key, info["gamma"], V, B, T, dec.device, h=h, lam1=lam1, Delta=Delta, eta=eta, M=info["M"],
                             watermark=algo != registry.NULL or records, backend=backend,
                             sample_keys=[stream_key(seed, int(r)) for r in rows])
        loop = _Loop(dec, inp, T, sampler)
        proc = None
        graphs = dec.device.type == "cuda" if cuda_graph is None else bool(cuda_graph)
    else:
        proc = make_processor(algo, vocab_size=V, key=key, h=h, fused=False, **params)
        loop = _Loop(dec, torch.as_tensor(ids, device=dec.device), T, proc, keys=row_keys(seed, rows, dec.device))
        graphs = False
    t0 = time.perf_counter()
    loop.sample(dec.forward(inp, torch.arange(P, device=dec.device), P))
    capture = 0.0
    if graphs:
        capture = _replay_graphs(loop, P, T)
    else:
        for s in range(1, T):
            loop.step(_kv_len(dec.L, P + s + 1))
    if dec.device.type == "cuda":
        torch.cuda.synchronize()
    seconds = time.perf_counter() - t0
    if proc is None:
        check_nan(sampler.nan_steps(), rows)
        stacked = sampler.stacked()
        meta = processor_meta(None, V, seed)
        meta.update(algo=algo, key=int(key), gamma=info["gamma"], h=h,
                    **{k: float(info[k]) for k in registry.get(algo).params})
        if algo == registry.NULL:
            stacked.pop("lam", None)  # no boost: nan, as the processors record
        engine = f"static/{dec.kernels}/{sampler.backend}" + ("+cuda-graph" if graphs else "")
    else:
        check_nan(proc.nan_steps(), rows)
        stacked = proc.stacked()
        meta = processor_meta(proc, V, seed)
        engine = f"static/{dec.kernels}/processor"
    meta.update(engine=engine, seconds=seconds, capture_seconds=capture)
    return Generation(loop.tokens.cpu().numpy(), ids, **records_or_nan(stacked, B, T), meta=meta, prompt_lens=lens)


def _kv_len(cache_len: int, needed: int) -> int:
    """Attention length of a step that needs ``needed`` cache slots: rounded up to a bucket."""
    return min(cache_len, math.ceil(needed / BUCKET) * BUCKET)


def _replay_graphs(loop: _Loop, P: int, T: int) -> float:
    """Steps 1..T-1, one CUDA graph per attention bucket, captured on first use; returns the
    seconds spent capturing (included in the generation's time, reported apart in its meta).

    Capture runs the step once on a side stream to warm up, which would advance the state:
    the state tensors are saved before and restored after each capture.
    """
    dec = loop.dec
    b = loop.sampler
    state = [loop.tokens, loop.pos, loop.window, dec.k, dec.v, b.lam, b.records, b.t, b.nan]
    graphs: dict[int, torch.cuda.CUDAGraph] = {}
    capture = 0.0
    for s in range(1, T):
        kv_len = _kv_len(dec.L, P + s + 1)
        if kv_len not in graphs:
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            saved = [x.clone() for x in state]
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                loop.step(kv_len)
            torch.cuda.current_stream().wait_stream(side)
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                loop.step(kv_len)
            for x, y in zip(state, saved):
                x.copy_(y)
            graphs[kv_len] = g
            torch.cuda.synchronize()
            capture += time.perf_counter() - t0
        graphs[kv_len].replay()
    return capture
