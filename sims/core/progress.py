"""Progress bars for long runs, on stderr.

A library call shows its bar when stderr is a terminal (so logs and tests stay clean);
the command line (:mod:`sims.cli.main`) shows it on any stderr unless ``--quiet``
(:func:`shown`): where stderr is not a terminal (a log, an agent's pipe), the bar is
redrawn as a new line at most every ``LOG_INTERVAL`` seconds.  A bar over a known total
shows the rate (tokens/s, texts/s, ...) and the time left.
"""

from __future__ import annotations

import contextlib
import sys

LOG_INTERVAL = 10.0  #: seconds between lines when stderr is not a terminal
_SHOW: bool | None = None  # None: show where stderr is a terminal; set by shown()


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


@contextlib.contextmanager
def shown(show: bool | None):
    """Within the block, bars whose caller did not force them are shown (``True``), hidden
    (``False``) or shown where stderr is a terminal (``None``)."""
    global _SHOW
    before, _SHOW = _SHOW, show
    try:
        yield
    finally:
        _SHOW = before


def progress(total_or_iterable, desc: str, unit: str = "step", force: bool | None = None):
    """A context-manager progress bar over ``total`` units or an iterable.

    ``force`` (True / False) overrides the setting of :func:`shown`, which in turn
    overrides the default: shown only where ``sys.stderr`` is a terminal.
    """
    tty = sys.stderr.isatty()
    show = force if force is not None else (_SHOW if _SHOW is not None else tty)
    iterable = None if isinstance(total_or_iterable, int) else total_or_iterable
    if not show:
        return _Silent(iterable)
    from tqdm.auto import tqdm

    kw = dict(desc=desc, unit=unit, unit_scale=True, leave=False, file=sys.stderr)
    if not tty:  # a log: one line every LOG_INTERVAL seconds, no carriage returns
        kw.update(mininterval=LOG_INTERVAL, ascii=True, leave=True)
    if iterable is None:
        return tqdm(total=total_or_iterable, **kw)
    return tqdm(iterable, **kw)
