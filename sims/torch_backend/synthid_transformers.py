"""transformers' SynthID-Text keying, scored with exact tails, and reproduced by our tournament processor.

transformers (``SynthIDTextWatermarkingConfig``, ``SynthIDTextWatermarkLogitsProcessor``) defines,
for ``keys`` :math:`k_0 .. k_{m-1}`, ``ngram_len`` n, a sampling table ``table`` of
``sampling_table_size`` 0/1 entries drawn by ``torch.randint(0, 2, ...)`` from a CPU generator
seeded with ``sampling_table_seed``:

* the hash :math:`a(x, d_1 .. d_j)`: :math:`x \\leftarrow (x + d_i)\\,M + 1` for each datum, on
  int64 wrapping modulo :math:`2^{64}`, with :math:`M = 6364136223846793005`;
* the g-value of layer l of an n-gram (context of n - 1 tokens, then the token):
  ``table[a(a(1, ngram), k_l) mod size]`` (a floor modulo: non-negative);
* the repeated-context mask: a context (n - 1 tokens) is repeated if its hash :math:`a(1, \\mathrm{ctx})`
  is among the last ``context_history_size`` hashes met (a history that starts filled with zeros).

During ``generate`` the processor's context is *not* the prompt: its state starts as n - 1 zeros
and takes each generated token in turn, so generated token t has the context
``(0, ..., 0, y_1, ..., y_{t-1})[-(n-1):]``.  :func:`g_values` with ``zero_context=True`` prepends
those zeros and so gives, token by token, the g-values its generation used; on text given as
prompt + continuation (what transformers' own detector reads), ``zero_context=False`` scores the
n-grams of the ids as given.

**Null.**  On text that does not depend on the keys, each scored (n-gram, layer) reads a table
cell at an index that is uniform when the keys are, so a g-value is Bernoulli(r) with r = the
table's share of ones, and the mean score's tail is that of Binomial(m n, r)
(:func:`sims.detect.stats.nulls.binom_logsf`; the weighted score: :func:`sims.detect.stats.tournament_scores.weighted_logsf`
at rate r).  Caveat, measured by the tests: the hash modulo a power-of-two table keeps only the
low bits, which depend only on the low bits of the token ids and keys, so two n-grams agreeing
there share every g-value; with m n cells read from 2**16, some cells are read twice.  The
repeated-context mask does not remove those coincidences.

**Reproducing transformers' tokens.**  :class:`TransformersSynthIDProcessor` is
:class:`~sims.torch_backend.tournament.TournamentProcessor` keyed this way; its output logits are
computed in the scores' dtype with the operations in the order transformers applies them (the
two-candidate law is :math:`q_l = q_{l-1}(1 + g_l - G_l)` in both), so it returns the same
tensor bit for bit and, under the same sampling draws, ``generate`` writes the same tokens
(tested on a random Llama).  Only the non-distortionary mode with the mask exists there.
"""

from __future__ import annotations

from collections import deque

import numpy as np
import torch

from sims.detect.stats.nulls import LN10, binom_logsf
from sims.detect.stats.scores import DetectResult
from sims.detect.stats.tournament_scores import STATS, synthid_weights, weighted_logsf
from sims.torch_backend.tournament import TournamentProcessor

#: The multiplier of transformers' SynthID hash, :math:`x \mapsto (x + d) M + 1` modulo :math:`2^{64}`.
LCG_MULT = 6364136223846793005
_MASK = (1 << 64) - 1
HISTORY = 1024  #: transformers' default context_history_size
TABLE_SIZE = 2**16  #: its default sampling_table_size


def sampling_table(seed: int = 0, size: int = TABLE_SIZE) -> np.ndarray:
    """transformers' sampling table: ``size`` 0/1 entries of ``torch.randint`` on a CPU generator seeded ``seed``.

    Parameters
    ----------
    seed : int, optional
        Its ``sampling_table_seed``.
    size : int, optional
        Its ``sampling_table_size``, in [2, 2**24].

    Returns
    -------
    numpy.ndarray
        (size,) uint8 of 0 and 1; its mean is the null rate of a g-value.

    Raises
    ------
    ValueError
        If ``size`` is not an integer in range.
    """
    if int(size) != size or not (2 <= int(size) <= 2**24):
        raise ValueError(f"size must be an integer in [2, 2**24]; got {size!r}")
    gen = torch.Generator(device="cpu").manual_seed(int(seed))
    return torch.randint(low=0, high=2, size=(int(size),), generator=gen).numpy().astype(np.uint8)


def _lcg(x: np.ndarray, d) -> np.ndarray:
    """One step of the hash, :math:`(x + d) M + 1` modulo 2**64, on uint64 arrays."""
    with np.errstate(over="ignore"):
        return (x + np.asarray(d).astype(np.int64).astype(np.uint64)) * np.uint64(LCG_MULT) + np.uint64(1)


def _index(h: np.ndarray, size: int) -> np.ndarray:
    """Floor modulo of the int64 reading of ``h`` (what torch's ``%`` gives)."""
    return np.mod(h.view(np.int64), np.int64(size))


def _check(ids, keys, ngram_len):
    ids = np.asarray(ids)
    if ids.ndim != 2 or ids.dtype.kind not in "iu":
        raise ValueError(f"ids must be a 2-d integer array (texts, tokens); got {ids.dtype} {ids.shape}")
    keys = np.asarray(keys)
    if keys.ndim != 1 or keys.size < 1 or keys.dtype.kind not in "iu":
        raise ValueError(f"keys must be a non-empty list of integers; got {keys!r}")
    if int(ngram_len) != ngram_len or int(ngram_len) < 2:
        raise ValueError(f"ngram_len must be an integer in [2, inf); got {ngram_len!r}")
    return ids.astype(np.int64), keys.astype(np.int64), int(ngram_len)


def g_values(ids, keys, ngram_len: int, table: np.ndarray, *, zero_context: bool = False) -> np.ndarray:
    """g-values of every n-gram of ``ids`` as transformers computes them (``compute_g_values``).

    Parameters
    ----------
    ids : array_like of int
        (B, L) token ids.
    keys : sequence of int
        The m watermarking keys (one per tournament layer).
    ngram_len : int
        n >= 2.
    table : numpy.ndarray
        The sampling table (:func:`sampling_table`).
    zero_context : bool, optional
        Prepend n - 1 zeros (the context its generation used), so that row t is generated token t.

    Returns
    -------
    numpy.ndarray
        (B, L', m) uint8, L' = L - n + 1 (L with ``zero_context``).
    """
    ids, keys, n = _check(ids, keys, ngram_len)
    if zero_context:
        ids = np.concatenate([np.zeros((ids.shape[0], n - 1), dtype=np.int64), ids], axis=1)
    L = ids.shape[1] - n + 1
    if L < 1:
        return np.zeros((ids.shape[0], 0, keys.size), dtype=np.uint8)
    h = np.ones((ids.shape[0], L), dtype=np.uint64)
    for j in range(n):
        h = _lcg(h, ids[:, j : j + L])
    out = np.empty((ids.shape[0], L, keys.size), dtype=np.uint8)
    for layer, k in enumerate(keys):
        out[:, :, layer] = table[_index(_lcg(h, k), table.shape[0])]
    return out


def repetition_mask(ids, ngram_len: int, *, history: int = HISTORY, zero_context: bool = False) -> np.ndarray:
    """True where the n-gram's context was NOT met among the last ``history`` contexts.

    transformers' ``compute_context_repetition_mask``; its history starts as zeros.

    Parameters
    ----------
    ids : array_like of int
        (B, L) token ids.
    ngram_len : int
        n >= 2.
    history : int, optional
        Contexts remembered (``context_history_size``).
    zero_context : bool, optional
        As in :func:`g_values`.

    Returns
    -------
    numpy.ndarray
        (B, L') bool.
    """
    ids, _, n = _check(ids, [0], ngram_len)
    if zero_context:
        ids = np.concatenate([np.zeros((ids.shape[0], n - 1), dtype=np.int64), ids], axis=1)
    L = ids.shape[1] - n + 1
    h = np.ones((ids.shape[0], max(L, 0)), dtype=np.uint64)
    for j in range(n - 1):
        h = _lcg(h, ids[:, j : j + max(L, 0)])
    out = np.ones(h.shape, dtype=bool)
    for b in range(h.shape[0]):
        recent = deque([0] * history, maxlen=history)
        seen = {0: history}  # counts of each hash in the window
        for t in range(h.shape[1]):
            c = int(h[b, t])
            out[b, t] = seen.get(c, 0) == 0
            old = recent.popleft()
            seen[old] -= 1
            recent.append(c)
            seen[c] = seen.get(c, 0) + 1
    return out


def score_ids(ids, keys, ngram_len: int, *, table_seed: int = 0, table_size: int = TABLE_SIZE, stat: str = "mean", weights=None,
              mask_repeated: bool = True, history: int = HISTORY, zero_context: bool = False, lengths=None) -> DetectResult:
    """Mean or weighted-mean score of transformers' SynthID g-values with exact log10 p-values.

    The null rate is the table's share of ones (module docstring).

    Parameters
    ----------
    ids : array_like of int
        (B, L) token ids, -1 padding after each row's ``lengths`` (default: the first -1).
    keys : sequence of int
        The m watermarking keys.
    ngram_len : int
        n >= 2.
    table_seed, table_size : int, optional
        The sampling table (:func:`sampling_table`).
    stat : {"mean", "weighted"}, optional
        The g-value sum, or the weighted sum (weights :func:`sims.detect.stats.tournament_scores.synthid_weights`).
    weights : array_like, optional
        Per-layer weights of ``stat="weighted"``.
    mask_repeated : bool, optional
        Score only n-grams whose context is new (:func:`repetition_mask`).
    history : int, optional
        Contexts remembered by the mask.
    zero_context : bool, optional
        As in :func:`g_values`.
    lengths : array_like of int, optional
        Tokens per row.

    Returns
    -------
    sims.detect.stats.scores.DetectResult
        ``score`` = the (weighted) g-value sum, with z, exact log10 p-values (binomial for the mean, the
        weighted sum's exact tail otherwise) and ``too_short`` (one n-gram scored or none).

    Raises
    ------
    ValueError
        If ``stat`` is unknown or ``ids``, ``keys`` or ``ngram_len`` are malformed.
    """
    if stat not in STATS:
        raise ValueError(f"stat must be one of {STATS}; got {stat!r}")
    ids, keys, n = _check(ids, keys, ngram_len)
    table = sampling_table(table_seed, table_size)
    rate = float(table.mean())
    m = keys.size
    w = np.ones(m, dtype=np.int64) if stat == "mean" else np.asarray(synthid_weights(m) if weights is None else weights)
    if lengths is None:
        pad = ids < 0
        lengths = np.where(pad.any(axis=1), pad.argmax(axis=1), ids.shape[1])
    sums = np.zeros(ids.shape[0], dtype=np.int64)
    cnt = np.zeros(ids.shape[0], dtype=np.int64)
    for b in range(ids.shape[0]):
        row = ids[b : b + 1, : lengths[b]]
        g = g_values(row, keys, n, table, zero_context=zero_context)[0]
        keep = repetition_mask(row, n, history=history, zero_context=zero_context)[0] if mask_repeated else np.ones(g.shape[0], dtype=bool)
        sums[b] = int((g[keep].astype(np.int64) @ w).sum())
        cnt[b] = int(keep.sum())
    short = cnt <= 1
    with np.errstate(invalid="ignore", divide="ignore"):
        z = np.where(cnt > 0, (sums - rate * cnt * w.sum()) / np.sqrt(rate * (1 - rate) * cnt * float(w @ w)), np.nan)
    lnp = binom_logsf(sums, m * cnt, rate) if stat == "mean" else weighted_logsf(sums, cnt, w, rate=rate)
    return DetectResult(cnt, sums.astype(np.float64), z, np.where(short, 0.0, lnp / LN10), short)


class TransformersSynthIDProcessor(TournamentProcessor):
    """Our tournament processor keyed as transformers' SynthID (module docstring).

    Its g-values, its zero-initialised context state, its repeated-context history; output bit-identical to
    ``SynthIDTextWatermarkLogitsProcessor`` (records in float64 as every processor's).

    Parameters
    ----------
    vocab_size : int
        V.
    keys : sequence of int
        The watermarking keys, one per layer.
    ngram_len : int, optional
        n >= 2 (context of n - 1 tokens).
    sampling_table_seed, sampling_table_size : int, optional
        The sampling table (:func:`sampling_table`).
    context_history_size : int, optional
        Contexts remembered for the repetition mask.
    """

    name = "transformers-synthid"

    def __init__(self, *, vocab_size: int, keys, ngram_len: int = 5, sampling_table_seed: int = 0, sampling_table_size: int = TABLE_SIZE,
                 context_history_size: int = HISTORY):
        _, k, n = _check(np.zeros((1, 1), dtype=np.int64), keys, ngram_len)
        super().__init__(vocab_size=vocab_size, key=0, m=k.size, h=n - 1)
        self.keys = torch.as_tensor(k)
        self.ngram_len = n
        self.table = torch.as_tensor(sampling_table(sampling_table_seed, sampling_table_size).astype(np.int64))
        self.history_size = int(context_history_size)
        self._state: torch.Tensor | None = None
        self._hist: torch.Tensor | None = None
        self._g: torch.Tensor | None = None

    @staticmethod
    def _hash(x: torch.Tensor, d: torch.Tensor) -> torch.Tensor:
        return (x + d) * LCG_MULT + 1  # int64 arithmetic wraps modulo 2**64 like transformers'

    def context_ids(self, input_ids: torch.Tensor) -> torch.Tensor:
        """transformers' context hash of each row, and the step's g-values for :meth:`layer_g`.

        The context state starts as zeros (transformers' initial state) and takes the token generated since the last
        call; the hash is its LCG of the last ``ngram_len - 1`` tokens.

        Parameters
        ----------
        input_ids : torch.Tensor
            (B, L) ids so far.

        Returns
        -------
        torch.Tensor
            (B,) int64 context hashes.
        """
        B, dev = input_ids.shape[0], input_ids.device
        if self._state is None:
            self._state = torch.zeros((B, self.ngram_len - 1), dtype=torch.int64, device=dev)
        else:  # the token generated since the last call enters the context
            self._state = torch.cat([self._state[:, 1:], input_ids[:, -1:].to(torch.int64)], dim=1)
        ctx = torch.ones(B, dtype=torch.int64, device=dev)
        for j in range(self.ngram_len - 1):
            ctx = self._hash(ctx, self._state[:, j])
        hv = self._hash(ctx[:, None], torch.arange(self.vocab_size, device=dev)[None, :])
        size = self.table.shape[0]
        self._g = torch.stack([self.table.to(dev)[self._hash(hv, k) % size] for k in self.keys.tolist()], dim=-1)  # (B, V, m)
        return ctx

    def layer_g(self, layer: int) -> torch.Tensor:
        """Layer ``layer``'s g-values (B, V) as float64, from the sampling table (:meth:`context_ids` prepares them).

        Parameters
        ----------
        layer : int
            The layer, in [0, m).

        Returns
        -------
        torch.Tensor
        """
        return self._g[:, :, layer].double()

    def _repeated(self, ctx: torch.Tensor) -> torch.Tensor:
        if self._hist is None:
            self._hist = torch.zeros((ctx.shape[0], self.history_size), dtype=torch.int64, device=ctx.device)
        rep = (self._hist == ctx[:, None]).any(1)
        self._hist = torch.cat([ctx[:, None], self._hist[:, :-1]], dim=1)
        return rep

    def _output(self, scores: torch.Tensor, rep: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
        """transformers' arithmetic in the scores' dtype: softmax, then per layer
        ``q * (1 + g - sum(g q))``, log, non-finite -> the dtype's min; repeated rows unchanged."""
        q = torch.softmax(scores, dim=1)
        for layer in range(self.m):
            g = self._g[:, :, layer]
            q = q * (1 + g - (g * q).sum(dim=1, keepdim=True))
        lq = torch.log(q)
        lq = torch.where(torch.isfinite(lq), lq, torch.finfo(lq.dtype).min)
        return torch.where(rep[:, None], scores, lq)


def transformers_processor_equivalent(vocab_size: int, config) -> TransformersSynthIDProcessor:
    """Our processor for a transformers ``SynthIDTextWatermarkingConfig``.

    Parameters
    ----------
    vocab_size : int
        V.
    config : transformers.SynthIDTextWatermarkingConfig
        Its keys, ngram_len, sampling table and history size are used.

    Returns
    -------
    TransformersSynthIDProcessor
    """
    return TransformersSynthIDProcessor(vocab_size=vocab_size, keys=list(config.keys), ngram_len=config.ngram_len,
                                        sampling_table_seed=config.sampling_table_seed, sampling_table_size=config.sampling_table_size,
                                        context_history_size=config.context_history_size)


def parse_keys(text: str) -> list[int]:
    """``"654,400,836"`` -> [654, 400, 836] (the CLI's ``--key`` of ``--scheme transformers-synthid``).

    Parameters
    ----------
    text : str
        Comma-separated keys.

    Returns
    -------
    list of int

    Raises
    ------
    ValueError
        If no key is given or one is not an int64.
    """
    try:
        keys = [int(x) for x in str(text).split(",") if x.strip()]
    except ValueError:
        keys = []
    if not keys or any(not (-(2**63) <= k < 2**63) for k in keys):
        raise ValueError(f"key must be a comma-separated list of int64 SynthID keys (e.g. 654,400,836); got {text!r}")
    return keys


def text_ids(args, ids_rows: list[np.ndarray]):
    """``--text --scheme transformers-synthid``'s arguments, read once for the fixed-length and the sequential test.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed options of ``sims detect`` (``key``, ``h``, ``html``).
    ids_rows : list of numpy.ndarray
        Token ids of each text.

    Returns
    -------
    keys : list of int
        The SynthID keys (:func:`parse_keys`).
    ngram_len : int
        ``--h`` + 1 (default 5).
    ids : numpy.ndarray
        The rows padded with -1.
    n_tokens : numpy.ndarray
        Scored n-grams per row.

    Raises
    ------
    ValueError
        If ``--html`` is given (no colours), the keys are malformed, or ``--h`` < 1.
    """
    if args.html is not None:
        raise ValueError("--html colours red-green detections; scheme transformers-synthid has no colours")
    keys = parse_keys(args.key)
    n = 5 if args.h is None else int(args.h) + 1
    if n < 2:
        raise ValueError(f"h must be an integer in [1, inf); got {args.h!r}")
    ids = np.full((len(ids_rows), max(len(r) for r in ids_rows)), -1, dtype=np.int64)
    for i, r in enumerate(ids_rows):
        ids[i, : len(r)] = r
    return keys, n, ids, np.array([max(0, len(r) - n + 1) for r in ids_rows])


def text_document(args, fpr: float, ids_rows: list[np.ndarray]) -> dict:
    """The ``python -m sims detect --text ... --scheme transformers-synthid`` document.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed options of ``sims detect`` (``--h`` = ngram_len - 1, default 4).
    fpr : float
        The false-positive rate of the decision.
    ids_rows : list of numpy.ndarray
        Token ids of each text as transformers' tokenizer gives them.

    Returns
    -------
    dict
        The document of :mod:`sims.detect.documents.detect_json` (statistic: the mean g-value sum).
    """
    from sims.detect.documents import detect_json

    keys, n, ids, n_tokens = text_ids(args, ids_rows)
    res = score_ids(ids, keys, n, table_seed=args.table_seed, table_size=args.table_size)
    rows = detect_json.text_rows(res, fpr, n_tokens=n_tokens)
    return detect_json.document(rows, input=args.text, scheme=args.scheme, algo="synthid", statistic="mean g-value sum", key=args.key,
                           gamma=None, h=n - 1, dedup=False, ngram_len=n, sampling_table_seed=args.table_seed, sampling_table_size=args.table_size,
                           null_rate=float(sampling_table(args.table_seed, args.table_size).mean()), fpr=fpr, lm=args.lm)
