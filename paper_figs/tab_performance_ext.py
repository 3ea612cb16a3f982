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
    return tab_performance.main(out_dir, quick, tuple(lms or ("smollm2-fit",))[:1], name="tab_performance_ext")
