"""Table exp_performance_ext: Table exp_performance on a second LM.

The paper repeats its table on a second model; here the default second LM is ``smollm2-fit``,
the synthetic LM fitted to SmolLM2-135M-Instruct (:mod:`sims.lm.fitted`); ``--lm smollm2`` runs
the real one (UW detected with its teacher-forced probabilities).  Same configurations,
sizes and exact-null detection as :mod:`paper_figs.tab_performance` (the same sweep grid).
"""

from __future__ import annotations

import pathlib

from paper_figs import tab_performance

TITLE = "Table exp_performance on a second LM"


def main(out_dir: pathlib.Path, quick: bool, lms=None) -> list[pathlib.Path]:
    """Table exp_performance on a second LM: :func:`paper_figs.tab_performance.main` on one LM, named ``tab_performance_ext``.

    Parameters
    ----------
    out_dir : pathlib.Path
        The folder the files are written to.
    quick : bool
        As :func:`paper_figs.tab_performance.main`.
    lms : sequence of str, optional
        LMs of ``python -m paper_figs --lm``: its first is used (default ``smollm2-fit``).

    Returns
    -------
    list of pathlib.Path
        The files written: tab_performance_ext.md and tab_performance_ext.json.
    """
    return tab_performance.main(out_dir, quick, tuple(lms or ("smollm2-fit",))[:1], name="tab_performance_ext")
