"""Attacks on text rather than tokens: emoji, typos, homoglyphs, zero-width characters, copy-paste.

Each is an ``attack`` kind with a rate in [0, 1] and a seed, as those of
:mod:`sims.experiments.attacks` (:func:`attack` here takes every kind of both modules; ``sims attack
--kind``), and returns a new :class:`~sims.core.record.Generation` with ``meta["attacks"]`` recording
it and the per-token records nan.

=================  ================================================================================
``emoji``          the emoji attack (Kirchenbauer et al. 2023, Section 7): the LM is asked to write an
                   emoji after each word and the emojis are deleted before detection.  The texts are
                   generated again, token by token, with the same algorithm, key, parameters and
                   prompts: after each word-like token, with probability ``rate``, the emoji's token(s)
                   enter the context (forced: the LM obeys; the watermark's state is not updated at
                   them, its position counter is), and they are removed from the text afterwards.  The
                   token after an emoji was coloured under a context holding the emoji, so its colour
                   under the detector's context is a fresh coin.  Synthetic LM: every token is word-like
                   and the emoji is the token ``V - 1``; a real LM: a token whose text has a letter or
                   digit, the emoji " 😀" as its tokenizer encodes it, the kept text decoded and
                   re-tokenised.  Each step runs the algorithm's NumPy reference step
                   (:mod:`sims.watermarks.registry`), so every algorithm with one is covered.
``typo``           a share ``rate`` of the words gets one typo: two adjacent characters swapped, or
                   one dropped (even odds); the text re-tokenised
``homoglyph``      a share ``rate`` of the words that have a look-alike letter gets one letter replaced
                   by its Cyrillic / Greek look-alike (:data:`sims.core.unicode_text.ATTACK_HOMOGLYPHS`)
``zero-width``     a share ``rate`` of the words of two or more characters gets a zero-width space
                   inside, at a uniform place
``copy-paste``     a watermarked span of ``round((1 - rate) L)`` tokens of each text (L its length, a
                   uniform start) pasted into ``L - round((1 - rate) L)`` tokens of unwatermarked text
                   of the same LM at a uniform place (:func:`sims.experiments.splice.splice`); ``rate``
                   is the unwatermarked share, 0 the watermarked text, 1 no watermark left
=================  ================================================================================

A word is a maximal run of letters, digits and underscores (``\\w+``).  The character attacks act
on the decoded text of an LM with a tokenizer (SmolLM2, a model folder).  An LM without one (a
synthetic LM, a random test model) has no characters: there, a word is a token, and an attacked
token is replaced by uniformly random tokens, one for a typo (the misspelt word is another word),
two for a homoglyph or a zero-width character (the word splits where the odd character sits, as a
subword tokenizer splits it) -- the stand-in that moves the detector as text would, without the
defence: ``sims detect --text`` normalises homoglyphs and zero-width characters away
(:func:`sims.core.unicode_text.normalize_text`), typos stay.
"""

from __future__ import annotations

import re

import numpy as np

from sims.core.record import Generation
from sims.core.unicode_text import ATTACK_HOMOGLYPHS, ZWSP
from sims.experiments import attacks as token_attacks
from sims.experiments.splice import splice
from sims.generation.any_lm import generate

TEXT_KINDS = ("emoji", "typo", "homoglyph", "zero-width", "copy-paste")  #: the attacks on text of this module
KINDS = token_attacks.KINDS + TEXT_KINDS
"""Every attack kind: the token edits of :mod:`sims.experiments.attacks` and the text attacks."""
CHAR_KINDS = ("typo", "homoglyph", "zero-width")  #: the attacks that edit characters (re-tokenised on a real LM)
STANDIN_PIECES = {"typo": 1, "homoglyph": 2, "zero-width": 2}  #: random tokens replacing an attacked token (no tokenizer)
EMOJI = " \U0001F600"  #: what a real LM's tokenizer encodes as the emoji
PLAIN_SEED_OFFSET = 2_000_003  #: copy-paste's unwatermarked host texts: the attack's seed + this
_WORD = re.compile(r"\w+")


def attack(gen: Generation, kind: str, rate: float, seed: int = 0, lm=None) -> Generation:
    """Apply one attack of any kind (:data:`KINDS`) to every text of ``gen``.

    Parameters
    ----------
    gen : Generation
        The texts.
    kind : str
        A kind of :mod:`sims.experiments.attacks` or of this module (module docstring).
    rate : float
        In [0, 1]: the share of words (tokens) attacked; for ``emoji`` the probability of an emoji after
        each word-like token; for ``copy-paste`` the unwatermarked share of the result.
    seed : int
        Seed of the attack.
    lm : LM, optional
        The LM (:func:`sims.get_lm`); default the one the record names (:func:`sims.lm.door.lm_of`).
        Its tokenizer decodes and re-encodes the character attacks; ``emoji`` and ``copy-paste``
        generate with it.

    Returns
    -------
    Generation
        The attacked texts.

    References
    ----------
    Kirchenbauer et al. (2023), "A Watermark for Large Language Models", Section 7 (the emoji attack,
    homoglyphs, zero-width characters); Kirchenbauer et al. (2024), "On the Reliability of Watermarks
    for Large Language Models" (copy-paste attacks).

    Examples
    --------
    >>> import sims
    >>> from sims.experiments.text_attacks import attack
    >>> gen = sims.generate("tiny", "srl", n=2, T=20, seed=0, key=42, delta=2.0, prompt_len=4)
    >>> out = attack(gen, "typo", 0.25, seed=1)
    >>> out.tokens.shape, out.meta["attacks"][-1]["kind"]
    ((2, 20), 'typo')
    """
    if kind not in KINDS + token_attacks.WORST_KINDS:
        raise ValueError(f"kind must be one of {KINDS + token_attacks.WORST_KINDS}; got {kind!r}")
    if kind not in TEXT_KINDS:
        return token_attacks.attack(gen, kind, rate, seed, lm=lm)
    r = float(rate)
    if not 0.0 <= r <= 1.0:
        raise ValueError(f"rate must be in [0, 1]; got {rate!r}")
    if lm is None:
        from sims.lm.door import lm_of

        lm = lm_of(gen.meta)
    if kind == "emoji":
        return emoji_generation(gen, lm, r, seed)
    if kind == "copy-paste":
        return copy_paste(gen, lm, r, seed)
    rng = np.random.default_rng(seed)
    tok = lm.tokenizer
    rows = token_attacks._rows(gen)
    out, changed = [], 0
    for row in rows:
        if tok is None:
            new, c = _standin(row, kind, r, rng, gen.meta["vocab_size"])
        else:
            text, c = attack_text(tok.decode([int(t) for t in row]), kind, r, rng)
            new = np.asarray(tok(text, add_special_tokens=False)["input_ids"], dtype=np.int64)
        out.append(new)
        changed += c
    return token_attacks._pack(gen, out, dict(kind=kind, rate=r, seed=int(seed), n_changed=int(changed)))


def attack_text(text: str, kind: str, rate: float, rng: np.random.Generator) -> tuple[str, int]:
    """One character attack (``typo``, ``homoglyph``, ``zero-width``) on a string.

    ``round(rate * m)`` of its ``m`` eligible words (module docstring), chosen uniformly without replacement,
    get one edit each.

    Parameters
    ----------
    text : str
        The text.
    kind : {"typo", "homoglyph", "zero-width"}
        The attack.
    rate : float
        Share of the eligible words edited, in [0, 1].
    rng : numpy.random.Generator
        The randomness.

    Returns
    -------
    text : str
        The attacked text.
    edited : int
        The number of words edited.

    Raises
    ------
    ValueError
        If ``kind`` is not a character attack.

    Examples
    --------
    >>> import numpy as np
    >>> from sims.experiments.text_attacks import attack_text
    >>> attack_text("the cat sat", "homoglyph", 1.0, np.random.default_rng(0))[1]
    3
    """
    if kind not in CHAR_KINDS:
        raise ValueError(f"kind must be one of {CHAR_KINDS}; got {kind!r}")
    words = [m for m in _WORD.finditer(text) if _eligible(m.group(), kind)]
    k = int(round(float(rate) * len(words)))
    chosen = sorted(rng.choice(len(words), k, replace=False).tolist()) if k else []
    parts, at = [], 0
    for j in chosen:
        m = words[j]
        parts += [text[at : m.start()], _edit(m.group(), kind, rng)]
        at = m.end()
    parts.append(text[at:])
    return "".join(parts), k


def _eligible(word: str, kind: str) -> bool:
    if kind == "homoglyph":
        return any(c in ATTACK_HOMOGLYPHS for c in word)
    return len(word) >= 2


def _edit(word: str, kind: str, rng: np.random.Generator) -> str:
    if kind == "homoglyph":
        pos = [i for i, c in enumerate(word) if c in ATTACK_HOMOGLYPHS]
        i = pos[int(rng.integers(len(pos)))]
        return word[:i] + ATTACK_HOMOGLYPHS[word[i]] + word[i + 1 :]
    if kind == "zero-width":
        i = int(rng.integers(1, len(word)))
        return word[:i] + ZWSP + word[i:]
    i = int(rng.integers(len(word) - 1))
    if rng.random() < 0.5:  # swap characters i and i + 1
        return word[:i] + word[i + 1] + word[i] + word[i + 2 :]
    return word[:i] + word[i + 1 :]  # drop character i


def _standin(row: np.ndarray, kind: str, rate: float, rng: np.random.Generator, V: int) -> tuple[np.ndarray, int]:
    """The token stand-in of a character attack (module docstring): each of ``round(rate * L)`` tokens
    replaced by ``STANDIN_PIECES[kind]`` uniform tokens."""
    m = int(round(rate * len(row)))
    pos = set(rng.choice(len(row), m, replace=False).tolist()) if m else set()
    k = STANDIN_PIECES[kind]
    pieces = [rng.integers(0, V, size=k) if t in pos else row[t : t + 1] for t in range(len(row))]
    return np.concatenate(pieces).astype(np.int64) if pieces else row.copy(), m


def _word_like(lm) -> np.ndarray:
    """(V,) bool: the tokens after which an emoji may come (every token of an LM without a tokenizer)."""
    V = lm.vocab_size
    tok = lm.tokenizer
    if tok is None:
        return np.ones(V, dtype=bool)
    return np.array([any(c.isalnum() for c in tok.decode([k])) for k in range(V)])


def emoji_ids(lm) -> np.ndarray:
    """The emoji's token ids.

    Parameters
    ----------
    lm : sims.lm.door.LM
        The LM.

    Returns
    -------
    numpy.ndarray of int64
        :data:`EMOJI` as the LM's tokenizer encodes it, else the one token ``V - 1``.
    """
    tok = lm.tokenizer
    if tok is None:
        return np.array([lm.vocab_size - 1], dtype=np.int64)
    return np.asarray(tok(EMOJI, add_special_tokens=False)["input_ids"], dtype=np.int64)


def emoji_generation(gen: Generation, lm, rate: float, seed: int) -> Generation:
    """The ``emoji`` attack (module docstring): ``gen``'s texts drawn again with emojis in the context, then removed.

    Parameters
    ----------
    gen : sims.core.record.Generation
        The watermarked texts (their algorithm, key, parameters and prompts are reused).
    lm : sims.lm.door.LM
        The LM they were drawn from.
    rate : float
        Chance of an emoji after each word-like token, in [0, 1].
    seed : int
        Seed of the new draws.

    Returns
    -------
    sims.core.record.Generation
        The texts without the emojis, per-token records nan, the attack in ``meta["attacks"]`` (``n_changed``:
        emojis inserted).

    Raises
    ------
    ValueError
        If the algorithm has no NumPy reference step in the registry.
    """
    from sims.watermarks import registry

    m = gen.meta
    rec = registry.get(m["algo"])
    if rec.reference is None:
        raise ValueError(f"the emoji attack runs the algorithm's NumPy reference step; {m['algo']!r} has none")
    rng = np.random.default_rng(seed)
    V, h, key = int(m["vocab_size"]), int(m["h"]), m["key"]
    word = _word_like(lm)
    emo = emoji_ids(lm)
    prm = dict(m)
    lam1 = prm.get("lam1")
    tok = lm.tokenizer
    rows, inserted = [], 0
    for i in range(gen.n):
        ctx = [int(t) for t in gen.prompt(i)]
        state = (0.0 if lam1 is None else float(lam1), False)
        kept, pos = [], 0
        for _ in range(int(gen.lengths[i])):
            p = lm.next_probs(np.asarray(ctx))
            q, states = rec.reference(p, np.asarray(ctx[-h:], dtype=np.int64), pos, key, state, prm)
            q = np.maximum(q, 0.0)
            y = int(rng.choice(V, p=q / q.sum()))
            state = states[y]
            kept.append(y)
            ctx.append(y)
            pos += 1
            if word[y] and rng.random() < rate:
                ctx.extend(int(e) for e in emo)
                pos += len(emo)
                inserted += 1
        new = np.asarray(kept, dtype=np.int64)
        if tok is not None:  # the text without the emojis, as a detector tokenises it
            new = np.asarray(tok(tok.decode(kept), add_special_tokens=False)["input_ids"], dtype=np.int64)
        rows.append(new)
    return token_attacks._pack(gen, rows, dict(kind="emoji", rate=float(rate), seed=int(seed), n_changed=int(inserted)))


def copy_paste(gen: Generation, lm, rate: float, seed: int) -> Generation:
    """The ``copy-paste`` attack (module docstring): a watermarked span pasted into unwatermarked text.

    Parameters
    ----------
    gen : sims.core.record.Generation
        The watermarked texts.
    lm : sims.lm.door.LM
        Their LM, which draws the unwatermarked host texts.
    rate : float
        The unwatermarked share, in [0, 1]: 0 leaves the texts, 1 leaves no watermarked token.
    seed : int
        Seed of the span, the host texts and the place.

    Returns
    -------
    sims.core.record.Generation
        The spliced texts, per-token records nan, the attack in ``meta["attacks"]`` (``n_changed``: plain
        tokens).

    Raises
    ------
    ValueError
        If the rate keeps no watermarked token of some texts and some of others (texts of unequal lengths).
    """
    m = gen.meta
    rng = np.random.default_rng(seed)
    rows = token_attacks._rows(gen)
    L = np.array([len(r) for r in rows])
    record = dict(kind="copy-paste", rate=float(rate), seed=int(seed))
    if rate == 0.0:
        return token_attacks._pack(gen, rows, dict(record, n_changed=0))
    plain = generate(lm, "none", n=gen.n, T=int(L.max()), seed=int(seed) + PLAIN_SEED_OFFSET, key=key_of(m), h=m["h"], gamma=m.get("gamma"),
                     prompts=lm.null_prompts(gen, gen.n))
    plain_rows = token_attacks._rows(plain)
    keep = np.array([int(round((1.0 - rate) * n)) for n in L])
    if rate == 1.0 or np.any(keep == 0):
        if not np.all(keep == 0):
            raise ValueError(f"rate {rate} keeps no watermarked token of some texts and some of others; use texts of one length")
        host = Generation(gen.tokens, plain.prompts, gen.kl, gen.G, gen.dg, gen.entropy, gen.lam, gen.meta, prompt_lens=plain.prompt_lens)
        return token_attacks._pack(host, [p[:n] for p, n in zip(plain_rows, L)], dict(record, n_changed=int(L.sum())))
    keep = np.minimum(keep, L - 1)  # at least one plain token where the rate asks for some
    start = (rng.random(gen.n) * (L - keep + 1)).astype(np.int64)
    spans = token_attacks._pack(gen, [r[s : s + k] for r, s, k in zip(rows, start, keep)], record)
    spans.meta["attacks"].pop()
    hosts = token_attacks._pack(plain, [p[: n - k] for p, n, k in zip(plain_rows, L, keep)], record)
    out, _ = splice(spans, hosts, int(rng.integers(2**63)))
    out.meta["attacks"][-1] = dict(record, n_changed=int(np.sum(L - keep)))
    return out


def key_of(meta: dict) -> int:
    """The generation's key as :meth:`LM.generate` takes it.

    Parameters
    ----------
    meta : dict
        A generation's meta.

    Returns
    -------
    int
        ``meta["key"]`` as an int.
    """
    return int(meta["key"])
