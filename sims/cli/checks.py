"""Argument checks shared by the subcommands: files to write, files to read, memory.

Each failure is a ``ValueError`` (or argparse's error) naming the parameter, its value and
what is valid, raised before any long work starts, so nothing is lost.
"""

from __future__ import annotations

import argparse
import os
import pathlib


def writable_file(name: str, path: pathlib.Path | None) -> pathlib.Path | None:
    """``path`` if a file can be written there (its folder exists and is writable, it is not a
    folder); ValueError naming ``--name`` otherwise.  ``None`` passes through."""
    if path is None:
        return None
    path = pathlib.Path(path)
    folder = path.parent if str(path.parent) else pathlib.Path(".")
    if path.is_dir():
        raise ValueError(f"--{name} must be a file to write, not a folder; got {str(path)!r}")
    if not folder.is_dir():
        raise ValueError(f"--{name} must be in an existing folder; got {str(path)!r} ({str(folder)!r} does not exist)")
    if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise ValueError(f"--{name} must be a writable path; got {str(path)!r} (permission denied)")
    return path


def writable_folder(name: str, path: pathlib.Path) -> pathlib.Path:
    """``path`` if it is, or can be made, a writable folder (made here); ValueError naming ``--name`` otherwise."""
    path = pathlib.Path(path)
    if path.exists() and not path.is_dir():
        raise ValueError(f"--{name} must be a folder; got {str(path)!r} (a file)")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"--{name} must be a folder that can be created; got {str(path)!r} ({exc.strerror})") from None
    if not os.access(path, os.W_OK):
        raise ValueError(f"--{name} must be a writable folder; got {str(path)!r} (permission denied)")
    return path


def available_bytes() -> int | None:
    """Memory available to a new allocation (``MemAvailable`` of /proc/meminfo), or None where unknown."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def check_memory(nbytes: int, what: str) -> None:
    """Refuse a run whose arrays (``nbytes``) would not fit in the memory available now."""
    free = available_bytes()
    if free is not None and nbytes > free:
        raise ValueError(f"{what} would need {nbytes / 2**30:.1f} GiB of memory; {free / 2**30:.1f} GiB are available: "
                         "lower --n or --T (or run in parts and combine)")


def positive_int(value: str) -> int:
    """argparse type: an integer in [1, inf)."""
    try:
        n = int(value)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be an integer in [1, inf); got {value!r}")
    return n
