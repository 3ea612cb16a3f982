r"""Power and sample-size planning (``python -m sims plan``): how many tokens per text a detection
study needs, computed from the LM's per-token statistics and the closed forms of :mod:`theory.power`.

The LM enters through one sample per (LM, key) of ``PLAN_TEXTS`` unwatermarked texts of
``PLAN_T0`` tokens: their green masses :math:`G_t` (red-green watermarks; the sample keeps each
text's sequence, so a fitted LM's per-text temperature carries into the power) and the
probabilities :math:`\pi_t = p_t(y_t)` of the sampled tokens (EMS, from a distortion-free EMS
generation).  The sample is drawn once per process and cached; a query is then closed-form
arithmetic (Poisson-binomial recursions, FFT convolutions).

``dedup`` (the detector scores each (context window, token) pair once, ``sims detect --dedup``) plans
the green count on a sample of texts watermarked by the algorithm itself (:func:`lm_sample`: the
watermark changes which pairs repeat): a repeated pair adds nothing to its text's count, a scored token
(a new pair) is green with the probability of the watermarked distribution restricted to the tokens not
yet seen after its window (:func:`new_pair_green_mass`: green pairs recur, so scored tokens are less
often green than :math:`G_t` says), and each text is tested at the critical count of its own number of
scored tokens.

Supported: ``srl``, ``hard`` and ``dualga`` with the ``green`` count and the likelihood-ratio
score ``lr``; ``unigram`` (SRL's boost of one fixed list, h = 0), ``morphmark`` (mass :math:`r(1 - G_t)` moved to
the green list) and ``dipmark`` (the DiP-reweight, whose green list is the permutation's tail) with the ``green`` count,
each token green with the probability its own step gives the green list (:func:`green_step`); ``sweet`` with its
entropy-gated green count: the boost and the count only at the positions of the LM sample whose entropy exceeds
``alpha`` (the effective length is the number of gated positions, each text tested at the critical count of its own);
``ems`` with the sum scores ``ems-ars``, ``ems-log`` and ``ems-opt`` and the order
statistics tests ``ems-hc`` and ``ems-trgof``; optionally a substitution attack.  ``lr``, ``ems-hc``
and ``ems-trgof`` are planned by :mod:`sims.plan.scores` (HC / Tr-GoF: exact crossing
probabilities; LR: a tilted tail plus the central limit theorem, measured against simulation; the LR
detector's dropped repeated context windows are not modelled, :data:`LR_LIMIT`, stated in each ``lr`` answer).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from sims.core import defaults
from sims.plan import cache as plan_cache
from theory import power as tp

# The generators, the registry and the scores' modules load Numba: each is imported where it is
# used, so a query answered from the on-disk cache (sims.plan.cache) loads none of them.

PLAN_TEXTS = 64  #: texts in the LM sample
PLAN_T0 = 256  #: tokens per sampled text
DEDUP_T0 = 2048  #: tokens per sampled text under dedup: repeats grow with length (loopy: 1.3 % of pairs by 256 tokens, 5.3 % by 1024)
DEDUP_EVERY = 64  #: PrefixCountLaws keeps every 64th state of the dedup sample (64 x 34 x 2049 doubles, 36 MB)
PLAN_SEED = 20240531  #: seed of the LM sample
PLAN_SCORES = {"srl": ("green", "lr"), "hard": ("green", "lr"), "dualga": ("green", "lr"), "ems": ("ems-ars", "ems-log", "ems-opt", "ems-hc", "ems-trgof"),
               "unigram": ("green",), "dipmark": ("green",), "morphmark": ("green",), "sweet": ("green",)}
"""The records' :attr:`~sims.watermarks.registry.Algorithm.plan_scores` (tested equal): the planner checks a query
against this copy, since reading the registry loads Numba and a query answered from the cache loads none."""
PLAN_ALGOS = tuple(PLAN_SCORES)  #: the algorithms the planner answers for
DEDUP_ALGOS = ("srl", "hard", "dualga")  #: the algorithms whose dedup'd green count is planned
#: The planner's numba-free copy of the records' fixed context width (tested equal to the registry's).
PLAN_H = {"unigram": 0}
#: The planner's numba-free copy of the records' fixed green-list kind (tested equal to the registry's).
PLAN_GREEN_KIND = {"dipmark": "partition"}
#: The parameters of :func:`power_function` besides gamma, delta and Delta, by algorithm (the registry's names).
EXTRA_PARAMS = {"sweet": ("alpha",), "morphmark": ("morph_kappa", "morph_p0"), "dipmark": ("dip_alpha",)}
#: Why the planner has no model of an algorithm the registry has (the error names it and the valid choices).
NOT_PLANNED = {
    "pf": "its pivot law is Permute-and-Flip's exponential race, not the EMS Gumbel-max law Y = U^(1/pi) the EMS model uses",
    "gumbelsoft": "its draw is a softmax of the Gumbel-perturbed logits, not the EMS Gumbel-max law Y = U^(1/pi) the EMS model uses",
    "exp": "its per-token law is EMS's while the text is at most exp_n tokens (its key sequence does not repeat): plan it as "
           "algo 'ems' with the same tau; past exp_n tokens its dedup drops repeated positions, which the EMS model does not follow",
}
PI_QUANTILES = 256  #: the EMS mixture over pi is taken on this many quantiles of the sample
SUM_CELLS = 400  #: lattice cells of ems-ars / ems-log per token (width 0.1 nats)
SUM_RANGE = 40.0  #: per-token range (nats) of the ems-ars / ems-log lattice; the mass beyond sits in its last cell
#: The caveat a plan with ``score="lr"`` carries (its ``"limits"`` entry).
LR_LIMIT = ("planned as if every position were scored: the LR detector drops a position whose context window "
            "repeats (sims.detect.stats.lr_scores), which the planner does not model, so its power is too high where "
            "windows repeat (loopy LMs, long texts)")


def _sample_params(lm: str, **kw) -> dict:
    """The cache key's parameters of an LM sample (:mod:`sims.plan.cache`)."""
    return dict(plan_cache.lm_identity(lm), **{"texts": PLAN_TEXTS, "seed": PLAN_SEED, "T0": PLAN_T0, **kw})


@functools.lru_cache(maxsize=16)
def lm_sample(lm: str, algo: str, T0: int, gamma, delta, Delta, h: int, key: int = defaults.KEY, green_kind: str = defaults.GREEN_KIND,
              entropy: bool = False) -> dict[str, np.ndarray]:
    """The LM sample of the red-green queries (cached on disk): ``PLAN_TEXTS`` texts of ``T0`` tokens
    generated by ``algo`` (``"none"``: unwatermarked) under ``key``; ``"G"`` the LM's green mass at each
    position and ``"first"`` the first occurrences of the (context window, token) pairs (the tokens a
    ``dedup`` detector scores, :func:`sims.detect.stats.scores.token_scores`), both (PLAN_TEXTS, T0); for a
    watermarked sample also ``"G_new"``, :func:`new_pair_green_mass`.

    The plain green count plans on ``"none"`` texts of ``PLAN_T0`` tokens (the sample keeps each text's
    sequence, so a fitted LM's per-text temperature carries into the power); ``dedup`` on texts of
    ``DEDUP_T0`` tokens watermarked by the algorithm itself (which pairs repeat depends on the
    watermark: on ``loopy`` it steers texts out of red loops).  ``green_kind`` is the green lists' kind (DiPmark's
    partition); with ``entropy`` the sample also holds ``"H"``, the LM's entropy (nats) at each position (SWEET's gate)."""

    def build():
        from sims.detect.stats.scores import token_scores
        from sims.lm.synthetic import open_synthetic
        from sims.watermarks import registry
        from sims.watermarks.generate import generate_synthetic

        model = open_synthetic(lm)
        g = generate_synthetic(model, algo, n=PLAN_TEXTS, T=T0, seed=PLAN_SEED, key=key, gamma=gamma, delta=delta, Delta=Delta, h=h,
                               green_kind=green_kind)
        prompts = g.prompts[:, g.prompts.shape[1] - h :]
        X, first = token_scores(g.tokens, prompts, key, gamma=g.meta["gamma"], h=h, vocab_size=model.vocab_size, dedup=True,
                                green_kind=green_kind)
        out = {"G": g.G, "first": first}
        if entropy:
            out["H"] = g.entropy
        if algo != registry.NULL:  # the dedup sample: scored tokens are new pairs
            out["G_new"] = new_pair_green_mass(model, g, X > 0.5, h)
        return out

    more = ({} if green_kind == defaults.GREEN_KIND else {"green_kind": green_kind}) | ({"entropy": True} if entropy else {})
    params = _sample_params(lm, algo=algo, gamma=gamma, delta=delta, Delta=Delta, h=int(h), key=key, T0=int(T0), **more)
    return plan_cache.cached("lm-sample", params, build)


def new_pair_green_mass(model, gen, green: np.ndarray, h: int) -> np.ndarray:
    """(n, T) green mass of the LM's next-token distribution restricted to the tokens not yet seen after the
    position's context window in the text, :math:`G'_t = (G_t - a_t) / (1 - a_t - b_t)` with :math:`a_t`
    (:math:`b_t`) the LM's mass of the green (red) tokens that already followed the same window ( :math:`G_t`
    where none did).

    A ``dedup`` detector scores position t iff its (window, token) pair is new, so given the scored mask the
    token was drawn from the watermarked distribution restricted to the new tokens: its green probability is
    :func:`theory.power.green_probs` of :math:`G'_t`, not of :math:`G_t`.  The watermark makes green pairs
    recur, so :math:`G'_t < G_t` on average where windows repeat (``loopy``).

    ``green`` (n, T): whether each token is green, read at the first occurrence of its (window, token) pair
    only -- :func:`sims.detect.stats.scores.token_scores`' values, with or without ``dedup``, ``> 0.5``.

    Parameters
    ----------
    model : SyntheticLM
        The LM (its distributions along each text).
    gen : Generation
        The sampled texts, with their green masses ``G``.
    green : ndarray of bool, shape (n, T)
        Colour of each token.
    h : int
        Context width.

    Returns
    -------
    ndarray, shape (n, T)
        :math:`G'_t`.
    """
    n, T = gen.tokens.shape
    P = gen.prompts.shape[1]
    out = np.array(gen.G, dtype=np.float64)
    for i in range(n):
        seq = np.concatenate([gen.prompts[i], gen.tokens[i]])
        seen: dict[tuple, dict[int, bool]] = {}
        probs = None
        for t in range(T):
            ctx = tuple(seq[P + t - h : P + t].tolist())
            before = seen.setdefault(ctx, {})
            if before:
                probs = model.probs_along(seq, P, T) if probs is None else probs
                ys = np.fromiter(before, dtype=np.int64, count=len(before))
                was_green = np.fromiter(before.values(), dtype=bool, count=len(before))
                a, b = float(probs[t, ys[was_green]].sum()), float(probs[t, ys[~was_green]].sum())
                rest = 1.0 - a - b
                out[i, t] = min(max((out[i, t] - a) / rest, 0.0), 1.0) if rest > 1e-12 else out[i, t]
            before.setdefault(int(seq[P + t]), bool(green[i, t]))
    return out


@functools.lru_cache(maxsize=16)
def lm_token_probs(lm: str, key: int = defaults.KEY) -> np.ndarray:
    """``PI_QUANTILES`` quantiles of :math:`p_t(y_t)` of ``lm``'s text (EMS is distortion-free: KL = -ln p(y); cached on disk)."""

    def build():
        from sims.lm.synthetic import open_synthetic
        from sims.watermarks.generate import generate_synthetic

        g = generate_synthetic(open_synthetic(lm), "ems", n=PLAN_TEXTS // 8, T=PLAN_T0, seed=PLAN_SEED, key=key)
        pi = np.exp(-g.kl.ravel())
        return {"pi": np.quantile(pi, (np.arange(PI_QUANTILES) + 0.5) / PI_QUANTILES)}

    return plan_cache.cached("token-probs", _sample_params(lm, key=key, quantiles=PI_QUANTILES), build)["pi"]


def parse_attack(attack: str | None) -> float:
    """``"substitution:RATE"`` -> RATE (0 for None).

    Parameters
    ----------
    attack : str or None
        The attack, ``"substitution:RATE"`` with RATE in [0, 1].

    Returns
    -------
    float
        The substitution rate.

    Raises
    ------
    ValueError
        For any other attack or a rate outside [0, 1].
    """
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
        from sims.detect.stats import gumbel_scores as gs

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
    drawn without replacement: neither the token nor its h predecessors inside the text replaced.

    Parameters
    ----------
    T : int
        Text length.
    rate : float
        Substitution rate, in [0, 1].
    h : int
        Context width.

    Returns
    -------
    float
        The mean clean share, in [0, 1].
    """
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
    """Exact critical lattice sum of ems-opt on T tokens (:func:`sims.detect.stats.gumbel_scores.iid_lattice_critical`)."""
    from sims.detect.stats import gumbel_scores as gs

    return gs.iid_lattice_critical(T, gs.opt_lattice(gs.OPT_DELTA)[2], fpr)


def power_function(algo: str, *, lm: str, fpr: float, score: str | None = None, attack: str | None = None, gamma=None, delta=None,
                   Delta=None, h: int = defaults.H, key: int = defaults.KEY, dedup: bool = False, alpha=None, morph_kappa=None, morph_p0=None,
                   dip_alpha=None):
    """``power_at(T)``: the planner's power of the detection at level ``fpr`` on texts of T tokens.

    ``dedup``: the detector scores each (context window, token) pair once (``sims detect --dedup``;
    the green count only): a repeated pair of the LM sample adds nothing to its text's count, a scored one is
    green with the probability of :func:`new_pair_green_mass`'s restricted distribution, and each
    text is tested at the critical count of its own number of scored tokens
    (:func:`theory.power.redgreen_power`'s ``scored``), on a sample of watermarked ``DEDUP_T0``-token
    texts (:func:`lm_sample`; longer texts tile it, so their repeats beyond ``DEDUP_T0`` tokens are missed).

    Parameters
    ----------
    algo : str
        One of :data:`PLAN_ALGOS`.
    lm : str
        A synthetic LM's name.
    fpr : float
        Level of the detection.
    score : str, optional
        The detector's score, one of the algorithm's ``PLAN_SCORES`` (default its first).
    attack : str, optional
        ``"substitution:RATE"`` (:func:`parse_attack`).
    gamma, delta, Delta : float, optional
        The algorithm's parameters (defaults the registry's).
    h : int, default defaults.H
        Context width.
    key : int, default defaults.KEY
        Key of the LM sample.
    dedup : bool, default False
        Plan for the dedup'd green count (:data:`DEDUP_ALGOS` only).
    alpha, morph_kappa, morph_p0, dip_alpha : float, optional
        SWEET's entropy threshold (nats), MorphMark's kappa and p0, DiPmark's reweight alpha (defaults the registry's);
        each only for its algorithm (:data:`EXTRA_PARAMS`).

    Returns
    -------
    callable
        ``power_at(T) -> float``.

    Raises
    ------
    ValueError
        For an unknown algorithm or score, an algorithm the planner has no model of (:data:`NOT_PLANNED`: the error
        says why and names the valid choices), a score the algorithm does not plan, ``dedup`` with a score other
        than the green count or an algorithm not in :data:`DEDUP_ALGOS`, a parameter the algorithm does not take, or
        an attack on ``sweet`` (the gate of a substituted text is not modelled).
    """
    check_algo(algo)
    extra = {k: v for k, v in dict(alpha=alpha, morph_kappa=morph_kappa, morph_p0=morph_p0, dip_alpha=dip_alpha).items() if v is not None}
    bad = sorted(set(extra) - set(EXTRA_PARAMS.get(algo, ())))
    if bad:
        raise ValueError(f"{bad[0]} is not a parameter of algo {algo!r} in the planner (its extra parameters: {EXTRA_PARAMS.get(algo, ())})")
    extra = tuple(sorted(extra.items()))
    h = PLAN_H.get(algo, h)
    score = PLAN_SCORES[algo][0] if score is None else score
    if score not in PLAN_SCORES[algo]:
        raise ValueError(f"score must be one of {PLAN_SCORES[algo]} for algo {algo!r} in the planner; got {score!r}")
    fpr = tp._check_level("fpr", fpr)
    rate = parse_attack(attack)
    if dedup and (score != "green" or algo not in DEDUP_ALGOS):
        raise ValueError(f"dedup is planned for the green count of {DEDUP_ALGOS} only; got algo {algo!r}, score {score!r}")
    if algo == "sweet" and rate > 0:
        raise ValueError(f"attack is not planned for algo 'sweet' (the entropy gate of a substituted text is not modelled); got {attack!r}")
    if score == "lr":
        return _lr_power(algo, lm, gamma, delta, Delta, int(h), key, fpr, rate)
    if score in ("ems-hc", "ems-trgof"):
        from sims.plan import scores as PS

        return PS.order_power_function(score[4:], lm_token_probs(lm, key), fpr, lambda T: clean_share(T, rate, int(h)))
    if score in ("ems-ars", "ems-log", "ems-opt"):  # EMS's sums (its only planned scores besides HC and Tr-GoF)
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
    laws, gam, scored = _redgreen_laws(algo, lm, gamma, delta, Delta, rate, int(h), key, bool(dedup), extra)
    return lambda T: tp.redgreen_power(laws, T, gam, fpr, scored)


def check_algo(algo: str) -> None:
    """Refuse an algorithm the planner does not answer for, naming it and the valid choices (and why, for an
    algorithm of the registry it has no model of, :data:`NOT_PLANNED`).

    Parameters
    ----------
    algo : str
        The algorithm asked about.

    Raises
    ------
    ValueError
        If ``algo`` is not one of :data:`PLAN_ALGOS`.
    """
    if algo in PLAN_ALGOS:
        return
    why = f" (the planner has no model of algo {algo!r}: {NOT_PLANNED[algo]})" if algo in NOT_PLANNED else ""
    raise ValueError(f"algo must be one of {PLAN_ALGOS}; got {algo!r}{why}")


def green_step(algo: str, info: dict, G: np.ndarray) -> np.ndarray:
    r"""The green probability :math:`q_t` the algorithm's own step gives the green list of mass :math:`G_t`.

    * a boost of the green list (SRL, hard, DualGA, Unigram, SWEET where gated): :math:`\sigma(\delta + \mathrm{logit}\, G_t)`
      (:func:`theory.power.green_probs` of the record's :meth:`~sims.watermarks.registry.Boost.per_text`);
    * MorphMark (the registry's ``_ref_morphmark``): :math:`G_t + r_t (1 - G_t)`, :math:`r_t = \min(e^{\kappa G_t} - 1, 1)` where
      :math:`G_t \ge p_0`, else 0;
    * DiPmark (:func:`sims.watermarks.dipmark.reweight`): the green list is the permutation's tail, after a head of mass
      :math:`1 - G_t`, whose reweighted mass is :math:`g(1 - G_t)` with :math:`g(x) = (x - \alpha)^+ + (x - (1 - \alpha))^+`, so
      :math:`q_t = 1 - g(1 - G_t)`.

    Parameters
    ----------
    algo : str
        One of the red-green or entropy-gated algorithms of :data:`PLAN_ALGOS`.
    info : dict
        Its resolved parameters (:func:`sims.watermarks.generate.algo_params`).
    G : ndarray, shape (n, T)
        Green masses of the LM's next-token distributions.

    Returns
    -------
    ndarray, shape (n, T)
        :math:`q_t`, in [0, 1].
    """
    G = np.asarray(G, dtype=np.float64)
    if algo == "morphmark":
        r = np.where(G >= float(info["morph_p0"]), np.minimum(np.expm1(float(info["morph_kappa"]) * G), 1.0), 0.0)
        return np.clip(G + r * (1.0 - G), 0.0, 1.0)
    if algo == "dipmark":
        a = float(info["dip_alpha"])
        head = 1.0 - G
        return np.clip(1.0 - (np.maximum(head - a, 0.0) + np.maximum(head - (1.0 - a), 0.0)), 0.0, 1.0)
    return tp.green_probs(G, text_boost(algo, info, G))


@functools.lru_cache(maxsize=64)
def _lr_power(algo, lm, gamma, delta, Delta, h, key, fpr, rate):
    """:func:`sims.plan.lr.lr_power_function` of the LM sample, kept with its per-length cache; the
    per-position laws and the exact critical sums met so far at this level are kept on disk."""
    from sims.plan import lr as PL

    params = _sample_params(lm, algo=algo, gamma=gamma, delta=delta, Delta=Delta, h=int(h), key=key, texts=PL.LR_TEXTS, T0=PL.LR_T0, seed=PL.LR_SEED)

    def build():
        from sims.plan.scores import lr_position_laws

        laws, uniform, gam = lr_position_laws(algo, lm, gamma, delta, Delta, h, key)
        return {"laws": laws, "uniform": uniform, "gamma": gam}

    got = plan_cache.cached("lr-laws", params, build)
    crit = dict(params, fpr=float(fpr))
    known = plan_cache.load("lr-critical", crit) or {"T": np.zeros(0, np.int64), "s": np.zeros(0, np.int64)}
    sums = {int(t): int(s) for t, s in zip(known["T"], known["s"])}

    def store(sums):
        T = np.array(sorted(sums), dtype=np.int64)
        plan_cache.store("lr-critical", crit, {"T": T, "s": np.array([sums[t] for t in T], dtype=np.int64)})

    return PL.lr_power_function(got["laws"], float(got["gamma"]), fpr, rate, h, sums, store, uniform=got["uniform"])


@functools.lru_cache(maxsize=64)
def _redgreen_laws(algo, lm, gamma, delta, Delta, rate, h, key, dedup=False, extra=()):
    """Count laws (:class:`theory.power.PrefixCountLaws`) of the LM sample's texts under the watermark, gamma
    and, with ``dedup``, the scored mask (first occurrences of (context, token) pairs; q = 0 elsewhere); SWEET's
    scored mask is its entropy gate on the sample (q = 0 elsewhere)."""
    q, gam = redgreen_green_probs(algo, lm, gamma, delta, Delta, h, key, dedup, extra)
    q = tp.attacked_green_prob(q, gam, rate, h)
    if algo == "sweet":
        gate = sweet_gate(lm, gamma, delta, h, key, extra)
        return tp.PrefixCountLaws(np.where(gate, q, 0.0)), gam, gate
    if not dedup:
        return tp.PrefixCountLaws(q), gam, None
    first = lm_sample(lm, algo, DEDUP_T0, gamma, delta, Delta, h, key)["first"]
    return tp.PrefixCountLaws(np.where(first, q, 0.0), every=DEDUP_EVERY), gam, first


@functools.lru_cache(maxsize=64)
def redgreen_green_probs(algo, lm, gamma, delta, Delta, h, key, dedup=False, extra=()) -> tuple[np.ndarray, float]:
    """The green probability :math:`q_t` of each token of the LM sample under the watermark (:func:`green_step`: theory.power's
    ``green_probs``, DualGA's per-text boost ``dualga_text_boost``, MorphMark's and DiPmark's own steps) and the null green
    probability (gamma; DiPmark's partition lists: their exact share), cached on disk; with ``dedup`` of :func:`lm_sample`'s
    watermarked ``DEDUP_T0``-token texts, else of its unwatermarked ``PLAN_T0``-token ones (``extra``: the sorted
    (name, value) pairs of :data:`EXTRA_PARAMS`)."""

    def build():
        from sims.watermarks.generate import algo_params

        _, info = algo_params(algo, gamma=gamma, delta=delta, Delta=Delta, **dict(extra))
        gam = float(info["gamma"])
        kind = PLAN_GREEN_KIND.get(algo, defaults.GREEN_KIND)
        sample = (lm_sample(lm, algo, DEDUP_T0, gamma, delta, Delta, h, key) if dedup
                  else lm_sample(lm, "none", PLAN_T0, gam, None, None, h, key, green_kind=kind))
        if dedup:  # a scored token is a new pair
            q = tp.green_probs(sample["G_new"], text_boost(algo, info, sample["G"]))
        else:
            q = green_step(algo, info, sample["G"])
        if kind != defaults.GREEN_KIND:  # the exact null probability of a partition list
            from sims.detect.stats.marks import null_green_probability
            from sims.lm.synthetic import open_synthetic

            gam = float(null_green_probability(gam, kind, open_synthetic(lm).vocab_size))
        return {"q": q, "gamma": gam}

    which = {"T0": DEDUP_T0, "sample": "watermarked"} if dedup else {}  # the cache key names the sample the q come from
    params = _sample_params(lm, algo=algo, gamma=gamma, delta=delta, Delta=Delta, h=int(h), key=key, **which, **dict(extra))
    out = plan_cache.cached("green-probs", params, build)
    return out["q"], float(out["gamma"])


def sweet_gate(lm: str, gamma, delta, h: int, key: int, extra=()) -> np.ndarray:
    """SWEET's entropy gate on the LM sample: (PLAN_TEXTS, PLAN_T0) bool, the positions whose LM entropy exceeds
    ``alpha`` (the registry's default where ``extra`` names none), where the generator boosts and the detector counts.

    Parameters
    ----------
    lm : str
        A synthetic LM's name.
    gamma, delta : float or None
        SWEET's parameters (defaults the registry's).
    h : int
        Context width.
    key : int
        Key of the LM sample.
    extra : tuple of (str, float), optional
        The sorted extra parameters (``alpha``).

    Returns
    -------
    ndarray of bool, shape (PLAN_TEXTS, PLAN_T0)
        :math:`H(p_t) > \\alpha` along the sample's unwatermarked texts.
    """
    from sims.watermarks.generate import algo_params

    _, info = algo_params("sweet", gamma=gamma, delta=delta, **dict(extra))
    H = lm_sample(lm, "none", PLAN_T0, float(info["gamma"]), None, None, h, key, entropy=True)["H"]
    with np.errstate(invalid="ignore"):
        return np.asarray(H) > float(info["alpha"])


def text_boost(algo: str, info: dict, G: np.ndarray):
    """The boost of each text of green masses ``G`` (n, T) for :func:`theory.power.green_probs`: DualGA's
    certainty-equivalent per text (``dualga_text_boost``), SRL's delta, the hard watermark's inf
    (``info``: :func:`sims.watermarks.generate.algo_params`'s), by its record's
    :meth:`sims.watermarks.registry.Boost.per_text`.

    Parameters
    ----------
    algo : str
        The algorithm.
    info : dict
        Its resolved parameters.
    G : ndarray, shape (n, T)
        Green masses of the sampled texts.

    Returns
    -------
    float or ndarray, shape (n,)
        The boost, one for all texts or one per text.
    """
    from sims.watermarks import registry

    return registry.get(algo).boost.per_text(info, G)


def watermark_signal(algo: str, *, lm: str, gamma=None, delta=None, Delta=None, h: int = defaults.H, key: int = defaults.KEY) -> float:
    """The per-token signal the proportion estimators (:mod:`sims.detect.stats.proportion`) divide by, on the
    planner's LM sample: a red-green algorithm's mean DG (DualGA: its target Delta; SRL: the mean of
    ``theory.dg_step(delta, G_t)``; hard: the mean of 1 - G_t), EMS's mean score (:func:`~sims.detect.stats.proportion.ems_signal`).

    Parameters
    ----------
    algo : str
        One of :data:`PLAN_ALGOS`.
    lm : str
        A synthetic LM's name.
    gamma, delta, Delta : float, optional
        The algorithm's parameters.
    h : int, default defaults.H
        Context width.
    key : int, default defaults.KEY
        Key of the LM sample.

    Returns
    -------
    float
        The signal per token.

    Raises
    ------
    ValueError
        For an unknown algorithm.
    """
    check_algo(algo)
    from sims.watermarks import registry

    boost = registry.get(algo).boost
    if boost is None and algo != "ems":
        raise ValueError(f"algo must be one of {tuple(a for a in PLAN_ALGOS if registry.get(a).boost is not None) + ('ems',)} for the signal; got {algo!r}")
    if boost is None:  # EMS: no boost of a green list
        from sims.detect.stats.proportion import ems_signal

        return ems_signal(lm_token_probs(lm, key))
    from sims.watermarks.generate import algo_params

    _, info = algo_params(algo, gamma=gamma, delta=delta, Delta=Delta)
    G = None if not boost.signal_reads_masses else lm_sample(lm, registry.NULL, PLAN_T0, float(info["gamma"]), None, None, int(h), key)["G"]
    return boost.signal(info, G)


def plan(algo: str, *, lm: str, fpr: float = 1e-6, power: float = 0.9, T: int | None = None, curve: tuple[int, ...] = (), **kw) -> dict:
    """Tokens per text for ``power`` at ``fpr``, the power at ``T`` and along ``curve`` (see :func:`power_function`).

    With ``score="lr"`` the answer carries ``"limits"`` (:data:`LR_LIMIT`): the likelihood-ratio detector
    scores the first occurrence of each context window only, and the planner counts every position.  The
    share it misses is small on the ``news`` and ``smollm2-fit`` presets (0.1-0.2 % of positions of
    watermarked texts by 100 tokens, 0.3-0.6 % by 400: DualGA Delta 0.2 and SRL delta 2, 100 texts) and
    grows on ``loopy`` (1.6 % by 100 tokens, 6.8 % by 400).

    Parameters
    ----------
    algo : str
        One of :data:`PLAN_ALGOS`.
    lm : str
        A synthetic LM's name (preset or fitted ``.npz``).
    fpr : float, default 1e-6
        Level of the detection.
    power : float, default 0.9
        Target power.
    T : int, optional
        A text length at which to report the power.
    curve : tuple of int, default ()
        Lengths at which to report the power.
    **kw
        The rest of :func:`power_function`'s arguments (score, attack, gamma, delta, Delta, h, key, dedup, alpha,
        morph_kappa, morph_p0, dip_alpha).

    Returns
    -------
    dict
        ``algo``, ``lm``, ``fpr``, ``target_power``, ``tokens_needed`` (None if beyond the longest length tried), and
        ``T`` / ``power_at_T``, ``curve`` (pairs (T, power)) and ``limits`` where they apply.

    Examples
    --------
    >>> out = plan("dualga", lm="news", Delta=0.2, fpr=1e-6, power=0.9, T=100)
    >>> 20 < out["tokens_needed"] < 400 and 0.0 <= out["power_at_T"] <= 1.0
    True
    """
    with plan_cache.batched():  # the new critical sums this query meets are written once, at its end
        return _plan(algo, lm, fpr, power, T, curve, kw)


def _plan(algo, lm, fpr, power, T, curve, kw) -> dict:
    f = power_function(algo, lm=lm, fpr=fpr, **kw)
    if kw.get("score") in ("ems-hc", "ems-trgof"):
        from sims.plan.scores import ORDER_T_MAX as t_max
    else:
        t_max = 20000
    out = dict(algo=algo, lm=lm, fpr=fpr, target_power=tp._check_level("power", power), tokens_needed=tp.tokens_needed(f, power, t_max))
    if T is not None:
        if int(T) != T or T < 1:
            raise ValueError(f"T must be an integer in [1, inf); got {T!r}")
        out["T"], out["power_at_T"] = int(T), f(int(T))
    if curve:
        out["curve"] = [(int(t), f(int(t))) for t in curve]
    if kw.get("score") == "lr":
        out["limits"] = LR_LIMIT
    return out



