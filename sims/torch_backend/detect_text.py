"""Detection of text: tokenise with the model's tokenizer and score with :mod:`sims.detect.scores`."""

from __future__ import annotations

import numpy as np

from sims.detect import scores as detect


def detect_text(texts: list[str], tokenizer, key: int, gamma: float, *, algo: str = "dualga", h: int = 1, dedup: bool = False) -> detect.DetectResult:
    """Score raw texts: the first ``h`` tokens of each text are its context, the rest are scored.

    Red-green algorithms (srl, dualga, atw, none) use the exact binomial test, EMS the Gamma
    tail.  Token ids beyond the tokenizer's vocabulary raise.
    """
    if isinstance(texts, str):
        texts = [texts]
    V = len(tokenizer)
    rows = [np.asarray(tokenizer(t, add_special_tokens=False)["input_ids"], dtype=np.int64) for t in texts]
    if any(len(r) <= h for r in rows):
        raise ValueError(f"every text must tokenise to more than h={h} tokens")
    width = max(len(r) for r in rows) - h
    tokens = np.full((len(rows), width), -1, dtype=np.int64)
    for i, r in enumerate(rows):
        tokens[i, : len(r) - h] = r[h:]
    prompts = np.stack([r[:h] for r in rows])
    if algo == "ems":
        return detect.score_ems(tokens, prompts, key, vocab_size=V, h=h, dedup=dedup)
    return detect.score_redgreen(tokens, prompts, key, gamma, vocab_size=V, h=h, dedup=dedup)
