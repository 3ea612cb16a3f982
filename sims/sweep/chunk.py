"""One task of a sweep: the rows of one (configuration, seed, chunk of texts), a pure function of them.

Text ``j`` of configuration ``c`` under seed ``s`` lies in chunk ``k = j // chunk``.  The chunk's
texts are drawn by one call of the LM's ``generate`` (:class:`sims.lm.door.LM`) whose seed is derived
from (s, k) alone (:func:`chunk_seed`): text ``j`` is text ``i = j - k * chunk`` of that call,
so it uses the counter stream (chunk_seed(s, k), i) and its prompt is row ``i`` of
:func:`~sims.watermarks.generate.sample_prompts` under the same seed.  Nothing depends on
which worker runs the chunk, on what ran before it, or on a retry; every configuration sees
the same prompts in the same chunk (common random numbers across the grid).  The rows do
depend on the chunk size, which is part of the grid (and of its hash).

Columns: the configuration (``config`` id, ``lm``, ``algo`` and the resolved parameters),
``seed``, ``chunk``, ``text`` (j), ``null`` (an unwatermarked control text of the same LM,
key and detector), ``attack`` ("none" or "kind:rate"), then the grid's metrics per text:
``kl``, ``dg``, ``entropy`` (means per token of the exact records; an attacked text keeps
those of its generation), ``z``, ``log10_p``, ``n_scored``, ``score`` (the detector's
statistic), ``tokens_to_detect`` (red-green and EMS; nan elsewhere or never detected), and, when
the grid asks, ``peek_log10_p`` / ``anytime_log10_p`` (red-green detectors; nan elsewhere): the
smallest fixed-length log10 p-value over the text's prefixes (naive every-prefix testing flags at
alpha iff it is <= log10 alpha) and the anytime-valid log10 p-value of the e-process
(:func:`sims.detect.anytime.peeking.peek_pvalues`).  A grid
``score`` (a registered score family) replaces each algorithm's default detector in ``z``,
``log10_p``, ``n_scored`` and ``score``; ``tokens_to_detect`` is then nan (prefix p-values are the
default detectors').  A grid's ``sampler = "levels"`` draws the unwatermarked texts (algorithm ``none`` and
the controls) by :func:`sims.watermarks.null_sampler.generate_null`: the same distributions, O(log V) per token.
"""

from __future__ import annotations

import numpy as np

from sims.core import rng
from sims.core.record import Generation
from sims.detect import families
from sims.detect.anytime import peeking
from sims.detect.families import detectors
from sims.detect.families.score_families import score_generation
from sims.detect.stats import scores as detect
from sims.detect.stats.lr_scores import lr_delta
from sims.detect.stats.tournament_scores import score_tournament
from sims.experiments.attacks import attack
from sims.generation.any_lm import generate
from sims.lm.door import get_lm
from sims.sweep.grid import dedup_rule
from sims.watermarks import registry
from sims.watermarks.null_sampler import generate_null

UNIFORM_V = 32000  #: vocabulary of lm = "uniform" (the presets' size)
NULL_STREAM = 1  #: chunk_seed(s, k, NULL_STREAM): the control texts; 2 + a: attack number a
#: The registry parameters written as one float column each (nan where the configuration's algorithm has none).
PARAM_COLUMNS = tuple(registry.PARAMS)


def chunk_seed(seed: int, chunk: int, stream: int = 0) -> int:
    """The generator seed of chunk ``chunk`` under grid seed ``seed`` (63 bits of the counter PRF).

    Parameters
    ----------
    seed : int
        The grid seed.
    chunk : int
        The chunk's index.
    stream : int, optional
        0: the watermarked texts; :data:`NULL_STREAM`: the control texts; ``2 + a``: attack number ``a``.

    Returns
    -------
    int
        A seed in [0, 2**63), a function of (seed, chunk, stream) alone (:func:`sims.core.rng.stream_key`).
    """
    return int(rng.stream_key(int(rng.stream_key(seed, chunk)), stream)) >> 1


def _uniform_texts(*, n: int, T: int, seed: int, key: int, prompt_len: int, gamma=None, h: int = 1, green_kind: str = "bernoulli") -> Generation:
    """Texts of i.i.d. uniform tokens over ``UNIFORM_V`` (lm = "uniform", algorithm ``none``): the cheapest null
    of the red-green detector, drawn by ``numpy.random.default_rng(seed)`` (prompt then text, row by row);
    KL = 0, G and DG undefined (nan), entropy log V."""
    toks = np.random.default_rng(seed).integers(0, UNIFORM_V, size=(n, prompt_len + T))
    g = 0.25 if gamma is None else float(gamma)
    zero, nan = np.zeros((n, T)), np.full((n, T), np.nan)
    meta = dict(lm="uniform", vocab_size=UNIFORM_V, algo="none", key=int(key), seed=int(seed), h=int(h), green_kind=green_kind, gamma=g)
    return Generation(toks[:, prompt_len:], toks[:, :prompt_len], zero, nan, nan.copy(), np.full((n, T), np.log(UNIFORM_V)), nan.copy(), meta)


def _per_text(a: np.ndarray) -> np.ndarray:
    return a.mean(axis=1) if a.size else np.zeros(a.shape[0])


def _detect(gen, lm, task: dict, algo: str, wm_meta: dict):
    """The grid's detector of ``algo`` on texts ``gen``: its ``score`` family if the grid names one, else the
    default; the LR score's boost is the watermarked generation's (``wm_meta``), controls included.  The
    grid's ``dedup`` runs as :func:`sims.sweep.grid.dedup_rule` says for the algorithm's family."""
    if task.get("score") is None and families.of(algo).own_dedup is not None:  # the tournament: its own dedup rule
        return _detect_tournament(gen, task, wm_meta)
    if task.get("score") is None:
        return detectors.score(gen, lm, dedup=task["dedup"], algo=algo, params=_gate_params(algo, wm_meta))
    delta = lr_delta(wm_meta) if task["score"] == "lr" else None
    return score_generation(gen, task["score"], lm, dedup=task["dedup"], algo=algo, delta=delta)


def _gate_params(algo: str, wm_meta: dict | None) -> dict | None:
    """The entropy gate's threshold of the watermarked generation (``wm_meta``) for the entropy-gated family's detector
    (controls and attacked texts are gated as the watermarked texts were); None for the other families."""
    gate = families.of(algo).gate_param
    if wm_meta is None or gate is None:
        return None
    return {gate: wm_meta.get(gate)}


def _detect_tournament(gen, task: dict, wm_meta: dict):
    """Tournament sampling's mean g-value score with the watermarked generation's ``m`` and ``h`` (``wm_meta``,
    controls included): with the grid's ``dedup`` its repeated-context mask (a context met earlier in the text is
    not scored), without it the generation's own ``mask_repeated`` setting."""
    mask = True if task["dedup"] else bool(wm_meta["mask_repeated"])
    return score_tournament(gen, key=task["key"], m=wm_meta["m"], h=wm_meta["h"], mask_repeated=mask)


def _metrics(gen, res, task: dict, algo: str, lm=None, wm_meta: dict | None = None) -> dict:
    """The grid's per-text metrics of scored texts ``gen`` (records) and ``res`` (detection); ``lm`` and the watermarked
    generation's record ``wm_meta`` feed the detector family's prefix curve (tokens to detect)."""
    m = len(res.log10_p)
    out = dict(kl=_per_text(gen.kl), dg=_per_text(gen.dg), entropy=_per_text(gen.entropy), z=res.z, log10_p=res.log10_p,
               n_scored=res.n_scored.astype(np.int64), score=res.score.astype(np.float64), tokens_to_detect=np.full(m, np.nan))
    family = families.of(algo)
    if "tokens_to_detect" in task["metrics"] and family.prefix and task.get("score") is None:
        # the family's own prefix curve (SWEET: its gated positions only, at the watermarked generation's alpha)
        pref = family.prefix_curve(gen, gen.meta["key"], gamma=gen.meta["gamma"], dedup=task["dedup"], lm=lm, params=wm_meta)
        out["tokens_to_detect"] = detect.tokens_to_detect(pref, float(np.log10(task["ttd_level"])))
    if any(k in task["metrics"] for k in ("peek_log10_p", "anytime_log10_p")):
        out["peek_log10_p"], out["anytime_log10_p"] = _peek(gen, task, algo)
    return {k: v for k, v in out.items() if k in task["metrics"]}


def _peek(gen, task: dict, algo: str) -> tuple[np.ndarray, np.ndarray]:
    """Naive every-prefix and anytime-valid log10 p-values of red-green texts (nan for other detectors)."""
    if not families.of(algo).colours:
        nan = np.full(gen.tokens.shape[0], np.nan)
        return nan, nan.copy()
    m = gen.meta
    values, scored = detect.token_scores(gen.tokens, gen.prompts[:, -m["h"]:], m["key"], stat="green", gamma=m["gamma"], h=m["h"],
                                         green_kind=m["green_kind"], dedup=task["dedup"], vocab_size=m["vocab_size"], lengths=gen.lengths)
    g_eff = detect._stat_code("green", m["gamma"], m["green_kind"], m["vocab_size"])[3]
    lengths = np.full(values.shape[0], values.shape[1]) if gen.lengths is None else gen.lengths
    return peeking.peek_pvalues(values, scored, lengths, g_eff)


def _draw(lm, algo: str, task: dict, **kw) -> Generation:
    """Texts of ``algo`` from ``lm``: by the ``levels`` sampler where the grid asks for it and the texts are unwatermarked."""
    if algo == registry.NULL and task.get("sampler") == "levels":
        return generate_null(lm.synthetic, **kw)
    return generate(lm, algo, **kw)


def run_chunk(task: dict) -> dict[str, np.ndarray]:
    """The rows of one task as columns (numpy arrays of equal length).

    The configuration's LM is opened by name (:func:`sims.get_lm`: a synthetic preset, a fitted ``.npz``,
    SmolLM2, a random test model or a folder; a real LM's weights load once per worker process).  The rows
    are the chunk's texts, each attack of the grid on them, and, with ``controls``, as many unwatermarked
    texts of the same LM (module docstring).

    Parameters
    ----------
    task : dict
        ``config`` (:meth:`~sims.sweep.grid.Config.as_dict` plus ``id``), ``seed``, ``chunk`` and the grid's
        ``n``, ``T``, ``chunk_size``, ``key``, ``dedup``, ``controls``, ``prompt_len``, ``ttd_level``,
        ``metrics``, ``attacks`` (and optionally ``score``, ``sampler``): one value of :func:`sims.sweep.tasks`.

    Returns
    -------
    dict of str to numpy.ndarray
        The columns of the module docstring: the configuration and its parameters, ``seed``, ``chunk``,
        ``text``, ``null``, ``attack`` and the grid's metrics per text.
    """
    cfg = task["config"]
    size = task["chunk_size"]
    first = task["chunk"] * size
    m = min(size, task["n"] - first)
    s = chunk_seed(task["seed"], task["chunk"])
    kw = dict(n=m, T=task["T"], key=task["key"], prompt_len=task["prompt_len"], **cfg["params"])
    algo = cfg["algo"]
    if cfg["lm"] == "uniform":
        lm = None
        gen = _uniform_texts(seed=s, **kw)
    else:  # any LM behind its door: a real one's prompts are its own (the lfqa set), so prompt_len does not apply
        lm = get_lm(cfg["lm"])
        if lm.real:
            kw.pop("prompt_len")
        gen = _draw(lm, algo, task, seed=s, **kw)
    meta = gen.meta
    parts = [(False, "none", _metrics(gen, _detect(gen, lm, task, algo, gen.meta), task, algo, lm, gen.meta))]
    for a, (kind, rate) in enumerate(task["attacks"]):
        att = attack(gen, kind, rate, seed=chunk_seed(task["seed"], task["chunk"], 2 + a), lm=lm)
        rows = _metrics(att, _detect(att, lm, task, algo, meta), task, algo, lm, meta)
        for k in ("kl", "dg", "entropy"):  # distortion is the generation's
            if k in rows:
                rows[k] = parts[0][2][k]
        parts.append((False, f"{kind}:{rate:g}", rows))
    if task["controls"]:
        nkw = dict(kw, h=meta["h"], **{k: meta[k] for k in ("gamma", "green_kind") if k in meta})  # a tournament has no green list
        nkw = {k: v for k, v in nkw.items() if k in ("n", "T", "key", "prompt_len", "h", "gamma", "green_kind")}
        s0 = chunk_seed(task["seed"], task["chunk"], NULL_STREAM)
        if lm is None:
            null = _uniform_texts(seed=s0, **nkw)
        else:
            null = _draw(lm, "none", task, seed=s0, **nkw)
        parts.append((True, "none", _metrics(null, _detect(null, lm, task, algo, meta), task, algo, lm, meta)))
    cols: dict[str, list] = {}
    rule = dedup_rule(algo, task["dedup"])
    for is_null, att_name, rows in parts:
        const = dict(config=cfg["id"], lm=cfg["lm"], algo=algo, **{p: np.nan if meta.get(p) is None else float(meta[p]) for p in PARAM_COLUMNS},
                     h=int(meta["h"]), green_kind=meta.get("green_kind", "none"), T=int(task["T"]), seed=int(task["seed"]), chunk=int(task["chunk"]),
                     null=is_null, attack=att_name)
        if families.of(algo).own_dedup is not None:  # a family with its own dedup names the rule that ran on each row
            const["dedup"] = rule
        block = {k: np.full(m, v, dtype=object if isinstance(v, str) else None) for k, v in const.items()}
        block["text"] = np.arange(first, first + m, dtype=np.int64)
        block.update(rows)
        for k, v in block.items():
            cols.setdefault(k, []).append(np.asarray(v))
    return {k: np.concatenate(v) for k, v in cols.items()}
