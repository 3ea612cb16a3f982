"""Redraw figures from their committed JSON, running nothing: ``python -m paper_figs.redraw --out docs/results``.

A figure script that separates drawing from computing has ``draw(summary) -> Figure``; this redraws its NAME.png from
NAME.json in ``--out`` (every such script whose JSON is there, or those named by ``--only``), in the package's style
(:mod:`paper_figs.style`).  A JSON written before its script recorded everything its drawing needs is left as it is
and named, with the command that reruns it; the exit status is then 1.
"""

from __future__ import annotations

import argparse
import importlib
import json
import pathlib
import sys


def drawers() -> dict:
    """Each redrawable figure's name and its drawing function.

    Returns
    -------
    dict of str to callable
        ``draw`` of every figure script that has one, and the figures a script draws besides its own, named in its
        ``DRAWS`` (``{"fig_scatter4": "draw_scatter4"}``); each takes the figure's JSON summary and returns a
        Figure.
    """
    from paper_figs.__main__ import scripts

    out = {}
    for s in scripts():
        mod = importlib.import_module(f"paper_figs.{s}")
        if hasattr(mod, "draw"):
            out[s] = mod.draw
            out.update({name: getattr(mod, fn) for name, fn in getattr(mod, "DRAWS", {}).items()})
    return out


def redrawable() -> list[str]:
    """Names of the figures that can be redrawn from their JSON (:func:`drawers`).

    Returns
    -------
    list of str
        Sorted.
    """
    return sorted(drawers())


def redraw(out: pathlib.Path, only=None, stale=None) -> list[pathlib.Path]:
    """Redraw NAME.png from NAME.json in ``out`` for each redrawable script (or ``only``).

    Parameters
    ----------
    out : pathlib.Path
        The folder of NAME.json files; a figure whose JSON is missing is skipped.
    only : list of str, optional
        The figures to redraw (default all of :func:`redrawable`).
    stale : list, optional
        Where a JSON written before a field its drawing needs (its ``draw`` raises ``ValueError``) is skipped and
        ``(name, reason)`` appended.

    Returns
    -------
    list of pathlib.Path
        The PNG files written.
    """
    import matplotlib.pyplot as plt

    written = []
    draws = drawers()
    for name in only or sorted(draws):
        js = out / f"{name}.json"
        if not js.exists():
            continue
        try:
            fig = draws[name](json.loads(js.read_text()))
        except ValueError as e:
            if stale is not None:
                stale.append((name, str(e)))
            continue
        png = out / f"{name}.png"
        fig.savefig(png, dpi=120)
        plt.close(fig)
        written.append(png)
    return written


def main(argv=None) -> int:
    """Run ``python -m paper_figs.redraw --out DIR [--only NAME ...]``, printing each file written.

    Parameters
    ----------
    argv : list of str, optional
        The arguments; None reads the command line.

    Returns
    -------
    int
        The exit status, 0.
    """
    ap = argparse.ArgumentParser(prog="python -m paper_figs.redraw", description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=pathlib.Path, required=True, help="folder of NAME.json files (e.g. docs/results)")
    ap.add_argument("--only", action="append", choices=redrawable(), help="redraw only this figure (repeatable)")
    args = ap.parse_args(argv)
    stale = []
    for png in redraw(args.out, args.only, stale):
        print(png)
    for name, why in stale:
        print(f"{args.out / name}.json not redrawn: {why}", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
