"""Progress bars for long runs: a tqdm bar when stderr is a terminal, else silent."""

from __future__ import annotations

import sys


class _Silent:
    def __init__(self, iterable=None):
        self._it = iterable

    def __iter__(self):
        return iter(self._it)

    def update(self, n=1):
        pass

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def progress(total_or_iterable, desc: str, unit: str = "step", force: bool | None = None):
    """A context-manager progress bar over ``total`` units or an iterable.

    Shown only when ``sys.stderr`` is a terminal (or ``force=True``), so logs and
    tests stay clean.
    """
    show = sys.stderr.isatty() if force is None else force
    iterable = None if isinstance(total_or_iterable, int) else total_or_iterable
    if not show:
        return _Silent(iterable)
    from tqdm.auto import tqdm

    if iterable is None:
        return tqdm(total=total_or_iterable, desc=desc, unit=unit, unit_scale=True, leave=False)
    return tqdm(iterable, desc=desc, unit=unit, leave=False)
