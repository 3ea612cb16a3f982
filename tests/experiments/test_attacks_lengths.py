"""Attacked texts of different lengths: the record pads each row with -1 after its own length, so that an
attacked record can be attacked again (every reader strips the padding by ``token >= 0``)."""

from __future__ import annotations

from sims.experiments.attacks import attack
from sims.lm.synthetic import open_synthetic
from sims.watermarks.generate import generate_synthetic


def test_rows_shortened_by_deletion_are_padded_with_minus_one_and_keep_their_length_when_attacked_again():
    """tiny LM, srl gamma 0.25, 12 texts of 8 tokens, seed 0: deleting up to 6 green tokens leaves texts with
    fewer greens longer than the others."""
    gen = generate_synthetic(open_synthetic("tiny"), "srl", n=12, T=8, seed=0, key=5, gamma=0.25, delta=1.5)
    att = attack(gen, "worst_deletion", 0.75, 0)
    assert len(set(att.lengths.tolist())) > 1  # ragged
    for i, n in enumerate(att.lengths):
        assert (att.tokens[i, :n] >= 0).all() and (att.tokens[i, n:] == -1).all()
    again = attack(att, "worst_deletion", 0.0, 0)
    assert (again.lengths == att.lengths).all() and (again.tokens == att.tokens).all()
