"""Watermarks as transformers ``LogitsProcessor`` objects, batched, with on-device records.

Each processor receives the batch's ``input_ids`` (B, L) and ``scores`` (B, V) and returns
the watermarked logits; the generation loop samples from their softmax.  Every processor
records, per step and without a host synchronisation, the exact KL(q || p), G, DG, the
entropy of p_t and the boost used (the fields of :data:`sims.core.record.RECORDS`); the soft
boosts' KL and DG come from the closed forms of :mod:`theory` re-expressed in torch:
:math:`D_{kl} = G f(\\mathrm{DG}/G) + (1-G) f(-\\mathrm{DG}/(1-G))`,
:math:`f(x) = (1+x)\\log(1+x) - x` (``torch.xlogy``), with the series of
:mod:`theory._scalar` near 0: agreement with :mod:`theory` to 1e-12 in float64 (tested).

SRL and DualGA run as one fused step (:class:`.fused.FusedBoost`): Triton kernels on CUDA, a
Numba kernel on the CPU (``fused=None`` picks by device; ``fused=True`` forces Triton;
``fused=False`` forces this module's tensor code, the reference both are tested against).

Only the first ``vocab_size`` columns are watermarked: models whose logits are padded past
the tokenizer's vocabulary (OPT-style) keep the padding untouched.  -inf logits (masked
tokens) stay -inf; NaN logits raise after generation, naming the first step and row.

Constructors are keyword-only, with the parameter names and defaults of the synthetic
generator (:func:`sims.watermarks.generate.algo_params`, :mod:`sims.core.defaults`);
:func:`make_processor` builds any algorithm of ``PROCESSOR_ALGOS`` by name from the table :data:`PROCESSORS`
(one class per record of :mod:`sims.watermarks.registry`, marked by the decorator :func:`processor`).  ``input_ids`` may hold
left padding (any id); only the last ``h`` tokens (``h + 1`` for AutoCov) are read, and
those are always real tokens since every prompt holds at least ``h``.
"""

from __future__ import annotations

import inspect
import math

import torch

import theory
import theory._validate  # a submodule: theory's lazy __getattr__ resolves public names only
from sims.core import defaults, prf, prf_crypto
from sims.core import seeding as seeding_mod
from sims.core.keys import EXP_STREAM
from sims.core.record import RECORDS
from sims.torch_backend import prf_crypto_torch, prf_torch, seeding_torch
from sims.torch_backend.fused import FusedBoost, boost_backend, check_nan, note_nan, soft_records
from sims.torch_backend.tournament import TournamentProcessor
from sims.watermarks import dipmark, registry, unigram
from sims.watermarks.generate import algo_params
from sims.watermarks.tournament import MODES

PROCESSOR_ALGOS = tuple(a for a in registry.names() if "torch" in registry.get(a).backends)  #: those with a processor
PROCESSORS: dict[str, type] = {}
"""The processor class of each algorithm of the registry, by name (filled by :func:`processor`)."""


def processor(cls: type) -> type:
    """Class decorator: the torch processor of the registered algorithm ``cls.name``.

    Parameters
    ----------
    cls : type
        A processor class whose ``name`` is registered (:func:`sims.watermarks.registry.get`); it is added to
        :data:`PROCESSORS` under that name.

    Returns
    -------
    type
        ``cls`` itself.
    """
    registry.get(cls.name)
    PROCESSORS[cls.name] = cls
    return cls


class _KeyedProcessor:
    """Shared: the key's green list for the last ``h`` tokens, and the per-step records."""

    name = "base"
    seeding = "lefthash"  # the green lists' seeding scheme (sims.core.seeding); make_processor sets another
    cluster_of = None  # semantic seeding's cluster of each id (an LM's embedding clusters); None: the public hash

    def __init__(self, *, vocab_size: int, key: int = defaults.KEY, gamma: float = defaults.GAMMA, h: int = defaults.H,
                 prf: str = defaults.PRF):
        theory._validate.gamma(gamma)
        if prf == "siphash":  # SipHash-2-4 green lists (sims.core.prf_crypto), 128-bit key
            k0, k1 = prf_crypto.key_words(key)
            key = k0 | (k1 << 64)
        elif prf != "splitmix64":
            raise ValueError(f"prf must be 'splitmix64' or 'siphash'; got {prf!r}")
        elif isinstance(key, (bytes, bytearray)) or not (0 <= int(key) < 2**64):
            raise ValueError(f"key must be in [0, 2**64) (an int, for prf='splitmix64'); got {key!r}")
        self.prf = prf
        if int(h) < 0:
            raise ValueError(f"h must be in [0, inf); got {h!r}")
        if int(vocab_size) < 2:
            raise ValueError(f"vocab_size must be in [2, inf); got {vocab_size!r}")
        self.key, self.gamma, self.vocab_size, self.h = int(key), float(gamma), int(vocab_size), int(h)
        self.records: dict[str, list[torch.Tensor]] = {k: [] for k in RECORDS}
        self._table: torch.Tensor | None = None
        self._anchors: torch.Tensor | None = None  # selfhash's candidate hashes
        self._nan_step: torch.Tensor | None = None  # (B,) first step with NaN logits, -1 if none
        self._boost = None  # FusedBoost of the soft boosts on CUDA
        self.t = 0  # steps seen (ITS indexes its key stream by position)
        self._ent: torch.Tensor | None = None  # entropy of p_t at the current step

    def _prepare(self, input_ids: torch.LongTensor, scores: torch.Tensor):
        if input_ids.shape[1] < self.h:
            raise ValueError(f"input_ids must hold at least h={self.h} tokens; got {input_ids.shape[1]}")
        if scores.shape[-1] < self.vocab_size:
            raise ValueError(f"scores have {scores.shape[-1]} columns, fewer than vocab_size={self.vocab_size}")
        self._note_nan(scores[:, : self.vocab_size])
        self.t += 1
        logits = scores[:, : self.vocab_size].double()
        green = self.green_lists(input_ids[:, input_ids.shape[1] - self.h :])
        p = torch.softmax(logits, dim=-1)
        G = (p * green).sum(-1).clamp(0.0, 1.0)
        self._ent = -torch.xlogy(p, p).sum(-1)
        return logits, green, p, G

    def green_lists(self, windows: torch.Tensor) -> torch.Tensor:
        """The key's green lists (B, vocab_size) after ``windows`` (B, h), with the processor's PRF."""
        if self.prf == "siphash":
            return prf_crypto_torch.green_mask(prf_crypto_torch.context_state(self.key, windows), self.vocab_size, self.gamma)
        if self._table is None or self._table.device != windows.device:
            self._table = prf_torch.token_table(self.vocab_size, windows.device)
        if self.seeding != "lefthash":
            return self._seeded_green_lists(windows)
        return prf_torch.green_mask(prf_torch.context_hash(self.key, windows), self.vocab_size, self.gamma, table=self._table)

    def is_green(self, windows: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
        """Whether each of ``tokens`` (B,) is green after its window (B, h), with the processor's PRF."""
        if self.seeding != "lefthash":
            return seeding_torch.is_green(self.key, windows, tokens, self.gamma, self.seeding, self.cluster_of)
        if self.prf == "siphash":
            bits = prf_crypto_torch.token_bits(prf_crypto_torch.context_state(self.key, windows), tokens)
        else:
            bits = prf_torch.token_bits(prf_torch.context_hash(self.key, windows), tokens)
        return prf_torch._srl(bits, 11) < prf.green_threshold(self.gamma)

    def _seeded_green_lists(self, windows: torch.Tensor) -> torch.Tensor:
        """Green lists under the seeding scheme ``self.seeding`` (:mod:`sims.torch_backend.seeding_torch`)."""
        anchors = None
        if self.seeding == "selfhash":
            if self._anchors is None or self._anchors.device != windows.device:
                self._anchors = seeding_torch.token_hashes(self.key, torch.arange(self.vocab_size, device=windows.device))
            anchors = self._anchors
        return seeding_torch.green_mask(self.key, windows, self.vocab_size, self.gamma, self.seeding, table=self._table, anchors=anchors,
                                        cluster_of=self.cluster_of)

    def _reweighted(self, scores, p, q, green, G):
        """Record a reweighting step (the exact KL(q || p), G, DG = q's green mass minus p's, no boost) and return
        the logits of q (``-inf`` past ``vocab_size`` and where q is 0)."""
        with torch.no_grad():
            kl = torch.where(q > 0, q * torch.log(q / p), torch.zeros_like(q)).sum(-1)
        self.records["entropy"].append(self._ent)
        self.records["kl"].append(kl)
        self.records["G"].append(G)
        self.records["dg"].append((q * green).sum(-1) - G)
        self.records["lam"].append(torch.full_like(G, math.nan))
        out = torch.full_like(scores, -math.inf)
        out[:, : self.vocab_size] = torch.log(q).to(scores.dtype)
        return out

    def _note_nan(self, x: torch.Tensor):
        """Keep, on the device, the first step at which each row's logits held a NaN."""
        self._nan_step = note_nan(self._nan_step, x, self.t)

    def nan_steps(self) -> torch.Tensor | None:
        """(B,) first step (0-based) whose logits held a NaN, -1 where none (one host transfer)."""
        return self._boost.nan_steps() if self._boost is not None else self._nan_step

    def _emit(self, scores, logits, green, delta, G, lam=None):
        self.records["entropy"].append(self._ent)
        kl, dg = soft_records(delta, G)
        self.records["kl"].append(kl)
        self.records["G"].append(G)
        self.records["dg"].append(dg)
        self.records["lam"].append(delta if lam is None else lam)
        out = scores.clone()
        out[:, : self.vocab_size] = (logits + delta[:, None] * green).to(scores.dtype)
        return out

    def stacked(self) -> dict[str, torch.Tensor]:
        """Records as (B, steps) tensors (one host transfer, after generation).

        Raises ValueError if any step's logits contained NaN (checked here, not per step,
        so that decoding never waits for the host).
        """
        if self._boost is not None:
            return self._boost.stacked()
        check_nan(self._nan_step)
        return {k: torch.stack(v, dim=1) for k, v in self.records.items() if v}

    def _fused_call(self, input_ids, scores, lam1: float, Delta: float = 0.0, eta: float = 0.0, M: float = 15.0):
        """The boost through :class:`.fused.FusedBoost` (Triton on CUDA, Numba on the CPU), used
        when ``fused`` allows; records up to ``max_steps`` steps."""
        B = scores.shape[0]
        if input_ids.shape[1] < self.h or scores.shape[-1] < self.vocab_size:
            self._prepare(input_ids, scores)  # raises the same errors as the unfused path
        if self._boost is None or self._boost.B != B:
            self._boost = FusedBoost(self.key, self.gamma, self.vocab_size, B, self.max_steps, scores.device, h=self.h,
                                     lam1=lam1, Delta=Delta, eta=eta, M=M,
                                     backend="triton" if self.fused else boost_backend(scores.device))
        return self._boost(input_ids[:, input_ids.shape[1] - self.h :], scores, torch.empty_like(scores))

    def _use_fused(self, scores) -> bool:
        if self.prf != "splitmix64" or self.seeding != "lefthash":  # the fused kernels hash lefthash with SplitMix64
            return False
        return bool(self.fused) if self.fused is not None else boost_backend(scores.device) != "torch"

    def _point_mass(self, scores, p, green, G, y):
        """Records and logits of a watermark that picks token ``y`` deterministically (KL = -log p(y))."""
        self.records["entropy"].append(self._ent)
        self.records["kl"].append(-torch.log(p.gather(1, y[:, None])[:, 0]))
        self.records["G"].append(G)
        self.records["dg"].append(green.gather(1, y[:, None])[:, 0].double() - G)
        self.records["lam"].append(torch.full_like(G, math.nan))
        out = torch.full_like(scores, -math.inf)
        out.scatter_(1, y[:, None], 0.0)
        return out


@processor
class NoneProcessor(_KeyedProcessor):
    """No watermark: the logits pass unchanged; records G_t (the key's green mass at ``gamma``),
    the entropy, KL = DG = 0 and lambda = nan -- the unwatermarked control's records."""

    name = "none"

    def __call__(self, input_ids, scores):
        logits, green, p, G = self._prepare(input_ids, scores)
        zero = torch.zeros_like(G)
        for k, v in (("kl", zero), ("G", G), ("dg", zero), ("entropy", self._ent), ("lam", torch.full_like(G, math.nan))):
            self.records[k].append(v)
        return scores


@processor
class SRLProcessor(_KeyedProcessor):
    """Soft red list (Algorithm kirchen) with a fixed boost ``delta``.

    Parameters
    ----------
    vocab_size : int
        Vocabulary size V (at least 2); score columns beyond it are left as they are.
    key : int or bytes
        Watermark key, in [0, 2**64); for ``prf="siphash"`` an int in [0, 2**128) or 16 bytes.
    gamma : float
        Green-list fraction, in (0, 1).
    delta : float
        Logit boost of the green list, in nats (the paper's delta).
    h : int
        Context width of the green-list hash: the last ``h`` tokens of ``input_ids`` seed it.
    fused : bool or None
        Use the fused boost kernels (None: where the device's boost backend is not plain torch).
    max_steps : int
        Most steps the fused path records.
    prf : {"splitmix64", "siphash"}
        The keyed PRF of the green lists (:mod:`sims.core.prf`, :mod:`sims.core.prf_crypto`).
    """

    name = "srl"

    def __init__(self, *, vocab_size: int, key: int = defaults.KEY, gamma: float = defaults.GAMMA, delta: float = defaults.DELTA,
                 h: int = defaults.H, fused: bool | None = None, max_steps: int = 4096, prf: str = defaults.PRF):
        super().__init__(vocab_size=vocab_size, key=key, gamma=gamma, h=h, prf=prf)
        self.delta = float(theory._validate.boost("delta", delta))
        self.fused, self.max_steps = fused, int(max_steps)

    def __call__(self, input_ids, scores):
        if type(self) is SRLProcessor and self._use_fused(scores):
            return self._fused_call(input_ids, scores, self.delta)
        logits, green, p, G = self._prepare(input_ids, scores)
        return self._emit(scores, logits, green, torch.full_like(G, self.delta), G)


@processor
class DualGAProcessor(_KeyedProcessor):
    """Algorithm DualGA: delta_t = lambda_t; lambda <- Pi_[0, M](lambda + eta (Delta - DG_t)), on device.

    Parameters
    ----------
    vocab_size : int
        Vocabulary size V (at least 2); score columns beyond it are left as they are.
    key : int or bytes
        Watermark key, in [0, 2**64); for ``prf="siphash"`` an int in [0, 2**128) or 16 bytes.
    Delta : float
        Target DG per token Delta, in (0, 1).
    gamma : float or None
        Green-list fraction; None: the generator's default gamma*(Delta) (:func:`sims.watermarks.generate.algo_params`).
    eta : float
        Dual step size eta.
    lam1 : float or None
        Initial dual variable lambda_1; None: the generator's default delta*(Delta, gamma).
    M : float
        Projection bound of lambda: lambda_t stays in [0, M].
    h : int
        Context width of the green-list hash: the last ``h`` tokens of ``input_ids`` seed it.
    fused : bool or None
        Use the fused boost kernels (None: where the device's boost backend is not plain torch).
    max_steps : int
        Most steps the fused path records.
    prf : {"splitmix64", "siphash"}
        The keyed PRF of the green lists (:mod:`sims.core.prf`, :mod:`sims.core.prf_crypto`).
    """

    name = "dualga"

    def __init__(self, *, vocab_size: int, key: int = defaults.KEY, Delta: float = defaults.TARGET_DG, gamma: float | None = None,
                 eta: float = defaults.ETA, lam1: float | None = None, M: float = defaults.M, h: int = defaults.H,
                 fused: bool | None = None, max_steps: int = 4096, prf: str = defaults.PRF):
        _, info = algo_params(self.name, gamma=gamma, Delta=Delta, eta=eta, lam1=lam1, M=M)  # the generator's defaults
        super().__init__(vocab_size=vocab_size, key=key, gamma=info["gamma"], h=h, prf=prf)
        self.Delta, self.eta, self.M = float(Delta), float(eta), float(M)
        self.lam1 = info["lam1"]
        self.lam: torch.Tensor | None = None
        self.fused, self.max_steps = fused, int(max_steps)

    def __call__(self, input_ids, scores):
        if type(self) is DualGAProcessor and self._use_fused(scores):
            return self._fused_call(input_ids, scores, self.lam1, self.Delta, self.eta, self.M)
        logits, green, p, G = self._prepare(input_ids, scores)
        if self.lam is None or self.lam.shape[0] != G.shape[0]:
            self.lam = torch.full_like(G, self.lam1)
        lam = self.lam
        out = self._emit(scores, logits, green, lam, G)
        # theory.dualga_update (alg:DualGA), the same float64 operations
        self.lam = (lam + self.eta * (self.Delta - self.records["dg"][-1])).clamp(0.0, self.M)
        return out


@processor
class ATWProcessor(SRLProcessor):
    """Adaptive text watermark: the boost applies only where the entropy of p_t exceeds ``alpha``.

    Parameters
    ----------
    vocab_size : int
        Vocabulary size V (at least 2); score columns beyond it are left as they are.
    key : int or bytes
        Watermark key, in [0, 2**64); for ``prf="siphash"`` an int in [0, 2**128) or 16 bytes.
    gamma : float
        Green-list fraction, in (0, 1).
    delta : float
        Logit boost of the green list, in nats (the paper's delta).
    alpha : float
        Entropy threshold in nats: the step boosts only where the entropy of p_t exceeds it.
    h : int
        Context width of the green-list hash: the last ``h`` tokens of ``input_ids`` seed it.
    prf : {"splitmix64", "siphash"}
        The keyed PRF of the green lists (:mod:`sims.core.prf`, :mod:`sims.core.prf_crypto`).
    """

    name = "atw"

    def __init__(self, *, vocab_size: int, key: int = defaults.KEY, gamma: float = defaults.GAMMA, delta: float = defaults.DELTA,
                 alpha: float = defaults.ALPHA, h: int = defaults.H, prf: str = defaults.PRF):
        super().__init__(vocab_size=vocab_size, key=key, gamma=gamma, delta=delta, h=h, fused=False, prf=prf)
        self.alpha = float(alpha)

    def __call__(self, input_ids, scores):
        logits, green, p, G = self._prepare(input_ids, scores)
        delta = torch.where(self._ent > self.alpha, torch.full_like(G, self.delta), torch.zeros_like(G))
        return self._emit(scores, logits, green, delta, G)


@processor
class MorphMarkProcessor(_KeyedProcessor):
    """MorphMark (Wang et al. 2025, :mod:`sims.watermarks.morphmark`): the mass r (1 - G_t) moved from the red
    list to the green list, each rescaled in proportion to p, r = min(exp(kappa G_t) - 1, 1) where G_t >= p0
    and 0 below; at r = 1 the red logits become -inf.  Records the closed-form KL (the binary KL of the
    green masses), DG = r (1 - G_t) and lambda = nan.

    Parameters
    ----------
    vocab_size : int
        Vocabulary size V (at least 2); score columns beyond it are left as they are.
    key : int or bytes
        Watermark key, in [0, 2**64); for ``prf="siphash"`` an int in [0, 2**128) or 16 bytes.
    gamma : float
        Green-list fraction, in (0, 1).
    morph_kappa : float
        Strength constant kappa, in (0, inf).
    morph_p0 : float
        Threshold p0 on the green mass G_t, in [0, 1]: below it nothing moves.
    h : int
        Context width of the green-list hash: the last ``h`` tokens of ``input_ids`` seed it.
    prf : {"splitmix64", "siphash"}
        The keyed PRF of the green lists (:mod:`sims.core.prf`, :mod:`sims.core.prf_crypto`).
    """

    name = "morphmark"

    def __init__(self, *, vocab_size: int, key: int = defaults.KEY, gamma: float = defaults.MORPH_GAMMA,
                 morph_kappa: float = defaults.MORPH_KAPPA, morph_p0: float = defaults.MORPH_P0, h: int = defaults.H,
                 prf: str = defaults.PRF):
        super().__init__(vocab_size=vocab_size, key=key, gamma=gamma, h=h, prf=prf)
        self.morph_kappa = float(registry.PARAMS["morph_kappa"].check(morph_kappa))
        self.morph_p0 = float(registry.PARAMS["morph_p0"].check(morph_p0))

    def __call__(self, input_ids, scores):
        logits, green, p, G = self._prepare(input_ids, scores)
        r = torch.where(G >= self.morph_p0, torch.expm1(self.morph_kappa * G).clamp(max=1.0), torch.zeros_like(G))
        R = 1.0 - G
        dg = r * R
        log_green = torch.log1p(dg / G.clamp(min=torch.finfo(G.dtype).tiny))  # q / p on the green list
        log_red = torch.log1p(-r)  # q / p on the red list: -inf at r = 1
        q_green = torch.where(r >= 1.0, torch.ones_like(G), G + dg)
        self.records["entropy"].append(self._ent)
        self.records["kl"].append(q_green * log_green + R * torch.xlogy(1.0 - r, 1.0 - r))
        self.records["G"].append(G)
        self.records["dg"].append(dg)
        self.records["lam"].append(torch.full_like(G, math.nan))
        out = scores.clone()
        out[:, : self.vocab_size] = (logits + torch.where(green, log_green[:, None], log_red[:, None])).to(scores.dtype)
        return out


@processor
class SWEETProcessor(ATWProcessor):
    """SWEET (Lee et al. 2023): ATW's step, the boost where the entropy of p_t exceeds ``alpha``; its texts are
    detected by the entropy-gated family (:mod:`sims.detect.stats.gated_scores`)."""

    name = "sweet"


@processor
class HardProcessor(_KeyedProcessor):
    """Hard red list (delta = inf): sample from p restricted to the green list; KL = -log G,
    DG = 1 - G, lambda = nan.  A step with G = 0 is left unwatermarked (as the generator)."""

    name = "hard"

    def __call__(self, input_ids, scores):
        logits, green, p, G = self._prepare(input_ids, scores)
        live = G > 0
        self.records["entropy"].append(self._ent)
        self.records["kl"].append(torch.where(live, -torch.log(G), torch.zeros_like(G)))
        self.records["G"].append(G)
        self.records["dg"].append(torch.where(live, 1.0 - G, torch.zeros_like(G)))
        self.records["lam"].append(torch.full_like(G, math.nan))
        out = scores.clone()
        red = ~green & live[:, None]
        out[:, : self.vocab_size] = logits.masked_fill(red, -math.inf).to(scores.dtype)
        return out


@processor
class EMSProcessor(_KeyedProcessor):
    """Exponential minimum sampling at temperature tau: the logits become a point mass at
    argmax_k log(r_k) / p_tau,k with r from the key (stream EMS); KL = -log p(y).

    Parameters
    ----------
    vocab_size : int
        Vocabulary size V (at least 2); score columns beyond it are left as they are.
    key : int
        Watermark key, in [0, 2**64).
    tau : float
        Sampling temperature, in (0, inf).
    h : int
        Context width of the green-list hash: the last ``h`` tokens of ``input_ids`` seed it.
    gamma : float
        Green-list fraction of the recorded G (EMS itself has no green list).
    """

    name = "ems"

    def __init__(self, *, vocab_size: int, key: int = defaults.KEY, tau: float = defaults.TAU, h: int = defaults.H,
                 gamma: float = defaults.GAMMA):
        super().__init__(vocab_size=vocab_size, key=key, gamma=gamma, h=h)
        if not (float(tau) > 0.0 and math.isfinite(tau)):
            raise ValueError(f"tau must be in (0, inf); got {tau!r}")
        self.tau = float(tau)

    def __call__(self, input_ids, scores):
        logits, green, p, G = self._prepare(input_ids, scores)
        r = prf_torch.uniforms(self._key_hash(input_ids)[:, None], torch.arange(self.vocab_size, device=scores.device)[None, :])
        ptau = torch.softmax(logits / self.tau, dim=-1)
        y = torch.argmax(torch.log(r) / ptau, dim=-1)
        return self._point_mass(scores, p, green, G, y)

    def _key_hash(self, input_ids):
        """The hash of this step's uniforms r: the context's (stream EMS)."""
        return prf_torch.context_hash(self.key, input_ids[:, input_ids.shape[1] - self.h :], prf.EMS)


@processor
class EXPProcessor(EMSProcessor):
    """Kuditipudi et al.'s EXP: EMS's rule with r = xi_{t mod exp_n}, the key sequence read at the position t
    (:func:`sims.core.keys.position_hashes`) rather than at the context.

    Parameters
    ----------
    vocab_size : int
        Vocabulary size V (at least 2); score columns beyond it are left as they are.
    key : int
        Watermark key, in [0, 2**64).
    tau : float
        Sampling temperature, in (0, inf).
    exp_n : int
        Length n of the key sequence, >= 1.
    h : int
        Context width of the recorded green lists (EXP's own key does not read the context).
    gamma : float
        Green-list fraction of the recorded G.
    """

    name = "exp"

    def __init__(self, *, vocab_size: int, key: int = defaults.KEY, tau: float = defaults.TAU, exp_n: int = defaults.EXP_N,
                 h: int = defaults.H, gamma: float = defaults.GAMMA):
        super().__init__(vocab_size=vocab_size, key=key, tau=tau, h=h, gamma=gamma)
        self.exp_n = int(registry.PARAMS["exp_n"].check(exp_n))

    def _key_hash(self, input_ids):
        """The hash of xi_{t mod n} (stream ``EXP_STREAM``), t = the steps seen before this one."""
        j = torch.full((input_ids.shape[0], 1), (self.t - 1) % self.exp_n, dtype=torch.int64, device=input_ids.device)
        return prf_torch.context_hash(self.key, j, EXP_STREAM)


@processor
class PFProcessor(EMSProcessor):
    """Permute-and-Flip watermark at temperature tau (:mod:`sims.watermarks.pf`): the logits become a point
    mass at argmax_k log(p_k) / tau - log r_k, r = 1 - the key's uniforms of stream EMS; KL = -log p(y)."""

    name = "pf"

    def __call__(self, input_ids, scores):
        logits, green, p, G = self._prepare(input_ids, scores)
        ctx = prf_torch.context_hash(self.key, input_ids[:, input_ids.shape[1] - self.h :], prf.EMS)
        r = 1.0 - prf_torch.uniforms(ctx[:, None], torch.arange(self.vocab_size, device=scores.device)[None, :])
        y = torch.argmax(torch.log(p) / self.tau - torch.log(r), dim=-1)
        return self._point_mass(scores, p, green, G, y)


@processor
class GumbelSoftProcessor(_KeyedProcessor):
    """GumbelSoft (:mod:`sims.watermarks.gumbelsoft`): the logits become (log p + g) / gs_tau, g = -log(-log r) the
    key's Gumbel noise of stream EMS, so the loop samples from q = softmax((log p + g) / gs_tau); records its exact
    KL(q || p) and DG.

    Parameters
    ----------
    vocab_size : int
        V, the LM's vocabulary size in [2, inf); the first V columns of the scores are read.
    key : int
        The watermark key in [0, 2**64).
    gs_tau : float
        The softmax temperature in (0, inf) (the registry's ``gs_tau``).
    h : int
        The context width in [0, inf): the last ``h`` tokens seed the Gumbel noise and the green list.
    gamma : float
        Green-list ratio in (0, 1) of the green list the DG records measure.
    """

    name = "gumbelsoft"

    def __init__(self, *, vocab_size: int, key: int = defaults.KEY, gs_tau: float = defaults.GUMBELSOFT_TAU, h: int = defaults.H,
                 gamma: float = defaults.GAMMA):
        super().__init__(vocab_size=vocab_size, key=key, gamma=gamma, h=h)
        self.gs_tau = float(registry.PARAMS["gs_tau"].check(gs_tau))

    def __call__(self, input_ids, scores):
        logits, green, p, G = self._prepare(input_ids, scores)
        ctx = prf_torch.context_hash(self.key, input_ids[:, input_ids.shape[1] - self.h :], prf.EMS)
        r = prf_torch.uniforms(ctx[:, None], torch.arange(self.vocab_size, device=scores.device)[None, :])
        q = torch.softmax((torch.log(p) - torch.log(-torch.log(r))) / self.gs_tau, dim=-1)
        return self._reweighted(scores, p, q, green, G)


class KeyedOrderProcessor(_KeyedProcessor):
    """ITS, UW delta-reweight and UW gamma-reweight over the key's fixed vocabulary order
    (:func:`sims.watermarks.generate.keyed_order`), exactly as the simulator defines them.

    ITS takes u_t from the key stream at position t; UW-delta from the context hash
    (stream STEP, slot V); UW-gamma keeps the upper half of the cumulative mass in the
    keyed order or its reverse (slot V + 1) with doubled probability.  One subclass per algorithm
    (:class:`ITSProcessor`, :class:`UWDeltaProcessor`, :class:`UWGammaProcessor`) names it.

    Parameters
    ----------
    vocab_size : int
        Vocabulary size V (at least 2); score columns beyond it are left as they are.
    key : int
        Watermark key, in [0, 2**64): it fixes the vocabulary order and ITS's key stream.
    h : int
        Context width of the hash that keys UW's steps and the recorded green lists.
    gamma : float
        Green-list fraction of the recorded G.
    """

    def __init__(self, *, vocab_size: int, key: int = defaults.KEY, h: int = defaults.H, gamma: float = defaults.GAMMA):
        from sims.core.keys import ITS_STREAM, keyed_order
        from sims.core.rng import stream_key

        super().__init__(vocab_size=vocab_size, key=key, gamma=gamma, h=h)
        self.perm = torch.as_tensor(keyed_order(key, vocab_size))
        self.its_key = int(stream_key(key, ITS_STREAM))

    def __call__(self, input_ids, scores):
        logits, green, p, G = self._prepare(input_ids, scores)
        sctx = prf_torch.context_hash(self.key, input_ids[:, input_ids.shape[1] - self.h :], prf.STEP)
        return self._step(scores, p, green, G, self.perm.to(scores.device), sctx)

    def _uniform(self, sctx):
        """The step's uniform u_t: from the context hash (stream STEP, slot V; UW delta-reweight)."""
        return prf_torch.uniforms(sctx, torch.full_like(sctx, self.vocab_size))

    def _step(self, scores, p, green, G, perm, sctx):
        """Inverse transform sampling of u_t along the keyed order: a point mass on the token it lands on."""
        cum = torch.cumsum(p[:, perm], dim=1)
        idx = torch.searchsorted(cum, self._uniform(sctx)[:, None]).clamp(max=self.vocab_size - 1)[:, 0]
        return self._point_mass(scores, p, green, G, perm[idx])


@processor
class ITSProcessor(KeyedOrderProcessor):
    """Inverse transform sampling (:class:`KeyedOrderProcessor`): u_t from the key stream at position t."""

    name = "its"

    def _uniform(self, sctx):
        return prf_torch.counter_uniform(self.its_key, torch.full(sctx.shape, self.t - 1, device=sctx.device))


@processor
class UWDeltaProcessor(KeyedOrderProcessor):
    """UW delta-reweight (:class:`KeyedOrderProcessor`)."""

    name = "uw-delta"


@processor
class UWGammaProcessor(KeyedOrderProcessor):
    """UW gamma-reweight (:class:`KeyedOrderProcessor`): the upper half of the cumulative mass in the keyed order or
    its reverse (slot V + 1 of the context hash) with doubled probability."""

    name = "uw-gamma"

    def _step(self, scores, p, green, G, perm, sctx):
        rev = prf_torch.uniforms(sctx, torch.full_like(sctx, self.vocab_size + 1)) < 0.5
        order = torch.where(rev[:, None], perm.flip(0)[None, :], perm[None, :])
        cum = torch.cumsum(p.gather(1, order), dim=1)
        prev = cum - p.gather(1, order)
        q = torch.zeros_like(p).scatter_(1, order, 2.0 * (cum.clamp(min=0.5) - prev.clamp(min=0.5)))
        return self._reweighted(scores, p, q, green, G)


@processor
class AutoCovProcessor(DualGAProcessor):
    """Algorithm DualGA_autocov: boost the green list after a red token and the red list after
    a green one, lambda <- Pi_[0, M](lambda + eta (Delta + DA_t)); y_0 counts as red.
    Parameters as :class:`DualGAProcessor`."""

    name = "autocov"

    def __call__(self, input_ids, scores):
        logits, green, p, G = self._prepare(input_ids, scores)
        B = G.shape[0]
        if self.lam is None or self.lam.shape[0] != B:
            self.lam = torch.full_like(G, self.lam1)
            prev_green = torch.zeros(B, dtype=torch.bool, device=G.device)
        else:
            prev_green = self.is_green(input_ids[:, -self.h - 1 : -1], input_ids[:, -1])
        lam = self.lam
        # boost the red list after a green token: same closed forms with G -> 1 - G
        Gb = torch.where(prev_green, 1 - G, G)
        kl, dgb = soft_records(lam, Gb)
        dg = torch.where(prev_green, -dgb, dgb)
        # theory.autocov_update (alg:DualGA_autocov): -DA_t, then the DualGA projection, the same float64 operations
        da = torch.where(prev_green, (1 - self.gamma) * (-dg), self.gamma * dg)
        self.records["entropy"].append(self._ent)
        self.records["kl"].append(kl)
        self.records["G"].append(G)
        self.records["dg"].append(dg)
        self.records["lam"].append(lam)
        self.lam = (lam + self.eta * (self.Delta - da)).clamp(0.0, self.M)
        boost = torch.where(prev_green[:, None], ~green, green)
        out = scores.clone()
        out[:, : self.vocab_size] = (logits + lam[:, None] * boost).to(scores.dtype)
        return out


class TransformersSRLProcessor(_KeyedProcessor):
    """SRL with transformers' own green lists (lefthash, context width 1): the green list of
    previous token v is the first int(gamma V) entries of ``torch.randperm(V)`` from a CPU
    generator seeded with ``hashing_key * v mod (2**64 - 1)`` -- so that transformers'
    ``WatermarkDetector`` and ours count the same green tokens (tested, with and without
    ``ignore_repeated_ngrams`` / ``dedup``).

    The p-values differ even where the counts agree: transformers returns the normal tail
    :math:`\\tfrac12\\operatorname{erfc}(z/\\sqrt2)`, :math:`z = (k - \\gamma n)/\\sqrt{n\\gamma(1-\\gamma)}`,
    while :mod:`sims.detect.stats.scores` returns the exact :math:`P(\\mathrm{Bin}(n, \\gamma) \\ge k)`.  At
    n = 200, gamma = 0.25 theirs / exact is 0.75 at z = 2.1, 0.36 at z = 4.1, 0.082 at z = 6.0,
    0.0076 at z = 8.0 and 2e-4 at z = 10.1: the normal tail overstates significance, more so
    the further into the tail.

    Parameters
    ----------
    vocab_size : int
        Vocabulary size V (at least 2); score columns beyond it are left as they are.
    gamma : float
        Green-list fraction, in (0, 1).
    delta : float
        Logit boost of the green list, in nats (the paper's delta).
    hashing_key : int
        transformers' ``hashing_key``: previous token v seeds ``torch.randperm`` with ``hashing_key * v mod (2**64 - 1)``.
    """

    name = "transformers-srl"

    def __init__(self, *, vocab_size: int, gamma: float = defaults.GAMMA, delta: float = defaults.DELTA, hashing_key: int = 15485863):
        super().__init__(vocab_size=vocab_size, key=0, gamma=gamma, h=1)
        self.delta, self.hashing_key = float(delta), int(hashing_key)
        self.size = int(vocab_size * gamma)

    def green_for(self, prev: int) -> torch.Tensor:
        """transformers' green list after previous token ``prev``.

        Parameters
        ----------
        prev : int
            The previous token id v.

        Returns
        -------
        torch.Tensor of bool, shape (vocab_size,)
            True on the first int(gamma V) entries of ``torch.randperm(V)`` seeded with
            ``hashing_key * v mod (2**64 - 1)``.
        """
        g = torch.Generator(device="cpu")
        g.manual_seed((self.hashing_key * int(prev)) % (2**64 - 1))
        mask = torch.zeros(self.vocab_size, dtype=torch.bool)
        mask[torch.randperm(self.vocab_size, generator=g)[: self.size]] = True
        return mask

    def __call__(self, input_ids, scores):
        green = torch.stack([self.green_for(int(v)) for v in input_ids[:, -1].cpu()]).to(scores.device)
        logits = scores[:, : self.vocab_size].double()
        p = torch.softmax(logits, -1)
        G = (p * green).sum(-1)
        self._ent = -torch.xlogy(p, p).sum(-1)
        return self._emit(scores, logits, green, torch.full_like(G, self.delta), G)

    def count_green(self, prompts_last: torch.Tensor, tokens: torch.Tensor, dedup: bool = False) -> torch.Tensor:
        """Green counts of generated ``tokens`` (B, T) with transformers' rule.

        Parameters
        ----------
        prompts_last : torch.Tensor, shape (B,)
            Each prompt's last token, the context of the first generated token.
        tokens : torch.Tensor, shape (B, T)
            Generated token ids.
        dedup : bool
            Count each (previous token, token) pair once per text, as transformers'
            ``ignore_repeated_ngrams``.

        Returns
        -------
        torch.Tensor of int, shape (B,)
            The number of green tokens of each text.
        """
        out = []
        for b in range(tokens.shape[0]):
            seq = [int(prompts_last[b])] + tokens[b].tolist()
            seen, c = set(), 0
            for prev, tok in zip(seq[:-1], seq[1:]):
                if dedup:
                    if (prev, tok) in seen:
                        continue
                    seen.add((prev, tok))
                c += bool(self.green_for(prev)[tok])
            out.append(c)
        return torch.tensor(out)


@processor
class SynthIDProcessor(TournamentProcessor):
    """The registry's ``synthid`` record on torch: :class:`.tournament.TournamentProcessor` built from the
    record's parameters (``candidates`` 2: non-distortionary, >= 3: distortionary; ``mask_repeated`` 0 / 1).
    It has no green list: ``gamma`` is accepted only as ``make_processor`` passes every record's.

    Parameters
    ----------
    vocab_size : int
        Vocabulary size V (at least 2); score columns beyond it are left as they are.
    key : int
        Watermark key, in [0, 2**64).
    gamma : float or None
        Ignored (tournament sampling has no green list).
    h : int
        Context width of the hash that seeds each step's g-values.
    m : int
        Number of tournament layers.
    candidates : int
        Candidates per match: 2 runs the non-distortionary mode, 3 or more the distortionary one.
    mask_repeated : int
        1: a repeated context is sampled without the watermark; 0: every context is.
    """

    name = "synthid"

    def __init__(self, *, vocab_size: int, key: int = defaults.KEY, gamma: float | None = None, h: int = defaults.H,
                 m: int = registry.PARAMS["m"].default, candidates: int = registry.PARAMS["candidates"].default,
                 mask_repeated: int = registry.PARAMS["mask_repeated"].default):
        super().__init__(vocab_size=vocab_size, key=key, m=int(m), h=h, mode=MODES[int(candidates) > 2], candidates=int(candidates),
                         mask_repeated=bool(mask_repeated))


def make_processor(algo: str, *, vocab_size: int, key: int = defaults.KEY, h: int = defaults.H, green_kind: str = defaults.GREEN_KIND,
                   fused: bool | None = None, max_steps: int = 4096, prf: str = defaults.PRF, seeding: str = "lefthash", **params) -> _KeyedProcessor:
    """The processor of ``algo`` (:data:`PROCESSORS`) with the synthetic generator's parameters and
    defaults (``params``: :func:`sims.watermarks.registry.resolve_params`; one ``algo`` does not take is
    refused); only Bernoulli green lists.  ``fused`` and ``max_steps`` reach the processors with a
    fused step (SRL, DualGA).

    ``prf="siphash"`` (128-bit ``key``, :mod:`sims.core.prf_crypto`) keys the red-green schemes
    of :data:`sims.watermarks.generate.SIPHASH_ALGOS`, as the synthetic generator does.  ``seeding``
    (:mod:`sims.core.seeding`) seeds the green lists of :data:`sims.watermarks.registry.SEEDING_ALGOS`,
    bit-identical to the generator's (the fused step hashes lefthash only: another scheme runs unfused); a
    ``semantic`` carrying a cluster table (:func:`sims.core.seeding.with_clusters`, e.g. the LM's own embedding
    clusters, :meth:`sims.lm.door.LM.cluster_table`) seeds by those clusters.

    Parameters
    ----------
    algo : str
        A registered algorithm with a torch processor.
    vocab_size : int
        Vocabulary size V.
    key : int
        Watermark key, in [0, 2**64) (a 128-bit int or 16 bytes for ``prf="siphash"``).
    h : int
        Context width of the green-list hash (a record's fixed width overrides it,
        :func:`sims.watermarks.registry.context_width`).
    green_kind : str
        Only ``"bernoulli"`` is accepted.
    fused : bool or None
        Use the fused boost kernels (None: where the device's boost backend is not plain torch).
    max_steps : int
        Most steps the fused path records.
    prf : {"splitmix64", "siphash"}
        The keyed PRF of the green lists.
    seeding : str
        The green lists' seeding scheme (:data:`sims.core.seeding.SEEDINGS`).
    **params
        The algorithm's parameters (``gamma``, ``delta``, ``Delta``, ...), None or absent for the defaults.

    Returns
    -------
    _KeyedProcessor
        A fresh processor of ``algo``, a ``LogitsProcessor``-style callable recording every step.
    """
    rec = registry.get(algo)
    registry.check_seeding(algo, seeding, green_kind=green_kind, prf=prf)
    if algo not in PROCESSORS:
        raise ValueError(f"algo {algo!r} has no torch processor: one of {tuple(PROCESSORS)}")
    if green_kind != "bernoulli":
        raise ValueError(f"green_kind must be 'bernoulli' on a real LM (per-token green lists); got {green_kind!r}")
    if prf not in ("splitmix64", "siphash"):
        raise ValueError(f"prf must be 'splitmix64' or 'siphash'; got {prf!r}")
    if prf != defaults.PRF and not rec.siphash:
        raise ValueError(f"prf={prf!r} keys the red-green schemes {registry.names(siphash=True)} only; got algo={algo!r}")
    registry.check_params(algo, **params)
    info = registry.resolve_params(algo, **params)
    h = registry.context_width(algo, h)
    cls = PROCESSORS[algo]
    kw = dict(vocab_size=vocab_size, key=key, h=h, gamma=info["gamma"], **{p: info[p] for p in rec.params})
    if rec.siphash:
        kw["prf"] = prf
    if "fused" in inspect.signature(cls).parameters:
        kw.update(fused=fused, max_steps=max_steps)
    table = seeding_mod.cluster_table(seeding)
    if table.size and table.size < vocab_size:
        raise ValueError(f"seeding's cluster table must hold a cluster for each of the {vocab_size} ids; got {table.size}")
    proc = cls(**kw)
    proc.seeding = seeding
    if table.size:
        proc.cluster_of = torch.from_numpy(table)
    return proc


@processor
class UnigramProcessor(SRLProcessor):
    """Unigram (Zhao et al. 2023, Algorithm 1): the logits plus ``delta`` on one fixed keyed green list.

    :class:`SRLProcessor` at context width 0: the window read is empty, so every row and step boosts the
    green list of the empty context (the same bits as :func:`sims.watermarks.unigram.green_list`); the
    unfused path (the fused kernels hash a window of width >= 1).

    Parameters
    ----------
    vocab_size : int
        Vocabulary size V (at least 2); score columns beyond it are left as they are.
    key : int
        Watermark key, in [0, 2**64).
    gamma : float
        Green-list fraction, in (0, 1).
    delta : float
        Logit boost of the green list, in nats (the paper's delta).
    h : int
        Context width; only 0 is accepted.
    """

    name = "unigram"

    def __init__(self, *, vocab_size: int, key: int = defaults.KEY, gamma: float = unigram.GAMMA, delta: float = defaults.DELTA,
                 h: int = 0):
        if int(h) != 0:
            raise ValueError(f"h must be 0 for Unigram (one green list for every context); got {h!r}")
        super().__init__(vocab_size=vocab_size, key=key, gamma=gamma, delta=delta, h=0, fused=False)


_SIGN_BIT = -(2**63)  # flips the sign bit: signed order of (w ^ _SIGN_BIT) is the unsigned order of the 64-bit words w


@processor
class DiPmarkProcessor(_KeyedProcessor):
    """DiPmark (Wu et al. 2023, eq. (3)): q(pi_i) = g(F_i) - g(F_{i-1}), g(x) = (x - alpha)^+ + (x - 1 + alpha)^+,
    pi the context's PRF words in descending order (the same bits as :func:`sims.watermarks.dipmark.permutation`).
    Its green list, the last floor(gamma V) tokens of pi, is the partition list: the records' G, DG and the
    generation's ``green_kind`` are the partition's.  Records the exact KL(q || p) over the vocabulary.

    Parameters
    ----------
    vocab_size : int
        Vocabulary size V (at least 2); score columns beyond it are left as they are.
    key : int
        Watermark key, in [0, 2**64).
    gamma : float
        Green-list fraction of the partition list (the last floor(gamma V) tokens of pi).
    dip_alpha : float
        The reweight alpha of g, in [0, 1/2] (1/2: the gamma-reweight).
    h : int
        Context width of the green-list hash: the last ``h`` tokens of ``input_ids`` seed it.
    """

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
        order = torch.argsort(words ^ _SIGN_BIT, dim=1, descending=True)
        logits = scores[:, :V].double()
        p = torch.softmax(logits, dim=-1)
        self._ent = -torch.xlogy(p, p).sum(-1)
        F = torch.cumsum(p.gather(1, order), dim=1)
        prev = torch.cat([torch.zeros_like(F[:, :1]), F[:, :-1]], dim=1)
        q = torch.zeros_like(p).scatter_(1, order, self._g(F) - self._g(prev))
        q = q / q.sum(-1, keepdim=True)
        green = torch.zeros_like(p, dtype=torch.bool).scatter_(1, order[:, V - self.n_green :], True)
        G = (p * green).sum(-1).clamp(0.0, 1.0)
        return self._reweighted(scores, p, q, green, G)
