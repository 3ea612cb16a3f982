"""Optional torch backend: the package's watermarks as transformers ``LogitsProcessor`` objects on a
real language model, with the same keyed PRF as :mod:`sims.core.prf` (bit-identical green lists),
state and per-token records kept on the device, and detection through :mod:`sims.detect.scores`.

Needs the ``[torch]`` extra.  ``python -m sims.torch_backend evaluate --model smollm2 ...``.
"""
