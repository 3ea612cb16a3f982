"""Constants that ``theory`` and ``sims`` read without loading Numba (``sims.core.defaults`` imports this)."""

LAMBDA_MAX = 15.0
"""Default projection bound M of lambda (the paper's code truncates at 15; :mod:`theory.dual_ascent`)."""
