"""One module per figure or table of the paper, redrawn on the synthetic LMs.

Each module ``paper_figs/fig_*.py`` or ``paper_figs/tab_*.py`` defines
``TITLE`` (one line) and ``main(out_dir: pathlib.Path, quick: bool) -> list[Path]``
returning the files it wrote.  ``python -m paper_figs [--quick] [--only NAME]``
runs them all.
"""


def save(fig, out_dir, name: str, summary) -> list:
    """Write ``fig`` as NAME.png and ``summary`` as NAME.json into ``out_dir``; return both paths.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure (closed once saved, at 120 dpi).
    out_dir : pathlib.Path
        The output folder.
    name : str
        The files' stem.
    summary : dict
        The figure's numbers, JSON-serialisable.

    Returns
    -------
    list of pathlib.Path
        ``[NAME.png, NAME.json]``.
    """
    import json

    import matplotlib.pyplot as plt

    png = out_dir / f"{name}.png"
    fig.savefig(png, dpi=120)
    plt.close(fig)
    js = out_dir / f"{name}.json"
    js.write_text(json.dumps(summary, indent=1))
    return [png, js]


def resume(partial, summary: dict, keys) -> dict:
    """A long run's saved progress, or a fresh start.

    Parameters
    ----------
    partial : pathlib.Path
        The progress JSON of an earlier run.
    summary : dict
        The fresh summary of this run.
    keys : iterable of str
        The keys that fix the run's sizes.

    Returns
    -------
    dict
        The JSON at ``partial`` when it exists and was written by a run of the same sizes (equal
        ``summary[k]`` for every k in ``keys``), else ``summary`` itself.
    """
    import json

    if partial.exists():
        old = json.loads(partial.read_text())
        if all(old.get(k) == summary[k] for k in keys):
            return old
    return summary
