"""The algorithm registry: one record per watermark, read by every other module.

A record (:class:`Algorithm`) holds what makes an algorithm: its name, the parameters it takes
(:class:`Param`: default, valid range and the check with the package's error wording), its
detector family, its flags, the code of its step in the Numba generator
(:func:`sims.watermarks.generate._generate`) and its NumPy reference step, written from the
paper's definitions on full vectors.  The generator, the torch processors
(:data:`sims.torch_backend.processors.PROCESSORS`), the CLI's options, sweep grids, evaluation,
stealing, the detectors' dispatch and ``proofs_check`` all read it; one battery
(``tests/watermarks/test_registry_battery.py``) runs every record on every backend it declares
against its reference step.  How to add one: the book's page "Adding a watermark".

Parameters (:data:`PARAMS`) are shared by name across algorithms: ``gamma`` (every algorithm:
the green list is recorded even where it is not boosted), ``delta``, ``Delta``, ``eta``,
``lam1``, ``tau``, ``alpha``, ``M``, DiPmark's ``dip_alpha``, MorphMark's ``morph_kappa`` and ``morph_p0``, GumbelSoft's ``gs_tau``
(recorded only by the algorithms that take them), and tournament sampling's ``m``, ``candidates`` and
``mask_repeated`` (integers; recorded only by the algorithms that take them).  :func:`resolve_params` fills the defaults of
:mod:`sims.core.defaults` (and the per-algorithm ones: gamma*(Delta), lambda_1 =
delta*(Delta, gamma)) and checks the values; :func:`check_params` refuses a parameter the
algorithm does not take; :func:`get` refuses an unknown name.

An algorithm that is not a step of ``_generate`` names its own ``generator`` and the NumPy
reference of that whole generator (``generator_reference``), which the battery compares it with;
its module registers its record (SynthID's tournament: :mod:`sims.watermarks.tournament`, imported
by the package, so every reader of the registry sees it; the registry imports no generator).

Reference steps share one signature, ``step(p, window, t, key, state, prm) -> (q, states)``:
``p`` the next-token distribution (V,), ``window`` the last ``h`` tokens, ``t`` the 0-based
position, ``state = (lambda, colour of the previous token)`` and ``prm`` the resolved
parameters; ``q`` is the watermarked distribution (V,) and ``states[k]`` the state after
emitting token k.  Only the keyed randomness is read from :mod:`sims.core.prf` /
:mod:`sims.core.rng`, since a watermark *is* its key.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

import theory
from sims.core import defaults, prf, rng
from sims.core import seeding as seeding_mod
from sims.core.keys import ITS_STREAM, keyed_order, position_hashes
from sims.watermarks import dipmark, gumbelsoft, pf, unigram

COMMON = ("gamma", "h", "green_kind")
"""The green list's settings every algorithm's records use (``h``, ``green_kind``: the generator's own arguments)."""
NULL = "none"
"""The unwatermarked control: sampling from p, scored with a watermark's detector."""

#: A reference step's carried state: (the dual variable lambda, whether the previous token was green).
State = tuple[float, bool]


@dataclass(frozen=True)
class Param:
    """One parameter: its default, its valid range, and what ``meta`` records where an algorithm does not take it.

    The range is ``[low, high]`` with open ends where ``low_open`` / ``high_open``; ``high`` may
    name another parameter (``lam1`` lies in [0, M]).  ``exact`` keeps the value as given
    (otherwise it is converted to float), as the generator's records always have; ``integer``
    requires an integral value and returns it as int.  ``recorded_unused=False``: :func:`resolve_params`
    leaves it out for an algorithm that does not take it (the records of the others keep their keys).

    Parameters
    ----------
    name : str
        The parameter's keyword (``delta``, ``gamma``, ``lam1``, ...), the key of :data:`PARAMS`.
    default : float or None
        The value an algorithm that takes the parameter runs at when none is given (None: the algorithm's
        record computes it, :attr:`Algorithm.defaults`).
    low : float
        Lower end of the valid range.
    high : float or str
        Upper end of the valid range, or the name of another parameter whose resolved value is the end.
    low_open, high_open : bool
        Whether the lower (upper) end is excluded.
    help : str
        One-line description, for command-line help.
    unused : float or None
        The value recorded in ``meta`` for an algorithm that does not take the parameter.
    exact : bool
        Keep a checked value as given (else convert it to float).
    integer : bool
        Require an integral value, returned as int.
    recorded_unused : bool
        Whether :func:`resolve_params` records the parameter for an algorithm that does not take it.
    """

    name: str
    default: float | None
    low: float
    high: float | str
    low_open: bool
    high_open: bool
    help: str
    unused: float | None = None
    exact: bool = True
    integer: bool = False
    recorded_unused: bool = True

    def range(self, resolved: dict | None = None) -> str:
        """The valid range as interval notation, for messages and help (``[0, 1)``, ``[0, M]``).

        Parameters
        ----------
        resolved : dict, optional
            Resolved parameters; where ``high`` names another parameter, its value there is shown too
            (``[0, M] = [0, 4.0]``).

        Returns
        -------
        str
            The interval, brackets marking closed ends and parentheses open ones.
        """
        hi = self.high
        if isinstance(hi, str):
            hi = f"{hi}] = [{_fmt(self.low)}, {resolved[hi]}" if resolved else hi
        return f"{'(' if self.low_open else '['}{_fmt(self.low)}, {_fmt(hi)}{')' if self.high_open else ']'}"

    def check(self, value, resolved: dict | None = None):
        """``value`` if it lies in the range (as float unless ``exact``), else ValueError naming the
        parameter, the value and the valid range.

        Parameters
        ----------
        value : float or int
            The value to check.
        resolved : dict, optional
            Resolved parameters, read for the upper end when ``high`` names another parameter (required then).

        Returns
        -------
        float or int
            ``value`` itself when ``exact``, an int when ``integer``, else ``float(value)``.
        """
        hi = float(resolved[self.high]) if isinstance(self.high, str) else self.high
        try:
            x = float(value)
        except (TypeError, ValueError):
            x = math.nan
        lo_ok = x > self.low if self.low_open else x >= self.low
        hi_ok = x < hi if self.high_open else x <= hi
        if not (lo_ok and hi_ok) or (self.integer and x != math.floor(x)):
            raise ValueError(f"{self.name} must be {'an integer ' if self.integer else ''}in {self.range(resolved)}; got {value!r}")
        return int(x) if self.integer else (value if self.exact else x)


def _fmt(x) -> str:
    return x if isinstance(x, str) else ("inf" if x == math.inf else f"{x:g}")


PARAMS = {p.name: p for p in (
    Param("gamma", defaults.GAMMA, 0.0, 1.0, True, True, "green-list ratio (default 0.25; DualGA / AutoCov: gamma*(Delta))"),
    Param("delta", defaults.DELTA, 0.0, math.inf, False, True, "logit boost of the green list (default 2)"),
    Param("Delta", defaults.TARGET_DG, 0.0, 1.0, True, True, "target DG per token (default 0.3)", exact=False),
    Param("eta", defaults.ETA, 0.0, math.inf, True, True, "dual step size (default 0.5)", unused=defaults.ETA, exact=False),
    Param("lam1", None, 0.0, "M", False, False, "initial dual variable (default delta*(Delta, gamma))", unused=0.0, exact=False),
    Param("tau", defaults.TAU, 0.0, math.inf, True, True, "EMS / PF temperature (default 1)", unused=defaults.TAU),
    Param("alpha", defaults.ALPHA, 0.0, math.inf, False, True, "entropy threshold in nats (default 2)", unused=defaults.ALPHA),
    Param("M", defaults.M, 0.0, math.inf, True, True, "projection bound of lambda (default 15)", unused=defaults.M),
    Param("m", 30, 1, 64, False, False, "tournament layers (default 30)", integer=True, recorded_unused=False),
    Param("candidates", 2, 2, 1024, False, False, "candidates per tournament match K: 2 non-distortionary (default), >= 3 distortionary",
          integer=True, recorded_unused=False),
    Param("mask_repeated", 1, 0, 1, False, False, "1: a repeated context samples from p unmarked (default), 0: no mask",
          integer=True, recorded_unused=False),
    Param("dip_alpha", dipmark.ALPHA, 0.0, 0.5, False, False, "DiPmark's reweight alpha (default 0.45; 0.5: gamma-reweight)",
          exact=False, recorded_unused=False),
    Param("morph_kappa", defaults.MORPH_KAPPA, 0.0, math.inf, True, True, "MorphMark's strength constant kappa: r = min(exp(kappa G) - 1, 1) "
          "(default 1.3)", exact=False, recorded_unused=False),
    Param("morph_p0", defaults.MORPH_P0, 0.0, 1.0, False, False, "MorphMark's threshold p0: no watermark where G < p0 (default 0.15)",
          exact=False, recorded_unused=False),
    Param("gs_tau", defaults.GUMBELSOFT_TAU, 0.0, math.inf, True, True, "GumbelSoft's softmax temperature (default 0.5)", exact=False,
          recorded_unused=False),
    Param("exp_n", defaults.EXP_N, 1, 2**30, False, False, "EXP's key-sequence length n: step t reads xi_{t mod n} (default 256)",
          integer=True, recorded_unused=False),
)}
"""Every parameter by name, in the order of the records' ``meta``."""


class Boost:
    r"""How a boosting algorithm tilts the green list: the numbers the detectors and the planner read of it.

    One object per kind of boost (:data:`FIXED`, :data:`HARD`, :data:`DUAL`), held by the records
    (:attr:`Algorithm.boost`).  ``meta`` is a generation's record, ``info`` the resolved parameters
    (:func:`sims.watermarks.generate.algo_params`), ``G`` (n, T) green masses of the LM's next-token
    distributions.
    """

    signal_reads_masses = True
    """:meth:`signal` reads ``G`` (else it may be None)."""

    def lr(self, meta: dict) -> float:
        """The boost the likelihood-ratio score's weights use (:func:`sims.detect.stats.lr_scores.lr_delta`).

        Parameters
        ----------
        meta : dict
            A generation's record.

        Returns
        -------
        float
            The boost delta, in nats.
        """
        raise NotImplementedError

    def per_text(self, info: dict, G: np.ndarray):
        """The boost of each text for :func:`theory.power.green_probs` (a float, or one per row of ``G``).

        Parameters
        ----------
        info : dict
            The resolved parameters (:func:`sims.watermarks.generate.algo_params`).
        G : numpy.ndarray, shape (n, T)
            Green masses of the LM's next-token distributions.

        Returns
        -------
        float or numpy.ndarray of shape (n,)
            The boost in nats, shared by all texts or one per text.
        """
        raise NotImplementedError

    def green_rate(self, meta: dict, gamma: float) -> float:
        r"""The green rate :math:`\rho` the local score seeks (:func:`sims.detect.stats.local_scores.local_rho`, before its cap):
        the green probability of the record's boost :math:`\delta` on a flat distribution,
        :math:`\gamma e^\delta / (\gamma e^\delta + 1 - \gamma)` (:math:`\delta` = ``defaults.DELTA`` where the record has none).

        Parameters
        ----------
        meta : dict
            A generation's record.
        gamma : float
            The green-list fraction :math:`\gamma`.

        Returns
        -------
        float
            :math:`\rho`, in :math:`[\gamma, 1)`.
        """
        return flat_green_rate(meta, gamma)

    def signal(self, info: dict, G: np.ndarray) -> float:
        """The mean DG per token on texts of green masses ``G`` (:func:`sims.plan.watermark_signal`).

        Parameters
        ----------
        info : dict
            The resolved parameters (:func:`sims.watermarks.generate.algo_params`).
        G : numpy.ndarray, shape (n, T), or None
            Green masses of the LM's next-token distributions (may be None where
            :attr:`signal_reads_masses` is false).

        Returns
        -------
        float
            The mean per-token signal.
        """
        raise NotImplementedError


def flat_green_rate(meta: dict, gamma: float) -> float:
    r""":meth:`Boost.green_rate` of the record's ``delta`` (``defaults.DELTA`` where it has none).

    Parameters
    ----------
    meta : dict
        A generation's record.
    gamma : float
        The green-list fraction :math:`\gamma`.

    Returns
    -------
    float
        :math:`\gamma e^\delta / (\gamma e^\delta + 1 - \gamma)`.
    """
    d = meta.get("delta")
    e = math.exp(float(defaults.DELTA if d is None else d))
    return gamma * e / (gamma * e + 1.0 - gamma)


class FixedBoost(Boost):
    """A fixed logit boost ``delta`` of the green list (SRL; ATW where the entropy exceeds alpha)."""

    def lr(self, meta):
        return float(meta["delta"])

    def per_text(self, info, G):
        return float(info["delta"])

    def signal(self, info, G):
        return float(np.mean(theory.dg_step(float(info["delta"]), G)))


class HardBoost(Boost):
    """An infinite boost: the green list only (the hard watermark)."""

    def lr(self, meta):
        return math.inf

    def per_text(self, info, G):
        return math.inf

    def green_rate(self, meta, gamma):
        return 1.0

    def signal(self, info, G):
        return float(np.mean(1.0 - G))


class DualBoost(Boost):
    """The boost learned by dual gradient ascent to a target DG ``Delta`` (DualGA), starting at ``lam1``."""

    signal_reads_masses = False

    def lr(self, meta):
        return float(meta["lam1"])

    def per_text(self, info, G):
        return theory.dualga_text_boost(G, float(info["Delta"]), float(info["M"]))

    def green_rate(self, meta, gamma):
        if meta.get("Delta") is None:
            return flat_green_rate(meta, gamma)
        return gamma + float(meta["Delta"])

    def signal(self, info, G):
        return float(info["Delta"])


FIXED, HARD, DUAL = FixedBoost(), HardBoost(), DualBoost()
"""The kinds of boost (:class:`Boost`) the records hold."""


@dataclass(frozen=True)
class Algorithm:
    """One watermark algorithm.

    Attributes
    ----------
    name : str
    code : int
        Its branch in the Numba generator; permanent (a new algorithm takes the next free
        code: Numba's cache keys kernels on ``generate.py`` alone).
    params : tuple of str
        The parameters of :data:`PARAMS` it takes besides ``gamma``.
    family : str
        Its detector family: the name of a :class:`sims.detect.families.DetectorFamily` registered in
        :mod:`sims.detect.families` (:func:`sims.detect.families.names`; checked there, when the record is asked).
    reference : callable
        Its NumPy reference step (module docstring).
    defaults : dict
        Per-algorithm defaults: name -> function of the values resolved so far.
    keyed_order : bool
        Samples along the key's vocabulary order (ITS, UW).
    keyed_mode : int, optional
        A keyed-order algorithm's branch in the detection scan :func:`sims.detect.stats._kernels.keyed_order_hits`
        (``ITS_MODE`` 0, ``UW_DELTA_MODE`` 1, ``UW_GAMMA_MODE`` 2).
    siphash : bool
        Boosts a green or red list, which ``prf="siphash"`` can key (:mod:`sims.core.prf_crypto`).
    fused : bool
        Runs as one :class:`sims.torch_backend.fused.FusedBoost` step on the static decoder.
    stealable : bool
        Its green lists can be estimated from text (:mod:`sims.steal`).
    distortion_free : bool
        The key-averaged q equals p.
    point_mass : bool
        q is a point mass at the token drawn (KL = -log p(y)).
    alternating : bool
        Boosts the green list after a red token and the red list after a green one (DualGA-AutoCov).
    boost : Boost, optional
        How it tilts one green list (:data:`FIXED`, :data:`HARD`, :data:`DUAL`); None where it does not.
    lr_score : bool
        The likelihood-ratio score (:mod:`sims.detect.stats.lr_scores`) applies: a known boost of one green list.
    edit_score : bool
        An edit-tolerant alignment score applies: ``its-edit`` (:mod:`sims.detect.stats.edit_scores`) to a
        position-keyed algorithm, which an insertion or deletion misaligns, and ``ems-edit``
        (:mod:`sims.detect.stats.ems_edit`) to context-hashed EMS, whose keys an inserted token moves, and ``exp-edit``
        (:mod:`sims.detect.stats.exp_scores`) to EXP's key sequence (family ``ems_position``).
    plan_scores : tuple of str
        The detection scores the planner (:mod:`sims.plan`) plans for it, its default first;
        empty where it is not planned.
    backends : tuple of str
        Where it runs: ``"numba"`` (its step in :func:`sims.watermarks.generate._generate`, listed
        in ``generate.STEPS``, or its own Numba ``generator``), ``"torch"`` (its processor in
        :data:`sims.torch_backend.processors.PROCESSORS`).
    generator : callable, optional
        Its own generator where it is not a step of ``_generate``:
        ``generator(lm, n=, T=, seed=, key=, h=, prompts=, prompt_len=, prm=) -> Generation``,
        ``prm`` the resolved parameters; :func:`sims.watermarks.generate.generate_synthetic` hands it the call.
    generator_reference : callable, optional
        The NumPy reference of ``generator``: ``(lm, prompts, T, seed, key, h, prm) -> (tokens, records)``,
        records (4, n, T) = (kl, G, dg, entropy).
    doc : str
    color : str
        Its colour in every figure (a matplotlib colour; ``paper_figs.style`` reads it): fixed, so an
        algorithm looks the same in every figure; distinct from every other record's.
    marker : str
        Its marker in every figure (a matplotlib marker), distinct from every other record's: the
        algorithm stays identifiable in grey print and for readers who do not tell the colours apart.
    context_width : int, optional
        The context width it always runs at (Unigram: 0, one green list for every context); None: the
        caller's ``h`` (:func:`context_width`).
    green_kind : str, optional
        The green lists its records and detector use whatever is asked (DiPmark: ``"partition"``, the tail of
        its permutation); None: the caller's (:func:`fixed_green_kind`).
    """

    name: str
    code: int
    params: tuple[str, ...]
    family: str
    reference: Callable
    defaults: dict = field(default_factory=dict)
    keyed_order: bool = False
    keyed_mode: int | None = None
    siphash: bool = False
    fused: bool = False
    stealable: bool = False
    distortion_free: bool = False
    point_mass: bool = False
    alternating: bool = False
    boost: Boost | None = None
    lr_score: bool = False
    edit_score: bool = False
    plan_scores: tuple[str, ...] = ()
    backends: tuple[str, ...] = ("numba", "torch")
    generator: Callable | None = None
    generator_reference: Callable | None = None
    doc: str = ""
    color: str = "#777777"
    marker: str = "o"
    context_width: int | None = None
    green_kind: str | None = None


_REGISTRY: dict[str, Algorithm] = {}


def register(algo: Algorithm) -> Algorithm:
    """Add ``algo`` to the registry (its name and code unused, its parameters known); returns it.

    Parameters
    ----------
    algo : Algorithm
        The record to add.

    Returns
    -------
    Algorithm
        ``algo`` itself.
    """
    if algo.name in _REGISTRY or any(a.code == algo.code for a in _REGISTRY.values()):
        raise ValueError(f"algorithm {algo.name!r} or code {algo.code} is registered already")
    unknown = [p for p in (*algo.params, *algo.defaults) if p not in PARAMS]
    if unknown or not (isinstance(algo.family, str) and algo.family.isidentifier()) or not set(algo.backends) <= {"numba", "torch"}:
        raise ValueError(f"algorithm {algo.name!r}: parameters must be in {tuple(PARAMS)}, family a name and backends in "
                         f"('numba', 'torch'); got {algo.params}, {algo.family!r}, {algo.backends}")
    _REGISTRY[algo.name] = algo
    return algo


def names(**flags) -> tuple[str, ...]:
    """The registered names in code order, those whose attributes equal ``flags`` (e.g. ``family="redgreen"``, ``stealable=True``).

    Parameters
    ----------
    **flags
        Attribute values of :class:`Algorithm` a name's record must have.

    Returns
    -------
    tuple of str
        The matching names, ordered by their codes.
    """
    return tuple(a.name for a in sorted(_REGISTRY.values(), key=lambda a: a.code) if all(getattr(a, k) == v for k, v in flags.items()))


def get(name: str) -> Algorithm:
    """The record of ``name``; ValueError listing the registered names if there is none.

    Parameters
    ----------
    name : str
        A registered algorithm name.

    Returns
    -------
    Algorithm
        Its record.
    """
    try:
        return _REGISTRY[name]
    except (KeyError, TypeError):
        raise ValueError(f"algo must be one of {names()}; got {name!r}") from None


def taking(param: str) -> tuple[str, ...]:
    """The algorithms that take ``param``.

    Parameters
    ----------
    param : str
        A key of :data:`PARAMS` (``gamma`` is taken by every algorithm).

    Returns
    -------
    tuple of str
        Their names, in code order.
    """
    return tuple(a for a in names() if param == "gamma" or param in _REGISTRY[a].params)


def check_params(name: str, **given) -> None:
    """Refuse a parameter of :data:`PARAMS` that algorithm ``name`` does not take, given explicitly
    (``None`` counts as not given; other keywords, such as ``h`` or ``prf``, are the caller's to check).

    Raises ValueError naming the parameter and the algorithms that take it.

    Parameters
    ----------
    name : str
        A registered algorithm name.
    **given
        Parameter values by keyword, as the caller received them.
    """
    algo = get(name)
    for k, v in given.items():
        if v is None or k not in PARAMS or k == "gamma" or k in algo.params:
            continue
        raise ValueError(f"algo {name!r} takes no parameter {k!r} (got {k}={v!r}); {k} is a parameter of {taking(k)}")


def resolve_params(name: str, **given) -> dict:
    """Every parameter of :data:`PARAMS` for algorithm ``name``: the given value or the default,
    checked; one it does not take holds ``Param.unused`` (or the value given, unchecked: use
    :func:`check_params` to refuse it).

    Parameters
    ----------
    name : str
        A registered algorithm name.
    **given
        Parameter values by keyword; None (or absent) takes the default, or the value the record's
        :attr:`Algorithm.defaults` computes from the others.

    Returns
    -------
    dict
        ``{parameter: value}`` of every parameter of :data:`PARAMS` (less those not ``recorded_unused`` that
        the algorithm does not take).
    """
    algo = get(name)
    takes = ("gamma",) + algo.params
    out = {}
    for p in PARAMS.values():
        if not p.recorded_unused and p.name not in takes:
            continue
        v = given.get(p.name)
        out[p.name] = v if v is not None else (p.default if p.name in takes else p.unused)
    deferred = [k for k in algo.defaults if given.get(k) is None]
    for k in takes:  # checked once all are known: lam1's range is [0, M]
        if k not in deferred:
            out[k] = PARAMS[k].check(out[k], out)
    for k in deferred:  # gamma*(Delta), then delta*(Delta, gamma)
        out[k] = PARAMS[k].check(algo.defaults[k](out), out)
    return out


def context_width(name: str, h: int) -> int:
    """The context width algorithm ``name`` runs at: its record's fixed ``context_width`` where it has one
    (Unigram: 0), else ``h``.  The package's default width (``defaults.H``) reads as not given there;
    another width is refused, naming the algorithm's.

    Parameters
    ----------
    name : str
        A registered algorithm name.
    h : int
        The context width asked for.

    Returns
    -------
    int
        The width the algorithm runs at.
    """
    w = get(name).context_width
    if w is None:
        return h
    if int(h) not in (w, defaults.H):
        raise ValueError(f"algo {name!r} runs at context width h = {w} (its green list ignores the context); got h={h!r}")
    return w


def fixed_green_kind(name: str, green_kind: str) -> str:
    """The green-list kind algorithm ``name`` runs with: its record's ``green_kind`` where it has one (DiPmark:
    ``"partition"``), the default ``defaults.GREEN_KIND`` reading as not given there; else ``green_kind``.

    Parameters
    ----------
    name : str
        A registered algorithm name.
    green_kind : str
        The green-list kind asked for.

    Returns
    -------
    str
        The kind the algorithm runs with; ValueError for another fixed kind.
    """
    k = get(name).green_kind
    if k is None:
        return green_kind
    if green_kind not in (k, defaults.GREEN_KIND):
        raise ValueError(f"algo {name!r} runs with green_kind={k!r} (its detector's list); got green_kind={green_kind!r}")
    return k


def own(name: str, prm: dict) -> dict:
    """The entries of ``prm`` that algorithm ``name`` takes (``gamma`` included).

    Parameters
    ----------
    name : str
        A registered algorithm name.
    prm : dict
        Parameters by keyword (:func:`resolve_params`' output, say).

    Returns
    -------
    dict
        The sub-dict of the parameters the algorithm takes.
    """
    algo = get(name)
    return {k: v for k, v in prm.items() if k == "gamma" or k in algo.params}


# ---------------------------------------------------------------------------------------------
# NumPy reference steps (module docstring), one beside each record


def _green(p, window, key, prm) -> np.ndarray:
    if prm.get("seeding", seeding_mod.DEFAULT) != seeding_mod.DEFAULT:  # another seeding scheme (sims.core.seeding)
        return seeding_mod.green_mask(key, np.asarray(window), p.shape[0], prm["gamma"], prm["seeding"])
    return prf.green_mask(prf.context_hash(key, np.asarray(window)), p.shape[0], prm["gamma"])


def _tilt(p: np.ndarray, mask: np.ndarray, d: float) -> np.ndarray:
    q = p * np.exp(d * mask)
    return q / q.sum()


def _point_mass(k: int, V: int) -> np.ndarray:
    q = np.zeros(V)
    q[k] = 1.0
    return q


def _ref_none(p, window, t, key, state, prm):
    """Sampling from p."""
    return p, [state] * p.shape[0]


def _ref_srl(p, window, t, key, state, prm):
    r"""Algorithm kirchen: :math:`q_k \propto p_k e^{\delta 1\{k\ \mathrm{green}\}}`."""
    return _tilt(p, _green(p, window, key, prm), prm["delta"]), [state] * p.shape[0]


def _ref_hard(p, window, t, key, state, prm):
    """p restricted to the green list (delta = inf); p itself where the green mass is 0."""
    q = np.where(_green(p, window, key, prm), p, 0.0)
    return (q / q.sum() if q.sum() > 0 else p), [state] * p.shape[0]


def _ref_dualga(p, window, t, key, state, prm):
    """Algorithm DualGA: delta_t = lambda_t; lambda <- Pi_[0, M](lambda + eta (Delta - DG_t)) (:func:`theory.dualga_update`)."""
    green = _green(p, window, key, prm)
    lam = state[0]
    q = _tilt(p, green, lam)
    lam = theory.dualga_update(lam, q[green].sum() - p[green].sum(), prm["Delta"], prm["eta"], prm["M"])
    return q, [(lam, False)] * p.shape[0]


def _ref_autocov(p, window, t, key, state, prm):
    """Algorithm DualGA_autocov: boost the red list after a green token, the green list after a red
    one (y_0 counts as red); :func:`theory.autocov_update`."""
    green = _green(p, window, key, prm)
    lam, prev_green = state
    q = _tilt(p, ~green if prev_green else green, lam)
    lam = theory.autocov_update(lam, q[green].sum() - p[green].sum(), prev_green, prm["gamma"], prm["Delta"], prm["eta"], prm["M"])
    return q, [(lam, bool(g)) for g in green]


def _ref_ems(p, window, t, key, state, prm):
    r"""Exponential minimum sampling: a point mass at :math:`\arg\max_k \log(r_k) / p_{\tau,k}`, r the keyed uniforms (stream EMS)."""
    return _exp_min_pick(p, prf.uniforms(prf.context_hash(key, np.asarray(window), prf.EMS), np.arange(p.shape[0])), prm), [state] * p.shape[0]


def _ref_exp(p, window, t, key, state, prm):
    r"""Kuditipudi et al.'s EXP: EMS's rule :math:`\arg\max_k \log(\xi_{j,k}) / p_{\tau,k}` keyed by the position,
    :math:`j = t \bmod n` (``exp_n``), not by the context (:func:`sims.core.keys.position_hashes`)."""
    r = prf.uniforms(position_hashes(key, t, prm["exp_n"]), np.arange(p.shape[0]))
    return _exp_min_pick(p, r, prm), [state] * p.shape[0]


def _exp_min_pick(p, r, prm) -> np.ndarray:
    """The point mass at argmax_k log(r_k) / p_tau,k (EMS and EXP)."""
    V = p.shape[0]
    with np.errstate(divide="ignore"):
        w = p if prm["tau"] == 1.0 else np.exp(np.log(p) / prm["tau"])  # p_tau up to its normaliser
        return _point_mass(int(np.argmax(np.log(r) / w)), V)


def _keyed_cdf_pick(p, perm, u):
    cum = np.cumsum(p[perm])
    return _point_mass(int(perm[min(int(np.searchsorted(cum, u)), p.shape[0] - 1)]), p.shape[0])


def _ref_its(p, window, t, key, state, prm):
    """Inverse transform sampling: the token where the keyed-order CDF passes u_t, u_t from the key and the position t."""
    u = rng.uniforms(rng.stream_key(key, ITS_STREAM), np.array([t]))[0]
    return _keyed_cdf_pick(p, keyed_order(key, p.shape[0]), u), [state] * p.shape[0]


def _ref_uw_delta(p, window, t, key, state, prm):
    """UW delta-reweight: as ITS with u_t from the context hash (stream STEP, slot V)."""
    V = p.shape[0]
    u = prf.uniforms(prf.context_hash(key, np.asarray(window), prf.STEP), np.array([V]))[0]
    return _keyed_cdf_pick(p, keyed_order(key, V), u), [state] * V


def _ref_uw_gamma(p, window, t, key, state, prm):
    """UW gamma-reweight: in the keyed order, or its reverse (slot V + 1 of stream STEP), the mass
    below the CDF's midpoint is dropped and the mass above doubled."""
    V = p.shape[0]
    perm = keyed_order(key, V)
    order = perm[::-1] if prf.uniforms(prf.context_hash(key, np.asarray(window), prf.STEP), np.array([V + 1]))[0] < 0.5 else perm
    cum = np.cumsum(p[order])
    prev = np.concatenate([[0.0], cum[:-1]])
    q = np.zeros(V)
    q[order] = 2.0 * (np.maximum(cum, 0.5) - np.maximum(prev, 0.5))
    return q, [state] * V


def _ref_atw(p, window, t, key, state, prm):
    """Adaptive text watermark: SRL's boost where the entropy of p exceeds alpha, p elsewhere."""
    d = prm["delta"] if theory.entropy(p) > prm["alpha"] else 0.0
    return _tilt(p, _green(p, window, key, prm), d), [state] * p.shape[0]


def _ref_morphmark(p, window, t, key, state, prm):
    r"""MorphMark (:mod:`sims.watermarks.morphmark`): the mass :math:`r(1 - G)` moved from the red list to the
    green list, each rescaled in proportion to p; :math:`r = \min(e^{\kappa G} - 1, 1)` where :math:`G \ge p_0`, else 0."""
    green = _green(p, window, key, prm)
    G = p[green].sum()
    r = min(np.exp(prm["morph_kappa"] * G) - 1.0, 1.0) if G >= prm["morph_p0"] else 0.0
    if r == 0.0:
        return p, [state] * p.shape[0]
    q = np.where(green, p * (1.0 + r * (1.0 - G) / G), p * (1.0 - r))
    return q, [state] * p.shape[0]


def _gamma_star(v: dict) -> float:
    return theory.gamma_star(v["Delta"])


def _lam1_star(v: dict) -> float:
    """lambda_1 = delta*(Delta, gamma) capped at M (M where Delta >= 1 - gamma: no finite boost reaches it)."""
    Delta, gamma, M = v["Delta"], v["gamma"], v["M"]
    return min(theory.delta_star(Delta, gamma), M) if Delta < 1.0 - gamma else M


_DUAL = dict(params=("Delta", "eta", "lam1", "M"), defaults=dict(gamma=_gamma_star, lam1=_lam1_star), siphash=True, stealable=True)

register(Algorithm("none", 0, (), "redgreen", _ref_none, siphash=True, fused=True, distortion_free=True, doc="sample from p", color="#999999", marker="x"))
_GREEN_PLAN = ("green", "lr")
register(Algorithm("srl", 1, ("delta",), "redgreen", _ref_srl, siphash=True, fused=True, stealable=True, boost=FIXED, lr_score=True,
                   plan_scores=_GREEN_PLAN, doc="soft red list, fixed boost delta (Algorithm kirchen)", color="#0072B2", marker="o"))
register(Algorithm("hard", 2, (), "redgreen", _ref_hard, siphash=True, stealable=True, boost=HARD, lr_score=True, plan_scores=_GREEN_PLAN,
                   doc="hard red list (delta = inf)", color="#56B4E9", marker="s"))
register(Algorithm("dualga", 3, family="redgreen", reference=_ref_dualga, fused=True, boost=DUAL, lr_score=True, plan_scores=_GREEN_PLAN, **_DUAL,
                   doc="Algorithm DualGA: the boost learned by dual gradient ascent to a target DG Delta", color="#000000", marker="D"))
register(Algorithm("autocov", 4, family="autocov", reference=_ref_autocov, alternating=True, **_DUAL,
                   doc="Algorithm DualGA_autocov: green after a red token, red after a green one", color="#CC79A7", marker="P"))
register(Algorithm("ems", 5, ("tau",), "ems", _ref_ems, distortion_free=True, point_mass=True, edit_score=True,
                   plan_scores=("ems-ars", "ems-log", "ems-opt", "ems-hc", "ems-trgof"), doc="exponential minimum sampling (Gumbel-max), stream EMS",
                   color="#D55E00", marker="^"))
register(Algorithm("its", 6, (), "keyed", _ref_its, keyed_order=True, keyed_mode=0, distortion_free=True, point_mass=True, edit_score=True,
                   doc="inverse transform sampling over the keyed order (Kuditipudi et al.)", color="#E69F00", marker="v"))
register(Algorithm("uw-delta", 7, (), "keyed", _ref_uw_delta, keyed_order=True, keyed_mode=1, distortion_free=True, point_mass=True,
                   doc="unbiased watermark, delta-reweight", color="#009E73", marker="<"))
register(Algorithm("uw-gamma", 8, (), "keyed", _ref_uw_gamma, keyed_order=True, keyed_mode=2, distortion_free=True,
                   doc="unbiased watermark, gamma-reweight", color="#8C564B", marker=">"))
register(Algorithm("atw", 9, ("delta", "alpha"), "redgreen", _ref_atw, siphash=True, stealable=True, boost=FIXED,
                   doc="adaptive text watermark: boost delta where the entropy of p_t exceeds alpha", color="#882255", marker="*"))
# code 10: synthid (sims.watermarks.tournament)
# Unigram: no LR score (its exact null keeps the first token of each context: at h = 0, one token per text)
register(Algorithm("unigram", 11, ("delta",), "redgreen", unigram.ref_unigram, defaults=dict(gamma=lambda v: unigram.GAMMA), boost=FIXED,
                   context_width=0, plan_scores=("green",), stealable=True,
                   doc="Unigram (Zhao et al. 2023): SRL's boost delta of one fixed keyed green list (h = 0)",
                   color="#44AA99", marker="p"))
register(Algorithm("dipmark", 12, ("dip_alpha",), "redgreen", dipmark.ref_dipmark, defaults=dict(gamma=lambda v: dipmark.GAMMA),
                   distortion_free=True, green_kind="partition", plan_scores=("green",),
                   doc="DiPmark (Wu et al. 2023): alpha-reweight of the context's keyed permutation; its tail is the green list",
                   color="#999933", marker="H"))
register(Algorithm("morphmark", 13, ("morph_kappa", "morph_p0"), "redgreen", _ref_morphmark, defaults=dict(gamma=lambda v: defaults.MORPH_GAMMA),
                   siphash=True, stealable=True, plan_scores=("green",),
                   doc="MorphMark (Wang et al. 2025): mass r(1 - G_t) moved to the green list, r = min(exp(kappa G_t) - 1, 1) where G_t >= p0",
                   color="#E41A1C", marker="8"))
# SWEET: ATW's generation rule (its reference step, the generator's ATW branch) with a detector of its own (the entropy_gated family)
register(Algorithm("sweet", 14, ("delta", "alpha"), "entropy_gated", _ref_atw, siphash=True, stealable=True, boost=FIXED, plan_scores=("green",),
                   doc="SWEET (Lee et al. 2023): boost delta where the entropy of p_t exceeds alpha; detection counts only those positions",
                   color="#117733", marker="d"))
register(Algorithm("pf", 15, ("tau",), "ems", pf.ref_pf, point_mass=True,
                   doc="Permute-and-Flip (Zhao, Li, Wang 2024): argmax log(p_k)/tau - log r_k, r = 1 - the EMS stream's uniforms",
                   color="#6A3D9A", marker="+"))
register(Algorithm("gumbelsoft", 16, ("gs_tau",), "ems", gumbelsoft.ref_gumbelsoft,
                   doc="GumbelSoft (Fu et al. 2024): a draw from softmax((log p + g)/gs_tau), g the EMS stream's Gumbel noise",
                   color="#B15928", marker="X"))
# EXP (Kuditipudi, Thickstun, Hashimoto, Liang 2023, "Robust distortion-free watermarks for language models", Section 2
# "Methodology and theoretical analysis", exponential minimum sampling): EMS's rule keyed by the key sequence xi_{t mod n};
# detected by the EMS sum read at positions (family "ems_position") and by the Levenshtein alignment exp-edit.  They also
# draw a random shift of the key sequence per text; we take shift 0 (step t reads xi_{t mod n}), so the permutation test's
# fresh keys play the role of their fresh key sequences.
register(Algorithm("exp", 17, ("tau", "exp_n"), "ems_position", _ref_exp, distortion_free=True, point_mass=True, edit_score=True,
                   doc="EXP (Kuditipudi et al. 2023): argmax_k log(xi_{t mod n, k}) / p_tau,k, xi the key sequence of length exp_n",
                   color="#1F78B4", marker="1"))


SEEDING_ALGOS = names(siphash=True)
"""The algorithms whose green list a seeding scheme (:mod:`sims.core.seeding`) seeds: the red-green family
(their boosted list; ``none`` records its green mass)."""


def check_seeding(name: str, seeding: str, *, green_kind: str = defaults.GREEN_KIND, prf: str = defaults.PRF) -> int:
    """The code of seeding scheme ``seeding`` (:data:`sims.core.seeding.SEEDINGS`) for algorithm ``name``.

    ``"lefthash"`` (the default) holds for every algorithm; another scheme only for :data:`SEEDING_ALGOS`,
    with Bernoulli green lists keyed by SplitMix64.  Raises ValueError naming the parameter, its value
    and the valid ones.

    Parameters
    ----------
    name : str
        A registered algorithm name.
    seeding : str
        The seeding scheme's name.
    green_kind : str
        The green-list kind (``"bernoulli"`` for a scheme other than ``"lefthash"``).
    prf : str
        The pseudorandom function (``"splitmix64"`` for a scheme other than ``"lefthash"``).

    Returns
    -------
    int
        The scheme's code.
    """
    c = seeding_mod.code(seeding)
    if c != seeding_mod.LEFTHASH and (name not in SEEDING_ALGOS or green_kind != "bernoulli" or prf != "splitmix64"):
        raise ValueError(f"seeding {seeding!r} seeds the Bernoulli SplitMix64 green lists of {SEEDING_ALGOS}; got algo={name!r}, "
                         f"green_kind={green_kind!r}, prf={prf!r} (only 'lefthash' there)")
    return c
