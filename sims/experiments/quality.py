r"""Quality numbers of generated texts: perplexity, distinct-n, self-BLEU, repetition rate.

What the watermarking toolkits report beside detection (MarkLLM, MarkMyWords, WaterPark), with one
definition for every LM, synthetic or real.  Every number is computed per text from its token ids
(a real LM's tokenizer tokens, not words; padding -1 past a text's length is not a token), and
:func:`quality` summarises each by its mean over the texts of one configuration with a Student-t
interval over texts (:func:`t_interval`, level 0.95 by default).  The book's page "Quality numbers"
(``docs/book/guide/quality.md``) states the same definitions.

=====================  ==========================================================================
perplexity             :math:`\mathrm{PPL}_i = \exp\bigl(-\tfrac{1}{T_i}\sum_{t<T_i}\log p(y_{i,t}\mid x_i, y_{i,<t})\bigr)`
                       under the *unwatermarked* LM p (:func:`perplexity`); the token
                       log-probabilities are the LM's (:meth:`sims.lm.door.LM.token_logprobs`:
                       exact for a synthetic LM, a real LM's teacher-forced logits)
distinct-n             :math:`|\{\text{distinct } n\text{-grams of text } i\}| / (T_i - n + 1)`, n = 1, 2, 3
                       (Li et al. 2016, per text; :func:`distinct_n`)
self-BLEU              BLEU-4 of text i against the other texts of the configuration as references,
                       uniform weights over n = 1..4, clipped counts, brevity penalty with the
                       closest reference length, Chen & Cherry (2014) smoothing 1 (a zero match
                       count becomes epsilon = 0.1); Zhu et al. 2018 (Texygen) (:func:`self_bleu`)
repetition rate        share of a text's tokens that lie inside a 4-gram already seen earlier in the
                       same text: the ground truth of :mod:`sims.experiments.repetition`
                       (:func:`repetition_rates`)
=====================  ==========================================================================

Every function is vectorised over all texts (NumPy sorts and bincounts; the synthetic LM's
log-probabilities by the Numba kernel of :mod:`sims.lm.logprobs`): no Python loop over tokens.
"""

from __future__ import annotations

import numpy as np

from sims.core.record import first_pad_lengths

QUALITY_LEVEL = 0.95  #: the confidence level of the intervals over texts
DISTINCT_ORDERS = (1, 2, 3)  #: the n of distinct-n reported
BLEU_ORDER = 4  #: self-BLEU's largest n-gram order (uniform weights over 1..4)
BLEU_EPSILON = 0.1  #: Chen & Cherry (2014) smoothing 1: a zero match count counts as epsilon
REPETITION_NGRAM = 4  #: the repetition rate's n-gram, as sims.experiments.repetition.NGRAM


def _texts(tokens, lengths=None) -> tuple[np.ndarray, np.ndarray]:
    tokens = np.asarray(tokens, dtype=np.int64)
    if tokens.ndim != 2:
        raise ValueError(f"tokens must be a 2-d array (texts, T); got shape {tokens.shape}")
    n, T = tokens.shape
    if lengths is None:  # a text ends at its first padding entry
        lengths = first_pad_lengths(tokens)
    lengths = np.asarray(lengths, dtype=np.int64)
    if lengths.shape != (n,) or np.any(lengths < 0) or np.any(lengths > T):
        raise ValueError(f"lengths must have shape ({n},) and values in [0, {T}]; got {lengths!r}")
    return tokens, lengths


def ngrams(tokens, lengths, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every n-gram inside each text's length, with ids numbering the distinct n-grams over all texts.

    Parameters
    ----------
    tokens : array_like of int
        (texts, T) token ids (padding -1 past a text's length).
    lengths : array_like of int or None
        Tokens per text; None: every text has T.
    n : int
        The n-gram order, >= 1.

    Returns
    -------
    text, start, gram : numpy.ndarray of int64
        For each n-gram lying wholly inside its text: the text's index, its start position and its id
        (equal ids iff equal n-grams); empty when T < n.

    Raises
    ------
    ValueError
        If ``n`` < 1, ``tokens`` is not 2-d or ``lengths`` has the wrong shape or values outside [0, T].
    """
    if int(n) < 1:
        raise ValueError(f"n must be in [1, inf); got {n!r}")
    n = int(n)
    tokens, lengths = _texts(tokens, lengths)
    N, T = tokens.shape
    if T < n:
        e = np.zeros(0, dtype=np.int64)
        return e, e, e
    win = np.lib.stride_tricks.sliding_window_view(tokens, n, axis=1)  # (N, T - n + 1, n)
    text, pos = np.nonzero(np.arange(T - n + 1)[None, :] + n <= lengths[:, None])
    if text.size == 0:
        e = np.zeros(0, dtype=np.int64)
        return e, e, e
    _, gram = np.unique(win[text, pos], axis=0, return_inverse=True)
    return text.astype(np.int64), pos.astype(np.int64), gram.reshape(-1).astype(np.int64)


def distinct_n(tokens, n: int, lengths=None) -> np.ndarray:
    r"""Distinct-n of each text (Li et al. 2016): its distinct n-grams over its n-grams.

    .. math:: \mathrm{distinct}_n(i) = \frac{|\{y_{i,t:t+n} : 0 \le t \le T_i - n\}|}{T_i - n + 1}

    Parameters
    ----------
    tokens : ndarray (texts, T) of int
        Token ids; -1 pads a text past its length.
    n : int
        The n-gram order, >= 1.
    lengths : ndarray (texts,), optional
        Each text's length (default: up to its first negative entry).

    Returns
    -------
    ndarray (texts,)
        In (0, 1]; nan for a text shorter than n.

    References
    ----------
    Li, Galley, Brockett, Gao and Dolan (2016), "A Diversity-Promoting Objective Function for Neural
    Conversation Models", Section 4.2 (distinct-1 / distinct-2); here per text.

    Examples
    --------
    >>> import numpy as np
    >>> from sims.experiments.quality import distinct_n
    >>> distinct_n(np.array([[1, 2, 1, 2, 3]]), 2).tolist()  # bigrams 12 21 12 23: 3 distinct of 4
    [0.75]
    """
    tokens, lengths = _texts(tokens, lengths)
    text, _, gram = ngrams(tokens, lengths, n)
    N = tokens.shape[0]
    total = np.bincount(text, minlength=N).astype(np.float64)
    G = int(gram.max()) + 1 if gram.size else 1
    distinct = np.bincount(np.unique(text * G + gram) // G, minlength=N).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, distinct / total, np.nan)


def repetition_rates(tokens, n: int = REPETITION_NGRAM, lengths=None) -> np.ndarray:
    r"""Repetition rate of each text: the share of its tokens inside an n-gram that already occurred
    earlier in the same text (the definition of :func:`sims.experiments.repetition.repeated_ngram_mask`).

    .. math:: \mathrm{rep}_n(i) = \frac{1}{T_i}\sum_{s<T_i} 1\{\exists\, t' < t:\ t - n < s \le t,\ y_{i,t-n+1:t} = y_{i,t'-n+1:t'}\}

    Parameters
    ----------
    tokens : ndarray (texts, T) of int
        Token ids; -1 pads a text past its length.
    n : int
        n-gram order (default 4).
    lengths : ndarray (texts,), optional
        Each text's length (default: up to its first negative entry).

    Returns
    -------
    ndarray (texts,)
        In [0, 1]; nan for an empty text.

    References
    ----------
    Towards Better Statistical Understanding of Watermarking LLMs, App. F, 'Repetition Detection via
    Dual-Variable Dynamics' (subsec:body_text_repetition_detection); Welleck et al. (2020), "Neural Text
    Generation with Unlikelihood Training", Section 6 (seq-rep-n counts repeated n-grams instead).

    Examples
    --------
    >>> import numpy as np
    >>> from sims.experiments.quality import repetition_rates
    >>> repetition_rates(np.array([[1, 2, 3, 1, 2, 3, 1, 2]]), n=2).tolist()  # 5 of 8 tokens
    [0.625]
    """
    tokens, lengths = _texts(tokens, lengths)
    N, T = tokens.shape
    text, pos, gram = ngrams(tokens, lengths, n)
    repeated = np.zeros(text.size, dtype=bool)
    if text.size:
        order = np.lexsort((pos, gram, text))  # by text, then gram, then position: the first of each group is new
        key_t, key_g = text[order], gram[order]
        first = np.ones(order.size, dtype=bool)
        first[1:] = (key_t[1:] != key_t[:-1]) | (key_g[1:] != key_g[:-1])
        repeated[order] = ~first
    cover = np.zeros((N, T + 1), dtype=np.int64)  # +1 where a repeated window starts, -1 past its end
    np.add.at(cover, (text[repeated], pos[repeated]), 1)
    np.add.at(cover, (text[repeated], pos[repeated] + int(n)), -1)
    inside = np.cumsum(cover[:, :T], axis=1) > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(lengths > 0, inside.sum(axis=1) / lengths, np.nan)


def self_bleu(tokens, lengths=None, *, max_n: int = BLEU_ORDER, epsilon: float = BLEU_EPSILON) -> np.ndarray:
    r"""Self-BLEU of each text: its BLEU-``max_n`` against every other text of the set as references.

    With :math:`c_i(g)` the count of n-gram g in text i, the clipped matches of order n
    :math:`m_{i,n} = \sum_g \min\bigl(c_i(g), \max_{j \ne i} c_j(g)\bigr)` over the
    :math:`l_{i,n} = T_i - n + 1` n-grams of text i, the smoothed precision
    :math:`p_{i,n} = m_{i,n} / l_{i,n}` (:math:`\epsilon / l_{i,n}` where :math:`m_{i,n} = 0`,
    Chen & Cherry's smoothing 1) and the brevity penalty with the reference length :math:`r_i`
    closest to :math:`T_i` (the shorter on a tie),

    .. math:: \mathrm{SelfBLEU}_i = \min\bigl(1, e^{1 - r_i / T_i}\bigr)\,
              \exp\Bigl(\frac{1}{N_i}\sum_{n=1}^{N_i} \log p_{i,n}\Bigr),\qquad N_i = \min(\text{max\_n}, T_i)

    (the orders a text is long enough for).  Identical texts give 1; texts sharing no token give
    about :math:`\epsilon / T` (close to 0).

    Parameters
    ----------
    tokens : ndarray (texts, T) of int
        At least two texts; -1 pads a text past its length.
    lengths : ndarray (texts,), optional
        Each text's length (default: up to its first negative entry).
    max_n : int
        Largest n-gram order (default 4, uniform weights 1 / max_n).
    epsilon : float
        Smoothing of a zero match count, > 0 (default 0.1).

    Returns
    -------
    ndarray (texts,)
        In (0, 1]; nan for an empty text.

    References
    ----------
    Papineni, Roukos, Ward and Zhu (2002), BLEU, eqs. for p_n and BP; Chen and Cherry (2014), "A
    Systematic Comparison of Smoothing Techniques for Sentence-Level BLEU", smoothing 1; Zhu et al.
    (2018), "Texygen", Self-BLEU.

    Examples
    --------
    >>> import numpy as np
    >>> from sims.experiments.quality import self_bleu
    >>> self_bleu(np.array([[1, 2, 3, 4, 5]] * 3)).tolist()
    [1.0, 1.0, 1.0]
    """
    tokens, lengths = _texts(tokens, lengths)
    N = tokens.shape[0]
    if N < 2:
        raise ValueError(f"self-BLEU needs at least 2 texts (each against the others); got {N}")
    if int(max_n) < 1 or not float(epsilon) > 0.0:
        raise ValueError(f"max_n must be >= 1 and epsilon > 0; got {max_n!r}, {epsilon!r}")
    log_p = np.zeros(N)
    orders = np.minimum(int(max_n), lengths).astype(np.float64)
    for n in range(1, int(max_n) + 1):
        text, _, gram = ngrams(tokens, lengths, n)
        total = np.bincount(text, minlength=N).astype(np.float64)  # l_{i,n}
        matched = np.zeros(N)
        if text.size:
            G = int(gram.max()) + 1
            pair, count = np.unique(gram * N + text, return_counts=True)  # (gram, text) pairs and c_i(g)
            g, t = pair // N, pair % N
            order = np.lexsort((-count, g))  # by gram, the largest count first
            g, t, count = g[order], t[order], count[order]
            start = np.ones(g.size, dtype=bool)
            start[1:] = g[1:] != g[:-1]
            head = np.flatnonzero(start)
            max1 = np.zeros(G, dtype=np.int64)
            arg1 = np.full(G, -1, dtype=np.int64)
            max2 = np.zeros(G, dtype=np.int64)
            max1[g[head]], arg1[g[head]] = count[head], t[head]
            second = head + 1
            ok = (second < g.size) & (second < np.append(head[1:], g.size))  # the group has a second text
            max2[g[head[ok]]] = count[second[ok]]
            other = np.where(t == arg1[g], max2[g], max1[g])  # max_{j != i} c_j(g)
            matched = np.bincount(t, np.minimum(count, other), minlength=N).astype(np.float64)
        has = total > 0
        with np.errstate(divide="ignore", invalid="ignore"):
            p = np.where(matched > 0, matched, float(epsilon)) / total
        log_p += np.where(has, np.log(np.where(has, p, 1.0)), 0.0)
    L = lengths.astype(np.float64)
    diff = np.abs(L[None, :] - L[:, None]) * 2.0 + (L[None, :] > L[:, None])  # closest, the shorter on a tie
    np.fill_diagonal(diff, np.inf)
    r = L[np.argmin(diff, axis=1)]
    with np.errstate(divide="ignore", invalid="ignore"):
        bp = np.where(L > r, 1.0, np.exp(1.0 - r / L))
        return np.where(lengths > 0, bp * np.exp(log_p / orders), np.nan)


def perplexity(logprobs, lengths=None) -> np.ndarray:
    r"""Perplexity of each text from its tokens' natural log-probabilities under the unwatermarked LM.

    .. math:: \mathrm{PPL}_i = \exp\Bigl(-\frac{1}{T_i}\sum_{t<T_i} \log p(y_{i,t} \mid x_i, y_{i,<t})\Bigr)

    Parameters
    ----------
    logprobs : ndarray (texts, T)
        :math:`\log p(y_{i,t} \mid \cdot)`; entries past a text's length are ignored.
    lengths : ndarray (texts,), optional
        Each text's length (default T; or up to the first nan).

    Returns
    -------
    ndarray (texts,)
        In [1, inf); nan for an empty text.  A deterministic LM (every log-probability 0) gives 1.

    References
    ----------
    Jelinek, Mercer, Bahl and Baker (1977), perplexity; Kirchenbauer et al. (2023), "A Watermark for
    Large Language Models", Section 6 (the perplexity of watermarked text under an oracle LM).

    Examples
    --------
    >>> import numpy as np
    >>> from sims.experiments.quality import perplexity
    >>> perplexity(np.log([[0.5, 0.5], [1.0, 0.25]])).tolist()
    [2.0, 2.0]
    """
    lp = np.asarray(logprobs, dtype=np.float64)
    if lp.ndim != 2:
        raise ValueError(f"logprobs must be a 2-d array (texts, T); got shape {lp.shape}")
    n, T = lp.shape
    if lengths is None:
        nan = np.isnan(lp)
        lengths = np.where(nan.any(axis=1), nan.argmax(axis=1), T)
    lengths = np.asarray(lengths, dtype=np.int64)
    inside = np.arange(T)[None, :] < lengths[:, None]
    if np.any(inside & ~(lp <= 0.0)):
        raise ValueError("log-probabilities must be <= 0 (and not nan) within each text's length")
    s = np.where(inside, lp, 0.0).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(lengths > 0, np.exp(-s / lengths), np.nan)


def t_interval(values, level: float = QUALITY_LEVEL) -> tuple[float, float, float]:
    r"""Mean of per-text values and its Student-t interval, nan entries dropped.

    .. math:: \bar x \pm t_{(1 + c)/2,\, m - 1}\, s / \sqrt{m}

    with :math:`s` the sample standard deviation of the :math:`m` values and :math:`c` the level.
    One value: the interval is (nan, nan).

    Parameters
    ----------
    values : array_like
        One number per text.
    level : float
        Confidence level in (0, 1).

    Returns
    -------
    tuple of float
        (mean, lower, upper).

    Examples
    --------
    >>> from sims.experiments.quality import t_interval
    >>> [round(v, 4) for v in t_interval([1.0, 2.0, 3.0])]  # 2 +- 4.3027 / sqrt(3)
    [2.0, -0.4841, 4.4841]
    """
    from scipy.stats import t as student

    if not 0.0 < float(level) < 1.0:
        raise ValueError(f"level must be in (0, 1); got {level!r}")
    x = np.asarray(values, dtype=np.float64).ravel()
    x = x[~np.isnan(x)]
    if x.size == 0:
        return float("nan"), float("nan"), float("nan")
    m = float(x.mean())
    if x.size < 2:
        return m, float("nan"), float("nan")
    half = float(student.ppf((1.0 + level) / 2.0, x.size - 1) * x.std(ddof=1) / np.sqrt(x.size))
    return m, m - half, m + half


def per_text(tokens, lengths=None, logprobs=None) -> dict[str, np.ndarray]:
    """Every quality number of each text (module docstring).

    Parameters
    ----------
    tokens : array_like of int
        (texts, T) token ids.
    lengths : array_like of int or None, optional
        Tokens per text; None: every text has T.
    logprobs : array_like of float or None, optional
        (texts, T) log-probabilities of the tokens under the unwatermarked LM; None: no perplexity.

    Returns
    -------
    dict of str to numpy.ndarray
        (texts,) arrays: ``perplexity`` (with ``logprobs``), ``distinct_1`` .. ``distinct_3``, ``self_bleu``
        (with at least two texts) and ``repetition_rate``.
    """
    tokens, lengths = _texts(tokens, lengths)
    out = {}
    if logprobs is not None:
        out["perplexity"] = perplexity(logprobs, lengths)
    for n in DISTINCT_ORDERS:
        out[f"distinct_{n}"] = distinct_n(tokens, n, lengths)
    if tokens.shape[0] >= 2:
        out["self_bleu"] = self_bleu(tokens, lengths)
    out["repetition_rate"] = repetition_rates(tokens, REPETITION_NGRAM, lengths)
    return out


def summary(values: dict[str, np.ndarray], level: float = QUALITY_LEVEL, prefix: str = "") -> dict:
    """Each per-text quality number as its mean over texts with a Student-t interval (:func:`t_interval`).

    Parameters
    ----------
    values : dict of str to numpy.ndarray
        Per-text values (:func:`per_text`).
    level : float, optional
        Confidence level (default :data:`QUALITY_LEVEL`).
    prefix : str, optional
        Prefix of every key (``"null_"`` for the unwatermarked texts).

    Returns
    -------
    dict
        ``{prefix + name: mean, prefix + name + "_ci95": [lo, hi]}`` (the suffix names the level in percent;
        nan bounds with fewer than two texts).
    """
    out = {}
    tag = f"_ci{round(level * 100):d}"
    for k, v in values.items():
        m, lo, hi = t_interval(v, level)
        out[prefix + k] = m
        out[prefix + k + tag] = [lo, hi]
    return out


def quality(gen, lm, *, null=None, level: float = QUALITY_LEVEL, return_arrays: bool = False) -> dict:
    r"""The quality numbers of one configuration's texts (module docstring), each as its mean over
    texts with a Student-t interval at ``level``.

    Parameters
    ----------
    gen : Generation
        The watermarked texts.
    lm : LM
        The unwatermarked LM (:func:`sims.get_lm`) whose log-probabilities give the perplexity
        (:meth:`sims.lm.door.LM.token_logprobs`).
    null : Generation, optional
        Unwatermarked texts of the same LM: their perplexity is added as ``null_perplexity``, the
        baseline the watermarked perplexity compares with.
    level : float
        Confidence level of the intervals over texts (default 0.95).
    return_arrays : bool
        Add the per-text values under ``"arrays"``.

    Returns
    -------
    dict
        ``perplexity``, ``distinct_1`` .. ``distinct_3``, ``self_bleu``, ``repetition_rate`` (means),
        each with ``<name>_ci95`` = [lower, upper], ``null_perplexity`` likewise with ``null``, and
        ``quality_ci_level``.

    References
    ----------
    Kirchenbauer et al. (2023), Section 6 (perplexity under the unwatermarked model); Li et al. (2016)
    (distinct-n); Zhu et al. (2018) (self-BLEU); see the module docstring for each definition.

    Examples
    --------
    >>> import sims
    >>> from sims.experiments.quality import quality
    >>> lm = sims.get_lm("tiny")
    >>> q = quality(sims.generate(lm, "srl", n=4, T=30, seed=0, delta=2.0), lm)
    >>> sorted(k for k in q if not k.endswith("_ci95"))
    ['distinct_1', 'distinct_2', 'distinct_3', 'perplexity', 'quality_ci_level', 'repetition_rate', 'self_bleu']
    """
    vals = per_text(gen.tokens, gen.lengths, lm.token_logprobs(gen))
    out = summary(vals, level)
    if null is not None:
        out.update(summary({"perplexity": perplexity(lm.token_logprobs(null), null.lengths)}, level, prefix="null_"))
    out["quality_ci_level"] = float(level)
    if return_arrays:
        out["arrays"] = vals
    return out
