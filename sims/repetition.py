"""Repetition and the dual-variable monitor (paper, appendix "Repetition Detection via
Dual-Variable Dynamics").

Ground truth: a position is *repeated* when it lies in an n-gram (n = 4) that already
occurred earlier in the same text.  The monitor sees only DualGA's lambda_t and flags t
when lambda_t has risen by at least ``rise`` over the last ``window`` steps or exceeds
``level``.  The mitigation measured here caps lambda at a lower M (the paper truncates at 15).
"""

from __future__ import annotations

import numpy as np

NGRAM = 4


def repeated_ngram_mask(tokens: np.ndarray, n: int = NGRAM) -> np.ndarray:
    """Boolean (texts, T): positions inside an n-gram seen earlier in the text (-1 pads ignored)."""
    if int(n) < 1:
        raise ValueError(f"n must be in [1, inf); got {n!r}")
    tokens = np.asarray(tokens)
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
    """Share of positions inside a repeated n-gram."""
    return float(repeated_ngram_mask(tokens, n).mean())


def monitor(lam: np.ndarray, *, level: float, rise: float, window: int = 8) -> np.ndarray:
    """Flags from the lambda trace alone: lambda_t >= level, or lambda_t - min(lambda_{t-w..t}) >= rise."""
    lam = np.asarray(lam, dtype=float)
    if int(window) < 1:
        raise ValueError(f"window must be in [1, inf); got {window!r}")
    lo = np.copy(lam)
    for w in range(1, window + 1):
        lo[:, w:] = np.minimum(lo[:, w:], lam[:, :-w])
    return (lam >= level) | (lam - lo >= rise)


def precision_recall(flags: np.ndarray, truth: np.ndarray) -> tuple[float, float]:
    tp = float(np.sum(flags & truth))
    return (tp / max(1.0, float(flags.sum())), tp / max(1.0, float(truth.sum())))


def tune_monitor(lam: np.ndarray, truth: np.ndarray, levels=None, rises=None, window: int = 8) -> dict:
    """Grid search of (level, rise) maximising F1 on one set of texts."""
    levels = np.linspace(2.0, 15.0, 27) if levels is None else levels
    rises = np.linspace(0.25, 5.0, 20) if rises is None else rises
    best = dict(f1=-1.0)
    for lv in levels:
        for r in rises:
            p, rc = precision_recall(monitor(lam, level=lv, rise=r, window=window), truth)
            f1 = 2 * p * rc / (p + rc) if p + rc > 0 else 0.0
            if f1 > best["f1"]:
                best = dict(level=float(lv), rise=float(r), window=window, f1=f1, precision=p, recall=rc)
    return best


def study(lm_name: str = "loopy", *, n: int = 64, T: int = 300, Delta: float = 0.5, caps=(15.0, 6.0, 3.0), key: int = 3) -> dict:
    """Repetition of every algorithm, the monitor tuned on seed 0 and scored on seed 1, and the cap mitigation."""
    from . import detect
    from .generate import generate
    from .lm import get_lm

    lm = get_lm(lm_name)
    out = dict(lm=lm_name, n=n, T=T, Delta=Delta, ngram=NGRAM, repetition={})
    for algo, kw in (("none", {}), ("srl", dict(delta=2.0)), ("dualga", dict(Delta=Delta)), ("ems", {}), ("uw-delta", {}), ("atw", dict(delta=2.0))):
        out["repetition"][algo] = repetition_rate(generate(lm, algo, n=n, T=T, seed=0, key=key, **kw).tokens)
    train = generate(lm, "dualga", n=n, T=T, seed=0, key=key, Delta=Delta)
    test = generate(lm, "dualga", n=n, T=T, seed=1, key=key, Delta=Delta)
    tuned = tune_monitor(train.lam, repeated_ngram_mask(train.tokens))
    p, r = precision_recall(monitor(test.lam, level=tuned["level"], rise=tuned["rise"], window=tuned["window"]), repeated_ngram_mask(test.tokens))
    out["monitor"] = dict(tuned_on_seed0=tuned, test_seed1=dict(precision=p, recall=r, base_rate=float(repeated_ngram_mask(test.tokens).mean())))
    out["mitigation"] = []
    for M in caps:
        g = generate(lm, "dualga", n=n, T=T, seed=1, key=key, Delta=Delta, M=M)
        res = detect.score(g, lm)
        out["mitigation"].append(dict(M=M, repetition=repetition_rate(g.tokens), kl_per_token=float(g.kl.mean()),
                                      realized_dg=float(g.dg.mean()), median_log10_p=float(np.median(res.log10_p))))
    return out
