"""The seeding schemes of :mod:`sims.core.seeding` on int64 tensors, bit for bit.

As :mod:`sims.torch_backend.prf_torch`: int64 arithmetic wraps like uint64; the unsigned minimum of
``minhash`` and ``selfhash`` is the signed minimum with the sign bit flipped on both sides.
"""

from __future__ import annotations

import torch

from sims.core import prf, seeding
from sims.torch_backend import prf_torch

_SIGN = -(1 << 63)


def _umin(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.minimum(a ^ _SIGN, b ^ _SIGN) ^ _SIGN


def token_hashes(key: int, tokens: torch.Tensor) -> torch.Tensor:
    """a(x) = ``context_hash(key, [x])`` for every id of ``tokens``."""
    return prf_torch.context_hash(key, tokens.to(torch.int64)[..., None])


def _top_byte(words: torch.Tensor) -> torch.Tensor:
    return prf_torch._srl(words, 56) - 128


def clusters(tokens: torch.Tensor, cluster_of: torch.Tensor | None = None) -> torch.Tensor:
    """``semantic``'s cluster of every id of ``tokens``: ``cluster_of[tokens]`` (an LM's
    :func:`sims.core.seeding.embedding_clusters`), or the public hash of the id when ``cluster_of`` is None or
    empty; bit for bit :func:`sims.core.seeding.clusters`."""
    t = tokens.to(torch.int64)
    if cluster_of is not None and cluster_of.numel():
        return cluster_of.to(device=t.device, dtype=torch.int64)[t]
    c = prf_torch.mix64(t * prf_torch._s64(prf.C_CONTEXT) + prf_torch._s64(seeding.C_CLUSTER))
    return c & (seeding.CLUSTERS - 1)  # the unsigned word mod CLUSTERS (a power of two)


def semantic_bits(key: int, windows: torch.Tensor, cluster_of: torch.Tensor | None = None) -> torch.Tensor:
    """``semantic``'s sign pattern of each window (B, h) -> (B,), bit for bit :func:`sims.core.seeding.semantic_bits`
    (``cluster_of`` as in :func:`clusters`)."""
    dev = windows.device
    j = torch.arange(seeding.DIM, device=dev, dtype=torch.int64)
    c = clusters(windows, cluster_of)
    centroids = _top_byte(prf_torch.mix64(torch.arange(seeding.CLUSTERS, device=dev, dtype=torch.int64)[:, None] * seeding.DIM + j
                                          + prf_torch._s64(seeding.C_CENTROID)))
    base = prf_torch.mix64(torch.tensor([prf_torch._s64((key + prf.GOLDEN) % (1 << 64))], dtype=torch.int64, device=dev))[0]
    idx = torch.arange(seeding.BITS * seeding.DIM, device=dev, dtype=torch.int64)
    planes = _top_byte(prf_torch.mix64(base ^ (idx + prf_torch._s64(seeding.C_PLANE)))).reshape(seeding.BITS, seeding.DIM)
    e = centroids[c].sum(dim=-2)  # (B, DIM), exact int64
    signs = (e @ planes.T) >= 0
    return (signs.to(torch.int64) << torch.arange(seeding.BITS, device=dev, dtype=torch.int64)).sum(dim=-1)


def seeds(key: int, windows: torch.Tensor, scheme: str, cluster_of: torch.Tensor | None = None) -> torch.Tensor:
    """The seed of each window (B, h) -> (B,) for ``lefthash``, ``minhash``, ``skipgram``, ``semantic``
    (``cluster_of`` as in :func:`clusters`)."""
    c = seeding.code(scheme)
    if c == seeding.SELFHASH:
        raise ValueError("seeding='selfhash' has one seed per candidate: use self_seeds")
    if c == seeding.LEFTHASH:
        return prf_torch.context_hash(key, windows)
    if c == seeding.SEMANTIC:
        return token_hashes(key, semantic_bits(key, windows, cluster_of))
    a = token_hashes(key, windows)
    if c == seeding.SKIPGRAM:
        return a[..., 0]
    s = a[..., 0]
    for j in range(1, a.shape[-1]):
        s = _umin(s, a[..., j])
    return s


def self_seeds(key: int, windows: torch.Tensor, anchors: torch.Tensor) -> torch.Tensor:
    """``selfhash``'s seeds (B, K) of candidates with hashes ``anchors`` (K,) or (B, K) after ``windows`` (B, h)."""
    wa = token_hashes(key, windows)
    ay = anchors if anchors.dim() == 2 else anchors[None, :]
    s = prf_torch.mix64(ay + ay).expand(windows.shape[0], -1)
    for j in range(wa.shape[-1]):
        s = _umin(s, prf_torch.mix64(wa[:, j, None] + ay))
    return s


def green_mask(key: int, windows: torch.Tensor, vocab_size: int, gamma: float, scheme: str, table: torch.Tensor | None = None,
               anchors: torch.Tensor | None = None, cluster_of: torch.Tensor | None = None) -> torch.Tensor:
    """Bernoulli(gamma) green lists (B, V) after ``windows`` (B, h) under ``scheme``.

    ``table`` (:func:`sims.torch_backend.prf_torch.token_table`) and ``anchors`` (:func:`token_hashes`
    of ``arange(V)``, ``selfhash`` only) may be passed to save their recomputation; ``cluster_of``: ``semantic``'s
    clusters (:func:`clusters`)."""
    if table is None:
        table = prf_torch.token_table(vocab_size, windows.device)
    if seeding.code(scheme) != seeding.SELFHASH:
        return prf_torch.green_mask(seeds(key, windows, scheme, cluster_of), vocab_size, gamma, table=table)
    if anchors is None:
        anchors = token_hashes(key, torch.arange(vocab_size, device=windows.device))
    s = self_seeds(key, windows, anchors)
    return prf_torch._srl(prf_torch.mix64(s ^ table[None, :]), 11) < prf.green_threshold(gamma)


def is_green(key: int, windows: torch.Tensor, tokens: torch.Tensor, gamma: float, scheme: str,
             cluster_of: torch.Tensor | None = None) -> torch.Tensor:
    """Whether each of ``tokens`` (B,) is green after its window (B, h) under ``scheme`` (``cluster_of`` as in
    :func:`clusters`)."""
    if seeding.code(scheme) == seeding.SELFHASH:
        s = self_seeds(key, windows, token_hashes(key, tokens)[:, None])[:, 0]
    else:
        s = seeds(key, windows, scheme, cluster_of)
    return prf_torch._srl(prf_torch.token_bits(s, tokens), 11) < prf.green_threshold(gamma)
