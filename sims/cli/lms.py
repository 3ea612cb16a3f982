"""Which backend runs an LM name: a synthetic preset (:data:`sims.lm.synthetic.LM_PRESETS`,
or a ``loopy-V<V>-p<p>`` variant) runs on the Numba simulators; ``smollm2``, a random test
model (``random-llama``, ``random-gpt2``, ...) or a local transformers folder runs on the torch
backend (:mod:`sims.torch_backend.real_lm`, imported only then)."""

from __future__ import annotations

import re

from sims.core.lm_names import is_real_lm
from sims.lm.synthetic import LM_PRESETS

LM_CHOICES = ("a synthetic preset (" + ", ".join(LM_PRESETS) + ") or fitted .npz (python -m sims fit-lm), smollm2, a random test model "
           "(random-llama, random-qwen2, random-mistral, random-gpt2, random-opt) or a local transformers folder")
LM_HELP = "LM: " + LM_CHOICES


def is_synthetic(name: str) -> bool:
    """Whether ``name`` is a synthetic LM (a preset, a loop_lm variant or a fitted ``.npz``)."""
    return name in LM_PRESETS or str(name).endswith(".npz") or re.fullmatch(r"loopy-V\d+-p.+", str(name)) is not None


def check_lm(name: str) -> str:
    """"synthetic" or "torch" for an LM name; ValueError listing the choices otherwise."""
    if is_synthetic(name):
        return "synthetic"
    if is_real_lm(name):
        return "torch"
    raise ValueError(f"lm must be {LM_CHOICES}; got {name!r}")
