"""Tournament sampling (SynthID-Text) as a batched logits processor on a real LM.

:class:`TournamentProcessor` applies, to each row's next-token distribution, the exact tournament
law of :mod:`sims.watermarks.tournament` -- layer by layer
:math:`q_l = q_{l-1} f_l(g_l)` with ``K`` candidates per match -- and returns :math:`\\log q_t` as
the new logits, so that the sampler of :mod:`sims.torch_backend.generate_torch` (or transformers'
``generate``) draws from the tournament's winner distribution.  Its g-values are bit ``l`` of the
package's PRF word (stream ``TOURNAMENT_STREAM``, context = the last ``h`` tokens), computed by
:mod:`sims.torch_backend.prf_torch`: bit-identical to the Numba generator and detector (tested).

Records per step (float64, on the device, :data:`sims.core.record.RECORDS`): the exact per-key
``kl``, ``G`` the expected mean g-value of :math:`p_t`, ``dg`` its increase under :math:`q_t`, the
``entropy`` of :math:`p_t`, ``lam`` nan -- the definitions of :mod:`sims.watermarks.tournament`.
With ``mask_repeated`` a row whose context hash was met at an earlier step of this generation is
left unwatermarked (kl = dg = 0).  Subclasses change only the keying (:meth:`context_ids`,
:meth:`layer_g`), e.g. transformers' SynthID hashing in :mod:`sims.torch_backend.synthid_transformers`.
"""

from __future__ import annotations

import math

import torch

from sims.core import defaults
from sims.core.record import RECORDS
from sims.torch_backend import prf_torch
from sims.torch_backend.fused import note_nan
from sims.watermarks import tournament as tn


def tournament_law(p: torch.Tensor, layer_g, m: int, K: int):
    r"""The tournament's winner law of each row of ``p``, float64.

    Parameters
    ----------
    p : torch.Tensor
        (B, V) next-token distributions.
    layer_g : callable
        ``layer_g(l)`` gives layer l's g-values (B, V) as 0./1.
    m : int
        Layers of the tournament.
    K : int
        Candidates per match.

    Returns
    -------
    q : torch.Tensor
        (B, V) :math:`q_t`, the law of the winner.
    kl : torch.Tensor
        (B,) :math:`D_{kl}(q_t\|p_t)`.
    mean_g_p, mean_g_q : torch.Tensor
        (B,) the mean g-values under p and q.
    """
    q = p.clone()
    logf = torch.zeros_like(p)
    pc = torch.zeros_like(p)
    for layer in range(m):
        g = layer_g(layer)
        G = (q * g).sum(-1, keepdim=True).clamp(0.0, 1.0)
        if K == 2:
            f0, f1 = 1.0 - G, 2.0 - G
        else:
            f0 = (1.0 - G) ** (K - 1)
            f1 = torch.where(G > 0, -torch.expm1(K * torch.log1p(-G.clamp(max=1.0 - 1e-300))) / G.clamp(min=1e-300), torch.full_like(G, float(K)))
            f1 = torch.where(G >= 1.0, torch.ones_like(G), f1)
        q = q * torch.where(g > 0, f1, f0)
        logf = logf + torch.where(g > 0, torch.log(f1.clamp(min=1e-300)), torch.log(f0.clamp(min=1e-300)))
        pc = pc + g
    kl = torch.where(q > 0, q * logf, torch.zeros_like(q)).sum(-1)
    return q, kl, (p * pc).sum(-1) / m, (q * pc).sum(-1) / m


class TournamentProcessor:
    """SynthID-Text tournament sampling as a logits processor (module docstring).

    Parameters
    ----------
    vocab_size : int
        Ids watermarked (the first ``vocab_size`` columns of the scores; the rest pass unchanged).
    key : int
        Watermark key in [0, 2**64).
    m, h, mode, candidates, mask_repeated :
        As :func:`sims.watermarks.tournament.generate_tournament`.
    """

    name = "synthid"

    def __init__(self, *, vocab_size: int, key: int = defaults.KEY, m: int = tn.DEFAULT_LAYERS, h: int = tn.DEFAULT_H,
                 mode: str = "non-distortionary", candidates: int | None = None, mask_repeated: bool = True):
        self.K = tn.check_params(m, h, mode, candidates)
        if isinstance(key, (bytes, bytearray)) or not (0 <= int(key) < 2**64):
            raise ValueError(f"key must be an int in [0, 2**64); got {key!r}")
        if int(vocab_size) < 2:
            raise ValueError(f"vocab_size must be in [2, inf); got {vocab_size!r}")
        self.key, self.m, self.h, self.mode = int(key), int(m), int(h), mode
        self.vocab_size, self.mask_repeated = int(vocab_size), bool(mask_repeated)
        self.candidates = self.K
        self.records: dict[str, list[torch.Tensor]] = {k: [] for k in RECORDS}
        self._history: list[torch.Tensor] = []
        self._table: torch.Tensor | None = None
        self._words: torch.Tensor | None = None
        self._nan_step: torch.Tensor | None = None  # (B,) first step with NaN logits, -1 if none

    # ---------------------------------------------------------------- keying
    def context_ids(self, input_ids: torch.Tensor) -> torch.Tensor:
        """The context's PRF hash (key, last ``h`` tokens, ``TOURNAMENT_STREAM``).

        Also prepares the step's PRF words for :meth:`layer_g`.

        Parameters
        ----------
        input_ids : torch.Tensor
            (B, L) ids so far, L >= h.

        Returns
        -------
        torch.Tensor
            (B,) int64.
        """
        ctx = prf_torch.context_hash(self.key, input_ids[:, -self.h :], tn.TOURNAMENT_STREAM)
        if self._table is None or self._table.device != input_ids.device:
            self._table = prf_torch.token_table(self.vocab_size, input_ids.device)
        self._words = prf_torch.mix64(ctx[:, None] ^ self._table[None, :])
        return ctx

    def layer_g(self, layer: int) -> torch.Tensor:
        """Layer ``layer``'s g-values (B, V) as float64: bit ``layer`` of the step's PRF words.

        Parameters
        ----------
        layer : int
            The layer, in [0, m).

        Returns
        -------
        torch.Tensor
        """
        return ((self._words >> layer) & 1).double()

    def words(self, input_ids: torch.Tensor) -> torch.Tensor:
        """The PRF words after each row's last ``h`` tokens (bit l = g-value of layer l).

        Parameters
        ----------
        input_ids : torch.Tensor
            (B, L) ids so far.

        Returns
        -------
        torch.Tensor
            (B, V) int64.
        """
        self.context_ids(input_ids)
        return self._words

    # ----------------------------------------------------------------- step
    def _repeated(self, ctx: torch.Tensor) -> torch.Tensor:
        rep = torch.zeros_like(ctx, dtype=torch.bool)
        if self._history:
            rep = (torch.stack(self._history, dim=1) == ctx[:, None]).any(1)
        self._history.append(ctx)
        return rep

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        if input_ids.shape[1] < self.h:
            raise ValueError(f"input_ids must hold at least h={self.h} tokens; got {input_ids.shape[1]}")
        if scores.shape[-1] < self.vocab_size:
            raise ValueError(f"scores have {scores.shape[-1]} columns, fewer than vocab_size={self.vocab_size}")
        logits = scores[:, : self.vocab_size].double()
        self._nan_step = note_nan(self._nan_step, logits, len(self.records["kl"]))  # the steps taken before this one
        p = torch.softmax(logits, dim=-1)
        ctx = self.context_ids(input_ids)
        q, kl, gp, gq = tournament_law(p, self.layer_g, self.m, self.K)
        rep = self._repeated(ctx) if self.mask_repeated else torch.zeros_like(ctx, dtype=torch.bool)
        q = torch.where(rep[:, None], p, q)
        zero = torch.zeros_like(kl)
        self.records["kl"].append(torch.where(rep, zero, kl))
        self.records["G"].append(gp)
        self.records["dg"].append(torch.where(rep, zero, gq - gp))
        self.records["entropy"].append(-torch.xlogy(p, p).sum(-1))
        self.records["lam"].append(torch.full_like(kl, math.nan))
        out = scores.clone()
        out[:, : self.vocab_size] = self._output(scores[:, : self.vocab_size], rep, q)
        return out

    def nan_steps(self) -> torch.Tensor | None:
        """(B,) first step (0-based) whose logits held a NaN, -1 where none (what the engines check).

        Returns
        -------
        torch.Tensor or None
            None before the first step.
        """
        return self._nan_step

    def _output(self, scores: torch.Tensor, rep: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
        """The new logits of the watermarked columns: :math:`\\log q_t` in the scores' dtype."""
        return torch.log(q).to(scores.dtype)

    def stacked(self) -> dict[str, torch.Tensor]:
        """Records as (B, steps) tensors.

        Returns
        -------
        dict of str to torch.Tensor
            The fields of :data:`sims.core.record.RECORDS` recorded so far.
        """
        return {k: torch.stack(v, dim=1) for k, v in self.records.items() if v}


def generate_tournament_lm(model, prompts, T: int, processor: TournamentProcessor, *, seed: int = 0, **kw):
    """Tournament-sampled texts of a real LM by the loop engine (:func:`sims.torch_backend.generate_torch.generate_with_processor`).

    Parameters
    ----------
    model : transformers causal LM
        The model.
    prompts : list of id sequences
        The prompts.
    T : int
        Tokens per row.
    processor : TournamentProcessor
        The tournament.
    seed : int, optional
        Sampling seed.
    **kw
        Further arguments of ``generate_with_processor`` (``rows``, ``vocab_size``, ``stop_ids``).

    Returns
    -------
    Generation
        With the tournament's parameters in ``meta`` (``m``, ``mode``, ``candidates``, ``mask_repeated``; no
        ``gamma``), what :func:`sims.detect.stats.tournament_scores.score_tournament` reads.
    """
    from sims.torch_backend.generate_torch import generate_with_processor

    gen = generate_with_processor(model, prompts, T, processor, seed=seed, **kw)
    gen.meta.update(m=processor.m, mode=processor.mode, candidates=processor.candidates, mask_repeated=processor.mask_repeated)
    gen.meta.pop("gamma", None)
    return gen
