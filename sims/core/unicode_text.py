"""Unicode look-alikes and invisible characters: the text attacks' tables and the detector's normalisation.

A homoglyph (Cyrillic ``о`` for Latin ``o``) or a zero-width space inside a word leaves the text
looking the same to a reader and changes its tokens, so every red-green colour after it: a free
evasion of a detector that tokenises the raw text.  :func:`normalize_text` undoes both before
``sims detect --text`` tokenises (on by default, ``--no-normalize`` turns it off), in three passes:

1. remove the invisible characters of :data:`ZERO_WIDTH` (zero-width space, non-joiner, joiner,
   word joiner and invisible operators, byte-order mark, soft hyphen, Mongolian vowel separator,
   left-to-right / right-to-left marks);
2. Unicode NFKC (compatibility composition: full-width letters, ligatures, non-breaking spaces,
   mathematical alphanumerics become their plain forms);
3. map the Cyrillic and Greek letters of :data:`HOMOGLYPHS` that look like a Latin letter to that
   ASCII letter (NFKC leaves them alone: they are letters of their own scripts).

The cost of the defence: genuine Cyrillic or Greek text loses those letters (``--no-normalize``
keeps them), the zero-width joiner of emoji sequences goes, and a clean text holding characters
NFKC changes (``…``, ``ﬁ``) is re-tokenised too; :func:`normalize_text` reports how many
characters each pass changed, and ``detect --text`` prints it.  :data:`ATTACK_HOMOGLYPHS` is the
attack's substitution (one look-alike per ASCII letter that has one), a sub-table of the inverse
of :data:`HOMOGLYPHS`, so normalisation undoes it exactly.
"""

from __future__ import annotations

import unicodedata

ZERO_WIDTH = frozenset("\u200b\u200c\u200d\u2060\u2061\u2062\u2063\u2064\ufeff\u00ad\u180e\u200e\u200f")
"""Invisible characters removed by :func:`normalize_text`."""

ZWSP = "\u200b"
"""The zero-width space the ``zero-width`` attack inserts."""

# look-alike -> ASCII: Cyrillic then Greek, lower and upper case (what NFKC keeps as letters of their script)
HOMOGLYPHS = {
    # Cyrillic
    "а": "a", "е": "e", "о": "o", "р": "p", "с": "c", "у": "y", "х": "x", "і": "i", "ј": "j", "ѕ": "s", "һ": "h",
    "ԁ": "d", "ԛ": "q", "ԝ": "w", "ӏ": "l",
    "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P", "С": "C", "Т": "T", "Х": "X",
    "У": "Y", "І": "I", "Ј": "J", "Ѕ": "S", "Ԛ": "Q", "Ԝ": "W",
    # Greek
    "α": "a", "ο": "o", "ρ": "p", "ν": "v", "ι": "i", "κ": "k", "υ": "u", "χ": "x",
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N", "Ο": "O", "Ρ": "P",
    "Τ": "T", "Υ": "Y", "Χ": "X",
}
"""Cyrillic and Greek letters that look like an ASCII letter, mapped to it."""

ATTACK_HOMOGLYPHS = {
    "a": "а", "e": "е", "o": "о", "p": "р", "c": "с", "y": "у", "x": "х", "i": "і", "j": "ј", "s": "ѕ", "h": "һ", "d": "ԁ",
    "q": "ԛ", "w": "ԝ", "l": "ӏ", "v": "ν", "k": "κ", "u": "υ",
    "A": "А", "B": "В", "E": "Е", "K": "К", "M": "М", "H": "Н", "O": "О", "P": "Р", "C": "С", "T": "Т", "X": "Х", "Y": "У",
    "I": "І", "J": "Ј", "S": "Ѕ", "Q": "Ԛ", "W": "Ԝ", "N": "Ν", "Z": "Ζ",
}
"""The ``homoglyph`` attack's substitution: one look-alike per ASCII letter that has one."""

_DROP = {ord(c): None for c in ZERO_WIDTH}
_MAP = str.maketrans(HOMOGLYPHS)


def normalize_text(text: str) -> tuple[str, dict]:
    """``text`` with invisible characters removed, NFKC applied and look-alike letters mapped to ASCII.

    Parameters
    ----------
    text : str

    Returns
    -------
    str
        The normalised text.
    dict
        Characters changed by each pass: ``zero_width`` (removed), ``nfkc`` (characters that NFKC
        maps to something else, each counted once), ``homoglyph`` (mapped to ASCII), and ``total``.

    References
    ----------
    Unicode Standard Annex #15 (normalisation forms, NFKC); Unicode Technical Standard #39
    (confusables).  The attacks: Kirchenbauer et al. (2023), "A Watermark for Large Language Models",
    Section 7 (homoglyph and zero-width attacks).

    Examples
    --------
    >>> from sims.core.unicode_text import normalize_text
    >>> normalize_text("w\\u043erld\\u200b \\uff21")  # Cyrillic o, a zero-width space, a full-width A
    ('world A', {'zero_width': 1, 'nfkc': 1, 'homoglyph': 1, 'total': 3})
    """
    s1 = text.translate(_DROP)
    zw = len(text) - len(s1)
    nfkc = sum(s1.count(ch) for ch in set(s1) if unicodedata.normalize("NFKC", ch) != ch)
    s2 = unicodedata.normalize("NFKC", s1)
    hg = sum(s2.count(ch) for ch in set(s2) if ch in HOMOGLYPHS)
    out = s2.translate(_MAP)
    return out, dict(zero_width=zw, nfkc=nfkc, homoglyph=hg, total=zw + nfkc + hg)
