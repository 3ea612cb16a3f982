"""A fast watermarked decoding loop: a static KV cache and, on CUDA, whole steps in CUDA graphs.

:class:`StaticLlama` runs a transformers Llama-family model (Llama, SmolLM2, Mistral, Qwen2:
RMSNorm, rotary embeddings, grouped-query attention, SwiGLU) from the model's own weight
tensors, with the keys and values in preallocated (layers, B, kv_heads, L, head_dim) buffers.
A decoding step touches only fixed addresses, so :func:`generate_static` captures
forward pass + watermark (:class:`.fused.FusedBoost`) + sampling + bookkeeping as one CUDA
graph per attention-length bucket and replays it: no Python, no kernel-launch gaps, no host
synchronisation until the end.  On the CPU the same step runs eagerly (what the tests check
against transformers' own forward).

Watermark and sampling are :meth:`.fused.FusedBoost.sample`: inverse-CDF sampling from the
boosted distribution with one counter-based uniform per (row, step), so a run is a function of
``seed`` alone; ``algo="none"`` samples through the same kernels without green lists.
"""

from __future__ import annotations

import math
import time

import torch
import torch.nn.functional as F

from sims.core.rng import stream_key
from sims.torch_backend.fused import FusedBoost, default_backend, triton_next_pow2, triton_usable
from sims.torch_backend.generate_torch import TorchGeneration

SAMPLE_STREAM = 0x5A3D
BUCKET = 64


class StaticLlama:
    """Decoder over ``model``'s weights with a static KV cache of ``batch`` rows x ``max_len`` positions.

    ``kernels``: "triton" runs single-token steps through the fused kernels of
    :mod:`._triton_llama` (default on CUDA); "torch" runs every step eagerly.
    """

    def __init__(self, model, batch: int, max_len: int, kernels: str = "auto"):
        cfg = model.config
        if getattr(cfg, "hidden_act", "silu") != "silu" or not hasattr(model, "model") or not hasattr(model.model, "layers"):
            raise ValueError(f"StaticLlama needs a Llama-family model (SiLU MLP, model.layers); got {type(model).__name__}")
        max_pos = getattr(cfg, "max_position_embeddings", max_len)
        if not (1 <= max_len <= max_pos):
            raise ValueError(f"max_len must be in [1, {max_pos}] (the context window); got {max_len}")
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

    def forward(self, ids: torch.Tensor, positions: torch.Tensor, kv_len: int) -> torch.Tensor:
        """Logits (B, V) of the last position, for tokens ``ids`` (B, n) at ``positions`` (n,);
        attends to cache slots [0, kv_len), writing the new keys and values at ``positions``."""
        B, n = ids.shape
        if n == 1 and self.kernels == "triton":
            return self._decode_triton(ids, positions, kv_len)
        x = F.embedding(ids, self.embed)
        cos, sin = self.cos[positions][None, None], self.sin[positions][None, None]
        allowed = self.arange[None, :kv_len] <= positions[:, None]  # (n, kv_len)
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
        allowed = self.arange[None, :kv_len] <= positions[:, None]
        hb = triton_next_pow2(H)
        y = None
        for i, (ln1, wqkv, bqkv, wo, bo, ln2, wgu, wdown) in enumerate(self.layers):
            k.add_rmsnorm[(B,)](x, x if y is None else y, ln1, h, H, self.eps, HAS_Y=y is not None, BLOCK=hb)
            qkv = F.linear(h, wqkv, bqkv)
            kc, vc = self.k[i], self.v[i]
            k.rope_cache[(B,)](qkv, self.cos, self.sin, positions, q, kc, vc, kc.stride(0), kc.stride(1), NH=self.nh,
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
    """Static buffers and one decoding step (model, then watermark + sampling) on them."""

    def __init__(self, dec: StaticLlama, prompts, T, sampler: FusedBoost):
        self.dec, self.sampler = dec, sampler
        self.tokens = torch.zeros(prompts.shape[0], T, dtype=torch.long, device=dec.device)
        self.pos = torch.full((1,), prompts.shape[1], dtype=torch.long, device=dec.device)
        self.window = prompts[:, -sampler.h :].clone()

    def sample(self, logits):
        self.sampler.sample(self.window, logits, self.tokens)

    def step(self, kv_len):
        logits = self.dec.forward(self.window[:, -1:], self.pos, kv_len)
        self.pos += 1
        self.sample(logits)


@torch.no_grad()
def generate_static(model, prompts: torch.LongTensor, T: int, *, algo: str = "dualga", key: int = 1, gamma: float | None = None,
                    delta: float = 2.0, Delta: float = 0.3, eta: float = 0.5, lam1: float | None = None, h: int = 1,
                    seed: int = 0, vocab_size: int | None = None, cuda_graph: bool | None = None,
                    backend: str = "auto", kernels: str = "auto") -> TorchGeneration:
    """Sample ``T`` tokens per row of ``prompts`` (B, P) with ``algo`` in {"none", "srl", "dualga"}.

    Defaults as :func:`.generate_torch.make_processor`: DualGA at gamma*(Delta) and
    delta*(Delta, gamma) (Theorem certainty), SRL at gamma = 0.25.

    ``cuda_graph`` (default: on CUDA) captures each step, per attention-length bucket of 64,
    as a CUDA graph; ``backend`` picks the watermark/sampling kernels (:class:`.fused.FusedBoost`)
    and ``kernels`` the model's (:class:`StaticLlama`).  Returns the same :class:`TorchGeneration` as
    :func:`.generate_torch.generate`, records included.
    """
    import theory

    if algo not in ("none", "srl", "dualga"):
        raise ValueError(f"algo must be 'none', 'srl' or 'dualga' for generate_static; got {algo!r}")
    if prompts.ndim != 2 or prompts.shape[1] < h:
        raise ValueError(f"prompts must be (batch, length >= h={h}); got {tuple(prompts.shape)}")
    if int(T) < 1:
        raise ValueError(f"T must be in [1, inf); got {T!r}")
    B, P = prompts.shape
    V = vocab_size or model.config.vocab_size
    dec = StaticLlama(model, B, P + T, kernels=kernels)
    prompts = prompts.to(dec.device)
    if algo == "dualga":
        gamma = theory.gamma_star(Delta) if gamma is None else gamma
        lam1 = theory.delta_star(Delta, gamma) if lam1 is None else lam1
    else:
        gamma = 0.25 if gamma is None else gamma
        lam1, eta, Delta = delta, 0.0, 0.0
    sampler = FusedBoost(key, gamma, V, B, T, dec.device, h=h, lam1=lam1 or 0.0, Delta=Delta, eta=eta, watermark=algo != "none",
                         sample_key=stream_key(seed, SAMPLE_STREAM), backend=backend)
    loop = _Loop(dec, prompts, T, sampler)
    graphs = dec.device.type == "cuda" if cuda_graph is None else bool(cuda_graph)
    t0 = time.perf_counter()
    loop.sample(dec.forward(prompts, torch.arange(P, device=dec.device), P))
    capture = 0.0
    if graphs:
        capture = _replay_graphs(loop, P, T)
    else:
        for s in range(1, T):
            loop.step(_kv_len(dec.L, P + s + 1))
    if dec.device.type == "cuda":
        torch.cuda.synchronize()
    seconds = time.perf_counter() - t0
    records = {k: v.cpu().numpy() for k, v in sampler.stacked().items()}
    meta = dict(algo=algo, key=key, gamma=gamma, h=h, vocab_size=V,
                engine=f"static/{dec.kernels}/{sampler.backend}" + ("+cuda-graph" if graphs else ""), capture_seconds=capture)
    return TorchGeneration(loop.tokens.cpu().numpy(), prompts.cpu().numpy(), records, seconds, meta)


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
