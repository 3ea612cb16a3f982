"""Simulators: everything that draws or scores tokens.

Synthetic LMs -> keyed green lists (:mod:`sims.core.prf`) -> watermark algorithms ->
detectors -> attacks -> metrics -> experiment runner / CLI (``python -m sims``).
Importing this package loads neither torch, matplotlib nor cvxpy.
"""

import theory._numba_cache  # noqa: E402,F401  (Numba's cache keyed by the package source)
