r"""Spoof test: was a text that the watermark detector flags written by the owner or by a thief?

A stealing attacker (:mod:`sims.steal`) learns the green list of a (window, token)
pair from how often it saw the pair in the owner's watermarked texts, so its spoofed texts are
green where it saw much and near the base rate :math:`\gamma` where it saw little (Gloaguen et
al., "Discovering Spoofing Attempts on Language Model Watermarks", ICML 2025).  The owner
approximates what the attacker could have seen with a reference corpus of its own watermarked
outputs (:class:`PairCounts`) and asks, per text, whether green tokens sit on frequent pairs.

Statistic
---------
For a text with :math:`n` tokens, colours :math:`g_t \in \{0, 1\}` (the owner's green lists)
and :math:`x_t = \log(1 + \text{reference count of the pair } (c_t, y_t))`, let :math:`r_t` be
the mid-ranks of :math:`x_1..x_n`.  The statistic is the standardised rank correlation

.. math:: Z = \sqrt{n - 1}\;\mathrm{corr}(r, g)

(0 when the text is all green, all red, or its pairs all equally frequent); it is the
Mann-Whitney statistic of "green tokens have more frequent pairs than red ones", scaled so
that it is about N(0, 1) when colours are exchangeable over the positions.

Null distribution
-----------------
Colours are *not* exchangeable in genuine text: a green pair is boosted by the watermark, so
it is also more frequent in the owner's watermarked reference, and genuine texts have
:math:`Z` well above 0 (about +4.6 for 200-token SRL texts; ``docs``).  A permutation null
conditional on the text's colours would therefore flag nearly every genuine text, and
colour-neutral frequencies (of windows alone, or of pairs in unwatermarked text) carry no
signal once the attacker has seen every window (h = 1).  The null is instead *conformal*:
the owner computes :math:`Z` on ``M`` genuine texts of its own that are not in the reference
(``calibration``; :class:`SpoofTest`), and a text's p-value is

.. math:: p = \frac{1 + \#\{j \le M : Z_j \ge Z\}}{M + 1}.

If the tested text and the calibration texts are exchangeable (same model, prompt
distribution, length and key; drawn independently of the reference), :math:`P(p \le \alpha)
\le \alpha` for every :math:`\alpha`, with no distributional assumption on :math:`Z`.  Small p:
greens concentrate on frequent pairs more than in the owner's own texts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import rankdata

from sims.core import windows
from sims.detect.stats import scores


@dataclass
class PairCounts:
    """How often each (window, token) pair occurs in the owner's reference corpus.

    Attributes
    ----------
    h : int
    names : (P,) uint64, sorted (:func:`sims.core.windows.pair_names` of the window names)
    counts : (P,) int64
    """

    h: int
    names: np.ndarray
    counts: np.ndarray

    @classmethod
    def from_texts(cls, tokens, prompts, h: int) -> PairCounts:
        """Counts of the (window, token) pairs of the texts.

        Parameters
        ----------
        tokens : array_like of int
            (n, T) texts, without -1 pads.
        prompts : array_like of int
            (n, P) their prompts, P >= h.
        h : int
            Context width.

        Returns
        -------
        PairCounts

        Raises
        ------
        ValueError
            If ``tokens`` holds -1 pads.
        """
        tokens = np.asarray(tokens, dtype=np.int64)
        if np.any(tokens < 0):
            raise ValueError("reference tokens must not hold -1 pads (texts of unequal length)")
        names, counts = np.unique(windows.pair_names(windows.window_names(tokens, prompts, h), tokens), return_counts=True)
        return cls(int(h), names, counts.astype(np.int64))

    def count(self, names: np.ndarray) -> np.ndarray:
        """Count of each pair name (0 if never seen).

        Parameters
        ----------
        names : numpy.ndarray
            uint64 pair names (:func:`sims.core.windows.pair_names`).

        Returns
        -------
        numpy.ndarray
            int64 counts, of ``names``' shape.
        """
        if self.names.size == 0:
            return np.zeros(np.shape(names), dtype=np.int64)
        i = np.minimum(np.searchsorted(self.names, names), self.names.size - 1)
        return np.where(self.names[i] == names, self.counts[i], 0)


def rank_correlation(x: np.ndarray, g: np.ndarray) -> np.ndarray:
    r""":math:`Z = \sqrt{n-1}\,\mathrm{corr}(\mathrm{midrank}(x), g)` of each row (module docstring).

    Parameters
    ----------
    x : array_like
        (m, n) the per-token statistic (log of one plus the reference count).
    g : array_like
        (m, n) the green indicators.

    Returns
    -------
    numpy.ndarray
        (m,) Z; 0 for a row whose ``g`` or ``x`` is constant, and every row when n < 2.
    """
    x = np.asarray(x, dtype=np.float64)
    g = np.asarray(g, dtype=np.float64)
    n = x.shape[1]
    if n < 2:
        return np.zeros(x.shape[0])
    r = rankdata(x, axis=1)
    r = r - r.mean(axis=1, keepdims=True)
    gc = g - g.mean(axis=1, keepdims=True)
    den = np.sqrt((r * r).sum(axis=1) * (gc * gc).sum(axis=1))
    cov = (r * gc).sum(axis=1)
    return np.where(den > 0, np.sqrt(n - 1) * cov / np.where(den > 0, den, 1.0), 0.0)


def spoof_statistic(tokens, prompts, key: int, gamma: float, reference: PairCounts, *, h: int = 1, kind: str = "bernoulli",
                    vocab_size: int | None = None) -> np.ndarray:
    """:math:`Z` of each text (module docstring): texts of equal length, no -1 pads.

    Parameters
    ----------
    tokens, prompts, h : array_like, array_like, int
        Token layout of :mod:`sims.detect.stats.scores`.
    key, gamma, kind, vocab_size : int, float, str, int or None
        The owner's watermark.
    reference : PairCounts
        The owner's pair counts, same ``h``.

    Returns
    -------
    numpy.ndarray
        (n,) :math:`Z` of each text (:func:`rank_correlation` of the log reference counts and the colours).

    Raises
    ------
    ValueError
        If ``reference`` is not a :class:`PairCounts`, its ``h`` differs, or ``tokens`` holds -1 pads.
    """
    if not isinstance(reference, PairCounts):
        raise ValueError(f"reference must be a PairCounts; got {type(reference).__name__}")
    if reference.h != h:
        raise ValueError(f"h must equal the reference's h={reference.h}; got {h!r}")
    tokens = np.asarray(tokens, dtype=np.int64)
    if np.any(tokens < 0):
        raise ValueError("tokens must not hold -1 pads (texts of unequal length)")
    green, _ = scores.token_scores(tokens, prompts, key, stat="green", gamma=gamma, h=h, green_kind=kind, vocab_size=vocab_size)
    x = np.log1p(reference.count(windows.pair_names(windows.window_names(tokens, prompts, h), tokens)))
    return rank_correlation(x, green > 0.5)


@dataclass
class SpoofTest:
    """The owner's spoof test: its reference pair counts and the sorted :math:`Z` of its calibration texts.

    Build with :meth:`fit`; :meth:`log10_p` tests texts (module docstring).

    Parameters
    ----------
    key : int
        The owner's key.
    gamma : float
        Green-list ratio.
    h : int
        Context width.
    kind : str
        Green-list kind.
    vocab_size : int or None
        Vocabulary size.
    reference : PairCounts
        Counts of the reference texts' pairs.
    calibration : numpy.ndarray
        Sorted :math:`Z` of the calibration texts.
    length : int
        Tokens per calibration text (the null depends on it).
    """

    key: int
    gamma: float
    h: int
    kind: str
    vocab_size: int | None
    reference: PairCounts
    calibration: np.ndarray
    length: int

    @classmethod
    def fit(cls, reference_tokens, reference_prompts, calibration_tokens, calibration_prompts, *, key: int, gamma: float, h: int = 1,
            kind: str = "bernoulli", vocab_size: int | None = None) -> SpoofTest:
        """Count the reference's pairs and compute :math:`Z` on the calibration texts.

        The calibration texts are the owner's genuine texts, not in the reference, of the same length as the texts to
        test.

        Parameters
        ----------
        reference_tokens, reference_prompts : array_like of int
            The owner's reference texts (what it served) and their prompts.
        calibration_tokens, calibration_prompts : array_like of int
            The calibration texts and their prompts.
        key : int
            The owner's key.
        gamma : float
            Green-list ratio.
        h : int, optional
            Context width.
        kind : str, optional
            Green-list kind.
        vocab_size : int, optional
            Vocabulary size.

        Returns
        -------
        SpoofTest

        Raises
        ------
        ValueError
            If there is no calibration text or a text holds -1 pads.
        """
        ref = PairCounts.from_texts(reference_tokens, reference_prompts, h)
        cal = spoof_statistic(calibration_tokens, calibration_prompts, key, gamma, ref, h=h, kind=kind, vocab_size=vocab_size)
        if cal.size < 1:
            raise ValueError("calibration must hold at least 1 text; got 0")
        return cls(int(key), float(gamma), int(h), kind, vocab_size, ref, np.sort(cal), int(np.shape(calibration_tokens)[1]))

    def statistic(self, tokens, prompts) -> np.ndarray:
        """:math:`Z` of each text (:func:`spoof_statistic` under the owner's watermark and reference).

        Parameters
        ----------
        tokens, prompts : array_like of int
            (n, T) texts and (n, P) prompts.

        Returns
        -------
        numpy.ndarray
            (n,) Z.
        """
        return spoof_statistic(tokens, prompts, self.key, self.gamma, self.reference, h=self.h, kind=self.kind, vocab_size=self.vocab_size)

    def log10_p(self, tokens, prompts) -> np.ndarray:
        """log10 of the conformal p-value of each text (small: spoofed); texts of the calibration's length.

        Parameters
        ----------
        tokens, prompts : array_like of int
            (n, T) texts and (n, P) prompts.

        Returns
        -------
        numpy.ndarray
            (n,) log10 p-values (:func:`conformal_log10_p`).

        Raises
        ------
        ValueError
            If the texts' length differs from the calibration texts'.
        """
        if np.shape(tokens)[1] != self.length:
            raise ValueError(f"texts must have the calibration texts' length {self.length} (the null depends on it); got {np.shape(tokens)[1]}")
        return conformal_log10_p(self.statistic(tokens, prompts), self.calibration)


def conformal_log10_p(z: np.ndarray, calibration: np.ndarray) -> np.ndarray:
    r"""log10 of the conformal p-value :math:`(1 + \#\{j : Z_j \ge z\}) / (M + 1)` of each z.

    Parameters
    ----------
    z : array_like
        Statistics of the texts tested.
    calibration : numpy.ndarray
        The M calibration statistics, sorted ascending.

    Returns
    -------
    numpy.ndarray
        log10 p-values, in [log10(1 / (M + 1)), 0] (small: spoofed).
    """
    M = calibration.size
    at_least = M - np.searchsorted(calibration, np.asarray(z, dtype=np.float64), side="left")
    return np.log10((1.0 + at_least) / (M + 1.0))
