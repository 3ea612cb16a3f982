"""Which score families read the LM (``needs_lm``): ``sims detect`` loads the LM only for those, so a flag
that says False for a family whose scorer reads the LM breaks it on a real LM (survivors of make
mutate's sampled run on sims/detect/score_families.py)."""

from __future__ import annotations

from sims.detect import score_families as sf


def test_needs_lm_is_true_exactly_for_the_families_whose_scorer_reads_the_lm():
    reads = {n for n, f in sf.FAMILIES.items() if "_lm_of" in f.scorer.__code__.co_names}  # _lm_of: the LM given, else the generation's
    needs = {n for n, f in sf.FAMILIES.items() if f.needs_lm}
    assert needs == reads == {"lr", "hits", "its-edit"}
