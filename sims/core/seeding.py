"""Seeding schemes: how a red-green watermark turns the context (and the candidate) into a green list.

Every scheme is built on the one PRF of :mod:`sims.core.prf`: a token y is green after a window
x = (x_1, ..., x_h) (the h tokens before it, oldest first) iff the top 53 bits of

    u = mix(s ^ mix(y + C_TOKEN))

are below ``floor(gamma * 2**53)``, where the *seed* s is, for key K (stream GREEN),

=============  ======================================================================================
``lefthash``   s = ctx_hash(K, x_1 .. x_h): every token of the window, in order (the package's
               default, :func:`sims.core.prf.context_hash`; transformers' ``"lefthash"`` at h = 1)
``minhash``    s = min_j a(x_j), a(x) = ctx_hash(K, x): the window as a set, anchored on its token
               of smallest hash (an edit leaves s unchanged unless it removes or undercuts that token)
``skipgram``   s = a(x_1): the token h positions back alone (edits of the h - 1 nearer tokens leave s)
``selfhash``   s_y = min(mix(2 a(y)), min_j mix(a(x_j) + a(y))): the candidate y salts every window
               token and competes as a window token itself (Kirchenbauer et al.'s "anchored min-hash
               with self-salt", their Algorithm 3); the green list depends on the candidate, but the
               colour of (x, y) is still one deterministic bit, so the exact next-token law
               stays computable (one extra h + 1 mixing rounds per candidate)
``semantic``   s = a(b), b = SimHash_K(e(x)): the window's *embedding* e(x) = sum_j E[c(x_j)], each token's
               embedding the centroid of its cluster c(x) (:data:`CLUSTERS` clusters: on a real LM the
               SimHash of the LM's own input embedding of x, :func:`embedding_clusters`; on a synthetic
               LM, which has none, a public, unkeyed hash of the token id), projected on :data:`BITS`
               keyed random hyperplanes, b the
               pattern of their signs (ATW's semantic hashing, Liu et al. 2024, as the paper ran it:
               the green list follows the context's meaning, not its token ids); a substitution
               inside a cluster (a synonym) leaves e(x), hence the seed, unchanged
=============  ======================================================================================

(all ``+`` wrap modulo 2**64, ``min`` is on unsigned words).  At h = 1 ``minhash`` and ``skipgram``
equal ``lefthash``.  ``semantic``'s centroids and hyperplanes are small signed integers (a byte of a
PRF word, minus 128) and its projections integer dot products, so the sign pattern is exact on every
backend (no floating-point rounding decides a bit once the clusters are known).  A real LM's clusters are
a table (one per id, computed once from its embeddings, kept in the cache by content and named in a
generation's ``meta["clusters"]``); the scheme's name carries it (:class:`Seeding`, :func:`seeding_of`) down
to the kernels, which read :data:`NO_CLUSTERS` as "hash the id".  The synthetic LMs have no embedding of their
own: the hash cluster of a token is its stand-in for meaning (tokens of one cluster are synonyms), and
:func:`clusters` gives every token's.  ``s ^ mix(y + C_TOKEN)`` also names the (seed, token) pair for dedup
(:mod:`sims.detect.stats.scores`): on text that does not depend on the key, distinct pairs are green
independently with probability gamma, so the dedup'd green count is Binomial(n, gamma) under
every scheme -- and the schemes that map many windows to one seed (``minhash``, ``skipgram``,
``selfhash``) merge their pairs, which dedup must count once.

The NumPy functions are the reference; the Numba scalars and vocabulary loops (``*_nb``,
:func:`self_green_into`) serve the generator and the detectors, :mod:`sims.torch_backend.seeding_torch`
the torch processors; ``tests/core/test_seeding.py`` proves the three bit-identical.
"""

from __future__ import annotations

import hashlib

import numpy as np
from numba import njit

from sims.core import prf
from theory._numba_cache import cache_root

SEEDINGS = ("lefthash", "selfhash", "minhash", "skipgram", "semantic")
"""The seeding schemes, in the order of their codes."""
#: The kernel codes of the seeding schemes (their indices in :data:`SEEDINGS`, :func:`code`).
LEFTHASH, SELFHASH, MINHASH, SKIPGRAM, SEMANTIC = range(5)
DEFAULT = "lefthash"  #: the default seeding scheme (transformers' ``lefthash`` at h = 1)
CLUSTERS = 64
"""``semantic``: the number of token clusters (the synthetic stand-in for an embedding's neighbourhoods; a power of two)."""
DIM = 16
"""``semantic``: the dimension of a cluster's centroid."""
BITS = 16
"""``semantic``: the keyed hyperplanes of the SimHash (the seed takes one of 2**BITS values per key)."""
NO_CLUSTERS = np.zeros(0, dtype=np.int64)
"""``semantic``'s cluster table meaning "the public hash of the id" (:func:`cluster_nb`): what the kernels get
unless an LM's embedding clusters (:func:`embedding_clusters`) are given."""
#: Public salts (digits of pi) of ``semantic``'s id-hash clusters, cluster centroids and keyed hyperplanes.
C_CLUSTER, C_CENTROID, C_PLANE = 0x243F6A8885A308D3, 0x13198A2E03707344, 0xA4093822299F31D0


def code(seeding: str) -> int:
    """The kernel code of ``seeding``; ValueError naming the parameter, its value and the valid ones.

    Parameters
    ----------
    seeding : str
        One of :data:`SEEDINGS`.

    Returns
    -------
    int
        Its index in :data:`SEEDINGS` (:data:`LEFTHASH` .. :data:`SEMANTIC`).

    Raises
    ------
    ValueError
        If ``seeding`` is not a known scheme.
    """
    if seeding not in SEEDINGS:
        raise ValueError(f"seeding must be one of {SEEDINGS}; got {seeding!r}")
    return SEEDINGS.index(seeding)


# ---------------------------------------------------------------- numba scalars
@njit(cache=True, inline="always")
def token_hash_nb(base, tok):
    """a(tok) = ctx_hash(K, [tok]) from ``base = mix(K + GOLDEN)`` (stream GREEN)."""
    return prf.mix64_nb(base ^ (np.uint64(tok) * np.uint64(prf.C_CONTEXT) + np.uint64(1)))


@njit(cache=True, inline="always")
def base_nb(key):
    return prf.mix64_nb(np.uint64(key) + np.uint64(prf.GOLDEN))


@njit(cache=True, inline="always")
def cluster_nb(tok):
    """The cluster of token ``tok`` (public: no key)."""
    return prf.mix64_nb(np.uint64(tok) * np.uint64(prf.C_CONTEXT) + np.uint64(C_CLUSTER)) % np.uint64(CLUSTERS)


@njit(cache=True, inline="always")
def _byte_nb(word):
    """The top byte of a PRF word as a signed integer in [-128, 127]."""
    return np.int64(word >> np.uint64(56)) - 128


@njit(cache=True)
def semantic_bits_nb(key, window, cluster_of):
    """``semantic``'s sign pattern: bit i set iff the window embedding's projection on keyed hyperplane i is >= 0
    (``cluster_of``: each id's cluster, or empty for the public hash :func:`cluster_nb`)."""
    e = np.zeros(DIM, dtype=np.int64)
    for tok in window:
        c = np.uint64(cluster_of[tok]) if cluster_of.shape[0] else cluster_nb(tok)
        for j in range(DIM):
            e[j] += _byte_nb(prf.mix64_nb(c * np.uint64(DIM) + np.uint64(j) + np.uint64(C_CENTROID)))
    base = base_nb(key)
    bits = np.uint64(0)
    for i in range(BITS):
        dot = np.int64(0)
        for j in range(DIM):
            dot += e[j] * _byte_nb(prf.mix64_nb(base ^ (np.uint64(i * DIM + j) + np.uint64(C_PLANE))))
        if dot >= 0:
            bits |= np.uint64(1) << np.uint64(i)
    return bits


@njit(cache=True)
def seed_hash_nb(key, window, scheme, cluster_of):
    """The seed of ``lefthash``, ``minhash``, ``skipgram`` or ``semantic`` after ``window`` (oldest first;
    ``cluster_of`` as in :func:`semantic_bits_nb`, read by ``semantic`` only)."""
    if scheme == LEFTHASH:
        return prf.context_hash_nb(key, window, prf.GREEN)
    base = base_nb(key)
    if scheme == SKIPGRAM:
        return token_hash_nb(base, window[0])
    if scheme == SEMANTIC:
        return token_hash_nb(base, semantic_bits_nb(key, window, cluster_of))
    s = np.uint64(prf.MASK64)
    for tok in window:
        s = min(s, token_hash_nb(base, tok))
    return s


@njit(cache=True)
def window_hashes_into(key, window, out):
    """``out[j] = a(window[j])``: the per-token hashes ``selfhash`` salts with the candidate."""
    base = base_nb(key)
    for j in range(window.shape[0]):
        out[j] = token_hash_nb(base, window[j])


@njit(cache=True, inline="always")
def self_seed_nb(wa, ay):
    """``selfhash``'s seed of a candidate with hash ``ay`` after a window with hashes ``wa``."""
    s = prf.mix64_nb(ay + ay)
    for j in range(wa.shape[0]):
        s = min(s, prf.mix64_nb(wa[j] + ay))
    return s


@njit(cache=True)
def self_green_into(wa, anchors, tokmix, threshold, green):
    """``green[k] = 1.0`` iff token k is green under ``selfhash`` after a window with hashes ``wa``
    (``anchors[k] = a(k)``, ``tokmix[k] = mix(k + C_TOKEN)``), else 0.0."""
    lim = np.uint64(threshold)
    for k in range(tokmix.shape[0]):
        s = self_seed_nb(wa, anchors[k])
        green[k] = 1.0 if (prf.mix64_nb(s ^ tokmix[k]) >> np.uint64(11)) < lim else 0.0


@njit(cache=True)
def pair_nb(key, window, y, scheme, wa, cluster_of):
    """The (seed, token) pair ``s ^ mix(y + C_TOKEN)`` of token ``y`` after ``window``; its colour is
    the top 53 bits of ``mix`` of it.  ``wa``: scratch of length h; ``cluster_of`` as in :func:`semantic_bits_nb`."""
    ty = prf.mix64_nb(np.uint64(y) + np.uint64(prf.C_TOKEN))
    if scheme != SELFHASH:
        return seed_hash_nb(key, window, scheme, cluster_of) ^ ty
    window_hashes_into(key, window, wa)
    return self_seed_nb(wa, token_hash_nb(base_nb(key), y)) ^ ty


# ------------------------------------------------------------ numpy reference
def token_hashes(key: int, tokens) -> np.ndarray:
    """a(x) = ``context_hash(key, [x])`` for every id of ``tokens`` (stream GREEN).

    Parameters
    ----------
    key : int
        The watermark key.
    tokens : array_like of int
        Token ids.

    Returns
    -------
    ndarray of uint64, shape ``tokens.shape``
        The one-token context hash of each id.
    """
    t = np.asarray(tokens, dtype=np.int64)
    return prf.context_hash(key, t[..., None])


def _top_byte(words: np.ndarray) -> np.ndarray:
    return (words >> np.uint64(56)).astype(np.int64) - 128


def clusters(tokens, cluster_of=None) -> np.ndarray:
    """The cluster (0 .. :data:`CLUSTERS` - 1) of every id of ``tokens``: ``semantic``'s synonyms share one.

    Parameters
    ----------
    tokens : array_like of int
        Token ids.
    cluster_of : ndarray of int64, shape (V,), optional
        Each id's cluster (:func:`embedding_clusters` of a real LM); None or empty: the public hash of the id
        (the synthetic LMs' stand-in).

    Returns
    -------
    ndarray of int64, the shape of ``tokens``
    """
    t = np.asarray(tokens, dtype=np.int64)
    if cluster_of is not None and len(cluster_of):
        return np.asarray(cluster_of, dtype=np.int64)[t]
    with np.errstate(over="ignore"):
        return (prf._mix64(t.astype(np.uint64) * np.uint64(prf.C_CONTEXT) + np.uint64(C_CLUSTER)) % np.uint64(CLUSTERS)).astype(np.int64)


def embedding_clusters(weight) -> np.ndarray:
    """Each token's ``semantic`` cluster from an LM's input embeddings: the sign pattern of its centred
    embedding row on log2(:data:`CLUSTERS`) public random hyperplanes (SimHash, Charikar 2002).

    Rows pointing the same way (a token and its near-synonyms, in the LM's own embedding) share a cluster,
    hence a seed: a substitution inside a cluster leaves ``semantic``'s green lists unchanged.  The rows are
    centred first (the embeddings of an LM share a common direction that would put most tokens on one side
    of every plane).  The hyperplanes carry no key, as :func:`cluster_nb`'s hash does not: the keyed part of
    the scheme is the SimHash of the window (:func:`semantic_bits`).

    Parameters
    ----------
    weight : array_like of float, shape (V, d)
        The LM's input embedding matrix (one row per token id).

    Returns
    -------
    ndarray of int64, shape (V,), values in [0, CLUSTERS)
    """
    w = np.asarray(weight, dtype=np.float64)
    if w.ndim != 2 or w.shape[0] < 1 or w.shape[1] < 1:
        raise ValueError(f"weight must be a (V, d) matrix with V, d >= 1; got shape {w.shape}")
    planes = np.random.default_rng(C_CLUSTER).standard_normal((w.shape[1], CLUSTERS.bit_length() - 1))
    signs = (w - w.mean(axis=0)) @ planes >= 0.0
    return (signs.astype(np.int64) << np.arange(planes.shape[1], dtype=np.int64)).sum(axis=1)


def semantic_bits(key: int, windows, cluster_of=None) -> np.ndarray:
    """``semantic``'s sign pattern of each window (shape ``windows.shape[:-1]``, uint64): the NumPy reference of
    :func:`semantic_bits_nb` (``cluster_of`` as in :func:`clusters`).

    Parameters
    ----------
    key : int
        The watermark key (draws the hyperplanes).
    windows : array_like of int, shape (..., h)
        Context windows.
    cluster_of : ndarray of int64, optional
        Cluster of each id; default the public hash.

    Returns
    -------
    ndarray of uint64, shape ``windows.shape[:-1]``
        Bit j is the sign of the window's embedding on hyperplane j, j < :data:`BITS`.
    """
    w = np.asarray(windows, dtype=np.int64)
    j = np.arange(DIM, dtype=np.uint64)
    with np.errstate(over="ignore"):
        centroids = _top_byte(prf._mix64(np.arange(CLUSTERS, dtype=np.uint64)[:, None] * np.uint64(DIM) + j + np.uint64(C_CENTROID)))
        base = prf._mix64(np.array([key], dtype=np.uint64) + np.uint64(prf.GOLDEN))[0]
        planes = _top_byte(prf._mix64(base ^ (np.arange(BITS * DIM, dtype=np.uint64) + np.uint64(C_PLANE)))).reshape(BITS, DIM)
    e = centroids[clusters(w, cluster_of)].sum(axis=-2)  # (..., DIM)
    signs = (e @ planes.T) >= 0  # (..., BITS), exact integer arithmetic
    return (signs.astype(np.uint64) << np.arange(BITS, dtype=np.uint64)).sum(axis=-1).astype(np.uint64)


def _self_seeds(key: int, windows: np.ndarray, tokens: np.ndarray) -> np.ndarray:
    wa = token_hashes(key, windows)  # (..., h)
    ay = token_hashes(key, tokens)  # broadcast with (...)
    with np.errstate(over="ignore"):
        s = prf._mix64(ay + ay)
        for j in range(wa.shape[-1]):
            s = np.minimum(s, prf._mix64(wa[..., j] + ay))
    return s


def seeds(key: int, windows, seeding: str = DEFAULT, tokens=None, cluster_of=None) -> np.ndarray:
    """The seed of each window (shape ``windows.shape[:-1]``); for ``selfhash`` that of each
    (window, candidate) pair, ``tokens`` broadcast with ``windows.shape[:-1]``.

    Parameters
    ----------
    key : int
        The watermark key, 0 <= key < 2**64.
    windows : array_like of int, shape (..., h)
        The h tokens before each position, oldest first.
    seeding : str
        One of :data:`SEEDINGS`.
    tokens : array_like of int, optional
        The candidates (``selfhash`` only).
    cluster_of : ndarray of int64, optional
        ``semantic``'s cluster of each id (:func:`clusters`); default the table ``seeding`` carries
        (:class:`Seeding`), else the public hash.

    Returns
    -------
    ndarray of uint64
    """
    c = code(seeding)
    w = np.asarray(windows, dtype=np.int64)
    cluster_of = cluster_table(seeding) if cluster_of is None else cluster_of
    if c == SELFHASH:
        if tokens is None:
            raise ValueError("tokens must be given for seeding='selfhash' (the seed depends on the candidate)")
        return _self_seeds(key, w, np.asarray(tokens, dtype=np.int64))
    if c == LEFTHASH:
        return prf.context_hash(key, w)
    if c == SKIPGRAM:
        return token_hashes(key, w[..., 0])
    if c == SEMANTIC:
        return token_hashes(key, semantic_bits(key, w, cluster_of).astype(np.int64))
    return token_hashes(key, w).min(axis=-1)


def words(key: int, windows, tokens, seeding: str = DEFAULT, cluster_of=None) -> np.ndarray:
    """The PRF word u of each (window, token) pair (``tokens`` broadcast with ``windows.shape[:-1]``):
    green iff ``u >> 11 < green_threshold(gamma)`` (``cluster_of`` as in :func:`seeds`).

    Parameters
    ----------
    key : int
        The watermark key.
    windows : array_like of int, shape (..., h)
        Context windows.
    tokens : array_like of int
        Token ids.
    seeding : str, default DEFAULT
        One of :data:`SEEDINGS`.
    cluster_of : ndarray of int64, optional
        ``semantic``'s cluster table.

    Returns
    -------
    ndarray of uint64
        ``u = mix(s ^ mix(y + C_TOKEN))`` with s the window's seed (module docstring).
    """
    s = seeds(key, windows, seeding, tokens, cluster_of)
    return prf.token_bits(s, tokens)


def green_mask(key: int, windows, vocab_size: int, gamma: float, seeding: str = DEFAULT, cluster_of=None) -> np.ndarray:
    """Bernoulli(gamma) green lists over the vocabulary, shape ``windows.shape[:-1] + (vocab_size,)``
    (``cluster_of`` as in :func:`seeds`).

    Parameters
    ----------
    key : int
        The watermark key.
    windows : array_like of int, shape (..., h)
        Context windows, oldest token first.
    vocab_size : int
        Vocabulary size V.
    gamma : float
        Green-list fraction, in (0, 1).
    seeding : str, default DEFAULT
        One of :data:`SEEDINGS`.
    cluster_of : ndarray of int64, optional
        ``semantic``'s cluster table.

    Returns
    -------
    ndarray of bool, shape ``windows.shape[:-1] + (vocab_size,)``
        True for green tokens.
    """
    w = np.asarray(windows, dtype=np.int64)[..., None, :]
    ks = np.arange(vocab_size, dtype=np.int64)
    thr = np.uint64(prf.green_threshold(gamma))
    return (words(key, w, ks, seeding, cluster_of) >> np.uint64(11)) < thr


# ------------------------------------------------------------ an LM's cluster table, kept by content
def _table_name(table) -> str:
    """A cluster table's name: the first 16 hex digits of the SHA-256 of its int64 bytes."""
    return hashlib.sha256(np.ascontiguousarray(table, dtype=np.int64).tobytes()).hexdigest()[:16]


def store_clusters(cluster_of) -> str:
    """Keep a cluster table in the cache (``$WMSTATS_CACHE/clusters``) and return its name (:func:`_table_name`).
    A generation seeded ``semantic`` by an LM's own clusters records the name in
    ``meta["clusters"]``; detection reads the table back by it (:func:`clusters_of`).

    Parameters
    ----------
    cluster_of : array_like of int
        Cluster of each token id, in [0, CLUSTERS).

    Returns
    -------
    str
        The table's name: 16 hex digits of the SHA-256 of its int64 bytes.

    Raises
    ------
    ValueError
        If the table is empty, not 1-d, or holds a cluster out of range.
    """
    table = np.ascontiguousarray(cluster_of, dtype=np.int64)
    if table.ndim != 1 or table.size == 0 or table.min() < 0 or table.max() >= CLUSTERS:
        raise ValueError(f"cluster_of must be a non-empty 1-d table of clusters in [0, {CLUSTERS}); got shape {table.shape}")
    name = _table_name(table)
    path = cache_root() / "clusters" / f"{name}.npy"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{np.random.default_rng().integers(1 << 30)}.tmp")
        with open(tmp, "wb") as f:
            np.save(f, table)
        tmp.replace(path)
    return name


class Seeding(str):
    """A seeding scheme's name carrying the cluster table ``semantic`` reads (``cluster_of``): equal to its name
    wherever a scheme is compared or looked up, so the table travels with the name from a generation's ``meta``
    (:func:`seeding_of`) down to the kernels (:func:`cluster_table`) without a parameter of its own."""

    cluster_of = NO_CLUSTERS


def with_clusters(seeding: str, cluster_of) -> str:
    """``seeding`` carrying the cluster table ``cluster_of`` (``semantic`` only; an empty table gives the plain name).

    Parameters
    ----------
    seeding : str
        A seeding scheme's name.
    cluster_of : array_like of int
        A cluster table, possibly empty.

    Returns
    -------
    str or Seeding
        The plain name for an empty table, else a :class:`Seeding` carrying it.

    Raises
    ------
    ValueError
        If a non-empty table is given to a scheme other than ``semantic``.
    """
    table = np.ascontiguousarray(cluster_of, dtype=np.int64)
    if not table.size:
        return str(seeding)
    if code(seeding) != SEMANTIC:
        raise ValueError(f"a cluster table applies to seeding 'semantic'; got seeding={seeding!r}")
    out = Seeding(seeding)
    out.cluster_of = table
    return out


def cluster_table(seeding: str) -> np.ndarray:
    """The cluster table ``seeding`` carries (:class:`Seeding`), else :data:`NO_CLUSTERS` (the public hash).

    Parameters
    ----------
    seeding : str or Seeding
        A seeding scheme's name.

    Returns
    -------
    ndarray of int64
        The cluster of each token id, or the empty table.
    """
    return getattr(seeding, "cluster_of", NO_CLUSTERS)


def seeding_of(meta: dict) -> str:
    """A generation's seeding scheme (``meta["seeding"]``, default ``lefthash``), carrying the cluster table its
    ``meta["clusters"]`` names (:func:`clusters_of`).

    Parameters
    ----------
    meta : dict
        A generation's metadata.

    Returns
    -------
    str or Seeding
        The scheme's name, a :class:`Seeding` when it carries a cluster table.
    """
    return with_clusters(meta.get("seeding", DEFAULT), clusters_of(meta))


def clusters_of(meta: dict) -> np.ndarray:
    """The cluster table a generation was seeded with: :data:`NO_CLUSTERS` (the public hash) unless ``meta`` names
    one (``meta["clusters"]``, :func:`store_clusters`), which is then read from the cache and checked against its
    name.

    Parameters
    ----------
    meta : dict
        A generation's metadata.

    Returns
    -------
    ndarray of int64
        The cluster table.

    Raises
    ------
    ValueError
        If the named table is not in the cache, or the cached file does not match its name.
    """
    name = meta.get("clusters")
    if not name:
        return NO_CLUSTERS
    path = cache_root() / "clusters" / f"{name}.npy"
    if not path.exists():
        raise ValueError(f"semantic seeding's cluster table {name!r} is not in the cache ({path}); open the LM "
                         f"{meta.get('lm', '')!r} once on this machine (sims.get_lm(name).cluster_table()) to rebuild it")
    table = np.load(path)
    if _table_name(table) != name:
        raise ValueError(f"the cached cluster table {path} does not match its name {name!r}; delete it and open the LM again")
    return table
