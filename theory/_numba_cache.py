"""Numba's on-disk cache, keyed by the package's own source; the package's cache folder.

Numba invalidates a cached kernel when *its own* file changes, not when a kernel it calls
in another module does (``sims`` kernels inline ``theory._scalar``).  Keying the cache
folder by a hash of every source file of ``theory`` and ``sims`` makes any edit start a
fresh cache, so a stale kernel can never be loaded.  ``NUMBA_CACHE_DIR`` still wins when
the user sets it.

The folder is handed to Numba through ``NUMBA_CACHE_DIR`` when Numba is not imported yet (so
importing ``sims`` or ``theory`` does not load Numba: ``python -m sims plan`` never does); the
value this module set is remembered in ``WMSTATS_NUMBA_CACHE_AUTO``, so a child process (which
inherits both) tells it from a user's setting and keys it by its own source.
"""

from __future__ import annotations

import functools
import hashlib
import os
import pathlib
import sys

_ROOT = pathlib.Path(__file__).resolve().parents[1]
_AUTO = "WMSTATS_NUMBA_CACHE_AUTO"


@functools.lru_cache(maxsize=1)
def source_digest() -> str:
    """16 hex digits of SHA-256 over every ``.py`` file of ``theory`` and ``sims`` (path and bytes)."""
    h = hashlib.sha256()
    for pkg in ("theory", "sims"):
        for f in sorted((_ROOT / pkg).rglob("*.py")):
            h.update(f.relative_to(_ROOT).as_posix().encode())
            h.update(f.read_bytes())
    return h.hexdigest()[:16]


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
