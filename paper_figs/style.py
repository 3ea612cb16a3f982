"""One style for every figure of the package: each algorithm's colour and marker from its registry record, legends
at a readable size outside the data, labelled reference lines, titles naming the LM, n and T.

A figure script draws with these helpers (``paper_figs.fig_robustness`` does)::

    from paper_figs import style

    style.apply()                                   # font sizes, grid, line widths
    kw = style.series("dualga Delta=0.4 (KL 0.42)")  # colour and marker of DualGA, a line style per variant
    ax.plot(x, y, label=label, **kw)
    style.reference(ax, -4, "detection level: p = 1e-4")
    style.legend_below(fig)                          # one legend for every panel, under them
    style.title(fig, "Robustness under six attacks", lm="lfqa", n=100, T=200)
"""

from __future__ import annotations

#: Font sizes (points) of every figure: legends at 9 pt are readable at the size the figures are shown.
SIZES = {"font.size": 10, "axes.titlesize": 11, "axes.labelsize": 10, "legend.fontsize": 9, "xtick.labelsize": 9,
         "ytick.labelsize": 9, "figure.titlesize": 12}

#: Line styles told apart within one algorithm's colour (its parameter variants, in order of appearance).
VARIANT_LINES = ("-", "--", ":", "-.", (0, (5, 1, 1, 1)), (0, (1, 3)))

#: Height (inches) of one row of a figure legend at the legend's font size, and the margin under and above it.
LEGEND_ROW, LEGEND_PAD = 0.19, 0.2

#: Hatches telling bars of one algorithm apart within its colour (its scores or variants, the default plain).
HATCHES = ("", "//", "..", "xx", "\\\\", "++")

#: Colour of reference lines (levels, bounds): neutral, so they are not read as a series.
REFERENCE_COLOR = "#444444"


def apply():
    """Set the package's matplotlib style (sizes, a light grid, no top and right spines)."""
    import matplotlib as mpl

    mpl.rcParams.update(SIZES)
    mpl.rcParams.update({"axes.grid": True, "grid.alpha": 0.3, "axes.spines.top": False, "axes.spines.right": False,
                         "lines.linewidth": 1.6, "lines.markersize": 5, "legend.frameon": False})


def algo_of(label: str) -> str:
    """The algorithm a series label starts with (``"srl delta=2 (KL 0.35)"`` -> ``"srl"``).

    Parameters
    ----------
    label : str
        A series label.

    Returns
    -------
    str
        Its first word (the label itself when empty).
    """
    return label.split()[0] if label.split() else label


def record(algo: str):
    """The registry record of ``algo`` (None for a name that is not an algorithm).

    Parameters
    ----------
    algo : str
        An algorithm name.

    Returns
    -------
    sims.watermarks.registry.Algorithm or None
        Its record (colour, marker, ...), with the tournament algorithms registered.
    """
    from sims.watermarks import registry

    try:
        import sims.watermarks.tournament  # noqa: F401  (registers synthid)
    except ImportError:  # pragma: no cover
        pass
    try:
        return registry.get(algo)
    except ValueError:
        return None


class Series:
    """Styles of the series of one figure: an algorithm keeps its record's colour and marker; its variants (other
    parameters) take the next line style, in the order they are first asked for."""

    def __init__(self):
        self._variants = {}

    def __call__(self, label: str) -> dict:
        algo = algo_of(label)
        seen = self._variants.setdefault(algo, [])
        variant = label.split(" (")[0]
        if variant not in seen:
            seen.append(variant)
        i = seen.index(variant)
        rec = record(algo)
        color, marker = (rec.color, rec.marker) if rec is not None else ("#777777", "o")
        out = dict(color=color, marker=marker, ls=VARIANT_LINES[i % len(VARIANT_LINES)])
        if algo == "dualga":
            out["lw"] = 2.2  # the paper's algorithm, drawn on top
            out["zorder"] = 3
        if i % 2:
            out["mfc"] = "white"  # hollow markers tell a variant apart in grey print too
        return out


def series(label: str, styles: Series | None = None) -> dict:
    """Plot keywords of one series (a fresh :class:`Series` unless ``styles`` is given).

    Parameters
    ----------
    label : str
        The series label.
    styles : Series, optional
        The figure's styles, so that variants of one algorithm take distinct line styles.

    Returns
    -------
    dict
        ``color``, ``marker``, ``ls`` (and ``lw``, ``zorder`` for DualGA, ``mfc`` for odd variants).
    """
    return (styles or Series())(label)


def reference(ax, y: float, label: str, *, ls="--", color=REFERENCE_COLOR, horizontal=True):
    """A labelled reference line (its label goes to the legend).

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        The panel.
    y : float
        Where the line is.
    label : str
        Its legend label.
    ls : str, optional
        Line style.
    color : str, optional
        Colour (default :data:`REFERENCE_COLOR`).
    horizontal : bool, optional
        ``axhline`` (True) or ``axvline``.

    Returns
    -------
    matplotlib.lines.Line2D
    """
    draw = ax.axhline if horizontal else ax.axvline
    return draw(y, color=color, ls=ls, lw=1.1, label=label, zorder=1)


def legend_below(fig, axes=None, ncol=3, skip=()):
    """One legend for the figure under its panels, each label once.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure; its layout is tightened to leave room for the legend.
    axes : sequence of matplotlib.axes.Axes, optional
        Panels whose labels are collected (default all of them).
    ncol : int, optional
        Legend columns.
    skip : collection of str, optional
        Labels left out (and every label starting with ``_``).

    Returns
    -------
    matplotlib.legend.Legend
    """
    handles, labels = [], []
    for ax in axes if axes is not None else fig.axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels and lab not in skip and not lab.startswith("_"):
                handles.append(h)
                labels.append(lab)
    rows = (len(labels) + ncol - 1) // ncol
    fig.tight_layout(rect=(0, min(0.5, (LEGEND_PAD + LEGEND_ROW * rows) / fig.get_figheight()), 1, 0.92))
    return fig.legend(handles, labels, loc="lower center", ncol=ncol, bbox_to_anchor=(0.5, 0.0))


def title(fig, what: str, lm=None, n=None, T=None, n_what="texts"):
    """The figure's title: ``what``, then the LM and the sample where known.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure.
    what : str
        What it shows.
    lm : str, optional
        The LM (a synthetic preset named as :func:`paper_figs._data.display` names it).
    n, T : int, optional
        The sample: n texts (or other units, ``n_what``) of T tokens.
    n_what : str, optional
        What ``n`` counts.

    Returns
    -------
    matplotlib.text.Text
        The suptitle.
    """
    from paper_figs._data import display

    parts = [f"LM {display(lm)}" if lm else "", f"n = {n} {n_what}" if n else "", f"T = {T} tokens" if T else ""]
    where = ", ".join(p for p in parts if p)
    return fig.suptitle(f"{what}\n{where}" if where else what)
