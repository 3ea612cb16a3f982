"""Repetition and the dual-variable monitor (paper, appendix "Repetition Detection via
Dual-Variable Dynamics").

Ground truth: a position is *repeated* when it lies in an n-gram (n = ``NGRAM`` = 4) that
already occurred earlier in the same text.  The monitor sees only DualGA's trace
:math:`\\lambda_t` and flags t when :math:`\\lambda_t` has risen by at least ``rise`` over
the last ``window`` steps or exceeds ``level``.  Why it can work: in a loop the LM is near
deterministic, so :math:`\\mathrm{DG}_t \\approx 0` whatever the boost and the dual update
:math:`\\lambda_{t+1} = \\Pi_{[0,M]}(\\lambda_t + \\eta(\\Delta - \\mathrm{DG}_t))` climbs by
about :math:`\\eta\\Delta` per step for as long as the loop lasts.

Which LM loops: the ``loopy`` preset's near-deterministic contexts (probability ``p_loop``
= 0.15, V = 4096) rarely chain into a cycle under sampling -- 0.5 % of tokens of the
unwatermarked LM lie in a repeated 4-gram -- so :func:`loop_lm` raises ``p_loop`` and shrinks
V (default 0.3 and 1024: 39 % of unwatermarked tokens repeated), the regime of a real LM
that falls into loops.  The mitigation measured here is a lower projection bound M on
lambda (``generate(..., M=...)``; the paper truncates at 15).
"""

from __future__ import annotations

import numpy as np

from sims.lm.synthetic import LOOP_P, LOOP_V, loop_lm

#: The n of the repetition ground truth: a position is repeated when it lies in an n-gram already seen earlier in
#: the same text.
NGRAM = 4


def _texts(tokens) -> np.ndarray:
    tokens = np.asarray(tokens)
    if tokens.ndim != 2:
        raise ValueError(f"tokens must be a 2-d array (texts, T); got shape {tokens.shape}")
    return tokens


def repeated_ngram_mask(tokens: np.ndarray, n: int = NGRAM) -> np.ndarray:
    """Positions inside an n-gram that already occurred earlier in the same text.

    .. math::
        R_{i,s} = 1\\{\\exists\\, t,\\ t' < t:\\ t - n < s \\le t,\\ y_{i,t-n+1:t} = y_{i,t'-n+1:t'}\\}

    Parameters
    ----------
    tokens : ndarray (texts, T) of int
        Token ids; negative entries are padding at the end of a row (attacked texts) and
        are never repeated.
    n : int
        n-gram length, >= 1.

    Returns
    -------
    ndarray (texts, T) of bool

    References
    ----------
    Towards Better Statistical Understanding of Watermarking LLMs, App. F, 'Repetition Detection via
    Dual-Variable Dynamics' (subsec:body_text_repetition_detection).

    Examples
    --------
    >>> import numpy as np
    >>> from sims import repeated_ngram_mask
    >>> repeated_ngram_mask(np.array([[1, 2, 3, 1, 2]]), n=2).tolist()
    [[False, False, False, True, True]]
    """
    if int(n) < 1:
        raise ValueError(f"n must be in [1, inf); got {n!r}")
    n = int(n)
    tokens = _texts(tokens)
    out = np.zeros(tokens.shape, dtype=bool)
    for i, row in enumerate(tokens):
        row = row[row >= 0]
        seen = set()
        for t in range(n - 1, len(row)):
            g = tuple(row[t - n + 1 : t + 1].tolist())
            if g in seen:
                out[i, t - n + 1 : t + 1] = True
            seen.add(g)
    return out


def repetition_rate(tokens: np.ndarray, n: int = NGRAM) -> float:
    """Share of (non-padding) positions inside a repeated n-gram (:func:`repeated_ngram_mask`).

    Parameters
    ----------
    tokens : ndarray (texts, T) of int
        Token ids (negative: padding).
    n : int
        n-gram length, >= 1.

    Returns
    -------
    float
        The share, in [0, 1].

    References
    ----------
    Towards Better Statistical Understanding of Watermarking LLMs, App. F, 'Repetition Detection via
    Dual-Variable Dynamics' (subsec:body_text_repetition_detection).

    Examples
    --------
    >>> import numpy as np
    >>> from sims import repetition_rate
    >>> round(repetition_rate(np.array([[1, 2, 3, 1, 2, 3, 1, 2]]), n=2), 4)
    0.625
    """
    tokens = _texts(tokens)
    return float(repeated_ngram_mask(tokens, n).sum() / max(1, int(np.sum(tokens >= 0))))


def monitor(lam: np.ndarray, *, level: float, rise: float, window: int = 8) -> np.ndarray:
    """Flag repetition from the trace of lambda alone.

    .. math::
        F_t = 1\\{\\lambda_t \\ge \\text{level}\\} \\lor
              1\\{\\lambda_t - \\min_{\\max(0, t-w) \\le s \\le t} \\lambda_s \\ge \\text{rise}\\}

    Parameters
    ----------
    lam : ndarray (texts, T)
        DualGA's lambda_t (``Generation.lam``); nan entries are never flagged.
    level, rise : float
        Thresholds (tune them with :func:`tune_monitor` on other texts).
    window : int
        w >= 1, steps looked back for the rise.

    Returns
    -------
    ndarray (texts, T) of bool
        The flags.

    References
    ----------
    Towards Better Statistical Understanding of Watermarking LLMs, App. F, 'Repetition Detection via
    Dual-Variable Dynamics' (subsec:body_text_repetition_detection).

    Examples
    --------
    >>> import numpy as np
    >>> from sims import lambda_monitor
    >>> lambda_monitor(np.array([[0.5, 0.6, 2.0, 3.5, 3.6]]), level=3.0, rise=1.0, window=2).tolist()
    [[False, False, True, True, True]]
    """
    lam = np.asarray(lam, dtype=float)
    if lam.ndim != 2:
        raise ValueError(f"lam must be a 2-d array (texts, T); got shape {lam.shape}")
    if int(window) < 1:
        raise ValueError(f"window must be in [1, inf); got {window!r}")
    lo = np.copy(lam)
    for w in range(1, min(int(window), lam.shape[1] - 1) + 1):
        lo[:, w:] = np.fmin(lo[:, w:], lam[:, :-w])
    with np.errstate(invalid="ignore"):
        return (lam >= level) | (lam - lo >= rise)


def precision_recall(flags: np.ndarray, truth: np.ndarray) -> tuple[float, float]:
    """Precision TP / #flagged and recall TP / #true (each 0 when its denominator is 0).

    Parameters
    ----------
    flags : array_like of bool
        The positions flagged (:func:`monitor`).
    truth : array_like of bool
        The repeated positions (:func:`repeated_ngram_mask`), of the same shape.

    Returns
    -------
    precision, recall : float

    Raises
    ------
    ValueError
        If the shapes differ.
    """
    flags, truth = np.asarray(flags, dtype=bool), np.asarray(truth, dtype=bool)
    if flags.shape != truth.shape:
        raise ValueError(f"flags and truth must have the same shape; got {flags.shape} and {truth.shape}")
    tp = float(np.sum(flags & truth))
    return (tp / max(1.0, float(flags.sum())), tp / max(1.0, float(truth.sum())))


def tune_monitor(lam: np.ndarray, truth: np.ndarray, levels=None, rises=None, window: int = 8) -> dict:
    r"""Grid search of the monitor's (level, rise) maximising F1 = 2PR / (P + R) against ``truth`` on one set of texts.

    Parameters
    ----------
    lam : numpy.ndarray
        (n, T) DualGA's dual-variable trace :math:`\lambda_t`.
    truth : numpy.ndarray
        (n, T) bool, the repeated positions.
    levels, rises : array_like or None, optional
        The grids; default level in linspace(2, 15, 27), rise in linspace(0.25, 5, 20).
    window : int, optional
        The monitor's look-back window (fixed, not searched).

    Returns
    -------
    dict
        ``level``, ``rise``, ``window``, ``f1``, ``precision``, ``recall`` of the best pair (the first on ties).
    """
    levels = np.linspace(2.0, 15.0, 27) if levels is None else np.asarray(levels, dtype=float)
    rises = np.linspace(0.25, 5.0, 20) if rises is None else np.asarray(rises, dtype=float)
    best = dict(f1=-1.0)
    for lv in levels:
        for r in rises:
            p, rc = precision_recall(monitor(lam, level=lv, rise=r, window=window), truth)
            f1 = 2 * p * rc / (p + rc) if p + rc > 0 else 0.0
            if f1 > best["f1"]:
                best = dict(level=float(lv), rise=float(r), window=int(window), f1=f1, precision=p, recall=rc)
    return best


#: The algorithms (with their parameters) whose repetition rate :func:`study` measures on the looping LM; DualGA
#: is run at the study's target ``Delta``.
ALGOS_STUDIED = (("none", {}), ("srl", dict(delta=2.0)), ("dualga", {}), ("ems", {}), ("uw-delta", {}), ("atw", dict(delta=2.0)))


def study(*, vocab_size: int = LOOP_V, p_loop: float = LOOP_P, n: int = 64, T: int = 300, Delta: float = 0.2,
          caps=(15.0, 6.0, 4.0, 3.0), key: int = 3) -> dict:
    """Repetition of every algorithm, the lambda monitor and the cap mitigation on the looping LM.

    Everything runs on :func:`loop_lm` ``(vocab_size, p_loop)``: the repetition rate of each of
    :data:`ALGOS_STUDIED` (seed 0); the monitor tuned on DualGA's texts of seed 0 (:func:`tune_monitor`) and
    scored on those of seed 1; and DualGA at target ``Delta`` with each projection bound M of ``caps`` (seed 1).

    Parameters
    ----------
    vocab_size : int, optional
        The looping LM's vocabulary size.
    p_loop : float, optional
        The looping LM's loop probability.
    n, T : int, optional
        Texts per run and tokens per text.
    Delta : float, optional
        DualGA's DG target.
    caps : sequence of float, optional
        The projection bounds M of lambda tried as mitigation (15 is the paper's).
    key : int, optional
        Watermark key.

    Returns
    -------
    dict
        The LM and settings; ``repetition`` (algorithm -> repetition rate); ``monitor`` (the tuned pair,
        precision and recall on seed 1 with the base rate, mean lambda at repeated and other positions);
        ``mitigation``: per M, the repetition rate, KL per token, realised DG, median log10 p and TPR at FPR 1e-4.
    """
    from sims.detect.families import detectors
    from sims.watermarks import registry
    from sims.watermarks.generate import generate_synthetic

    lm = loop_lm(vocab_size, p_loop)
    out = dict(lm=lm.name, vocab_size=lm.vocab_size, p_loop=float(p_loop), n=n, T=T, Delta=Delta, ngram=NGRAM, key=key,
               repetition={})
    for algo, kw in ALGOS_STUDIED:
        kw = dict(kw, Delta=Delta) if "Delta" in registry.get(algo).params else kw  # DualGA at the study's target
        out["repetition"][algo] = repetition_rate(generate_synthetic(lm, algo, n=n, T=T, seed=0, key=key, **kw).tokens)
    train = generate_synthetic(lm, "dualga", n=n, T=T, seed=0, key=key, Delta=Delta)
    test = generate_synthetic(lm, "dualga", n=n, T=T, seed=1, key=key, Delta=Delta)
    truth = repeated_ngram_mask(test.tokens)
    tuned = tune_monitor(train.lam, repeated_ngram_mask(train.tokens))
    p, r = precision_recall(monitor(test.lam, level=tuned["level"], rise=tuned["rise"], window=tuned["window"]), truth)
    out["monitor"] = dict(tuned_on_seed0=tuned, test_seed1=dict(precision=p, recall=r, base_rate=float(truth.mean())),
                          mean_lam_repeated=float(test.lam[truth].mean()) if truth.any() else float("nan"),
                          mean_lam_other=float(test.lam[~truth].mean()))
    out["mitigation"] = []
    for M in caps:
        g = generate_synthetic(lm, "dualga", n=n, T=T, seed=1, key=key, Delta=Delta, M=M)
        res = detectors.score(g, lm)
        out["mitigation"].append(dict(M=float(M), repetition=repetition_rate(g.tokens), kl_per_token=float(g.kl.mean()),
                                      realized_dg=float(g.dg.mean()), median_log10_p=float(np.median(res.log10_p)),
                                      tpr_at_1e_4=float(np.mean(res.log10_p <= -4.0))))
    return out
