"""One module per figure or table of the paper, redrawn on the synthetic LMs.

Each module ``paper_figs/fig_*.py`` or ``paper_figs/tab_*.py`` defines
``TITLE`` (one line) and ``main(out_dir: pathlib.Path, quick: bool) -> list[Path]``
returning the files it wrote.  ``python -m paper_figs [--quick] [--only NAME]``
runs them all.
"""
