"""Paraphrase attack on the real LM: SmolLM2 (or any chat model) is asked to rewrite a text.

The rate is passed in the instruction ("replace about R % of the words"), as the paper's GPT-4
attack does; the model's output is re-tokenised and can be scored with
:func:`sims.torch_backend.detect_text.detect_text`.  Generation is unwatermarked and seeded.
"""

from __future__ import annotations

import torch

from sims.torch_backend.evaluate_torch import encode
from sims.torch_backend.generate_torch import generate

INSTRUCTION = "Paraphrase the following text, replacing about {pct} percent of the words. Reply with the paraphrase only.\n\n{text}"


def paraphrase(model, tokenizer, text: str, rate: float, *, seed: int = 0, max_tokens: int | None = None) -> dict:
    """Rewrite ``text`` with the model; returns the paraphrase and a record of the attack."""
    if not (0.0 <= float(rate) <= 1.0):
        raise ValueError(f"rate must be in [0, 1]; got {rate!r}")
    if not text.strip():
        raise ValueError("text must not be empty")
    prompt = INSTRUCTION.format(pct=round(100 * rate), text=text)
    ids = encode(tokenizer, prompt, chat=True)
    n_in = len(tokenizer(text, add_special_tokens=False)["input_ids"])
    g = generate(model, ids, max_tokens or int(1.3 * n_in) + 8, None, seed=seed, vocab_size=len(tokenizer))
    out = tokenizer.decode(torch.as_tensor(g.tokens[0]), skip_special_tokens=True).strip()
    return dict(text=out, record=dict(kind="paraphrase-lm", rate=float(rate), seed=int(seed), tokens_in=n_in))
