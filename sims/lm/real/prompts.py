"""Prompt sets standing in for the paper's data sets (which cannot be downloaded here).

* ``news``: completion prompts cut from English prose that ships with CPython itself --
  the documentation topics in ``pydoc_data.topics`` -- the first 48 words of paragraphs of
  at least 60 words (C4-style: the model continues the text).
* ``lfqa``: 240 open long-form questions written for this project (``data/lfqa.txt``,
  one per line), asked through the model's chat template.
* ``load_jsonl(path)``: the user's own prompts, one JSON object per line with a "prompt" field.

:func:`prompt_ids` encodes any of them (:func:`encode`: chat template or plain) for a run.
"""

from __future__ import annotations

import json
import pathlib
import re

DATA = pathlib.Path(__file__).parents[1] / "data"  #: sims/lm/data: the shipped prompt sets (``lfqa.txt``)


def news_prompts(n: int | None = None, words: int = 48) -> list[str]:
    """News-like prompts: the first ``words`` words of each long prose paragraph of Python's bundled documentation
    topics (``pydoc_data.topics``; a corpus every Python ships, so the set needs no download).

    Parameters
    ----------
    n : int, optional
        Number of prompts (default all).
    words : int, default 48
        Words per prompt.

    Returns
    -------
    list of str
        The prompts, in a fixed order.
    """
    from pydoc_data.topics import topics

    out = []
    for name in sorted(topics):
        for para in re.split(r"\n\s*\n", topics[name]):
            text = " ".join(para.split())
            if len(text.split()) >= 60 and text[0].isalpha() and "*" not in text and ">>>" not in text:
                out.append(" ".join(text.split()[:words]))
    return out[:n] if n else out


def lfqa_questions(n: int | None = None) -> list[str]:
    """The long-form questions of ``DATA/lfqa.txt``, one per line.

    Parameters
    ----------
    n : int, optional
        Number of questions (default all).

    Returns
    -------
    list of str
        The questions.
    """
    qs = [q.strip() for q in (DATA / "lfqa.txt").read_text().splitlines() if q.strip()]
    return qs[:n] if n else qs


def load_jsonl(path) -> list[str]:
    """The ``prompt`` field of every non-empty line of a JSONL file.

    Parameters
    ----------
    path : str or os.PathLike
        The file.

    Returns
    -------
    list of str
        The prompts.

    Raises
    ------
    ValueError
        If a line has no ``prompt`` field.
    """
    out = []
    for i, line in enumerate(pathlib.Path(path).read_text().splitlines()):
        if not line.strip():
            continue
        obj = json.loads(line)
        if "prompt" not in obj:
            raise ValueError(f"{path}: line {i + 1} has no 'prompt' field")
        out.append(str(obj["prompt"]))
    return out


def encode(tok, text: str, chat: bool):
    """Token ids (1-d int64 array) of ``text``: through the tokenizer's chat template (as a user
    turn, generation prompt added) when ``chat`` and the tokenizer has one, else plain.

    Parameters
    ----------
    tok : transformers tokenizer
        The tokenizer.
    text : str
        The prompt.
    chat : bool
        Use the chat template (a question set), or not (a text to continue).

    Returns
    -------
    ndarray of int64
        The ids.
    """
    import numpy as np
    import torch

    if chat and getattr(tok, "chat_template", None):
        ids = tok.apply_chat_template([{"role": "user", "content": text}], add_generation_prompt=True, return_tensors="pt")
        ids = ids if torch.is_tensor(ids) else ids["input_ids"]
    else:
        ids = tok(text, return_tensors="pt")["input_ids"]
    return np.asarray(ids, dtype=np.int64).reshape(-1)


def prompt_ids(source: str, n: int | None, *, tokenizer=None, vocab_size: int | None = None, seed: int = 0, length: tuple = (4, 24)):
    """``n`` prompts as id arrays: ``source`` is lfqa, news or a JSONL file, encoded with
    ``tokenizer`` (``n=None``: the whole set); without a tokenizer (random test models) ``n``
    random id sequences of mixed lengths in ``[length[0], length[1])`` over ``vocab_size`` (seeded).

    Parameters
    ----------
    source : str
        ``"lfqa"``, ``"news"`` or a JSONL file.
    n : int or None
        Number of prompts.
    tokenizer : transformers tokenizer, optional
        The LM's tokenizer.
    vocab_size : int, optional
        Vocabulary of the random prompts.
    seed : int, default 0
        Seed of the random prompts.
    length : tuple of int, default (4, 24)
        Length range of the random prompts.

    Returns
    -------
    list of ndarray of int64
        The prompts.

    Raises
    ------
    ValueError
        If ``n`` is missing for random prompts or below 1, or ``source`` is unknown.
    """
    import numpy as np

    if n is None and tokenizer is None:
        raise ValueError("n must be given (an int in [1, inf)) for random prompts (no tokenizer)")
    if n is not None and int(n) < 1:
        raise ValueError(f"n must be in [1, inf); got {n!r}")
    if tokenizer is None:
        rng = np.random.default_rng(seed)
        return [rng.integers(0, vocab_size, size=int(rng.integers(*length))) for _ in range(int(n))]
    if source == "lfqa":
        texts, chat = lfqa_questions(), True
    elif source == "news":
        texts, chat = news_prompts(), False
    else:
        if not pathlib.Path(source).is_file():
            raise ValueError(f"prompts must be 'lfqa', 'news' or a JSONL file; got {source!r}")
        texts, chat = load_jsonl(source), True
    n = len(texts) if n is None else int(n)
    if len(texts) < n:
        raise ValueError(f"n must be at most {len(texts)} (the prompts in {source!r}); got {n}")
    return [encode(tokenizer, t, chat) for t in texts[:n]]
