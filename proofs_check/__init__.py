"""Numerical certificate of the paper's results: one module per result.

Each module ``proofs_check/check_*.py`` defines ``RESULT`` (the paper's label)
and ``run(quick: bool, rng: numpy.random.Generator) -> list[Check]``.
``python -m proofs_check [--quick] [--out DIR]`` runs them all.
"""
