"""DiPmark's torch processor (:mod:`sims.watermarks.dipmark`): the alpha-reweight along the context's keyed permutation."""

from __future__ import annotations

import math

import torch

from sims.core import defaults
from sims.torch_backend import prf_torch
from sims.torch_backend.processors import _KeyedProcessor, processor
from sims.watermarks import dipmark, registry

_SIGN = -(2**63)  # flips the sign bit: signed order of (w ^ _SIGN) is the unsigned order of the 64-bit words w


@processor
class DiPmarkProcessor(_KeyedProcessor):
    """DiPmark (Wu et al. 2023, eq. (3)): q(pi_i) = g(F_i) - g(F_{i-1}), g(x) = (x - alpha)^+ + (x - 1 + alpha)^+,
    pi the context's PRF words in descending order (the same bits as :func:`sims.watermarks.dipmark.permutation`).
    Its green list, the last floor(gamma V) tokens of pi, is the partition list: the records' G, DG and the
    generation's ``green_kind`` are the partition's.  Records the exact KL(q || p) over the vocabulary."""

    name = "dipmark"
    green_kind = "partition"

    def __init__(self, *, vocab_size: int, key: int = defaults.KEY, gamma: float = dipmark.GAMMA, dip_alpha: float = dipmark.ALPHA,
                 h: int = defaults.H):
        super().__init__(vocab_size=vocab_size, key=key, gamma=gamma, h=h)
        self.dip_alpha = float(registry.PARAMS["dip_alpha"].check(dip_alpha))
        self.n_green = max(1, int(math.floor(self.gamma * self.vocab_size)))

    def _g(self, x):
        a = self.dip_alpha
        return (x - a).clamp(min=0.0) + (x - (1.0 - a)).clamp(min=0.0)

    def __call__(self, input_ids, scores):
        if input_ids.shape[1] < self.h:
            raise ValueError(f"input_ids must hold at least h={self.h} tokens; got {input_ids.shape[1]}")
        V = self.vocab_size
        if scores.shape[-1] < V:
            raise ValueError(f"scores have {scores.shape[-1]} columns, fewer than vocab_size={V}")
        self._note_nan(scores[:, :V])
        self.t += 1
        if self._table is None or self._table.device != scores.device:
            self._table = prf_torch.token_table(V, scores.device)
        ctx = prf_torch.context_hash(self.key, input_ids[:, input_ids.shape[1] - self.h :])
        words = prf_torch.mix64(ctx[:, None] ^ self._table[None, :])
        order = torch.argsort(words ^ _SIGN, dim=1, descending=True)
        logits = scores[:, :V].double()
        p = torch.softmax(logits, dim=-1)
        self._ent = -torch.xlogy(p, p).sum(-1)
        F = torch.cumsum(p.gather(1, order), dim=1)
        prev = torch.cat([torch.zeros_like(F[:, :1]), F[:, :-1]], dim=1)
        q = torch.zeros_like(p).scatter_(1, order, self._g(F) - self._g(prev))
        q = q / q.sum(-1, keepdim=True)
        green = torch.zeros_like(p, dtype=torch.bool).scatter_(1, order[:, V - self.n_green :], True)
        G = (p * green).sum(-1).clamp(0.0, 1.0)
        with torch.no_grad():
            kl = torch.where(q > 0, q * torch.log(q / p), torch.zeros_like(q)).sum(-1)
        self.records["entropy"].append(self._ent)
        self.records["kl"].append(kl)
        self.records["G"].append(G)
        self.records["dg"].append((q * green).sum(-1) - G)
        self.records["lam"].append(torch.full_like(G, math.nan))
        out = torch.full_like(scores, -math.inf)
        out[:, :V] = torch.log(q).to(scores.dtype)
        return out
