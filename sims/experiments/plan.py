r"""Power and sample-size planning (``python -m sims plan``): how many tokens per text a detection
study needs, computed from the LM's per-token statistics and the closed forms of :mod:`theory.power`.

The LM enters through one sample per (LM, key) of ``PLAN_TEXTS`` unwatermarked texts of
``PLAN_T0`` tokens: their green masses :math:`G_t` (red-green watermarks; the sample keeps each
text's sequence, so a fitted LM's per-text temperature carries into the power) and the
probabilities :math:`\pi_t = p_t(y_t)` of the sampled tokens (EMS, from a distortion-free EMS
generation).  The sample is drawn once per process and cached; a query is then closed-form
arithmetic (Poisson-binomial recursions, FFT convolutions).

``dedup`` (the detector scores each (context window, token) pair once, ``sims detect --dedup``) plans
the green count on a sample of texts watermarked by the algorithm itself (:func:`dedup_sample`: the
watermark changes which pairs repeat): a repeated pair adds nothing to its text's count and each text
is tested at the critical count of its own number of scored tokens.

Supported: ``srl``, ``hard`` and ``dualga`` with the ``green`` count and the likelihood-ratio
score ``lr``; ``ems`` with the sum scores ``ems-ars``, ``ems-log`` and ``ems-opt`` and the order
statistics tests ``ems-hc`` and ``ems-trgof``; optionally a substitution attack.  ``lr``, ``ems-hc``
and ``ems-trgof`` are planned by :mod:`sims.experiments.plan_scores` (HC / Tr-GoF: exact crossing
probabilities; LR: a tilted tail plus the central limit theorem, measured against simulation).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from sims.core import defaults
from sims.experiments import plan_cache
from theory import power as tp

# The generators, the registry and the scores' modules load Numba: each is imported where it is
# used, so a query answered from the on-disk cache (sims.experiments.plan_cache) loads none of them.

PLAN_TEXTS = 64  # texts in the LM sample
PLAN_T0 = 256  # tokens per sampled text
DEDUP_T0 = 2048  # tokens per sampled text under dedup: repeats grow with length (loopy: 1.3 % of pairs by 256 tokens, 5.3 % by 1024)
DEDUP_EVERY = 64  # PrefixCountLaws keeps every 64th state of the dedup sample (64 x 34 x 2049 doubles, 36 MB)
PLAN_SEED = 20240531  # seed of the LM sample
PLAN_ALGOS = ("srl", "hard", "dualga", "ems")
PLAN_SCORES = {"srl": ("green", "lr"), "hard": ("green", "lr"), "dualga": ("green", "lr"), "ems": ("ems-ars", "ems-log", "ems-opt", "ems-hc", "ems-trgof")}
PI_QUANTILES = 256  # the EMS mixture over pi is taken on this many quantiles of the sample
SUM_CELLS = 400  # lattice cells of ems-ars / ems-log per token (width 0.1 nats)
SUM_RANGE = 40.0


def _sample_params(lm: str, **kw) -> dict:
    """The cache key's parameters of an LM sample (:mod:`sims.experiments.plan_cache`)."""
    return dict(plan_cache.lm_identity(lm), **{"texts": PLAN_TEXTS, "seed": PLAN_SEED, "T0": PLAN_T0, **kw})


@functools.lru_cache(maxsize=16)
def lm_green_masses(lm: str, gamma: float, h: int, key: int = defaults.KEY) -> np.ndarray:
    """(PLAN_TEXTS, PLAN_T0) green masses of unwatermarked text of ``lm`` under ``key`` (cached on disk)."""

    def build():
        from sims.lm.synthetic import get_lm
        from sims.watermarks.generate import generate

        return {"G": generate(get_lm(lm), "none", n=PLAN_TEXTS, T=PLAN_T0, seed=PLAN_SEED, key=key, gamma=gamma, h=h).G}

    return plan_cache.cached("green-masses", _sample_params(lm, gamma=float(gamma), h=int(h), key=key), build)["G"]


@functools.lru_cache(maxsize=16)
def dedup_sample(algo: str, lm: str, gamma, delta, Delta, h: int, key: int = defaults.KEY) -> dict[str, np.ndarray]:
    """The LM sample of a ``dedup`` query (cached on disk): ``PLAN_TEXTS`` texts of ``DEDUP_T0`` tokens
    watermarked by ``algo`` under ``key`` (which (context, token) pairs repeat depends on the watermark:
    on ``loopy`` it steers texts out of red loops); ``"G"`` the LM's green mass at each position and
    ``"first"`` the first occurrences of the (context window, token) pairs (the tokens a ``dedup``
    detector scores, :func:`sims.detect.scores.token_scores`), both (PLAN_TEXTS, DEDUP_T0)."""

    def build():
        from sims.detect.scores import token_scores
        from sims.lm.synthetic import get_lm
        from sims.watermarks.generate import generate

        model = get_lm(lm)
        g = generate(model, algo, n=PLAN_TEXTS, T=DEDUP_T0, seed=PLAN_SEED, key=key, gamma=gamma, delta=delta, Delta=Delta, h=h)
        prompts = g.prompts[:, g.prompts.shape[1] - h :]
        _, first = token_scores(g.tokens, prompts, key, gamma=g.meta["gamma"], h=h, vocab_size=model.vocab_size, dedup=True)
        return {"G": g.G, "first": first}

    params = _sample_params(lm, algo=algo, gamma=gamma, delta=delta, Delta=Delta, h=int(h), key=key, T0=DEDUP_T0)
    return plan_cache.cached("dedup-sample", params, build)


@functools.lru_cache(maxsize=16)
def lm_token_probs(lm: str, key: int = defaults.KEY) -> np.ndarray:
    """``PI_QUANTILES`` quantiles of :math:`p_t(y_t)` of ``lm``'s text (EMS is distortion-free: KL = -ln p(y); cached on disk)."""

    def build():
        from sims.lm.synthetic import get_lm
        from sims.watermarks.generate import generate

        g = generate(get_lm(lm), "ems", n=PLAN_TEXTS // 8, T=PLAN_T0, seed=PLAN_SEED, key=key)
        pi = np.exp(-g.kl.ravel())
        return {"pi": np.quantile(pi, (np.arange(PI_QUANTILES) + 0.5) / PI_QUANTILES)}

    return plan_cache.cached("token-probs", _sample_params(lm, key=key, quantiles=PI_QUANTILES), build)["pi"]


def parse_attack(attack: str | None) -> float:
    """``"substitution:RATE"`` -> RATE (0 for None)."""
    if attack is None:
        return 0.0
    kind, _, rate = str(attack).partition(":")
    try:
        r = float(rate)
    except ValueError:
        r = math.nan
    if kind != "substitution" or not 0.0 <= r <= 1.0:
        raise ValueError(f"attack must be 'substitution:RATE' with RATE in [0, 1]; got {attack!r}")
    return r


def _ems_token_law(score: str, pi: np.ndarray, keep: float) -> tuple[np.ndarray, float]:
    """Per-token lattice law of ``score`` under the watermark: (pmf, cell width).

    A token keeps its pivot :math:`Y = U^\\pi` with probability ``keep`` and is uniform otherwise.
    ``ems-log``'s :math:`-\\ln Y = \\pi E` (E a unit exponential) piles up near 0, so each cell's
    mass is split between its two edges so as to keep the cell's exact mean (error O(width^2)); the
    other scores put a cell's mass at its index (the sum's lattice value is read at mid-cell)."""
    w = np.concatenate([keep * np.full(pi.size, 1.0 / pi.size), [1.0 - keep]])
    p = np.concatenate([pi, [1.0]])
    if score == "ems-log":
        eps = SUM_RANGE / SUM_CELLS
        a = np.arange(SUM_CELLS + 1)[:, None] * eps
        e = np.exp(-a / p[None, :])
        mass = (e[:-1] - e[1:]) @ w
        first = ((a[:-1] + p) * e[:-1] - (a[1:] + p) * e[1:]) @ w  # E[pi E; cell] of each cell
        up = np.clip(first / eps - a[:-1, 0] / eps * mass, 0.0, mass)
        pmf = np.zeros(SUM_CELLS + 1)
        pmf[:-1] += mass - up
        pmf[1:] += up
        pmf[-1] += float(e[-1] @ w)
        return pmf, eps
    if score == "ems-opt":
        from sims.detect import gumbel_scores as gs

        eps, _, pmf0 = gs.opt_lattice(gs.OPT_DELTA)
        ly = np.log(np.cumsum(pmf0)[:-1])  # the null cdf at the cell edges is the pivot value there
    else:
        eps = SUM_RANGE / SUM_CELLS
        # ems-ars: h = -ln(1 - Y) < x iff Y < 1 - e^-x
        ly = np.log(-np.expm1(-np.arange(1, SUM_CELLS) * eps))
    cdf = np.exp(ly[None, :] / p[:, None]).T @ w  # P(Y < y) = y^(1/pi)
    pmf = np.diff(np.concatenate([[0.0], cdf, [1.0]]))
    return np.maximum(pmf, 0.0), eps


def clean_share(T: int, rate: float, h: int) -> float:
    """Mean share of tokens that keep their watermark after substituting round(rate T) of T positions
    drawn without replacement: neither the token nor its h predecessors inside the text replaced."""
    m = int(round(rate * T))
    if m == 0:
        return 1.0
    t = np.arange(T)
    free = T - np.minimum(t, h) - 1  # positions that must not be drawn: t and its predecessors in the text
    lf = tp.log_factorials(T)
    ln = lf[free] - lf[np.maximum(free - m, 0)] - (lf[T] - lf[T - m])
    return float(np.where(free >= m, np.exp(ln), 0.0).mean())


@functools.lru_cache(maxsize=4096)
def _opt_critical(T: int, fpr: float) -> int:
    """Exact critical lattice sum of ems-opt on T tokens (:func:`sims.detect.gumbel_scores.iid_lattice_critical`)."""
    from sims.detect import gumbel_scores as gs

    return gs.iid_lattice_critical(T, gs.opt_lattice(gs.OPT_DELTA)[2], fpr)


def power_function(algo: str, *, lm: str, fpr: float, score: str | None = None, attack: str | None = None, gamma=None, delta=None,
                   Delta=None, h: int = defaults.H, key: int = defaults.KEY, dedup: bool = False):
    """``power_at(T)``: the planner's power of the detection at level ``fpr`` on texts of T tokens.

    ``dedup``: the detector scores each (context window, token) pair once (``sims detect --dedup``;
    the green count only): a repeated pair of the LM sample adds nothing to its text's count, and each
    text is tested at the critical count of its own number of scored tokens
    (:func:`theory.power.redgreen_power`'s ``scored``), on a sample of watermarked ``DEDUP_T0``-token
    texts (:func:`dedup_sample`; longer texts tile it, so their repeats beyond ``DEDUP_T0`` tokens are missed)."""
    if algo not in PLAN_ALGOS:
        raise ValueError(f"algo must be one of {PLAN_ALGOS}; got {algo!r}")
    score = PLAN_SCORES[algo][0] if score is None else score
    if score not in PLAN_SCORES[algo]:
        raise ValueError(f"score must be one of {PLAN_SCORES[algo]} for algo {algo!r} in the planner; got {score!r}")
    fpr = tp._check_level("fpr", fpr)
    rate = parse_attack(attack)
    if dedup and score != "green":
        raise ValueError(f"dedup is planned for the green count of {PLAN_ALGOS[:3]} only; got algo {algo!r}, score {score!r}")
    if score == "lr":
        return _lr_power(algo, lm, gamma, delta, Delta, int(h), key, fpr, rate)
    if score in ("ems-hc", "ems-trgof"):
        from sims.experiments import plan_scores as PS

        return PS.order_power_function(score[4:], lm_token_probs(lm, key), fpr, lambda T: clean_share(T, rate, int(h)))
    if algo == "ems":
        pi = lm_token_probs(lm, key)
        wm, eps = _ems_token_law(score, pi, 1.0)
        null, _ = _ems_token_law(score, pi, 0.0)
        J = wm.size - 1

        def law(T):  # the exact mean share of clean tokens at this length (positions otherwise independent)
            c = clean_share(T, rate, int(h))
            return c * wm + (1.0 - c) * null

        if score == "ems-opt":
            return lambda T: tp.lattice_power(law(T), T, _opt_critical(T, fpr))
        if score == "ems-ars":
            return lambda T: tp.lattice_power(law(T), T, tp.gamma_upper_critical(T, fpr) / eps - 0.5 * T)
        # ems-log rejects when -sum ln Y <= c: P(sum K <= floor(c/eps)) = P(sum (J - K) >= T J - floor(c/eps))
        return lambda T: tp.lattice_power(law(T)[::-1].copy(), T, T * J - math.floor(tp.gamma_lower_critical(T, fpr) / eps))
    laws, gam, scored = _redgreen_laws(algo, lm, gamma, delta, Delta, rate, int(h), key, bool(dedup))
    return lambda T: tp.redgreen_power(laws, T, gam, fpr, scored)


@functools.lru_cache(maxsize=64)
def _lr_power(algo, lm, gamma, delta, Delta, h, key, fpr, rate):
    """:func:`sims.experiments.plan_lr.lr_power_function` of the LM sample, kept with its per-length cache; the
    per-position laws and the exact critical sums met so far at this level are kept on disk."""
    from sims.experiments import plan_lr as PL

    params = _sample_params(lm, algo=algo, gamma=gamma, delta=delta, Delta=Delta, h=int(h), key=key, texts=PL.LR_TEXTS, T0=PL.LR_T0, seed=PL.LR_SEED)

    def build():
        from sims.experiments.plan_scores import lr_position_laws

        laws, gam = lr_position_laws(algo, lm, gamma, delta, Delta, h, key)
        return {"laws": laws, "gamma": gam}

    got = plan_cache.cached("lr-laws", params, build)
    crit = dict(params, fpr=float(fpr))
    known = plan_cache.load("lr-critical", crit) or {"T": np.zeros(0, np.int64), "s": np.zeros(0, np.int64)}
    sums = {int(t): int(s) for t, s in zip(known["T"], known["s"])}

    def store(sums):
        T = np.array(sorted(sums), dtype=np.int64)
        plan_cache.store("lr-critical", crit, {"T": T, "s": np.array([sums[t] for t in T], dtype=np.int64)})

    return PL.lr_power_function(got["laws"], float(got["gamma"]), fpr, rate, h, sums, store)


@functools.lru_cache(maxsize=64)
def _redgreen_laws(algo, lm, gamma, delta, Delta, rate, h, key, dedup=False):
    """Count laws (:class:`theory.power.PrefixCountLaws`) of the LM sample's texts under the watermark, gamma
    and, with ``dedup``, the scored mask (first occurrences of (context, token) pairs; q = 0 elsewhere)."""
    q, gam = redgreen_green_probs(algo, lm, gamma, delta, Delta, h, key, dedup)
    q = tp.attacked_green_prob(q, gam, rate, h)
    if not dedup:
        return tp.PrefixCountLaws(q), gam, None
    first = dedup_sample(algo, lm, gamma, delta, Delta, h, key)["first"]
    return tp.PrefixCountLaws(np.where(first, q, 0.0), every=DEDUP_EVERY), gam, first


@functools.lru_cache(maxsize=64)
def redgreen_green_probs(algo, lm, gamma, delta, Delta, h, key, dedup=False) -> tuple[np.ndarray, float]:
    """The green probability :math:`q_t` of each token of the LM sample under the watermark (theory.power's
    ``green_probs``; DualGA's per-text boost ``dualga_text_boost``) and gamma, cached on disk; with ``dedup``
    of :func:`dedup_sample`'s texts, else of :func:`lm_green_masses`'."""

    def build():
        from sims.watermarks.generate import algo_params

        _, info = algo_params(algo, gamma=gamma, delta=delta, Delta=Delta)
        gam = float(info["gamma"])
        G = dedup_sample(algo, lm, gamma, delta, Delta, h, key)["G"] if dedup else lm_green_masses(lm, gam, h, key)
        if algo == "dualga":
            q = tp.green_probs(G, tp.dualga_text_boost(G, float(info["Delta"]), float(info["M"])))
        else:
            q = tp.green_probs(G, math.inf if algo == "hard" else float(info["delta"]))
        return {"q": q, "gamma": gam}

    sample = {"T0": DEDUP_T0, "sample": "watermarked"} if dedup else {}
    params = _sample_params(lm, algo=algo, gamma=gamma, delta=delta, Delta=Delta, h=int(h), key=key, **sample)
    out = plan_cache.cached("green-probs", params, build)
    return out["q"], float(out["gamma"])


def watermark_signal(algo: str, *, lm: str, gamma=None, delta=None, Delta=None, h: int = defaults.H, key: int = defaults.KEY) -> float:
    """The per-token signal the proportion estimators (:mod:`sims.detect.proportion`) divide by, on the
    planner's LM sample: a red-green algorithm's mean DG (DualGA: its target Delta; SRL: the mean of
    ``theory.dg_step(delta, G_t)``; hard: the mean of 1 - G_t), EMS's mean score (:func:`~sims.detect.proportion.ems_signal`)."""
    if algo not in PLAN_ALGOS:
        raise ValueError(f"algo must be one of {PLAN_ALGOS}; got {algo!r}")
    if algo == "ems":
        from sims.detect.proportion import ems_signal

        return ems_signal(lm_token_probs(lm, key))
    from sims.watermarks.generate import algo_params
    from theory.soft import dg_step

    _, info = algo_params(algo, gamma=gamma, delta=delta, Delta=Delta)
    if algo == "dualga":
        return float(info["Delta"])
    G = lm_green_masses(lm, float(info["gamma"]), int(h), key)
    return float(np.mean(1.0 - G if algo == "hard" else dg_step(float(info["delta"]), G)))


def plan(algo: str, *, lm: str, fpr: float = 1e-6, power: float = 0.9, T: int | None = None, curve: tuple[int, ...] = (), **kw) -> dict:
    """Tokens per text for ``power`` at ``fpr``, the power at ``T`` and along ``curve`` (see :func:`power_function`).

    Examples
    --------
    >>> out = plan("dualga", lm="news", Delta=0.2, fpr=1e-6, power=0.9, T=100)
    >>> 20 < out["tokens_needed"] < 400 and 0.0 <= out["power_at_T"] <= 1.0
    True
    """
    f = power_function(algo, lm=lm, fpr=fpr, **kw)
    if kw.get("score") in ("ems-hc", "ems-trgof"):
        from sims.experiments.plan_scores import ORDER_T_MAX as t_max
    else:
        t_max = 20000
    out = dict(algo=algo, lm=lm, fpr=fpr, target_power=tp._check_level("power", power), tokens_needed=tp.tokens_needed(f, power, t_max))
    if T is not None:
        if int(T) != T or T < 1:
            raise ValueError(f"T must be an integer in [1, inf); got {T!r}")
        out["T"], out["power_at_T"] = int(T), f(int(T))
    if curve:
        out["curve"] = [(int(t), f(int(t))) for t in curve]
    return out



