"""The grid file of a sweep (TOML): parsed, validated before anything runs, expanded to configurations.

A grid file (``examples/sweep_quick.toml``)::

    lm = ["news", "lfqa"]        # any LM of sims.get_lm (preset, fitted .npz, "smollm2", random-*, a folder) or "uniform"
    n = 500                      # texts per (configuration, seed)
    T = 200                      # tokens per text
    chunk = 50                   # texts per task
    seeds = [0]
    controls = true              # also score n unwatermarked texts per configuration (empirical FPR)
    score = "lr"                 # optional: a detector score family of the registry for every algorithm (default: each one's own)
    sampler = "levels"           # optional: unwatermarked texts of a synthetic LM by the O(log V) sampler (sims.watermarks.null_sampler)

    [[algo]]
    name = "srl"
    delta = [1.0, 5.0]           # lists multiply (Cartesian product) ...
    gamma = [0.1, 0.5]

    [[algo]]
    name = "dualga"
    Delta = 0.4
    zip = { lam1 = [1.0, 10.0], eta = [0.1, 10.0] }   # ... lists under ``zip`` are zipped

    [[attack]]
    kind = "deletion"
    rate = [0.1, 0.2]

Every unknown key, algorithm, parameter, LM, attack or metric, and every value the generator
would refuse, raises :class:`GridError` naming the file, the line and the key (``tomllib``
keeps no positions, so the line is found by scanning the text for the key).
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import pathlib
import re
import tomllib

from sims.core import defaults
from sims.experiments.attacks import KINDS as ATTACK_KINDS
from sims.experiments.evaluate import FPRS, TTD_LEVEL
from sims.lm.kind import LM_CHOICES, SYNTHETIC_KINDS, is_real, lm_kind
from sims.watermarks import registry
from sims.watermarks.generate import algo_params

COMMON_PARAMS = registry.COMMON  #: gamma, h and green_kind set the green list every record uses
NULL_LMS = ("uniform",)  #: i.i.d. uniform tokens (algorithm none only): the detector's cheapest null
#: The metrics a grid records per text when it names none: the exact records' per-token means (``kl``, ``dg``,
#: ``entropy``), the detector's ``z``, ``log10_p``, ``n_scored`` and ``score``, and ``tokens_to_detect``.
DEFAULT_METRICS = ("kl", "dg", "entropy", "z", "log10_p", "n_scored", "score", "tokens_to_detect")
PEEK_METRICS = ("peek_log10_p", "anytime_log10_p")  #: red-green: naive every-prefix testing vs the anytime-valid test (opt in)
#: Every metric a grid's ``metrics`` may name: :data:`DEFAULT_METRICS` and :data:`PEEK_METRICS`.
METRICS = DEFAULT_METRICS + PEEK_METRICS
#: The top-level keys of a grid file with their defaults (None: no default; ``algo`` and ``attack`` are tables).
SWEEP_KEYS = dict(lm="news", n=100, T=200, chunk=50, seeds=[0], key=defaults.KEY, dedup=True, controls=False, prompt_len=16,
                  fprs=list(FPRS), ttd_level=TTD_LEVEL, metrics=list(DEFAULT_METRICS), algo=None, attack=None, score=None, sampler=None)


def dedup_rule(algo: str, dedup: bool) -> str:
    """What the grid's ``dedup`` does for algorithm ``algo``.

    ``"pairs"`` (on) / ``"off"``: every family but the tournament: each (seed, token) pair scored once
    (Fernandez et al.; :mod:`sims.detect.stats.scores`) or every token scored.  The tournament family (SynthID-Text)
    has no green list, so the pair dedup does not apply to it (its scorer refuses it); its own rule is that of
    its generator (:mod:`sims.detect.stats.tournament_scores`): ``"context-mask"`` (on): a position whose context of
    ``h`` tokens was met earlier in the text is not scored, whatever the generation's ``mask_repeated`` (the
    scored g-values are then i.i.d. under the null); ``"generation"`` (off): the generation's own
    ``mask_repeated`` decides.  Sweep rows of such a family carry the rule in a ``dedup`` column; the grid's
    hash does not depend on it (the rule is a function of the algorithm and ``dedup``).

    Parameters
    ----------
    algo : str
        A registry algorithm.
    dedup : bool
        The grid's ``dedup``.

    Returns
    -------
    str
        ``"pairs"`` or ``"off"``, or the family's own rule (``"context-mask"`` or ``"generation"``).
    """
    from sims.detect import families

    own = families.of(algo).own_dedup  # the family's own rule, on and off
    if own is not None:
        return own[0 if dedup else 1]
    return "pairs" if dedup else "off"


class GridError(ValueError):
    """A grid file that cannot run, with its place: ``FILE:LINE: key 'KEY': what is wrong``."""


@dataclasses.dataclass(frozen=True)
class Config:
    """One configuration: an LM, an algorithm and its parameters as given (defaults filled at run time).

    Parameters
    ----------
    lm : str
        Any LM of :func:`sims.get_lm`, or ``"uniform"`` (i.i.d. uniform tokens).
    algo : str
        A registry algorithm.
    params : tuple
        The parameters as sorted (name, value) pairs.
    """

    lm: str
    algo: str
    params: tuple  # sorted (name, value) pairs

    @property
    def real(self) -> bool:
        """True for a real LM (:func:`sims.lm.kind.is_real`; runs only on workers with a ``GPU`` resource)."""
        return self.lm not in NULL_LMS and is_real(self.lm)

    def as_dict(self) -> dict:
        """The configuration as JSON-ready fields: ``lm``, ``algo`` and ``params`` (a dict).

        Returns
        -------
        dict
        """
        return dict(lm=self.lm, algo=self.algo, params=dict(self.params))

    @property
    def id(self) -> str:
        """12 hex digits of the SHA-256 of the canonical JSON (names the chunk files)."""
        return hashlib.sha256(json.dumps(self.as_dict(), sort_keys=True).encode()).hexdigest()[:12]

    def label(self) -> str:
        """A readable label: the LM, the algorithm and its parameters (``news srl delta=2, gamma=0.25``).

        Returns
        -------
        str
        """
        return f"{self.lm} {self.algo} " + ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in self.params)


@dataclasses.dataclass(frozen=True)
class Grid:
    """A validated grid: configurations x seeds x chunks, and the settings every task shares.

    Made by :func:`load_grid`; the fields are the grid file's keys (module docstring) after validation.

    Parameters
    ----------
    path : str
        The grid file (not part of the hash).
    configs : tuple of Config
        Every configuration, in file order.
    n, T : int
        Texts per (configuration, seed) and tokens per text.
    chunk : int
        Texts per task.
    seeds : tuple of int
        The grid seeds.
    key : int
        Watermark key.
    dedup : bool
        Score each (context, token) pair once (:func:`dedup_rule`).
    controls : bool
        Also score ``n`` unwatermarked texts per configuration and seed (the empirical FPR).
    prompt_len : int
        Prompt tokens of a synthetic LM's texts.
    fprs : tuple of float
        The levels of the summary's TPR and FPR.
    ttd_level : float
        Level of ``tokens_to_detect``.
    metrics : tuple of str
        Metrics recorded per text (:data:`METRICS`).
    attacks : tuple of (str, float)
        (kind, rate) of each attack run on every chunk.
    score : str or None, optional
        A registered score family replacing each algorithm's default detector, or None.
    sampler : str or None, optional
        ``"levels"``: the unwatermarked texts drawn by :mod:`sims.watermarks.null_sampler`; None: the generator.
    """

    path: str
    configs: tuple[Config, ...]
    n: int
    T: int
    chunk: int
    seeds: tuple[int, ...]
    key: int
    dedup: bool
    controls: bool
    prompt_len: int
    fprs: tuple[float, ...]
    ttd_level: float
    metrics: tuple[str, ...]
    attacks: tuple[tuple[str, float], ...]
    score: str | None = None  # a registered score family (sims.detect.families.score_families.score_names) or None: each algorithm's default detector
    sampler: str | None = None  # "levels": algorithm none and the controls drawn by sims.watermarks.null_sampler; None: the generator

    @property
    def n_chunks(self) -> int:
        """Tasks per (configuration, seed): ``ceil(n / chunk)``."""
        return -(-self.n // self.chunk)

    def canonical(self) -> dict:
        """Everything that determines the rows (not the file's path), JSON-ready.

        Returns
        -------
        dict
            The settings (``score`` and ``sampler`` only where set, so that older grids keep their hash) and
            ``configs`` as :meth:`Config.as_dict`.
        """
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name not in ("path", "configs")}
        for opt in ("score", "sampler"):  # grids without these keys keep their hash
            if d[opt] is None:
                del d[opt]
        d["configs"] = [c.as_dict() for c in self.configs]
        return json.loads(json.dumps(d))

    def dedup_rules(self) -> dict[str, str]:
        """The dedup rule of each algorithm of the grid (:func:`dedup_rule`), as written to ``grid.json``.

        Returns
        -------
        dict of str to str
            Algorithm -> rule.
        """
        return {c.algo: dedup_rule(c.algo, self.dedup) for c in self.configs}

    @property
    def hash(self) -> str:
        """SHA-256 (hex) of the canonical JSON (:meth:`canonical`): a results folder holds the chunks of one grid hash."""
        return hashlib.sha256(json.dumps(self.canonical(), sort_keys=True).encode()).hexdigest()


class _Locator:
    """Line numbers of keys in the grid's text (first match at or after a given line)."""

    def __init__(self, path: str, text: str):
        self.path = path
        self.lines = [ln.split("#", 1)[0] for ln in text.splitlines()]

    def line(self, key: str, start: int = 0) -> int | None:
        pat = re.compile(rf'(^|[\s{{,])("?){re.escape(key)}\2\s*=')
        for i in range(start, len(self.lines)):
            if pat.search(self.lines[i]):
                return i + 1
        return None

    def header(self, table: str, k: int) -> int:
        """0-based index of the line of the k-th ``[[table]]`` header (0 if none)."""
        hits = [i for i, ln in enumerate(self.lines) if re.match(rf"\s*\[\[\s*{re.escape(table)}\s*\]\]", ln)]
        return hits[k] if k < len(hits) else 0

    def error(self, key: str, msg: str, start: int = 0) -> GridError:
        ln = self.line(key, start)
        return GridError(f"{self.path}:{ln if ln else '?'}: key {key!r}: {msg}")


def _as_list(v) -> list:
    return list(v) if isinstance(v, list) else [v]


def _int(loc: _Locator, raw: dict, key: str, lo: int) -> int:
    v = raw[key]
    if isinstance(v, bool) or not isinstance(v, int) or v < lo:
        raise loc.error(key, f"must be an integer in [{lo}, inf); got {v!r}")
    return v


def _check_lm(loc: _Locator, name, base: pathlib.Path) -> str:
    """A grid's LM: ``uniform``, or any name :func:`sims.lm.kind.lm_kind` knows; a fitted ``.npz`` or a
    model folder given relative to the grid file's folder is kept as its absolute path."""
    if not isinstance(name, str):
        raise loc.error("lm", f"must be {LM_CHOICES} or {NULL_LMS[0]!r}; got {name!r}")
    if name in NULL_LMS:
        return name
    path = pathlib.Path(name)
    local = path if path.is_absolute() else base / path
    try:
        if local.exists():  # a file or folder next to the grid
            lm_kind(str(local))
            return str(local.resolve())
        lm_kind(name)
    except ValueError:
        raise loc.error("lm", f"unknown LM {name!r}: {LM_CHOICES}, or {NULL_LMS[0]!r} (i.i.d. tokens)") from None
    return name


def _check_params(loc: _Locator, algo: str, params: dict, start: int) -> None:
    """Refuse the parameter values the generator would refuse (its own messages), with the line."""
    ap = {k: v for k, v in params.items() if k not in ("h", "green_kind")}
    if "h" in params and (isinstance(params["h"], bool) or not isinstance(params["h"], int) or params["h"] < 1):
        raise loc.error("h", f"must be an integer in [1, inf); got {params['h']!r}", start)
    if "green_kind" in params and params["green_kind"] not in ("bernoulli", "partition"):
        raise loc.error("green_kind", f"must be 'bernoulli' or 'partition'; got {params['green_kind']!r}", start)
    for k, v in ap.items():
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise loc.error(k, f"must be a number; got {v!r}", start)
    try:
        algo_params(algo, **{k: float(v) for k, v in ap.items()})
    except ValueError as exc:
        bad = next((k for k in ap if k in str(exc).split(" must")[0]), next(iter(ap), "name"))
        raise loc.error(bad, str(exc), start) from None


def _expand_algo(loc: _Locator, table: dict, k: int) -> list[tuple[str, dict]]:
    start = loc.header("algo", k)
    algo = table.get("name")
    try:
        allowed = COMMON_PARAMS + registry.get(algo).params
    except ValueError:
        raise loc.error("name", f"unknown algorithm {algo!r}: one of {registry.names()}", start) from None
    zipped = table.get("zip", {})
    if not isinstance(zipped, dict):
        raise loc.error("zip", f"must be a table of equal-length lists; got {zipped!r}", start)
    for key in [k_ for k_ in table if k_ not in ("name", "zip")] + list(zipped):
        if key not in allowed:
            raise loc.error(key, f"unknown parameter {key!r} of algorithm {algo!r}: one of {allowed}", start)
    zl = [_as_list(v) for v in zipped.values()]
    if zl and len({len(v) for v in zl}) != 1:
        raise loc.error(next(iter(zipped)), f"the lists under zip must have equal lengths; got {[len(v) for v in zl]}", start)
    axes = {key: _as_list(v) for key, v in table.items() if key not in ("name", "zip")}
    for key, vals in axes.items():
        if not vals:
            raise loc.error(key, "is an empty list", start)
    zip_rows = [dict(zip(zipped, row)) for row in zip(*zl)] if zl else [{}]
    out = []
    for combo in itertools.product(*axes.values()):
        for zr in zip_rows:
            params = {**dict(zip(axes, combo)), **zr}
            _check_params(loc, algo, params, start)
            out.append((algo, {p: (float(v) if p not in ("h", "green_kind") else v) for p, v in sorted(params.items())}))
    return out


def _attacks(loc: _Locator, tables: list) -> tuple[tuple[str, float], ...]:
    out = []
    for k, t in enumerate(tables):
        start = loc.header("attack", k)
        for key in t:
            if key not in ("kind", "rate"):
                raise loc.error(key, "unknown attack key: 'kind' or 'rate'", start)
        kind = t.get("kind")
        if kind not in ATTACK_KINDS:
            raise loc.error("kind", f"unknown attack {kind!r}: one of {ATTACK_KINDS}", start)
        for r in _as_list(t.get("rate", 0.1)):
            if isinstance(r, bool) or not isinstance(r, (int, float)) or not 0.0 <= r <= 1.0:
                raise loc.error("rate", f"must be in [0, 1]; got {r!r}", start)
            out.append((kind, float(r)))
    return tuple(out)


def load_grid(path) -> Grid:
    """Read, validate and expand a grid file.

    Parameters
    ----------
    path : str or os.PathLike
        The TOML grid file (``examples/sweep_quick.toml``).

    Returns
    -------
    Grid
        The validated grid, its lists expanded to configurations (products, and ``zip`` tables zipped).

    Raises
    ------
    GridError
        On bad input, naming the file, the line and the key: invalid TOML, an unknown key, algorithm,
        parameter, LM, attack or metric, or a value the generator would refuse.
    """
    path = pathlib.Path(path)
    text = path.read_text()
    loc = _Locator(str(path), text)
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise GridError(f"{path}: not valid TOML: {exc}") from None
    for key in raw:
        if key not in SWEEP_KEYS:
            raise loc.error(key, f"unknown key: one of {tuple(SWEEP_KEYS)}")
    raw = {**{k: v for k, v in SWEEP_KEYS.items() if v is not None}, **raw}
    lms = [_check_lm(loc, name, path.parent) for name in _as_list(raw["lm"])]
    n, T, chunk, plen = (_int(loc, raw, k, lo) for k, lo in (("n", 1), ("T", 1), ("chunk", 1), ("prompt_len", 2)))
    seeds = _as_list(raw["seeds"])
    if not seeds or any(isinstance(s, bool) or not isinstance(s, int) or not 0 <= s < 2**63 for s in seeds) or len(set(seeds)) < len(seeds):
        raise loc.error("seeds", f"must be distinct integers in [0, 2**63); got {raw['seeds']!r}")
    key = raw["key"]
    if isinstance(key, bool) or not isinstance(key, int) or not 0 <= key < 2**63:
        raise loc.error("key", f"must be an integer in [0, 2**63); got {key!r}")
    for flag in ("dedup", "controls"):
        if not isinstance(raw[flag], bool):
            raise loc.error(flag, f"must be true or false; got {raw[flag]!r}")
    fprs = _as_list(raw["fprs"])
    if not fprs or any(isinstance(a, bool) or not isinstance(a, (int, float)) or not 0.0 < a < 1.0 for a in fprs):
        raise loc.error("fprs", f"must be levels in (0, 1); got {raw['fprs']!r}")
    ttd = raw["ttd_level"]
    if isinstance(ttd, bool) or not isinstance(ttd, (int, float)) or not 0.0 < ttd < 1.0:
        raise loc.error("ttd_level", f"must be in (0, 1); got {ttd!r}")
    metrics = _as_list(raw["metrics"])
    for m in metrics:
        if m not in METRICS:
            raise loc.error("metrics", f"unknown metric {m!r}: one of {METRICS}")
    algos = raw.get("algo")
    if not isinstance(algos, list) or not algos:
        raise GridError(f"{path}: no [[algo]] table: the grid needs at least one algorithm")
    expanded = [c for k, t in enumerate(algos) for c in _expand_algo(loc, t, k)]
    configs = tuple(Config(lm, a, tuple(p.items())) for lm in lms for a, p in expanded)
    if len({c.id for c in configs}) < len(configs):
        raise GridError(f"{path}: the grid lists a configuration twice")
    attacks = _attacks(loc, raw.get("attack", []))
    if any(c.lm in NULL_LMS and c.algo != registry.NULL for c in configs):
        raise loc.error("name", f"lm {NULL_LMS[0]!r} draws i.i.d. tokens: its only algorithm is 'none'")
    return Grid(str(path), configs, n, T, chunk, tuple(seeds), int(key), raw["dedup"], raw["controls"], plen, tuple(float(a) for a in fprs),
                float(ttd), tuple(metrics), attacks, _score(loc, raw.get("score"), configs), sampler=_sampler(loc, raw.get("sampler"), configs))


def _sampler(loc: _Locator, name, configs) -> str | None:
    """The grid's ``sampler`` key: ``"levels"`` (every LM synthetic) or ``"blocks"`` (the default, stored as None)."""
    if name is None or name == "blocks":
        return None
    if name != "levels":
        raise loc.error("sampler", f"must be 'blocks' or 'levels'; got {name!r}")
    for cfg in configs:
        if cfg.lm in NULL_LMS or lm_kind(cfg.lm) not in SYNTHETIC_KINDS:
            raise loc.error("sampler", f"'levels' draws from a synthetic LM's tables; lm {cfg.lm!r} is not one")
    return name


def _score(loc: _Locator, name, configs) -> str | None:
    """The grid's ``score`` key: a registered score family that scores every algorithm of the grid."""
    if name is None:
        return None
    from sims.detect.families import score_families

    for cfg in configs:
        try:
            score_families.get_score(name, cfg.algo)
        except ValueError as exc:
            raise loc.error("score", str(exc)) from None
    return name
