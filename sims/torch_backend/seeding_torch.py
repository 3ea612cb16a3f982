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
    """a(x) = ``context_hash(key, [x])`` for every id of ``tokens``.

    The per-token hashes min-hash, skip-gram and self-hash seed from.

    Parameters
    ----------
    key : int
        The watermark key.
    tokens : torch.Tensor
        Token ids, any shape.

    Returns
    -------
    torch.Tensor
        int64 hashes of ``tokens``' shape.
    """
    return prf_torch.context_hash(key, tokens.to(torch.int64)[..., None])


def _top_byte(words: torch.Tensor) -> torch.Tensor:
    return prf_torch._srl(words, 56) - 128


def clusters(tokens: torch.Tensor, cluster_of: torch.Tensor | None = None) -> torch.Tensor:
    """``semantic``'s cluster of every id of ``tokens``, bit for bit :func:`sims.core.seeding.clusters`.

    Parameters
    ----------
    tokens : torch.Tensor
        Token ids.
    cluster_of : torch.Tensor, optional
        (V,) an LM's clusters (:func:`sims.core.seeding.embedding_clusters`); None or empty: the public hash
        of the id, modulo :data:`sims.core.seeding.CLUSTERS`.

    Returns
    -------
    torch.Tensor
        int64 clusters of ``tokens``' shape.
    """
    t = tokens.to(torch.int64)
    if cluster_of is not None and cluster_of.numel():
        return cluster_of.to(device=t.device, dtype=torch.int64)[t]
    c = prf_torch.mix64(t * prf_torch._s64(prf.C_CONTEXT) + prf_torch._s64(seeding.C_CLUSTER))
    return c & (seeding.CLUSTERS - 1)  # the unsigned word mod CLUSTERS (a power of two)


def semantic_bits(key: int, windows: torch.Tensor, cluster_of: torch.Tensor | None = None) -> torch.Tensor:
    """``semantic``'s sign pattern of each window, bit for bit :func:`sims.core.seeding.semantic_bits`.

    Parameters
    ----------
    key : int
        The watermark key (it draws the hyperplanes).
    windows : torch.Tensor
        (B, h) token ids.
    cluster_of : torch.Tensor, optional
        As in :func:`clusters`.

    Returns
    -------
    torch.Tensor
        (B,) int64: bit j is the sign of the window's summed centroid against hyperplane j.
    """
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
    """The seed of each window under ``lefthash``, ``minhash``, ``skipgram`` or ``semantic``.

    Parameters
    ----------
    key : int
        The watermark key.
    windows : torch.Tensor
        (B, h) token ids, oldest first.
    scheme : str
        The seeding scheme (:mod:`sims.core.seeding`).
    cluster_of : torch.Tensor, optional
        As in :func:`clusters`.

    Returns
    -------
    torch.Tensor
        (B,) int64 seeds (context hashes for :func:`sims.torch_backend.prf_torch.green_mask`).

    Raises
    ------
    ValueError
        If ``scheme`` is unknown, or is ``selfhash`` (one seed per candidate: :func:`self_seeds`).
    """
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
    """``selfhash``'s seeds of candidates after ``windows``.

    The unsigned minimum of the candidate's own hash and of its pairs with each window token.

    Parameters
    ----------
    key : int
        The watermark key.
    windows : torch.Tensor
        (B, h) token ids.
    anchors : torch.Tensor
        (K,) or (B, K) the candidates' hashes (:func:`token_hashes`).

    Returns
    -------
    torch.Tensor
        (B, K) int64 seeds.
    """
    wa = token_hashes(key, windows)
    ay = anchors if anchors.dim() == 2 else anchors[None, :]
    s = prf_torch.mix64(ay + ay).expand(windows.shape[0], -1)
    for j in range(wa.shape[-1]):
        s = _umin(s, prf_torch.mix64(wa[:, j, None] + ay))
    return s


def green_mask(key: int, windows: torch.Tensor, vocab_size: int, gamma: float, scheme: str, table: torch.Tensor | None = None,
               anchors: torch.Tensor | None = None, cluster_of: torch.Tensor | None = None) -> torch.Tensor:
    """Bernoulli(gamma) green lists after ``windows`` under ``scheme``.

    Parameters
    ----------
    key : int
        The watermark key.
    windows : torch.Tensor
        (B, h) token ids.
    vocab_size : int
        V.
    gamma : float
        Green-list ratio in (0, 1).
    scheme : str
        The seeding scheme.
    table : torch.Tensor, optional
        :func:`sims.torch_backend.prf_torch.token_table`, to save its recomputation.
    anchors : torch.Tensor, optional
        :func:`token_hashes` of ``arange(V)`` (``selfhash`` only), to save its recomputation.
    cluster_of : torch.Tensor, optional
        ``semantic``'s clusters (:func:`clusters`).

    Returns
    -------
    torch.Tensor
        (B, V) bool.
    """
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
    """Whether each of ``tokens`` is green after its window under ``scheme``.

    Parameters
    ----------
    key : int
        The watermark key.
    windows : torch.Tensor
        (B, h) token ids.
    tokens : torch.Tensor
        (B,) the tokens.
    gamma : float
        Green-list ratio in (0, 1).
    scheme : str
        The seeding scheme.
    cluster_of : torch.Tensor, optional
        As in :func:`clusters`.

    Returns
    -------
    torch.Tensor
        (B,) bool.
    """
    if seeding.code(scheme) == seeding.SELFHASH:
        s = self_seeds(key, windows, token_hashes(key, tokens)[:, None])[:, 0]
    else:
        s = seeds(key, windows, scheme, cluster_of)
    return prf_torch._srl(prf_torch.token_bits(s, tokens), 11) < prf.green_threshold(gamma)
