"""Numba's on-disk cache, keyed by the package's own source; the package's cache folder.

Numba invalidates a cached kernel when *its own* file changes, not when a kernel it calls
in another module does (``sims`` kernels inline ``theory._scalar``).  Keying the cache
folder by a hash of every source file of ``theory`` and ``sims`` makes any edit start a
fresh cache, so a stale kernel can never be loaded; the files' hashes are kept on disk with
their (modification time, size), so a process reads only the sources changed since the last.  ``NUMBA_CACHE_DIR`` still wins when
the user sets it.

The folder is handed to Numba through ``NUMBA_CACHE_DIR`` when Numba is not imported yet (so
importing ``sims`` or ``theory`` does not load Numba: ``python -m sims plan`` never does); the
value this module set is remembered in ``WMSTATS_NUMBA_CACHE_AUTO``, so a child process (which
inherits both) tells it from a user's setting and keys it by its own source.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import pathlib
import sys
import time

_ROOT = pathlib.Path(__file__).resolve().parents[1]
_AUTO = "WMSTATS_NUMBA_CACHE_AUTO"


RACY_NS = 2_000_000_000  # a file modified this recently (ns) when hashed is hashed again next time


@functools.lru_cache(maxsize=1)
def source_digest() -> str:
    """16 hex digits of SHA-256 over every ``.py`` file of ``theory`` and ``sims`` (its path and the SHA-256 of its bytes).

    Each file's hash is kept on disk (:func:`manifest_path`) with its (modification time, size): a fresh
    process stats the files and reads (hashes) only those that changed since, so importing the package
    does not read its whole source.  A file modified less than ``RACY_NS`` before it was hashed is not
    trusted (an edit within the same clock tick keeps its time) and is hashed again by the next process.
    """
    files = _sources()
    known = _read_manifest()
    now = time.time_ns()
    h = hashlib.sha256()
    rows, changed = [], len(known) != len(files)
    for rel, mtime, size in files:
        got = known.get(rel)
        if got is not None and got[0] == mtime and got[1] == size:
            sha = got[2]
        else:
            with open(_ROOT / rel, "rb") as fh:
                sha = hashlib.sha256(fh.read()).hexdigest()
            changed = True
        h.update(f"{rel}\0{sha}\n".encode())
        rows.append((rel, mtime if now - mtime >= RACY_NS else -1, size, sha))
    if changed:
        _write_manifest(rows)
    return h.hexdigest()[:16]


def _sources() -> list[tuple[str, int, int]]:
    """(path relative to the repository, modification time in ns, size) of every ``.py`` file of ``theory`` and ``sims``, sorted."""
    out, root = [], str(_ROOT) + os.sep
    for pkg in ("theory", "sims"):
        for folder, dirs, names in os.walk(root + pkg):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            rel = folder[len(root):].replace(os.sep, "/") + "/"
            for name in names:
                if name.endswith(".py"):
                    st = os.stat(os.path.join(folder, name))
                    out.append((rel + name, st.st_mtime_ns, st.st_size))
    return sorted(out)


def manifest_path() -> pathlib.Path:
    """Where :func:`source_digest` keeps each source file's hash: one file per checkout under :func:`cache_root`."""
    return cache_root() / f"sources-{hashlib.sha256(str(_ROOT).encode()).hexdigest()[:16]}.tsv"


def _read_manifest() -> dict[str, tuple[int, int, str]]:
    """path -> (modification time, size, SHA-256) from :func:`manifest_path`; empty if missing or unreadable."""
    try:
        with open(manifest_path(), encoding="utf-8") as fh:
            rows = [line.rstrip("\n").split("\t") for line in fh]
        return {r[0]: (int(r[1]), int(r[2]), r[3]) for r in rows if len(r) == 4 and len(r[3]) == 64}
    except (OSError, ValueError, UnicodeDecodeError):
        return {}


def _write_manifest(rows: list[tuple[str, int, int, str]]) -> None:
    """Write the manifest to a temporary name and rename it (concurrent writers leave one whole file); an unwritable folder costs the hashing only."""
    path = manifest_path()
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.writelines(f"{rel}\t{mtime}\t{size}\t{sha}\n" for rel, mtime, size, sha in rows)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def cache_root() -> pathlib.Path:
    """The package's cache folder: ``$WMSTATS_CACHE``, default ``~/.cache/wmstats``."""
    return pathlib.Path(os.environ.get("WMSTATS_CACHE", pathlib.Path.home() / ".cache" / "wmstats"))


def configure() -> None:
    user = os.environ.get("NUMBA_CACHE_DIR")
    if user and user != os.environ.get(_AUTO):
        return
    path = str(cache_root() / f"numba-{source_digest()}")
    if "numba" in sys.modules:  # Numba has read its environment already
        from numba.core import config

        config.CACHE_DIR = path
    os.environ["NUMBA_CACHE_DIR"] = os.environ[_AUTO] = path


configure()
