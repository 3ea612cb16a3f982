"""Generate + detect: the paper's Table exp_performance quantities on any LM (:func:`sims.get_lm`), and the
empirical check that the exact tests' false-positive rate is what they promise.

TPR at a fixed FPR alpha: a text is detected iff its exact p-value is <= alpha, so the
threshold comes from the exact null (binomial / Gamma / AutoCov / Poisson-binomial tails of
:mod:`sims.detect.stats.nulls` and :mod:`sims.detect.stats.scores`) and the test's size is at most alpha whatever the
text length.  The promise is then checked on unwatermarked texts of the same LM (seed
offset ``NULL_SEED_OFFSET``, the same key): their empirical rejection rate with its exact
Clopper-Pearson interval.
"""

from __future__ import annotations

import time

import numpy as np

from sims.core import defaults
from sims.core.progress import progress
from sims.detect import families
from sims.detect.families import detectors
from sims.detect.stats import scores as detect
from sims.experiments.quality import quality
from sims.generation.any_lm import generate
from sims.lm.door import get_lm
from sims.watermarks import registry

#: The false-positive rates at which :func:`evaluate` reports the TPR (``tpr_at_1e-4``, ``tpr_at_1e-6``) and the
#: empirical FPR of the unwatermarked texts.
FPRS = (1e-4, 1e-6)
NULL_SEED_OFFSET = 1_000_003  #: unwatermarked texts use seed + this offset
#: Confidence level of the Clopper-Pearson intervals of the TPR and the empirical FPR.
CI_LEVEL = 0.95
TTD_LEVEL = 1e-4  #: tokens_to_detect: prefix p-value at or below this level from then on


def _fpr_key(a: float) -> str:
    return f"{a:.0e}".replace("e-0", "e-")


def clopper_pearson(k: int, n: int, level: float = CI_LEVEL) -> tuple[float, float]:
    r"""Exact (Clopper-Pearson) confidence interval for a binomial proportion k / n.

    .. math:: \left[B^{-1}\!\left(\tfrac{1-c}{2}; k, n-k+1\right),\ B^{-1}\!\left(\tfrac{1+c}{2}; k+1, n-k\right)\right]

    with :math:`B^{-1}` the beta quantile and :math:`c` the level (lower end 0 if k = 0,
    upper end 1 if k = n).

    Parameters
    ----------
    k : int
        Successes, in [0, n].
    n : int
        Trials, >= 1.
    level : float
        Confidence level in (0, 1).

    Returns
    -------
    tuple of float
        (lower, upper).

    References
    ----------
    Clopper and Pearson (1934); the intervals of the TPR / FPR columns of Towards Better Statistical
    Understanding of Watermarking LLMs, Table 1 (Tab:exp_performance).

    Examples
    --------
    >>> from sims import clopper_pearson
    >>> [round(x, 4) for x in clopper_pearson(3, 10)]
    [0.0667, 0.6525]
    """
    from scipy.stats import beta

    if not (0 <= int(k) <= int(n)) or int(n) < 1:
        raise ValueError(f"k must be in [0, n] with n >= 1; got k={k}, n={n}")
    if not (0.0 < level < 1.0):
        raise ValueError(f"level must be in (0, 1); got {level!r}")
    a = (1 - level) / 2
    lo = 0.0 if k == 0 else float(beta.ppf(a, k, n - k + 1))
    hi = 1.0 if k == n else float(beta.ppf(1 - a, k + 1, n - k))
    return lo, hi


def _rates(log10_p: np.ndarray, prefix: str, level: float = CI_LEVEL) -> dict:
    """Rejection rate at each level of FPRS with its Clopper-Pearson interval."""
    out = {}
    for a in FPRS:
        k = int(np.sum(log10_p <= np.log10(a)))
        out[f"{prefix}_at_{_fpr_key(a)}"] = k / log10_p.size
        out[f"{prefix}_at_{_fpr_key(a)}_ci{int(level * 100)}"] = clopper_pearson(k, log10_p.size, level)
    return out


def evaluate(lm, algo: str, *, n: int = 100, T: int = 200, seed: int = 0, key: int = defaults.KEY, dedup: bool = False,
             n_null: int | None = None, return_arrays: bool = False, prompts=None, batch: int | None = None, engine: str | None = None,
             **params) -> dict:
    """Watermarked and unwatermarked texts of one LM, scored with the key: distortion and detection.

    Parameters
    ----------
    lm : str, LM or SyntheticLM
        Any LM (:func:`sims.get_lm`: a synthetic preset, a fitted ``.npz``, SmolLM2, a random
        test model, a model folder) or the opened object.
    algo : one of :data:`sims.watermarks.generate.ALGOS` except "none" (:mod:`sims.watermarks.registry`)
    n, T, seed, key, n_null : int
        ``n`` watermarked texts of ``T`` tokens (:func:`sims.watermarks.generate.generate_synthetic`, seed ``seed``);
        ``n_null`` (default ``n``) unwatermarked texts of the same LM with seed
        ``seed + NULL_SEED_OFFSET``, scored with the same key and detector (a real LM's after the
        watermarked texts' prompts, cycled: :meth:`sims.lm.door.LM.null_prompts`).  Defaults:
        ``sims evaluate``'s 100 texts of 200 tokens, seed 0, ``defaults.KEY``.
    dedup : bool
        Score each (context, token) pair once (red-green and EMS).
    return_arrays : bool
        Add per-text arrays (kl, dg, log10_p, z, null_log10_p, tokens_to_detect) under "arrays".
    prompts, batch, engine : optional
        A real LM's prompt set (default lfqa), batch and engine (:func:`sims.generate`).
    **params :
        The algorithm's parameters (gamma, delta, Delta, eta, lam1, tau, alpha, h, green_kind, M); one
        it does not take is refused.

    Returns
    -------
    dict with kl_per_token (exact KL(q_t || p_t), mean over all tokens), realized_dg (mean
    q_G - G), mean_entropy (nats), tpr_at_1e-4 / tpr_at_1e-6 (p <= alpha) with Clopper-Pearson
    95% intervals, empirical_fpr_at_1e-4 / 1e-6 on the unwatermarked texts with their
    intervals, median_log10_p, z_mean, tokens_to_detect_median (prefix p <= 1e-4 from then
    on; red-green and EMS; None if fewer than half the texts get there), the detector's name
    and null, timings; and the quality numbers of :func:`sims.experiments.quality.quality`
    (perplexity under the unwatermarked LM and that of the unwatermarked texts, distinct-1/2/3,
    self-BLEU, repetition rate, each a mean over texts with its 95% t interval).

    References
    ----------
    Towards Better Statistical Understanding of Watermarking LLMs, Section 4, Table 1 (Tab:exp_performance): TPR at fixed FPR and KL per token.

    Examples
    --------
    >>> import sims
    >>> r = sims.evaluate("tiny", "srl", n=4, T=30, seed=0, gamma=0.25, delta=2.0)
    >>> r["algo"], r["n"], 0.0 <= r["tpr_at_1e-4"] <= 1.0
    ('srl', 4, True)
    """
    check_watermark(algo, **params)
    if int(n) < 1 or int(T) < 1:
        raise ValueError(f"n and T must be in [1, inf); got n={n}, T={T}")
    model = get_lm(lm)
    n_null = int(n) if n_null is None else int(n_null)
    if n_null < 1:
        raise ValueError(f"n_null must be in [1, inf); got {n_null}")
    opts = {k: v for k, v in dict(batch=batch, engine=engine).items() if v is not None}
    with progress(5, f"evaluate {model.name}/{algo}") as bar:
        t0 = time.perf_counter()
        gen = generate(model, algo, n=n, T=T, seed=seed, key=key, prompts=prompts, **opts, **params)
        gen_s = time.perf_counter() - t0
        bar.update()
        null = generate(model, "none", n=n_null, T=T, seed=seed + NULL_SEED_OFFSET, key=key, h=gen.meta["h"], gamma=gen.meta.get("gamma"),
                              green_kind=gen.meta.get("green_kind", defaults.GREEN_KIND), prompts=model.null_prompts(gen, n_null), **opts)
        null.meta["key"] = gen.meta["key"]  # scored with the watermark's key (a SipHash key as the generation stored it)
        bar.update()
        t0 = time.perf_counter()
        res = detectors.score(gen, model, dedup=dedup)
        det_s = time.perf_counter() - t0
        bar.update()
        res0 = detectors.score(null, model, dedup=dedup, algo=algo, params=gen.meta)
        bar.update()
        ttd = redgreen_ttd(gen, dedup, lm=model)
        bar.update()
    qual = quality(gen, model, null=null, return_arrays=return_arrays)  # perplexity, distinct-n, self-BLEU, repetition (sims.experiments.quality)
    return summarize(gen, res, res0, ttd, lm=model.name, n_null=n_null, seed=seed, key=key, dedup=dedup, gen_seconds=gen_s,
                     det_seconds=det_s, return_arrays=return_arrays, quality=qual)

def check_watermark(algo: str, **params) -> None:
    """Refuse an algorithm that is no watermark, a parameter it does not take and a value out of its range.

    Checked before any text is drawn.

    Parameters
    ----------
    algo : str
        A registry name (:func:`sims.watermarks.registry.names`).
    **params
        The algorithm's parameters as given.

    Raises
    ------
    ValueError
        If ``algo`` is unknown or is the control ``"none"``, takes no parameter of that name
        (:func:`sims.watermarks.registry.check_params`) or a value is out of its range
        (:func:`sims.watermarks.registry.resolve_params`).
    """
    registry.get(algo)
    if algo == registry.NULL:
        raise ValueError(f"algo must be one of {tuple(a for a in registry.names() if a != registry.NULL)}; got {algo!r}")
    registry.check_params(algo, **params)
    registry.resolve_params(algo, **{k: v for k, v in params.items() if k in registry.PARAMS})


def redgreen_ttd(gen, dedup: bool = False, lm=None) -> np.ndarray | None:
    """Tokens to detect of each text (the detector families with exact prefix p-values: red-green, entropy-gated, EMS).

    The first prefix length from which the prefix p-value of the algorithm's own detector stays at or below
    :data:`TTD_LEVEL`: the family's prefix curve (:meth:`sims.detect.families.DetectorFamily.prefix_curve`), so
    SWEET's counts only its gated positions, as its fixed-length score does.

    Parameters
    ----------
    gen : sims.core.record.Generation
        Watermarked texts.
    dedup : bool, optional
        Score each (context, token) pair once.
    lm : LM or SyntheticLM or None, optional
        The LM, read by the families that need it (the entropy gate); None: the generation's (:func:`sims.lm.door.lm_of`).

    Returns
    -------
    numpy.ndarray or None
        (n,) tokens to detect, 1-based (:func:`sims.detect.stats.scores.tokens_to_detect`; nan for a text whose
        full-length p-value is above the level), or None for a detector family without exact prefix p-values.
    """
    family = families.of(gen.meta["algo"])
    pref = family.prefix_curve(gen, gen.meta["key"], gamma=None, dedup=dedup, lm=lm)
    if pref is None:
        return None
    return detect.tokens_to_detect(pref, np.log10(TTD_LEVEL))


def summarize(gen, res, res0, ttd, *, lm: str, n_null: int, seed: int, key: int, dedup: bool, gen_seconds: float,
              det_seconds: float, return_arrays: bool = False, quality: dict | None = None) -> dict:
    """The result dict of :func:`evaluate` from the watermarked texts, their scores, the null scores and tokens to detect.

    Synthetic or real LM: the same keys.

    Parameters
    ----------
    gen : sims.core.record.Generation
        The watermarked texts (their KL, DG and entropy records).
    res, res0 : sims.detect.stats.scores.DetectResult
        Scores of the watermarked and of the unwatermarked (null) texts.
    ttd : numpy.ndarray or None
        Tokens to detect per text (:func:`redgreen_ttd`).
    lm : str
        The LM's name.
    n_null : int
        Unwatermarked texts.
    seed, key : int
        The generation's seed and key.
    dedup : bool
        Whether repeated (context, token) pairs were scored once.
    gen_seconds, det_seconds : float
        Time taken to generate and to detect the watermarked texts (the throughputs).
    return_arrays : bool, optional
        Also return the per-text arrays under ``arrays``.
    quality : dict or None, optional
        The quality numbers (:func:`sims.experiments.quality.quality`), merged in.

    Returns
    -------
    dict
        ``lm``, ``algo``, ``n``, ``n_null``, ``T``, ``seed``, ``key``, ``dedup``, ``params``, ``detector``;
        KL per token and realised DG (mean and per-text standard deviation), mean entropy, median log10 p,
        mean z, texts too short to score; TPR and empirical FPR at each of :data:`FPRS` with Clopper-Pearson
        intervals at :data:`CI_LEVEL`; the median tokens to detect; tokens per second generated and
        detected; the quality numbers.
    """
    algo = gen.meta["algo"]
    n, T = gen.tokens.shape
    gen_s, det_s = gen_seconds, det_seconds
    lp = res.log10_p
    out = dict(
        lm=lm, algo=algo, n=int(n), n_null=int(n_null), T=int(T), seed=int(seed), key=int(key), dedup=bool(dedup),
        params={k: gen.meta[k] for k in (*registry.PARAMS, "h", "green_kind") if k in gen.meta},
        detector=families.of(algo).description,
        kl_per_token=float(gen.kl.mean()), kl_per_text_sd=float(gen.kl.mean(axis=1).std(ddof=1)) if n > 1 else 0.0,
        realized_dg=float(gen.dg.mean()), realized_dg_per_text_sd=float(gen.dg.mean(axis=1).std(ddof=1)) if n > 1 else 0.0,
        mean_entropy=float(gen.entropy.mean()),
        median_log10_p=float(np.median(lp)),
        z_mean=float(np.nanmean(res.z)) if np.isfinite(res.z).any() else None,
        too_short=int(res.too_short.sum()),
        **_rates(lp, "tpr"),
        **_rates(res0.log10_p, "empirical_fpr"),
        tokens_to_detect_median=_median_or_none(ttd),
        generate_tokens_per_s=n * T / gen_s, detect_tokens_per_s=n * T / det_s if det_s > 0 else None,
    )
    quality = dict(quality or {})
    q_arrays = quality.pop("arrays", {})
    out.update(quality)
    if return_arrays:
        out["arrays"] = dict(**q_arrays, kl=gen.kl.mean(axis=1), dg=gen.dg.mean(axis=1), log10_p=lp, z=res.z, null_log10_p=res0.log10_p,
                             null_z=res0.z, tokens_to_detect=ttd)
    return out


def _median_or_none(ttd) -> float | None:
    """Median tokens-to-detect, counting never-detected texts as infinitely long (None if that median is infinite)."""
    if ttd is None:
        return None
    med = float(np.median(np.where(np.isnan(ttd), np.inf, ttd)))
    return med if np.isfinite(med) else None


def null_fpr(*, n: int, T: int, seed: int, key: int = defaults.KEY, gamma: float = defaults.GAMMA, lm=None,
             dedup: bool = True, h: int = defaults.H, chunk: int = 100_000, level: float = CI_LEVEL) -> dict:
    """Empirical false-positive rate of the exact red-green test on ``n`` key-independent texts.

    ``lm=None``: texts of i.i.d. uniform tokens over V = 32000 (the fast path, drawn with
    ``numpy.random.default_rng(seed)`` in chunks of ``chunk`` texts).  Otherwise unwatermarked
    texts of that LM (``generate(lm, "none", seed=seed)``).  Either way the text does not
    depend on the key, so with Bernoulli green lists and ``dedup`` the green count is exactly
    Binomial(n_distinct, gamma) and the rejection rate at level alpha is at most alpha
    (below it, since the count is discrete).  Without dedup, repeated (context, token) pairs
    repeat their colour and the rate can exceed alpha on repetitive text.

    Returns the rejection rate at each level of ``FPRS`` and at 1e-2 and 1e-3 (where the
    counts are informative at moderate n), each with its Clopper-Pearson interval at
    ``level``, and the exact size of the discrete test at full length without dedup,
    :math:`P(\\mathrm{Bin}(T,\\gamma) \\ge k_\\alpha)`.

    Parameters
    ----------
    n, T, seed, key : int
        Texts, tokens per text, seed and key.
    gamma : float
        Green-list ratio in (0, 1).
    lm : str, LM or SyntheticLM, optional
        See above.
    dedup : bool
        Score each (context, token) pair once.
    h : int
        Context width.
    chunk : int
        Texts per chunk on the fast path.
    level : float
        Confidence level of the intervals.

    Returns
    -------
    dict
        See above.

    References
    ----------
    Towards Better Statistical Understanding of Watermarking LLMs, Prop. B.1 (prop:type_I&II) and eq. (17) (eq:three_brick_p).

    Examples
    --------
    >>> import sims
    >>> r = sims.null_fpr(n=200, T=50, seed=0)
    >>> r["fpr_at_1e-2"]["rejections"], r["fpr_at_1e-2"]["rate"]
    (2, 0.01)
    """
    from sims.detect.stats.nulls import binom_logsf

    if int(n) < 1 or int(T) < 2:
        raise ValueError(f"n must be in [1, inf) and T in [2, inf); got n={n}, T={T}")
    V = 32000
    lps = []
    if lm is None:
        rng = np.random.default_rng(seed)
        with progress(int(n), "null texts", unit="text") as bar:
            for a in range(0, int(n), int(chunk)):
                m = min(int(chunk), int(n) - a)
                toks = rng.integers(0, V, size=(m, T + h))
                lps.append(detect.score_redgreen(toks[:, h:], toks[:, :h], key, gamma, vocab_size=V, h=h, dedup=dedup).log10_p)
                bar.update(m)
        source = f"iid uniform tokens, V={V}"
    else:
        model = get_lm(lm)
        g = generate(model, "none", n=int(n), T=int(T), seed=seed, key=key, gamma=gamma, h=h)
        lps.append(detectors.score(g, model, dedup=dedup, key=key, gamma=gamma).log10_p)
        source = f"unwatermarked texts of {model.name} (V={model.vocab_size})"
        V = model.vocab_size
    lp = np.concatenate(lps)
    out = dict(source=source, n=int(n), T=int(T), seed=int(seed), key=int(key), gamma=float(gamma), dedup=bool(dedup), h=int(h),
               ci_level=level)
    levels = (1e-2, 1e-3) + FPRS
    for a in levels:
        k = int(np.sum(lp <= np.log10(a)))
        tail = binom_logsf(np.arange(T + 2), T, gamma)
        size = float(np.exp(tail[np.argmax(tail <= np.log(a))]))
        out[f"fpr_at_{_fpr_key(a)}"] = dict(rejections=k, rate=k / lp.size, ci=clopper_pearson(k, lp.size, level),
                                             exact_size_full_length=size)
    return out
