"""Argument checks shared by the subcommands: files to write, files to read, memory.

Each failure is a ``ValueError`` (or argparse's error) naming the parameter, its value and
what is valid, raised before any long work starts, so nothing is lost.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import stat
import tempfile


def _existing_ancestor(path: pathlib.Path) -> pathlib.Path:
    """The nearest of ``path`` and its parents that exists (``.`` for a relative path none of whose parents do)."""
    for p in (path, *path.parents):
        if p.exists():
            return p
    return pathlib.Path(".")


def _probe_folder(folder: pathlib.Path) -> str | None:
    """Why no file can be created in the existing folder ``folder`` (None if one can): a temporary
    file is created and removed there.  ``os.access`` alone is not enough: root passes it on
    read-only and special file systems (/proc, /sys), where creating a file still fails."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=".wmstats-probe-", dir=folder)
    except OSError as exc:
        return f"a file cannot be created in {str(folder)!r}: {(exc.strerror or str(exc)).lower()}"
    os.close(fd)
    try:
        os.unlink(tmp)
    except OSError:
        pass
    return None


def _probe_file(path: pathlib.Path) -> str | None:
    """Why the existing ``path`` cannot be written (None if it can): a regular file is opened for
    appending (nothing is written, so it is left as it was); anything else is asked ``os.access``."""
    if not stat.S_ISREG(os.stat(path).st_mode):
        return None if os.access(path, os.W_OK) else "permission denied"
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_APPEND))
    except OSError as exc:
        return (exc.strerror or str(exc)).lower()
    return None


def _folder_problem(name: str, path: pathlib.Path, folder: pathlib.Path, what: str) -> None:
    """Refuse ``path`` whose folder ``folder`` is missing or not a folder (naming the nearest existing parent)."""
    if folder.is_dir():
        return
    found = _existing_ancestor(folder)
    if found.is_dir():
        why = f"{str(folder)!r} does not exist"
    else:
        why = f"{str(found)!r} is a file, not a folder"
    raise ValueError(f"--{name} must be {what}; got {str(path)!r} ({why})")


def writable_file(name: str, path: pathlib.Path | None) -> pathlib.Path | None:
    """``path`` if a file can be written there; ValueError naming ``--name`` otherwise.

    A file can be written there when its folder exists and a file can be created in it, it is not a
    folder, and an existing file can be opened for writing.  Checked by creating and removing a temporary
    file in the folder, so read-only and special file systems (/proc, /sys) are refused before any work.

    Parameters
    ----------
    name : str
        The option's name without dashes, for the message (``"out"`` gives ``--out``).
    path : pathlib.Path or str or None
        The file to be written; ``None`` (an option not given) passes through.

    Returns
    -------
    pathlib.Path or None
        ``path`` as a :class:`pathlib.Path`, or None when ``path`` is None.

    Raises
    ------
    ValueError
        If ``path`` is a folder, its folder does not exist, or the file cannot be created or opened there.
    """
    if path is None:
        return None
    path = pathlib.Path(path)
    folder = path.parent if str(path.parent) else pathlib.Path(".")
    if path.is_dir():
        raise ValueError(f"--{name} must be a file to write, not a folder; got {str(path)!r}")
    _folder_problem(name, path, folder, "in an existing folder")
    why = _probe_folder(folder) or (_probe_file(path) if path.exists() else None)
    if why is not None:
        raise ValueError(f"--{name} must be a writable path; got {str(path)!r} ({why})")
    return path


def writable_folder(name: str, path: pathlib.Path, *, create: bool = True) -> pathlib.Path:
    """``path`` if it is, or can be made, a writable folder; ValueError naming ``--name`` otherwise.

    Parameters
    ----------
    name : str
        The option's name without dashes, for the message.
    path : pathlib.Path or str
        The folder.
    create : bool, optional
        True (default): make the folder (and its parents) here.  False: leave the file system as it was
        (the nearest existing parent must be a folder in which a file can be created), for a caller that
        creates it only once the rest of its input is accepted.

    Returns
    -------
    pathlib.Path
        ``path`` as a :class:`pathlib.Path`.

    Raises
    ------
    ValueError
        If ``path`` is a file, lies under a file, cannot be created, or no file can be created in it (or,
        with ``create=False``, in its nearest existing parent).
    """
    path = pathlib.Path(path)
    if path.exists() and not path.is_dir():
        raise ValueError(f"--{name} must be a folder; got {str(path)!r} (a file)")
    found = _existing_ancestor(path)
    if not found.is_dir():
        raise ValueError(f"--{name} must be a folder that can be created; got {str(path)!r} ({str(found)!r} is a file, not a folder)")
    if create:
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ValueError(f"--{name} must be a folder that can be created; got {str(path)!r} ({exc.strerror})") from None
        found = path
    why = _probe_folder(found)
    if why is not None:
        what = "a writable folder" if found == path else "a folder that can be created"
        raise ValueError(f"--{name} must be {what}; got {str(path)!r} ({why})")
    return path


def available_bytes() -> int | None:
    """Memory available to a new allocation (``MemAvailable`` of /proc/meminfo), or None where unknown.

    Returns
    -------
    int or None
        Bytes available, or None where /proc/meminfo cannot be read or has no ``MemAvailable`` line.
    """
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def check_memory(nbytes: int, what: str) -> None:
    """Refuse a run whose arrays would not fit in the memory available now (:func:`available_bytes`).

    Parameters
    ----------
    nbytes : int
        Bytes the run's arrays need.
    what : str
        What needs them, for the message (``"100 texts of 200 tokens"``).

    Raises
    ------
    ValueError
        If ``nbytes`` exceeds the available memory; nothing is checked where that is unknown.
    """
    free = available_bytes()
    if free is not None and nbytes > free:
        raise ValueError(f"{what} would need {nbytes / 2**30:.1f} GiB of memory; {free / 2**30:.1f} GiB are available: "
                         "lower --n or --T (or run in parts and combine)")


def _bound(x: int | None, inf: str) -> str:
    if x is None:
        return inf
    if x >= 2**16 and x & (x - 1) == 0:  # 2**64, not 18446744073709551616
        return f"2**{x.bit_length() - 1}"
    return str(x)


def int_range(lo: int | None = None, hi: int | None = None) -> str:
    """``[lo, hi)`` as the messages write it (``None``: unbounded; a large power of two as ``2**k``).

    Parameters
    ----------
    lo, hi : int or None, optional
        The bounds of the half-open range; None writes ``(-inf`` and ``inf)``.

    Returns
    -------
    str
        The range, e.g. ``"[0, 2**64)"`` or ``"[1, inf)"``.
    """
    return f"{'[' if lo is not None else '('}{_bound(lo, '-inf')}, {_bound(hi, 'inf')})"


def _as_int(value, lo: int | None, hi: int | None) -> int | None:
    """``value`` (an int or its decimal string) if it is an integer in [lo, hi), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        v = value
    else:
        try:
            v = int(str(value).strip())
        except ValueError:
            return None
    if (lo is not None and v < lo) or (hi is not None and v >= hi):
        return None
    return v


def int_in(name: str, value, lo: int | None = None, hi: int | None = None) -> int:
    """``value`` as an integer in [lo, hi), refused in the one wording of every integer option.

    Parameters
    ----------
    name : str
        The option's name without dashes, for the message.
    value : int or str
        An int or its decimal string (a bool is refused).
    lo, hi : int or None, optional
        The half-open range; None: unbounded on that side.

    Returns
    -------
    int
        The integer.

    Raises
    ------
    ValueError
        ``--NAME must be an integer in [lo, hi); got VALUE`` if ``value`` is not an integer in the range.
    """
    v = _as_int(value, lo, hi)
    if v is None:
        raise ValueError(f"--{name} must be an integer in {int_range(lo, hi)}; got {value!r}")
    return v


def integer(lo: int | None = None, hi: int | None = None):
    """An argparse ``type=`` that parses an integer in [lo, hi).

    Refused values raise in the wording of :func:`int_in` (``--NAME must be an integer in [lo, hi); got
    VALUE``; :class:`sims.cli.main.Parser` puts the option's name first).

    Parameters
    ----------
    lo, hi : int or None, optional
        The half-open range; None: unbounded on that side.

    Returns
    -------
    callable
        ``parse(value: str) -> int``, raising :class:`argparse.ArgumentTypeError` on a value that is not an
        integer in the range; its ``__name__`` names the range (argparse shows it in messages).
    """

    def parse(value: str) -> int:
        """An option's text as an integer in the half-open range its :func:`integer` was made with.

        Parameters
        ----------
        value : str
            The option's text (a decimal integer; surrounding spaces are ignored).

        Returns
        -------
        int
            The integer.

        Raises
        ------
        argparse.ArgumentTypeError
            ``must be an integer in [lo, hi); got VALUE`` if it is not an integer in the range.
        """
        v = _as_int(value, lo, hi)
        if v is None:
            raise argparse.ArgumentTypeError(f"must be an integer in {int_range(lo, hi)}; got {value!r}")
        return v

    parse.__name__ = f"integer in {int_range(lo, hi)}"
    return parse


#: argparse ``type=`` of an option that takes an integer in [1, inf) (:func:`integer`).
positive_int = integer(1)  # an integer in [1, inf)
#: argparse ``type=`` of a watermark key: an integer in [0, 2**64) (:func:`integer`).
KEY = integer(0, 2**64)  # a watermark key
#: argparse ``type=`` of a random seed: an integer in [0, inf) (:func:`integer`).
SEED = integer(0)  # a random seed
