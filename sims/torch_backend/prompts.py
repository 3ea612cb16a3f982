"""Prompt sets standing in for the paper's data sets (which cannot be downloaded here).

* ``news``: completion prompts cut from English prose that ships with CPython itself --
  the documentation topics in ``pydoc_data.topics`` -- the first 48 words of paragraphs of
  at least 60 words (C4-style: the model continues the text).
* ``lfqa``: 240 open long-form questions written for this project (``data/lfqa.txt``,
  one per line), asked through the model's chat template.
* ``load_jsonl(path)``: the user's own prompts, one JSON object per line with a "prompt" field.
"""

from __future__ import annotations

import json
import pathlib
import re

DATA = pathlib.Path(__file__).parent / "data"


def news_prompts(n: int | None = None, words: int = 48) -> list[str]:
    from pydoc_data.topics import topics

    out = []
    for name in sorted(topics):
        for para in re.split(r"\n\s*\n", topics[name]):
            text = " ".join(para.split())
            if len(text.split()) >= 60 and text[0].isalpha() and "*" not in text and ">>>" not in text:
                out.append(" ".join(text.split()[:words]))
    return out[:n] if n else out


def lfqa_questions(n: int | None = None) -> list[str]:
    qs = [q.strip() for q in (DATA / "lfqa.txt").read_text().splitlines() if q.strip()]
    return qs[:n] if n else qs


def load_jsonl(path) -> list[str]:
    out = []
    for i, line in enumerate(pathlib.Path(path).read_text().splitlines()):
        if not line.strip():
            continue
        obj = json.loads(line)
        if "prompt" not in obj:
            raise ValueError(f"{path}: line {i + 1} has no 'prompt' field")
        out.append(str(obj["prompt"]))
    return out
