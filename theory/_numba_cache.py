"""Numba's on-disk cache, keyed by the package's own source.

Numba invalidates a cached kernel when *its own* file changes, not when a kernel it calls
in another module does (``sims`` kernels inline ``theory._scalar``).  Keying the cache
folder by a hash of every source file of ``theory`` and ``sims`` makes any edit start a
fresh cache, so a stale kernel can never be loaded.  ``NUMBA_CACHE_DIR`` still wins when
the user sets it.
"""

from __future__ import annotations

import hashlib
import os
import pathlib

_ROOT = pathlib.Path(__file__).resolve().parents[1]


def source_digest() -> str:
    h = hashlib.sha256()
    for pkg in ("theory", "sims"):
        for f in sorted((_ROOT / pkg).rglob("*.py")):
            h.update(f.relative_to(_ROOT).as_posix().encode())
            h.update(f.read_bytes())
    return h.hexdigest()[:16]


def configure() -> None:
    if os.environ.get("NUMBA_CACHE_DIR"):
        return
    from numba.core import config

    base = pathlib.Path(os.environ.get("WMSTATS_CACHE", pathlib.Path.home() / ".cache" / "wmstats"))
    config.CACHE_DIR = str(base / f"numba-{source_digest()}")


configure()
