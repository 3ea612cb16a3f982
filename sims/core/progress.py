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
import time

LOG_INTERVAL = 10.0  #: seconds between lines when stderr is not a terminal
CHUNK_SECONDS = 0.5
"""About how long one call of a compiled loop over rows runs (:func:`in_chunks`): the rows go in chunks sized to it, so that
Ctrl-C (which a compiled loop never sees) is answered between chunks and a progress bar advances."""
PROGRESS_ABOVE = 2 * 10**6
"""Runs of :func:`in_chunks` over more tokens than this show a progress bar."""
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
    (``False``) or shown where stderr is a terminal (``None``).

    Parameters
    ----------
    show : bool or None
        The setting inside the block.

    Yields
    ------
    None
        Control of the block; the previous setting is restored on exit.
    """
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

    Parameters
    ----------
    total_or_iterable : int or iterable
        Number of units to count, or an iterable to wrap.
    desc : str
        Label of the bar.
    unit : str, default "step"
        Name of a unit.
    force : bool, optional
        Show (True) or hide (False) whatever :func:`shown` says.

    Returns
    -------
    tqdm or object
        A ``tqdm`` bar (one line every ``LOG_INTERVAL`` seconds when stderr is not a terminal), or a silent stand-in
        with the same ``update``/iteration/context-manager interface.
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


def in_chunks(run, n: int, T: int, desc: str) -> None:
    """Call ``run(i0, i1)`` over consecutive row ranges covering ``range(n)``, each sized so that a call takes about
    :data:`CHUNK_SECONDS` (the first covers about 2e4 tokens; each next one is scaled by the last one's time, at
    most 4x up).  Between calls Python answers Ctrl-C; a run of more than :data:`PROGRESS_ABOVE` tokens shows a bar.

    Parameters
    ----------
    run : callable
        ``run(i0, i1)`` does rows ``i0 .. i1 - 1``; what it writes must not depend on the split (the generators
        draw text i from the counter stream (seed, i), whatever chunk it falls in).
    n, T : int
        Rows and tokens per row (the bar counts tokens).
    desc : str
        The bar's label.
    """
    rows, i0 = max(1, min(n, 20_000 // max(T, 1))), 0
    with progress(n * T, desc, unit="tok", force=None if n * T > PROGRESS_ABOVE else False) as bar:
        while i0 < n:
            i1 = min(n, i0 + rows)
            t0 = time.perf_counter()
            run(i0, i1)
            took = time.perf_counter() - t0
            bar.update((i1 - i0) * T)
            rows, i0 = max(1, min(4 * rows, int(rows * CHUNK_SECONDS / max(took, 1e-4)))), i1
