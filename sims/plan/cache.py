"""The planner's on-disk cache (``python -m sims plan``): what a query needs from an LM, kept between processes.

A query of :mod:`sims.plan` needs, from the LM, a sample of unwatermarked texts
(seconds to draw) and, for a red-green watermark, the per-token green probabilities under it
(Numba ufuncs).  Both are small arrays (64 x 256 doubles); this module keeps each in one ``.npz``
under ``$WMSTATS_CACHE/plan`` (default ``~/.cache/wmstats/plan``), so a fresh process answers a
repeated query with NumPy arithmetic only, without loading Numba or drawing the sample.

An entry's name is a hash of its key; the key (stored inside the file and compared on reading) holds
the entry's kind and parameters, the LM's identity (a preset's parameters, a fitted LM's file hash;
:func:`lm_identity`), :data:`FORMAT` and the hash of the package's source
(:func:`theory._numba_cache.source_digest`), so an entry written by other code, for another LM or
with other parameters is never read.  A file that cannot be read or holds another key is rebuilt;
files are written to a temporary name and renamed (concurrent writers leave one whole file); an
unwritable folder only costs the rebuild.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import pathlib
import tempfile
import zipfile
from collections.abc import Callable

import numpy as np

from sims.lm.presets import FITTED_PRESETS, LM_PRESETS, PRESETS
from theory._numba_cache import cache_root, source_digest

FORMAT = 1  #: bump when the layout of an entry changes


def cache_dir() -> pathlib.Path:
    """Folder of the planner's entries: ``$WMSTATS_CACHE/plan`` (default ``~/.cache/wmstats/plan``).

    Returns
    -------
    pathlib.Path
        The folder.
    """
    return cache_root() / "plan"


def lm_identity(lm: str) -> dict:
    """What a synthetic LM's samples depend on besides the code: a preset's parameters, or the
    SHA-256 of a fitted LM's ``.npz`` (the preset ``smollm2-fit`` or a file).

    Parameters
    ----------
    lm : str
        A preset's name, a fitted preset or a ``.npz`` file.

    Returns
    -------
    dict
        ``{"lm", "preset"}`` or ``{"lm", "fitted_sha256"}``, for an entry's parameters.

    Raises
    ------
    ValueError
        For anything else.
    """
    lm = str(lm)
    if lm in PRESETS:
        return {"lm": lm, "preset": list(PRESETS[lm])}
    path = pathlib.Path(FITTED_PRESETS.get(lm, lm))
    if not (lm in FITTED_PRESETS or lm.endswith(".npz")) or not path.is_file():
        raise ValueError(f"lm must be one of {LM_PRESETS} or a fitted .npz file; got {lm!r}")
    st = path.stat()
    return {"lm": lm, "fitted_sha256": _file_sha256(str(path.resolve()), st.st_mtime_ns, st.st_size)}


@functools.lru_cache(maxsize=32)
def _file_sha256(path: str, mtime_ns: int, size: int) -> str:
    """SHA-256 of a file, kept per (path, modification time, size): a query does not re-read an unchanged file."""
    return hashlib.sha256(pathlib.Path(path).read_bytes()).hexdigest()


def entry_key(kind: str, params: dict) -> str:
    """The key of an entry (JSON, sorted): kind, parameters, :data:`FORMAT` and the source hash.

    Parameters
    ----------
    kind : str
        The entry's kind.
    params : dict
        Its parameters.

    Returns
    -------
    str
        The key, stored inside the entry and checked on reading.
    """
    return json.dumps({"kind": kind, "format": FORMAT, "code": source_digest(), **params}, sort_keys=True, default=repr)


def entry_path(key: str) -> pathlib.Path:
    """The file of the entry with key ``key``: ``<kind>-<24 hex digits of the key's SHA-256>.npz`` in :func:`cache_dir`.

    Parameters
    ----------
    key : str
        An entry key (:func:`entry_key`).

    Returns
    -------
    pathlib.Path
        The file (which may not exist yet).
    """
    kind = json.loads(key)["kind"]
    return cache_dir() / f"{kind}-{hashlib.sha256(key.encode()).hexdigest()[:24]}.npz"


def cached(kind: str, params: dict, build: Callable[[], dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """The arrays ``build()`` returns for (``kind``, ``params``), read from the cache or built and written.

    ``params`` must name everything the arrays depend on besides the package's source (which is in
    the key); values are written as JSON (``repr`` for others).

    Parameters
    ----------
    kind : str
        The entry's kind (part of its file name).
    params : dict
        What the arrays depend on.
    build : callable
        ``build() -> dict of arrays``, called on a miss.

    Returns
    -------
    dict of str to ndarray
        The arrays.
    """
    key = entry_key(kind, params)
    path = entry_path(key)
    got = _read(path, key)
    if got is not None:
        return got
    out = {k: np.asarray(v) for k, v in build().items()}
    _write(path, key, out)
    return out


_PENDING: dict[pathlib.Path, tuple[str, dict[str, np.ndarray]]] | None = None  # stores held back by batched()


@contextlib.contextmanager
def batched():
    """Hold back :func:`store`'s writes until the block ends, then write each entry once, with the arrays
    stored last: a query that meets 13 new lengths writes its growing entry once instead of 13 times
    (one write costs ~2 ms, a query's arithmetic ~50).  Nested blocks join the outer one.

    Yields
    ------
    None
        Control of the block; the pending entries are written when it ends (also on an exception).
    """
    global _PENDING
    if _PENDING is not None:
        yield
        return
    _PENDING = {}
    try:
        yield
    finally:
        pending, _PENDING = _PENDING, None
        for path, (key, arrays) in pending.items():
            _write(path, key, arrays)


def load(kind: str, params: dict) -> dict[str, np.ndarray] | None:
    """The arrays stored for (``kind``, ``params``), or None (an entry that grows across queries, see :func:`store`).

    Parameters
    ----------
    kind : str
        The entry's kind.
    params : dict
        Its parameters.

    Returns
    -------
    dict of str to ndarray or None
        The arrays (pending ones of a :func:`batched` block included), or None when there is no valid entry.
    """
    key = entry_key(kind, params)
    path = entry_path(key)
    if _PENDING is not None and path in _PENDING:
        return dict(_PENDING[path][1])
    return _read(path, key)


def store(kind: str, params: dict, arrays: dict[str, np.ndarray]) -> None:
    """Write (replace) the entry of (``kind``, ``params``), at once or at the end of a :func:`batched` block;
    :func:`load` reads it back.

    Parameters
    ----------
    kind : str
        The entry's kind.
    params : dict
        Its parameters.
    arrays : dict of str to array_like
        The arrays to store.
    """
    key = entry_key(kind, params)
    path, arrays = entry_path(key), {k: np.asarray(v) for k, v in arrays.items()}
    if _PENDING is not None:
        _PENDING[path] = (key, arrays)
        return
    _write(path, key, arrays)


def _read(path: pathlib.Path, key: str) -> dict[str, np.ndarray] | None:
    """The entry's arrays, or None if the file is missing, unreadable, truncated or holds another key."""
    try:
        with open(path, "rb") as fh, np.load(fh, allow_pickle=False) as f:  # our handle: closed on a bad file too
            if "_key" not in f.files or str(f["_key"]) != key:
                return None
            return {k: f[k] for k in f.files if k != "_key"}
    except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile):
        return None


def _write(path: pathlib.Path, key: str, arrays: dict[str, np.ndarray]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.stem, suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as fh:
                np.savez(fh, _key=np.array(key), **arrays)
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    except OSError:  # read-only or full disk: the answer stands, the next process builds it again
        pass
