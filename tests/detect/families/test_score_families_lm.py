"""Which score families read the LM (``needs_lm``): ``sims detect`` loads the LM only for those, so a flag
that says False for a family whose scorer reads the LM breaks it on a real LM (survivors of make
mutate's sampled run on sims/detect/families/score_families.py)."""

from __future__ import annotations

from sims.detect.families import score_families as sf


def test_needs_lm_is_true_exactly_for_the_families_whose_scorer_reads_the_lm():
    reads = {n for n, f in sf.SCORES.items() if "_lm_of" in f.scorer.__code__.co_names}  # _lm_of: the LM given, else the generation's
    needs = {n for n, f in sf.SCORES.items() if f.needs_lm}
    assert needs == reads == {"lr", "ewd", "hits", "its-edit"}


def test_the_lr_score_reads_the_lm_given_else_the_generations_own():
    """news, srl, 2 texts of 30 tokens, seed 3: no LM given scores as the generation's (news) does; another
    LM given (lfqa) is the one read, so its weights and p-values differ."""
    from sims.lm.synthetic import open_synthetic
    from sims.watermarks.generate import generate_synthetic

    news, lfqa = open_synthetic("news"), open_synthetic("lfqa")
    gen = generate_synthetic(news, "srl", n=2, T=30, seed=3, key=5)
    own = sf.score_generation(gen, "lr").log10_p
    assert (own == sf.score_generation(gen, "lr", news).log10_p).all()
    assert (own != sf.score_generation(gen, "lr", lfqa).log10_p).any()
