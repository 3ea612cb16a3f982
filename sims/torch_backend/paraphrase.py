"""Paraphrase attack on the real LM: SmolLM2 (or any chat model) is asked to rewrite a text.

The rate is passed in the instruction ("replace about R % of the words"), as the paper's GPT-4
attack does; the model's output is re-tokenised and can be scored with
:func:`sims.torch_backend.detect_text.detect_text`.  Generation is unwatermarked and seeded;
:func:`paraphrase_generation` attacks every text of a saved :class:`~sims.core.record.Generation` (``sims attack``).
"""

from __future__ import annotations

import copy

import numpy as np
import torch

from sims.core.record import Generation
from sims.lm.real.prompts import encode
from sims.torch_backend.generate_torch import generate_with_processor

#: The chat instruction the model paraphrases under; ``{pct}`` is the rate in percent, ``{text}`` the text.
INSTRUCTION = "Paraphrase the following text, replacing about {pct} percent of the words. Reply with the paraphrase only.\n\n{text}"


def paraphrase(model, tokenizer, text: str, rate: float, *, seed: int = 0, max_tokens: int | None = None) -> dict:
    """Rewrite ``text`` with the model (unwatermarked, seeded).

    Parameters
    ----------
    model : transformers causal LM
        A chat model.
    tokenizer : transformers tokenizer
        Its tokenizer.
    text : str
        The text, not empty.
    rate : float
        Share of the words to replace, in [0, 1], stated in the instruction (:data:`INSTRUCTION`).
    seed : int, optional
        Sampling seed.
    max_tokens : int, optional
        Tokens generated at most (default 1.3 times the text's tokens plus 8).

    Returns
    -------
    dict
        ``text`` (the paraphrase, cut at the model's end of turn) and ``record`` (kind ``paraphrase-lm``, rate,
        seed, tokens_in).

    Raises
    ------
    ValueError
        If ``rate`` is outside [0, 1] or ``text`` is empty.
    """
    if not (0.0 <= float(rate) <= 1.0):
        raise ValueError(f"rate must be in [0, 1]; got {rate!r}")
    if not text.strip():
        raise ValueError("text must not be empty")
    prompt = INSTRUCTION.format(pct=round(100 * rate), text=text)
    ids = encode(tokenizer, prompt, chat=True)
    n_in = len(tokenizer(text, add_special_tokens=False)["input_ids"])
    g = generate_with_processor(model, [ids], max_tokens or int(1.3 * n_in) + 8, None, seed=seed, vocab_size=len(tokenizer))
    toks = g.tokens[0]
    eos = tokenizer.eos_token_id
    if eos is not None and np.any(toks == eos):
        toks = toks[: int(np.argmax(toks == eos))]  # the reply ends at the model's end of turn
    out = tokenizer.decode(torch.as_tensor(toks), skip_special_tokens=True).strip()
    return dict(text=out, record=dict(kind="paraphrase-lm", rate=float(rate), seed=int(seed), tokens_in=n_in))


def paraphrase_generation(gen: Generation, rate: float, seed: int, model, tokenizer) -> Generation:
    """Attack every text of ``gen`` (a real LM's) by :func:`paraphrase`.

    Decode, rewrite with the model (seed ``seed + i`` for text i), re-tokenise (no special tokens).

    Parameters
    ----------
    gen : Generation
        A real LM's texts.
    rate : float
        Share of the words to replace, in [0, 1].
    seed : int
        Seed of text 0's paraphrase.
    model : transformers causal LM
        The chat model.
    tokenizer : transformers tokenizer
        Its tokenizer.

    Returns
    -------
    Generation
        The prompts stay (the first token's context is the prompt's last ``h`` tokens); records are nan,
        tokens padded with -1 at the end, ``meta["attacks"]`` extended.

    Raises
    ------
    ValueError
        If a paraphrase is empty.
    """
    rows = []
    for i in range(gen.n):
        text = tokenizer.decode(torch.as_tensor(gen.text(i)), skip_special_tokens=True)
        new = paraphrase(model, tokenizer, text, rate, seed=seed + i)["text"]
        ids = np.asarray(tokenizer(new, add_special_tokens=False)["input_ids"], dtype=np.int64)
        if ids.size == 0:
            raise ValueError(f"the paraphrase of row {i} is empty; try another seed")
        rows.append(ids)
    width = max(len(r) for r in rows)
    tokens = np.full((gen.n, width), Generation.PAD, dtype=np.int64)
    for i, r in enumerate(rows):
        tokens[i, : len(r)] = r
    nan = np.full(tokens.shape, np.nan)
    meta = copy.deepcopy(gen.meta)
    meta["attacks"] = meta.get("attacks", []) + [dict(kind="paraphrase-lm", rate=float(rate), seed=int(seed))]
    return Generation(tokens, gen.prompts, nan, nan, nan, nan, nan, meta=meta, prompt_lens=gen.prompt_lens,
                      lengths=np.array([len(r) for r in rows]))
