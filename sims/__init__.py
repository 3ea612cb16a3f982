"""Simulators: everything that draws or scores tokens.

Synthetic LMs -> keyed green lists (:mod:`sims.prf`) -> watermark algorithms ->
detectors -> attacks -> metrics -> experiment runner / CLI (``python -m sims``).
Importing this package loads neither torch, matplotlib nor cvxpy.
"""
