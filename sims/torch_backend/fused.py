"""The soft green-list boost of SRL and DualGA as one fused step over a (B, V) logits buffer.

:class:`FusedBoost` reads the logits once, writes ``logits + lambda_t * green`` and records
(KL, G, DG, lambda, entropy of p_t) at step t into preallocated (5, B, T) float64 buffers, with the DualGA
update of lambda on the device: no allocation, no host synchronisation, so a whole decoding
step can be captured in a CUDA graph.  Two backends compute the same function:

* ``"triton"``: the two kernels of :mod:`._triton_boost` (CUDA, or CPU under
  ``TRITON_INTERPRET=1``);
* ``"numba"``: one parallel Numba kernel per step (:mod:`._numba_boost`), CPU tensors only --
  what the processors use on a CPU;
* ``"torch"``: plain tensor operations (:mod:`.prf_torch`, :func:`soft_records`),
  the reference the other two are tested against.

SRL is the case ``eta = 0``: lambda stays at ``lam1 = delta``.
"""

from __future__ import annotations

import functools
import importlib.util
import os

import numpy as np
import torch

import theory
import theory._validate  # a submodule: theory's lazy __getattr__ resolves public names only
from sims.core import prf
from sims.core.rng import stream_key
from sims.torch_backend import prf_torch

BLOCK = 2048  #: logits per Triton program (one chunk of the vocabulary); tiling measured in bench_gpu
#: Warps per Triton program of the boost kernels (:class:`FusedBoost`'s default ``num_warps``).
NUM_WARPS = 4
FIELDS = ("kl", "G", "dg", "lam", "entropy")  #: rows of FusedBoost.records


def _f(x: torch.Tensor) -> torch.Tensor:
    """(1+x) log(1+x) - x, with the same series as theory._scalar below |x| = 0.1."""
    direct = torch.xlogy(1.0 + x, 1.0 + x) - x
    acc = torch.zeros_like(x)
    for n in range(21, 1, -1):
        acc = acc * (-x) + 1.0 / (n * (n - 1.0))
    return torch.where(x.abs() < 0.1, acc * x * x, direct)


def soft_records(delta: torch.Tensor, G: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    r"""Exact (KL, DG) of a soft boost ``delta`` at green masses ``G``.

    With :math:`e = e^{-\delta}`, the realised distribution gain is
    :math:`\mathrm{DG} = G(1-G)(1-e) / (G + (1-G)e)` and the KL of the boosted distribution from p is
    :math:`G f(\mathrm{DG}/G) + (1-G) f(-\mathrm{DG}/(1-G))`, :math:`f(x) = (1+x)\log(1+x) - x`; both 0 at
    G in {0, 1}.

    Parameters
    ----------
    delta : torch.Tensor
        (B,) boosts.
    G : torch.Tensor
        (B,) green masses of p_t.

    Returns
    -------
    kl, dg : torch.Tensor
        (B,) each.
    """
    e = torch.exp(-delta)
    dg = G * (1 - G) * (-torch.expm1(-delta)) / (G + (1 - G) * e)
    dg = torch.where((G <= 0) | (G >= 1), torch.zeros_like(dg), dg)
    Gs = G.clamp(min=torch.finfo(G.dtype).tiny)
    Rs = (1 - G).clamp(min=torch.finfo(G.dtype).tiny)
    kl = G * _f(dg / Gs) + (1 - G) * _f((-dg / Rs).clamp(min=-1.0))
    return torch.where((G <= 0) | (G >= 1), torch.zeros_like(kl), kl), dg


def inverse_cdf(logits: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    """Token ids drawn from ``softmax(logits)`` by inverse CDF over token ids.

    The first id whose cumulative mass exceeds ``u`` times the total, never an id of zero mass.  Both engines
    and every algorithm sample through this.

    Parameters
    ----------
    logits : torch.Tensor
        (B, V) logits.
    u : torch.Tensor
        (B,) uniforms in (0, 1).

    Returns
    -------
    torch.Tensor
        (B,) int64 token ids.
    """
    q = torch.softmax(logits.double(), dim=-1)
    cum = torch.cumsum(q, dim=-1)
    idx = torch.searchsorted(cum, (u * cum[:, -1])[:, None], right=True)
    last = torch.where(q > 0, torch.arange(q.shape[-1], device=q.device), 0).amax(-1, keepdim=True)
    return torch.minimum(idx, last)[:, 0]


@functools.cache
def _triton_installed() -> bool:
    return importlib.util.find_spec("triton") is not None


def triton_usable(device: torch.device | str) -> bool:
    """Whether the Triton kernels can run for tensors on ``device``.

    Parameters
    ----------
    device : torch.device or str
        The tensors' device.

    Returns
    -------
    bool
        True where Triton is installed and the device is CUDA, or the CPU under Triton's interpreter
        (``TRITON_INTERPRET=1``).
    """
    if not _triton_installed():
        return False
    return torch.device(device).type == "cuda" or os.environ.get("TRITON_INTERPRET") == "1"


def boost_backend(device: torch.device | str) -> str:
    """The fastest :class:`FusedBoost` backend for ``device``.

    Parameters
    ----------
    device : torch.device or str
        The logits' device.

    Returns
    -------
    str
        ``"triton"`` on CUDA (Triton installed), ``"numba"`` on the CPU, else ``"torch"``.
    """
    if default_backend(device) == "triton":
        return "triton"
    return "numba" if torch.device(device).type == "cpu" else "torch"


def default_backend(device: torch.device | str) -> str:
    """The default backend of :class:`FusedBoost` for ``device`` (the interpreter is opt-in).

    Parameters
    ----------
    device : torch.device or str
        The logits' device.

    Returns
    -------
    str
        ``"triton"`` on CUDA when Triton is installed, else ``"torch"``.
    """
    return "triton" if torch.device(device).type == "cuda" and triton_usable(device) else "torch"


class FusedBoost:
    """Boost + records for B rows over vocabulary ``vocab_size``, T steps at most.

    Parameters
    ----------
    key, gamma, h : int, float, int
        The green lists of :mod:`sims.core.prf` (stream GREEN, context width h).
    vocab_size : int
        Columns watermarked; wider logits (padding) are copied unchanged.
    batch, steps : int
        Rows and record capacity.
    device : torch.device or str
        Where the buffers live (and the logits are): CUDA, or the CPU.
    lam1 : float
        Initial boost (SRL: its fixed delta; 0 with ``watermark=False``).
    Delta, eta, M : float
        DualGA target, step size and cap of Algorithm DualGA; ``eta = 0`` is SRL.
    watermark : bool
        False: no green lists, no records -- the unwatermarked baseline of :meth:`sample`.
    sample_keys : sequence of int, optional
        Per row, the key of its counter stream of sampling uniforms (:meth:`sample`; row b's
        uniform at step t is :func:`sims.core.rng.uniform_nb` ``(sample_keys[b], t)``, so a row
        does not depend on its batch-mates); default ``stream_key(0, b)``.
    backend : {"auto", "triton", "numba", "torch"}
        "auto" is :func:`default_backend` (Triton on CUDA, else tensor operations).
    block, num_warps : int
        Triton tiling: logits per program (a power of two) and warps per program.

    Raises
    ------
    ValueError
        If gamma, batch, steps, h or vocab_size is out of range, or the backend is unknown or cannot run on
        ``device``.
    """

    def __init__(self, key: int, gamma: float, vocab_size: int, batch: int, steps: int, device, *, h: int = 1,
                 lam1: float, Delta: float = 0.0, eta: float = 0.0, M: float = 15.0, watermark: bool = True,
                 sample_keys=None, backend: str = "auto", block: int = BLOCK, num_warps: int = NUM_WARPS):
        theory._validate.gamma(gamma)
        if backend not in ("auto", "triton", "numba", "torch"):
            raise ValueError(f"backend must be 'auto', 'triton', 'numba' or 'torch'; got {backend!r}")
        if backend == "auto":
            backend = default_backend(device)
        if backend == "triton" and not triton_usable(device):
            raise ValueError(f"backend 'triton' needs the triton package and a CUDA device (or TRITON_INTERPRET=1); got device {device}")
        if backend == "numba" and torch.device(device).type != "cpu":
            raise ValueError(f"backend 'numba' needs a CPU device; got device {device}")
        for name, v, lo in (("batch", batch, 1), ("steps", steps, 1), ("h", h, 1), ("vocab_size", vocab_size, 2)):
            if int(v) < lo:
                raise ValueError(f"{name} must be in [{lo}, inf); got {v!r}")
        self.key, self.gamma, self.V, self.h = int(key), float(gamma), int(vocab_size), int(h)
        self.B, self.T, self.backend, self.watermark = int(batch), int(steps), backend, bool(watermark)
        self.Delta, self.eta, self.M = float(Delta), float(eta), float(M)
        self.threshold = prf.green_threshold(gamma)
        self.seed_mixed = prf_torch._s64(int(prf.mix64_nb((self.key + prf.GOLDEN * (prf.GREEN + 1)) & prf.MASK64)))
        if sample_keys is None:
            sample_keys = [stream_key(0, b) for b in range(self.B)]
        if len(sample_keys) != self.B:
            raise ValueError(f"sample_keys must hold one key per row ({self.B}); got {len(sample_keys)}")
        self.sample_keys = torch.tensor([prf_torch._s64(int(k)) for k in sample_keys], dtype=torch.int64, device=device)
        if block < 128 or block & (block - 1):
            raise ValueError(f"block must be a power of two >= 128; got {block!r}")
        self.block, self.num_warps = int(block), int(num_warps)
        self.n_chunks = -(-self.V // self.block)
        kw = dict(device=device, dtype=torch.float64)
        self.params = torch.tensor([Delta, eta, M], **kw)
        self.lam = torch.full((self.B,), float(lam1) if watermark else 0.0, **kw)
        self.records = torch.full((len(FIELDS), self.B, self.T), float("nan"), **kw)
        self.t = torch.zeros((), dtype=torch.int64, device=device)
        self.nan_step = torch.full((self.B,), -1, dtype=torch.int64, device=device)  # first step with NaN logits
        self._part = torch.empty((self.B, self.n_chunks, 4), **kw)
        self._pick = torch.empty((self.B, 4), **kw)
        self._table = prf_torch.token_table(self.V, device)
        if backend == "numba":
            self._tokmix = self._table.numpy().view(np.uint64)  # the same bits, as Numba's PRF reads them

    def _check(self, window, logits):
        if logits.shape[0] != self.B or logits.shape[-1] < self.V or window.shape != (self.B, self.h):
            raise ValueError(f"logits must be ({self.B}, >= {self.V}) and window ({self.B}, {self.h}); "
                             f"got {tuple(logits.shape)} and {tuple(window.shape)}")

    def __call__(self, window: torch.Tensor, logits: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
        """Boost ``logits`` (B, >= V) into ``out`` for context ``window`` (B, h); record step t; t += 1."""
        self._check(window, logits)
        if logits.shape[-1] > self.V and out.data_ptr() != logits.data_ptr():
            out[:, self.V :] = logits[:, self.V :]
        if self.backend == "triton":
            self._kernels(window, logits, out, None)
        elif self.backend == "numba":
            self._numba_step(window, logits, out)
        else:
            out[:, : self.V] = self._torch_step(window, logits).to(out.dtype)
            self.t += 1
        return out

    def sample(self, window: torch.Tensor, logits: torch.Tensor, tokens: torch.Tensor) -> None:
        """Draw step t's tokens from the boosted distribution and advance t.

        Inverse CDF over token ids, one uniform per row from the counter stream ``sample_key`` at index t * B + row;
        the tokens go to ``tokens[:, t]`` and are shifted into ``window``; the step is recorded.

        Parameters
        ----------
        window : torch.Tensor
            (B, h) int64 context windows, updated in place.
        logits : torch.Tensor
            (B, >= V) the model's logits at step t.
        tokens : torch.Tensor
            (B, T) int64 output buffer.
        """
        self._check(window, logits)
        if self.backend == "triton":
            self._kernels(window, logits, None, tokens)
        else:
            if self.backend == "numba":
                boosted = torch.empty((self.B, self.V), dtype=torch.float64)
                self._numba_step(window, logits, boosted, advance=False)
            else:
                boosted = self._torch_step(window, logits)
            nxt = inverse_cdf(boosted, prf_torch.counter_uniform(self.sample_keys, self.t))[:, None]
            tokens.index_copy_(1, self.t.reshape(1), nxt)
            window.copy_(torch.cat([window[:, 1:], nxt], dim=1))
            self.t += 1

    def _kernels(self, window, logits, out, tokens):
        from sims.torch_backend import _triton_boost as k

        sampling = tokens is not None
        k.boost_partials[(self.B, self.n_chunks)](
            logits, logits.stride(0), logits if out is None else out, 0 if out is None else out.stride(0), window,
            window.stride(0), self.lam, self._part, self._table, self.seed_mixed, self.threshold, self.V, H=self.h, BLOCK=self.block,
            N_CHUNKS=self.n_chunks, HASH=self.watermark, WRITE=not sampling, num_warps=self.num_warps)
        r = self.records
        k.boost_epilogue[(1,)](
            self._part, self.lam, self.params, r, r.stride(0), r.stride(1), self.t, self.T, self.nan_step, self._pick,
            self.sample_keys, self.B, N_CHUNKS=self.n_chunks, NC_P2=triton_next_pow2(self.n_chunks),
            BLOCK_B=max(16, triton_next_pow2(self.B)), UPDATE=self.eta != 0.0, RECORD=self.watermark, SAMPLE=sampling,
            ADVANCE_T=not sampling)
        if sampling:
            k.pick[(self.B,)](logits, logits.stride(0), window, window.stride(0), self._part, self._pick, self._table, tokens,
                              tokens.stride(0), self.t, self.seed_mixed, self.threshold, self.V, H=self.h, BLOCK=self.block,
                              N_CHUNKS=self.n_chunks, HASH=self.watermark, num_warps=self.num_warps)
            self.t += 1

    def _numba_step(self, window, logits, out, advance: bool = True):
        """The step of :mod:`._numba_boost` into ``out[:, :V]``; advances t unless told not to."""
        from sims.torch_backend._numba_boost import boost_step

        nan = boost_step(logits.detach().numpy(), out.detach().numpy(), window.contiguous().numpy(), self.V,
                         np.uint64(self.key), self.threshold, self._tokmix, self.lam.numpy(), self.Delta, self.eta,
                         self.M, self.records.numpy(), int(self.t), self.watermark)
        self._note_nan(torch.from_numpy(nan) > 0)
        if advance:
            self.t += 1

    def _torch_step(self, window, logits):
        """Reference step: the boosted float64 logits (B, V); records at t, lambda update."""
        x = logits[:, : self.V].double()
        self._note_nan(torch.isnan(x).any(-1))
        if not self.watermark:
            return x
        green = prf_torch.green_mask(prf_torch.context_hash(self.key, window), self.V, self.gamma, table=self._table)
        p = torch.softmax(x, dim=-1)
        G = (p * green).sum(-1).clamp(0.0, 1.0)
        lam = self.lam.clone()
        kl, dg = soft_records(lam, G)
        slot = self.t.clamp(max=self.T - 1).reshape(1)  # past capacity: overwritten, and stacked() raises
        self.records.index_copy_(2, slot, torch.stack([kl, G, dg, lam, -torch.xlogy(p, p).sum(-1)])[:, :, None])
        if self.eta != 0.0:  # theory.dualga_update (alg:DualGA), the same float64 operations
            self.lam.copy_((lam + self.eta * (self.Delta - dg)).clamp(0.0, self.M))
        return x + lam[:, None] * green

    def _note_nan(self, bad: torch.Tensor):
        self.nan_step.copy_(torch.where(bad.to(self.nan_step.device) & (self.nan_step < 0), self.t, self.nan_step))

    def nan_steps(self) -> torch.Tensor:
        """(B,) first step (0-based) whose logits held a NaN, -1 where none.

        Returns
        -------
        torch.Tensor
        """
        return self.nan_step

    def stacked(self) -> dict[str, torch.Tensor]:
        """Records of the steps taken.

        Returns
        -------
        dict of str to torch.Tensor
            (B, t) per field of :data:`FIELDS`; empty without a watermark.

        Raises
        ------
        ValueError
            Naming the first step and row whose logits held a NaN, or if more steps were taken than the records hold.
        """
        check_nan(self.nan_step)
        n = int(self.t)
        if n > self.T:
            raise ValueError(f"{n} steps taken but records hold steps={self.T}")
        if not self.watermark:
            return {}
        return {f: self.records[i, :, :n] for i, f in enumerate(FIELDS)}


def note_nan(first_step: torch.Tensor | None, x: torch.Tensor, step) -> torch.Tensor:
    """The first step whose logits held a NaN, per row, after step ``step``'s logits.

    Stays on the device (no host transfer).

    Parameters
    ----------
    first_step : torch.Tensor or None
        (B,) int64 so far, -1 where none; None (or of another batch size) starts afresh.
    x : torch.Tensor
        (B, V) this step's logits.
    step : int or torch.Tensor
        This step's index.

    Returns
    -------
    torch.Tensor
        (B,) int64, -1 where no NaN was seen.
    """
    if first_step is None or first_step.shape[0] != x.shape[0]:
        first_step = torch.full((x.shape[0],), -1, dtype=torch.int64, device=x.device)
    return torch.where(torch.isnan(x).any(-1) & (first_step < 0), step, first_step)


def check_nan(first_step: torch.Tensor | None, rows=None) -> None:
    """Raise ValueError naming the first row and step whose logits held a NaN.

    Parameters
    ----------
    first_step : torch.Tensor or None
        (B,) from :func:`note_nan`; None: nothing to check.
    rows : sequence of int, optional
        The rows' indices in the caller's numbering (``rows[b]`` is named); default the batch index.

    Raises
    ------
    ValueError
        If some row's logits held a NaN (the earliest step is named, with the count of rows affected).
    """
    if first_step is None:
        return
    fs = first_step.cpu().numpy()
    bad = (fs >= 0).nonzero()[0]
    if bad.size:
        b = int(bad[fs[bad].argmin()])
        row = b if rows is None else int(rows[b])
        raise ValueError(f"the model's logits are NaN at step {int(fs[b])} of row {row} ({bad.size} row(s) affected); "
                         "check the model's weights and dtype (fp16 overflows: try bf16 or float32)")


def triton_next_pow2(n: int) -> int:
    """The least power of two >= ``n``, for ``n`` >= 1: Triton's block sizes are powers of two.

    Parameters
    ----------
    n : int
        A size, >= 1.

    Returns
    -------
    int
    """
    return 1 << max(0, (int(n) - 1).bit_length())
