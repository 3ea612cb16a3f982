"""Table exp_performance_ext: Table exp_performance on a second LM.

The paper repeats its table on a second model; here the default second LM is the synthetic
``loopy`` preset (short contexts, many near-deterministic successors), and ``--lm smollm2``
after the torch merge.  Same configurations, sizes and exact-null detection as
:mod:`paper_figs.tab_performance`.
"""

from __future__ import annotations

import pathlib

from paper_figs import tab_performance

TITLE = "Table exp_performance on a second LM"


def main(out_dir: pathlib.Path, quick: bool, lms=None) -> list[pathlib.Path]:
    return tab_performance.main(out_dir, quick, tuple(lms or ("loopy",))[:1], name="tab_performance_ext")
