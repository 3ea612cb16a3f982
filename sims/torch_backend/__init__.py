"""Optional torch backend: the package's watermarks as transformers ``LogitsProcessor`` objects on a
real language model, with the same keyed PRF as :mod:`sims.core.prf` (bit-identical green lists),
state and per-token records kept on the device, and detection through :mod:`sims.detect.stats.scores`.

Needs the ``[torch]`` extra.  Run it through the one CLI: ``python -m sims evaluate --lm smollm2 ...``
(``sims.cli.lms`` picks this backend for a real LM name).
"""
