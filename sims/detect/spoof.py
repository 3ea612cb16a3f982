r"""Spoof test: was a text that the watermark detector flags written by the owner or by a thief?

A stealing attacker (:mod:`sims.experiments.steal`) knows the green lists of windows it saw
often and guesses those of rare windows, so its spoofed texts are green in frequent windows
and at the base rate :math:`\gamma` in rare ones.  The owner's generator boosts every window
alike.  Given the owner's count of each window in a reference corpus (its own texts,
:class:`WindowCounts`), split a text's tokens into those after a *frequent* window (count
:math:`\ge` ``min_count``) and the others, with :math:`n_f, g_f` and :math:`n_r, g_r` tokens
and green tokens.  Conditionally on the text's green total :math:`g = g_f + g_r`, if the
colours of the :math:`n = n_f + n_r` tokens are exchangeable (the owner's text: each token
green with a probability that does not depend on how frequent its window is),
:math:`g_f` is hypergeometric, and the one-sided Fisher exact p-value is

.. math:: p = P(X \ge g_f),\qquad X \sim \mathrm{Hypergeom}(n, g, n_f).

Small p means too many greens in frequent windows for a genuine text.

With ``pairs=True`` the unit is the (window, token) pair instead of the window: a token is
"frequent" if its pair occurs at least ``min_count`` times in the reference.  The reference
should then be unwatermarked text of the owner's model (which the owner can generate at will):
pair counts in watermarked text would be green-enriched and break exchangeability.  A spoofer
can only boost pairs it has seen, so its greens sit on common pairs and its uncommon pairs are
green at rate :math:`\gamma`, while a genuine text's watermark lifts every pair alike.  The test's size is
exact under exchangeability; on genuine watermarked text the green probability depends on the
step's entropy, which can correlate with window frequency, so its false-positive rate is
measured, not assumed (:func:`sims.experiments.steal.spoof_test_power`).  A text with no token
in one of the two groups gets p = 1.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sims.core import windows
from sims.detect import scores
from sims.detect.nulls import LN10


@dataclass
class WindowCounts:
    """How often each context window occurs in a reference corpus.

    Attributes
    ----------
    h : int
    names : (C,) uint64, sorted (:func:`sims.core.windows.window_names`)
    counts : (C,) int64
    median : int
        The token-weighted median count (the count of the window of the median position),
        the default frequent/rare split.
    """

    h: int
    names: np.ndarray
    counts: np.ndarray
    median: int
    pairs: bool = False

    @classmethod
    def from_texts(cls, tokens, prompts, h: int, pairs: bool = False) -> WindowCounts:
        """Counts of the windows (or, with ``pairs``, of the (window, token) pairs) of the texts."""
        names = windows.window_names(tokens, prompts, h)
        if pairs:
            names = windows.pair_names(names, tokens)
        names, counts = np.unique(names, return_counts=True)
        med = int(np.median(np.repeat(counts, counts))) if counts.size else 1
        return cls(int(h), names, counts.astype(np.int64), med, bool(pairs))

    def count(self, names: np.ndarray) -> np.ndarray:
        """Count of each window name (0 if never seen)."""
        if self.names.size == 0:
            return np.zeros(np.shape(names), dtype=np.int64)
        i = np.minimum(np.searchsorted(self.names, names), self.names.size - 1)
        return np.where(self.names[i] == names, self.counts[i], 0)


@dataclass
class SpoofTestResult:
    """Per text: tokens and greens after frequent (``n_f``, ``g_f``) and rare (``n_r``, ``g_r``)
    windows, and the log10 Fisher p-value (0 where a group is empty)."""

    n_f: np.ndarray
    g_f: np.ndarray
    n_r: np.ndarray
    g_r: np.ndarray
    log10_p: np.ndarray


def spoof_test(tokens, prompts, key: int, gamma: float, reference: WindowCounts, *, h: int = 1, min_count: int | None = None,
               kind: str = "bernoulli", vocab_size: int | None = None) -> SpoofTestResult:
    """One-sided Fisher test of "more greens after frequent windows" (module docstring).

    Parameters
    ----------
    tokens, prompts, h : token layout of :mod:`sims.detect.scores` (no -1 pads).
    key, gamma, kind, vocab_size : the owner's watermark.
    reference : WindowCounts
        The owner's window (or pair) counts, same ``h``.
    min_count : int, optional
        Frequent iff the window's reference count is at least this (default: ``reference.median``).
    """
    from scipy.stats import hypergeom

    if not isinstance(reference, WindowCounts):
        raise ValueError(f"reference must be a WindowCounts; got {type(reference).__name__}")
    if reference.h != h:
        raise ValueError(f"h must equal the reference's h={reference.h}; got {h!r}")
    thr = reference.median if min_count is None else int(min_count)
    if thr < 1:
        raise ValueError(f"min_count must be in [1, inf); got {min_count!r}")
    green, scored = scores.token_scores(tokens, prompts, key, stat="green", gamma=gamma, h=h, green_kind=kind, vocab_size=vocab_size)
    tokens = np.asarray(tokens, dtype=np.int64)
    if np.any(tokens < 0):
        raise ValueError("tokens must not hold -1 pads (texts of unequal length)")
    names = windows.window_names(tokens, prompts, h)
    freq = reference.count(windows.pair_names(names, tokens) if reference.pairs else names) >= thr
    g = green > 0.5
    n_f, n_r = (scored & freq).sum(axis=1), (scored & ~freq).sum(axis=1)
    g_f, g_r = (g & freq).sum(axis=1), (g & ~freq).sum(axis=1)
    logp = hypergeom.logsf(g_f - 1, n_f + n_r, g_f + g_r, n_f) / LN10
    logp = np.where((n_f == 0) | (n_r == 0), 0.0, np.minimum(logp, 0.0))
    return SpoofTestResult(n_f, g_f, n_r, g_r, logp)
