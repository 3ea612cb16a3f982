"""Detection of text: tokenise with the model's tokenizer and score with :mod:`sims.detect.stats.scores`."""

from __future__ import annotations

import numpy as np

from sims.core import defaults
from sims.detect import families
from sims.detect.stats import scores as detect


def detect_text(texts: list[str], tokenizer, key: int, gamma: float, *, algo: str = "dualga", h: int = 1, dedup: bool = False) -> detect.DetectResult:
    """Score raw texts: the first ``h`` tokens of each text are its context, the rest are scored.

    The texts become a :class:`~sims.core.record.Generation` of ``algo`` under ``key`` (its registry defaults: DiPmark's
    partition lists, EXP's key-sequence length) and ``algo``'s detector family scores them
    (:func:`sims.detect.families.detectors.score`): the green count's exact binomial tail for the red-green family,
    the EMS sum's Gamma tail for EMS, PF and GumbelSoft, the same sum read at positions for EXP, and so on.  The
    families that read the model's probabilities (keyed orders, the entropy gate) are refused: this function has
    the tokenizer only.

    Parameters
    ----------
    texts : list of str or str
        The texts (a string is one text).
    tokenizer : transformers tokenizer
        The model's tokenizer (no special tokens are added); ``len(tokenizer)`` is the vocabulary size.
    key : int
        The detection key.
    gamma : float
        Green-list ratio (red-green algorithms).
    algo : str, optional
        The algorithm whose detector scores (a registry name whose family does not read the model).
    h : int, optional
        Context width.
    dedup : bool, optional
        Score each (context, token) pair once.

    Returns
    -------
    sims.detect.stats.scores.DetectResult
        Per text: score, z, log10 p-value, tokens scored.

    Raises
    ------
    ValueError
        If a text tokenises to ``h`` tokens or fewer, a token id is beyond the tokenizer's vocabulary, or ``algo``'s
        family reads the model's probabilities.
    """
    from sims.core.record import Generation
    from sims.detect.families import detectors
    from sims.watermarks import registry

    if families.of(algo).needs_lm:
        allowed = [a for a in registry.names() if not families.of(a).needs_lm]
        raise ValueError(f"algo {algo!r} is detected with the model's probabilities; detect_text has the tokenizer only: algo must be one of {allowed}")
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
    prm = registry.resolve_params(algo, gamma=gamma)
    meta = dict(prm, algo=algo, key=key, h=h, vocab_size=V, green_kind=registry.fixed_green_kind(algo, defaults.GREEN_KIND))
    nan = np.full(tokens.shape, np.nan)
    gen = Generation(tokens, prompts, nan, nan, nan, nan, nan, meta, lengths=np.array([len(r) - h for r in rows]))
    return detectors.score(gen, dedup=dedup)


def tokenize(texts: list[str], tokenizer) -> tuple[list[np.ndarray], list[list[str]]]:
    """Token ids of each text (no special tokens added) and the piece of text each token covers.

    With a fast tokenizer the pieces are cut from the text by the offset mapping (each piece
    runs from the previous token's end to this token's end, so the pieces join back to the
    text exactly); otherwise each token is decoded alone.

    Parameters
    ----------
    texts : list of str
        The texts.
    tokenizer : transformers tokenizer
        The model's tokenizer.

    Returns
    -------
    ids : list of numpy.ndarray
        int64 token ids per text.
    pieces : list of list of str
        The piece of text of each token.
    """
    ids, pieces = [], []
    for text in texts:
        enc = tokenizer(text, add_special_tokens=False, return_offsets_mapping=bool(getattr(tokenizer, "is_fast", False)))
        row = np.asarray(enc["input_ids"], dtype=np.int64)
        if "offset_mapping" in enc:
            ends = [0] + [e for _, e in enc["offset_mapping"]]
            ends[-1] = len(text)
            cut = [text[a:b] for a, b in zip(ends[:-1], ends[1:])]
        else:
            cut = [tokenizer.decode([int(t)]) for t in row]
        ids.append(row)
        pieces.append(cut)
    return ids, pieces


def lefthash_marks(rows: list[np.ndarray], vocab_size: int, gamma: float, hashing_key: int, context_width: int = 1,
                   dedup: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Colours of transformers' ``WatermarkLogitsProcessor`` (``seeding_scheme="lefthash"``).

    As its ``WatermarkDetector``: the first ``context_width`` tokens of a text are context;
    token t is green iff it is among the first ``int(gamma V)`` entries of ``torch.randperm(V)``
    seeded with ``hashing_key * y_{t-1} mod (2**64 - 1)``
    (:meth:`sims.torch_backend.processors.TransformersSRLProcessor.green_for`); with ``dedup``
    (its ``ignore_repeated_ngrams``) a token counts only at the first occurrence of its
    (context_width + 1)-gram.

    Parameters
    ----------
    rows : list of numpy.ndarray
        Token ids of each text.
    vocab_size : int
        The model's vocabulary size (its config's, :func:`lm_vocab_size`).
    gamma : float
        Its ``greenlist_ratio``.
    hashing_key : int
        Its ``hashing_key``.
    context_width : int, optional
        Its ``context_width``.
    dedup : bool, optional
        Its detector's ``ignore_repeated_ngrams``.

    Returns
    -------
    green, scored : (n, T) bool
        T = longest text minus context_width; padding is unscored.
    """
    from sims.torch_backend.processors import TransformersSRLProcessor

    proc = TransformersSRLProcessor(vocab_size=vocab_size, gamma=gamma, hashing_key=hashing_key)
    c = int(context_width)
    T = max([0, *(len(r) - c for r in rows)])
    green = np.zeros((len(rows), T), dtype=bool)
    scored = np.zeros((len(rows), T), dtype=bool)
    masks: dict[int, np.ndarray] = {}
    for i, r in enumerate(rows):
        seen = set()
        for t in range(c, len(r)):
            prev = int(r[t - 1])
            if prev not in masks:
                masks[prev] = proc.green_for(prev).numpy()
            green[i, t - c] = masks[prev][r[t]]
            gram = tuple(r[t - c : t + 1].tolist())
            scored[i, t - c] = not (dedup and gram in seen)
            seen.add(gram)
    return green, scored


def lm_vocab_size(name: str, tokenizer) -> int:
    """The model's vocabulary size, read without loading weights.

    Its config's ``vocab_size``, which transformers' watermark permutes.

    Parameters
    ----------
    name : str
        ``smollm2`` or a local transformers folder.
    tokenizer : transformers tokenizer
        Its tokenizer, the fallback.

    Returns
    -------
    int
        SmolLM2's known size, the folder's ``config.json`` ``vocab_size``, else ``len(tokenizer)``.
    """
    import json
    import pathlib

    from sims.lm.real.model import SMOLLM2_SHAPE

    if name == "smollm2":
        return SMOLLM2_SHAPE["vocab_size"]
    cfg = pathlib.Path(name) / "config.json"
    if cfg.is_file():
        return int(json.loads(cfg.read_text()).get("vocab_size", len(tokenizer)))
    return len(tokenizer)


def id_text_pieces(ids, tokenizer) -> list[str]:
    """The piece of text each generated token id adds, so that the pieces join to ``tokenizer.decode(ids)``.

    A token's piece is what decoding the ids up to it adds to decoding the ids before it; a token
    that ends in the middle of a character (byte-level vocabularies) adds nothing, and the next
    token carries the whole character.

    Parameters
    ----------
    ids : sequence of int
        Token ids.
    tokenizer : transformers tokenizer
        The tokenizer that decodes them.

    Returns
    -------
    list of str
        One piece per id.
    """
    ids = [int(t) for t in ids]
    pieces, before = [], ""
    for i in range(len(ids)):
        now = tokenizer.decode(ids[: i + 1])
        if now.startswith(before) and not now.endswith("\ufffd"):
            pieces.append(now[len(before):])
            before = now
        else:
            pieces.append("")
    if pieces:
        pieces[-1] += tokenizer.decode(ids)[len(before):]
    return pieces
