r"""The detector families: one object per family, registered once here, asked by every detector (this room's modules).

A detector family (red-green count, entropy-gated green count, AutoCov, EMS sum, EMS sum at positions, keyed-order hits, tournament
g-values) is one :class:`DetectorFamily` object holding what the family does: its name, the label of its
statistic, a description of its test, the fixed-length score of a generation with its exact
null tail (:meth:`~DetectorFamily.score`), the prefix curve (:meth:`~DetectorFamily.prefix_curve`),
the anytime-valid e-process (:meth:`~DetectorFamily.sequential`), many keys
(:meth:`~DetectorFamily.many_keys`) and the streaming update of
:class:`sims.detect.families.stream.SequentialDetector` (:meth:`~DetectorFamily.stream_setup`,
:meth:`~DetectorFamily.stream_marks`, :meth:`~DetectorFamily.stream_skip`,
:meth:`~DetectorFamily.stream_step`).  :mod:`sims.detect.families.detectors` asks the family of a generation's
algorithm for its answer.  The methods delegate to the kernels of
:mod:`sims.detect.stats.scores`, :mod:`sims.detect.anytime.sequential`, :mod:`sims.detect.multiple`,
:mod:`sims.detect.stats.gated_scores` and :mod:`sims.detect.stats.tournament_scores`; nothing here recomputes their numbers.

An algorithm's record (:class:`sims.watermarks.registry.Algorithm`) names its family;
:func:`of` returns the family object of an algorithm, :func:`get` that of a name.  Every family
is registered below by one :func:`register_family` call, and no module fills this table on import: the
registered families are the one list of family names (:func:`names`); a record naming another is refused
when it is asked (:func:`of`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sims.core import defaults
from sims.core import prf as prf_mod
from sims.core import seeding as seeding_mod
from sims.detect.anytime import sequential
from sims.detect.stats import scores
from sims.detect.stats.marks import ems_from_marks, null_green_probability, redgreen_from_marks
from sims.lm.synthetic import lm_step_probs, step_probs_of
from sims.watermarks import registry


@dataclass(frozen=True)
class Marks:
    """The per-token marks of texts under one key, from one hashing pass (:func:`sims.detect.stats.scores.token_marks`).

    Attributes
    ----------
    values : (n, T) float array
        Each token's statistic (a green token's colour 1.0, an EMS score), repeated (context, token) pairs included.
    scored : (n, T) bool array
        Whether each token counts (inside its text and, with dedup, the first occurrence of its pair).
    lengths : (n,) int array
        Each text's token count.
    g_eff : float or None
        The exact null probability that one token is green (green-list families), else None.
    gate : (n, T) bool array or None
        The positions the family's statistic may count at all (the entropy-gated family's gate, before dedup), None
        where every position may count; a token outside it is neither a repeat nor scored (the HTML report greys it).
    """

    values: np.ndarray
    scored: np.ndarray
    lengths: np.ndarray
    g_eff: float | None = None
    gate: np.ndarray | None = None


class DetectorFamily:
    """One detector family (module docstring); subclasses define the family's methods.

    Attributes
    ----------
    name : str
        The family's name, as :attr:`sims.watermarks.registry.Algorithm.family` spells it.
    statistic : str
        What the document's ``score`` holds (``python -m sims detect``'s ``statistic`` field).
    description : str
        The statistic and its exact null tail, in one line.
    needs_lm : bool
        Scoring reads the LM's next-token probabilities.
    prefix_stat : str or None
        The per-token statistic of :func:`sims.detect.stats.scores.prefix_log10p` whose exact prefix p-values
        give the detection curve (``"green"``, ``"ems"``), or None where the family has none.
    colours : bool
        Its statistic counts the green tokens of keyed green lists: the binomial "too short for this fpr"
        verdict holds (:func:`sims.detect.documents.detect_json.decide`) and the HTML report colours the tokens.
    own_dedup : tuple of str or None
        The rules its own dedup runs with a sweep grid's ``dedup`` on and off, where the family does not
        take the pair dedup (:func:`sims.sweep.grid.dedup_rule`); None: the pair dedup.
    takes_weights : bool
        Its streaming detector takes layer weights (the tournament's weighted score).
    gate_param : str or None
        The algorithm parameter holding the threshold of the family's gate (the entropy-gated family's ``alpha``):
        its streaming detector takes ``threshold`` and its controls are gated at the watermarked generation's value;
        None where the family has no gate.
    """

    name: str = ""
    statistic: str = ""
    description: str = ""
    needs_lm: bool = False
    prefix_stat: str | None = None
    colours: bool = False
    own_dedup: tuple[str, str] | None = None
    takes_weights: bool = False
    gate_param: str | None = None

    def __repr__(self) -> str:
        return f"DetectorFamily({self.name!r})"

    @property
    def prefix(self) -> bool:
        """The family has exact prefix p-values (tokens to detect)."""
        return self.prefix_stat is not None

    # ------------------------------------------------------------------ fixed length
    def score(self, gen, lm, *, algo: str, key, dedup: bool, gamma, stat, params) -> scores.DetectResult:
        """The fixed-length detection of every text of ``gen`` by the detector of ``algo`` (:func:`sims.detect.families.detectors.score`).

        Parameters
        ----------
        gen : Generation
            The texts and their record (``meta``: algorithm, key, gamma, h, vocabulary size, PRF, seeding).
        lm : LM or SyntheticLM or None
            The LM, read by the families that need it (:attr:`needs_lm`: keyed orders, the entropy gate).
        algo : str
            The algorithm whose detector scores (a registry name of this family, or ``"none"``'s).
        key : int
            The detection key.
        dedup : bool
            Score each (context, token) pair once.
        gamma : float or None
            The green-list ratio; None: the generation's (another is refused for a watermarked generation).
        stat : str or None
            The tournament family's statistic (``"mean"``, ``"weighted"``); must be None for the other families.
        params : dict or None
            The tournament family's parameters (``m``, ``mask_repeated``); None: the generation's or the registry's.

        Returns
        -------
        DetectResult
            One entry per text: the statistic, the exact null log10 p-value and the scored token count.
        """
        raise NotImplementedError

    def _checked(self, gen, lm, algo, gamma, stat):
        """The checks of the keyed-list families' scorers; the gamma to use and the token layout's keywords."""
        m = gen.meta
        if stat is not None:
            raise ValueError(f"stat chooses a tournament detector's score (algo {registry.names(family='tournament')}); got stat={stat!r} for algo {algo!r}")
        prf = m.get("prf", defaults.PRF)
        if prf != defaults.PRF and not registry.get(algo).siphash:
            raise ValueError(f"prf {prf!r} keys red-green green lists only; algo must be one of {registry.names(siphash=True)}; got {algo!r}")
        gamma = m["gamma"] if gamma is None else check_gamma(m, gamma)
        if lm is not None and lm.vocab_size != m["vocab_size"]:
            raise ValueError(f"lm vocab_size must equal the generation's {m['vocab_size']} (vocabulary mismatch); got {lm.vocab_size}")
        kw = dict(vocab_size=m["vocab_size"], h=m["h"], lengths=gen.lengths)
        return gamma, prf, kw

    def prefix_curve(self, gen, key, *, gamma, dedup: bool, lm=None, params=None):
        """log10 p of every prefix of every text (the numbers of :func:`sims.detect.stats.scores.prefix_log10p`, from the
        family's :class:`Marks`: the generation's own green lists, its PRF and seeding scheme included), or None
        without exact prefix p-values.

        Parameters
        ----------
        gen : Generation
            The texts and their record (``meta``: algorithm, key, gamma, h, vocabulary size, PRF, seeding).
        key : int
            The detection key.
        gamma : float or None
            The green-list ratio; None: the generation's.
        dedup : bool
            Score each (context, token) pair once.
        lm : LM or SyntheticLM or None, optional
            The LM, read by the families that need it (:attr:`needs_lm`); None: the generation's (:func:`sims.lm.door.lm_of`).
        params : dict or None, optional
            The detected algorithm's parameters (the entropy gate's ``alpha``); None: the generation's.

        Returns
        -------
        (n, T) float array or None
            ``[i, t]``: log10 of the exact null p-value of the first ``t + 1`` tokens of text ``i``, over the tokens
            the family's statistic counts (the entropy-gated family: the gated ones); None for a family
            without prefix p-values (:attr:`prefix_stat` None).
        """
        if self.prefix_stat is None:
            return None
        return self.from_marks(self.marks(gen, key, gamma=gen.meta.get("gamma") if gamma is None else gamma, dedup=dedup, lm=lm, params=params))[1]

    def marks(self, gen, key, *, gamma, dedup: bool, lm=None, params=None) -> Marks | None:
        """The per-token :class:`Marks` of every text under ``key`` (one hashing pass), or None where the
        family's answer is not a function of per-token marks alone.

        Parameters
        ----------
        gen : Generation
            The texts and their record (``meta``: algorithm, key, gamma, h, vocabulary size, PRF, seeding).
        key : int
            The detection key.
        gamma : float
            The green-list ratio of the green-list families (ignored by the others).
        dedup : bool
            Mark only the first occurrence of each (context, token) pair as scored.
        lm : LM or SyntheticLM or None, optional
            The LM, read by the families that need it (:attr:`needs_lm`); None: the generation's (:func:`sims.lm.door.lm_of`).
        params : dict or None, optional
            The detected algorithm's parameters (the entropy gate's ``alpha``); None: the generation's.

        Returns
        -------
        Marks or None
            The tokens' statistics, which of them count, the text lengths, the null green probability and the
            family's gate (:attr:`Marks.gate`); None here (the base family has no marks).
        """
        return None

    def from_marks(self, marks: Marks):
        """The :class:`~sims.detect.stats.scores.DetectResult` and the prefix curve (:meth:`prefix_curve`) from :class:`Marks`.

        Parameters
        ----------
        marks : Marks
            The per-token marks of :meth:`marks`.

        Returns
        -------
        result : DetectResult
            The fixed-length detection of every text (the numbers of :meth:`score`).
        prefix : (n, T) float array
            log10 p of every prefix of every text.
        """
        raise NotImplementedError

    def answer(self, gen, lm, *, algo: str, key, dedup: bool, gamma, stat=None, params=None):
        """Everything the detection document shows of ``gen``: its :class:`~sims.detect.stats.scores.DetectResult`, the
        prefix curve (None without exact prefix p-values) and the :class:`Marks` (None where the family has none),
        from one hashing pass where the family has marks (the same numbers as :meth:`score` and :meth:`prefix_curve`).

        Parameters
        ----------
        gen : Generation
            The texts and their record (``meta``: algorithm, key, gamma, h, vocabulary size, PRF, seeding).
        lm : LM or SyntheticLM or None
            The LM, read by the families that need it (:attr:`needs_lm`).
        algo : str
            The algorithm whose detector scores.
        key : int
            The detection key.
        dedup : bool
            Score each (context, token) pair once.
        gamma : float or None
            The green-list ratio; None: the generation's.
        stat, params : optional
            The tournament family's statistic and parameters (as :meth:`score`); either given, no marks are made.

        Returns
        -------
        result : DetectResult
            The fixed-length detection of every text.
        prefix : (n, T) float array or None
            The prefix curve of :meth:`prefix_curve`, None without exact prefix p-values.
        marks : Marks or None
            The per-token marks, None where the family has none.
        """
        if self.prefix_stat is None or stat is not None or params is not None:
            return self.score(gen, lm, algo=algo, key=key, dedup=dedup, gamma=gamma, stat=stat, params=params), None, None
        gamma, _, _ = self._checked(gen, lm, algo, gamma, stat)
        marks = self.marks(gen, key, gamma=gamma, dedup=dedup)
        res, prefix = self.from_marks(marks)
        return res, prefix, marks

    # ------------------------------------------------------------------ anytime-valid
    def sequential(self, gen, lm, *, algo: str, key, dedup: bool, gamma, alpha: float, grid) -> sequential.SequentialResult:
        """The anytime-valid e-process of every text, ``gamma`` checked (:func:`sims.detect.families.detectors.sequential_score`).

        Parameters
        ----------
        gen : Generation
            The texts and their record (``meta``: algorithm, key, gamma, h, vocabulary size, PRF, seeding).
        lm : LM or SyntheticLM or None
            The LM, read by the families that need it (:attr:`needs_lm`).
        algo : str
            The algorithm whose detector runs.
        key : int
            The detection key.
        dedup : bool
            Bet on each (context, token) pair once (the tournament family skips repeated contexts by its own
            ``mask_repeated``).
        gamma : float or None
            The green-list ratio (checked by :func:`check_gamma`); None: the generation's.
        alpha : float in (0, 1)
            The level: a text is detected once its e-value reaches 1/alpha (Ville's inequality).
        grid : array or None
            The mixture's grid of bets (:func:`sims.detect.anytime.sequential.check_grid`); None: the default.

        Returns
        -------
        SequentialResult
            Per text: the scored count, the summed statistic, the final log e-value and the stopping time.
        """
        raise NotImplementedError

    # ------------------------------------------------------------------ many keys
    def many_keys(self, gen, keys, lm, *, algo: str, dedup: bool, gamma, step_probs) -> tuple[np.ndarray, np.ndarray]:
        """(K, n) log10 p-values and scored counts of every text under every key (:func:`sims.detect.families.detectors.score_keys`):
        by default the fixed-length score key by key.

        Parameters
        ----------
        gen : Generation
            The texts and their record (``meta``: algorithm, key, gamma, h, vocabulary size, PRF, seeding).
        keys : (K,) int array
            The keys to score under (:func:`sims.detect.multiple.check_keys`).
        lm : LM or SyntheticLM or None
            The LM, read by the families that need it (:attr:`needs_lm`).
        algo : str
            The algorithm whose detector scores.
        dedup : bool
            Score each (context, token) pair once.
        gamma : float or None
            The green-list ratio; None: the generation's.
        step_probs : array or None
            The LM's next-token probabilities of every position, computed once for every key (keyed orders); None:
            from ``lm``.

        Returns
        -------
        log10_p : (K, n) float array
            Exact log10 p-value of text ``i`` under key ``keys[k]``.
        n_scored : (K, n) int array
            The scored token counts.
        """
        res = [self.score(gen, lm, algo=algo, key=int(k), dedup=dedup, gamma=gamma, stat=None, params=None) for k in keys]
        return np.stack([r.log10_p for r in res]), np.stack([r.n_scored for r in res])

    # ------------------------------------------------------------------ streaming
    def stream_setup(self, det, f: np.ndarray, *, algo: str, score, m, weights, mask_repeated: bool) -> None:
        """Set the streaming detector ``det``'s e-process state (bets ``f``).

        Parameters
        ----------
        det : SequentialDetector
            The streaming detector whose state is read and written (:class:`sims.detect.families.stream.SequentialDetector`).
        f : (G,) float array
            The grid of bets of the e-process mixture.
        algo : str
            The detector's algorithm.
        score : str or None
            The sequential score (:mod:`sims.detect.families.sequential_scores`: ``"ems-log"`` for EMS), None for the
            family's own.
        m : int or None
            The tournament's layer count; None: the registry's default.
        weights : array or None
            The tournament's layer weights (weighted score); None: equal weights.
        mask_repeated : bool
            The tournament skips tokens of a context it has seen.
        """
        raise NotImplementedError

    def stream_marks(self, det, new: np.ndarray, probs):
        """The per-token marks of the new tokens (no dedup: :meth:`stream_skip` does it, across chunks).

        Parameters
        ----------
        det : SequentialDetector
            The streaming detector whose state is read and written (:class:`sims.detect.families.stream.SequentialDetector`).
        new : (m,) int array
            The chunk's token ids.
        probs : (m, V) float array or None
            The chunk's next-token distributions (keyed orders and the entropy gate read them).

        Returns
        -------
        array or tuple of arrays
            What :meth:`stream_step` reads, one entry per new token (a green colour, an EMS score, a g-value sum; the
            keyed orders' hits and probabilities).
        """
        raise NotImplementedError

    def stream_skip(self, det, window: tuple, pair) -> bool:
        """Whether the token of context ``window`` (its dedup name ``pair``) is skipped; records it as seen.

        Parameters
        ----------
        det : SequentialDetector
            The streaming detector whose state is read and written (:class:`sims.detect.families.stream.SequentialDetector`).
        window : tuple of int
            The ``h`` tokens before the token.
        pair : hashable
            The token's dedup name: ``(window, token)``, or the (seed, token) pair of a seeding scheme.

        Returns
        -------
        bool
            True (skip it) when ``det`` dedups and has seen ``pair``; the base family never skips without dedup.
        """
        if not det.dedup:
            return False
        if pair in det.seen:
            return True
        det.seen.add(pair)
        return False

    def stream_step(self, det, marks, j: int) -> None:
        """Update ``det``'s sums and log e-value with token ``j`` of the chunk (marks of :meth:`stream_marks`).

        Parameters
        ----------
        det : SequentialDetector
            The streaming detector whose state is read and written (:class:`sims.detect.families.stream.SequentialDetector`).
        marks : array or tuple of arrays
            The chunk's marks (:meth:`stream_marks`).
        j : int
            The token's index in the chunk.
        """
        det.s += float(marks[j])
        det.log_e = float(det.mix.log_e(det.s, det.n))


def check_gamma(meta: dict, gamma):
    """The gamma of detection: the generation's, or ``gamma`` where it equals it (any gamma for unwatermarked texts).

    Parameters
    ----------
    meta : dict
        The generation's record (``algo``, ``gamma``).
    gamma : float or None
        The requested green-list ratio; None: the generation's.

    Returns
    -------
    float or None
        The gamma to detect with.

    Raises
    ------
    ValueError
        ``gamma`` differs from a watermarked generation's (by more than 1e-12).
    """
    if gamma is None:
        return meta.get("gamma")
    if meta["algo"] != registry.NULL and abs(float(gamma) - float(meta["gamma"])) > 1e-12:
        raise ValueError(f"gamma must equal the generation's gamma {meta['gamma']!r} (gamma mismatch between generation and detection); got {gamma!r}")
    return gamma


def _layout(gen):
    m = gen.meta
    return gen.prompts[:, -m["h"]:], m.get("green_kind", defaults.GREEN_KIND), seeding_mod.seeding_of(m)


def _logmeanexp(w: np.ndarray) -> float:
    m = float(w.max())
    return m + math.log(float(np.exp(w - m).mean()))


class _GreenLists(DetectorFamily):
    """The families of keyed green lists (red-green count, AutoCov): colours of the green-list PRF."""

    def stream_marks(self, det, new, probs):
        if not new.size:
            return np.zeros(0)
        prompt = np.asarray(det.seq[-det.h :], dtype=np.int64)[None, :]
        v, _ = scores.token_scores(new[None, :], prompt, det.key, stat="green", gamma=det.gamma, green_kind=det.green_kind, seeding=det.seeding, **det.kw)
        return v[0]


class RedGreen(_GreenLists):
    """Green count with the exact binomial tail."""

    colours = True
    name = "redgreen"
    statistic = "green count"
    description = "red-green count, exact binomial tail P(Bin(n, gamma) >= k)"
    prefix_stat = "green"

    def score(self, gen, lm, *, algo, key, dedup, gamma, stat, params):
        gamma, prf, kw = self._checked(gen, lm, algo, gamma, stat)
        prompts, green_kind, seeding = _layout(gen)
        return scores.score_redgreen(gen.tokens, prompts, key, gamma, dedup=dedup, green_kind=green_kind, prf=prf, seeding=seeding, **kw)

    def sequential(self, gen, lm, *, algo, key, dedup, gamma, alpha, grid):
        m = gen.meta
        prompts, green_kind, seeding = _layout(gen)
        return sequential.sequential_redgreen(gen.tokens, prompts, key, gamma, dedup=dedup, green_kind=green_kind, prf=m.get("prf", defaults.PRF),
                                              vocab_size=m["vocab_size"], h=m["h"], lengths=gen.lengths, alpha=alpha, grid=grid, seeding=seeding)

    def marks(self, gen, key, *, gamma, dedup, lm=None, params=None):
        m = gen.meta
        prompts, green_kind, seeding = _layout(gen)
        values, scored, lengths = scores.token_marks(gen.tokens, prompts, key, stat="green", gamma=gamma, h=m["h"], green_kind=green_kind, dedup=dedup,
                                                     vocab_size=m["vocab_size"], lengths=gen.lengths, prf=m.get("prf", defaults.PRF), seeding=seeding)
        return Marks(values, scored, lengths, null_green_probability(gamma, green_kind, m["vocab_size"]))

    def from_marks(self, marks):
        return redgreen_from_marks(marks.values > 0.5, marks.scored, marks.lengths, marks.g_eff)

    def many_keys(self, gen, keys, lm, *, algo, dedup, gamma, step_probs):
        from sims.detect.multiple import score_redgreen_keys

        m = gen.meta
        if m.get("prf", defaults.PRF) != defaults.PRF:  # SipHash lists: key by key
            return super().many_keys(gen, keys, lm, algo=algo, dedup=dedup, gamma=gamma, step_probs=step_probs)
        prompts, green_kind, seeding = _layout(gen)
        lp, _, n = score_redgreen_keys(gen.tokens, prompts, keys, m["gamma"] if gamma is None else gamma, vocab_size=m["vocab_size"], h=m["h"],
                                       dedup=dedup, green_kind=green_kind, lengths=gen.lengths, seeding=seeding)
        return lp, n

    def stream_setup(self, det, f, *, algo, score, m, weights, mask_repeated):
        det.g_eff = scores._stat_code("green", det.gamma, det.green_kind, det.vocab_size)[3]
        det.mix = sequential.bernoulli_mixture(det.g_eff, f)


class EntropyGated(_GreenLists):
    """SWEET's green count over the positions where the LM's entropy exceeds the threshold, exact binomial tail
    (:mod:`sims.detect.stats.gated_scores`); the gate reads the LM (a synthetic LM's tables, a real LM's softmax)."""

    colours = True
    name = "entropy_gated"
    statistic = "gated green count"
    description = "green count over positions with LM entropy H(p_t) > alpha, exact binomial tail P(Bin(n_gated, gamma) >= k)"
    needs_lm = True
    prefix_stat = "green"
    gate_param = "alpha"

    def _threshold(self, meta: dict, algo: str | None = None, params: dict | None = None) -> float:
        """The entropy threshold: ``params``' ``alpha`` where given (the watermarked generation's record, when its
        unwatermarked controls are scored), else the generation's ``alpha`` where it is of this family's algorithm
        ``algo`` (default the generation's), else the registry's default of ``algo`` (its first algorithm's where the
        generation's is another's)."""
        own = registry.names(family=self.name)
        algo = meta["algo"] if algo is None else algo
        if algo not in own:
            algo = own[0]
        if params is not None and params.get("alpha") is not None:
            return registry.resolve_params(algo, alpha=params["alpha"])["alpha"]
        return registry.resolve_params(algo, alpha=meta.get("alpha") if meta["algo"] == algo else None)["alpha"]

    def _marks(self, gen, lm, key, *, algo, gamma, dedup, gate=None, params=None):
        from sims.detect.stats.entropies import shannon_entropies
        from sims.detect.stats.gated_scores import entropy_gate, gated_marks

        if lm is None and gate is None:
            raise ValueError(f"algo {algo!r} is detected with the model's probabilities (its entropy gate): pass lm")
        if gate is None:
            gate = entropy_gate(shannon_entropies(gen, lm), self._threshold(gen.meta, algo, params))
        prompts, green_kind, seeding = _layout(gen)
        values, scored, lengths, g_eff = gated_marks(gen, lm, key, gamma=gamma, threshold=self._threshold(gen.meta, algo, params), dedup=dedup,
                                                     prompts=prompts, green_kind=green_kind, prf=gen.meta.get("prf", defaults.PRF),
                                                     seeding=seeding, gate=gate)
        return Marks(values, scored, lengths, g_eff, gate=gate)

    def score(self, gen, lm, *, algo, key, dedup, gamma, stat, params):
        gamma, _, _ = self._checked(gen, lm, algo, gamma, stat)
        return self.from_marks(self._marks(gen, lm, key, algo=algo, gamma=gamma, dedup=dedup, params=params))[0]

    def marks(self, gen, key, *, gamma, dedup, lm=None, params=None):
        from sims.lm.door import lm_of

        lm = lm_of(gen.meta) if lm is None else lm
        return self._marks(gen, lm, key, algo=gen.meta["algo"], gamma=gamma, dedup=dedup, params=params)

    def from_marks(self, marks):
        from sims.detect.stats.gated_scores import score_gated

        return score_gated(marks.values, marks.scored, marks.lengths, marks.g_eff)

    def answer(self, gen, lm, *, algo, key, dedup, gamma, stat=None, params=None):
        gamma, _, _ = self._checked(gen, lm, algo, gamma, stat)
        marks = self._marks(gen, lm, key, algo=algo, gamma=gamma, dedup=dedup, params=params)
        res, prefix = self.from_marks(marks)
        return res, prefix, marks

    def sequential(self, gen, lm, *, algo, key, dedup, gamma, alpha, grid):
        from sims.detect.anytime.gated_sequential import sequential_gated

        gamma = gen.meta["gamma"] if gamma is None else gamma
        mk = self._marks(gen, lm, key, algo=algo, gamma=gamma, dedup=dedup)
        return sequential_gated(mk.values, mk.scored, mk.lengths, mk.g_eff, alpha=alpha, grid=grid)

    def many_keys(self, gen, keys, lm, *, algo, dedup, gamma, step_probs):
        from sims.detect.stats.entropies import shannon_entropies
        from sims.detect.stats.gated_scores import entropy_gate

        gamma, _, _ = self._checked(gen, lm, algo, gamma, None)
        if lm is None:
            raise ValueError(f"algo {algo!r} is detected with the model's probabilities (its entropy gate): pass lm")
        gate = entropy_gate(shannon_entropies(gen, lm), self._threshold(gen.meta, algo))  # key-independent: once for every key
        res = [self.from_marks(self._marks(gen, lm, int(k), algo=algo, gamma=gamma, dedup=dedup, gate=gate))[0] for k in keys]
        return np.stack([r.log10_p for r in res]), np.stack([r.n_scored for r in res])

    def stream_setup(self, det, f, *, algo, score, m, weights, mask_repeated):
        det.g_eff = scores._stat_code("green", det.gamma, det.green_kind, det.vocab_size)[3]
        det.mix = sequential.bernoulli_mixture(det.g_eff, f)
        # the gate's threshold: the detector's (the alpha the text was generated with, as the batch detector reads it from the
        # generation's record), else the record's default
        det.threshold = registry.resolve_params(algo, alpha=det.gate_threshold)["alpha"]
        det.gates = []

    def stream_marks(self, det, new, probs):
        from scipy.special import entr

        from sims.detect.stats.gated_scores import entropy_gate

        if probs is None:
            raise ValueError(f"probs must be given for algo {det.algo!r} (its entropy gate reads the model's next-token distributions)")
        probs = np.asarray(probs, dtype=np.float64)
        if probs.ndim != 2 or probs.shape[0] != new.size:
            raise ValueError(f"probs must be the (tokens, vocab_size) next-token distributions of the chunk; got shape {probs.shape}")
        det.gates.extend(entropy_gate(entr(probs).sum(axis=1), det.threshold).tolist())
        return super().stream_marks(det, new, probs)

    def stream_skip(self, det, window, pair):
        seen = super().stream_skip(det, window, pair)  # the pair dedup first, over every position (as the batch's marks)
        return seen or not det.gates[len(det.seq) - det.P - 1]


class AutoCov(_GreenLists):
    """AutoCov S_T with its exact lower tail."""

    name = "autocov"
    statistic = "AutoCov S_T"
    description = "AutoCov Z_T, exact lower tail under i.i.d. Bernoulli(gamma) colours"

    def score(self, gen, lm, *, algo, key, dedup, gamma, stat, params):
        gamma, prf, kw = self._checked(gen, lm, algo, gamma, stat)
        prompts, green_kind, seeding = _layout(gen)
        return scores.score_autocov(gen.tokens, prompts, key, gamma, dedup=dedup, green_kind=green_kind, prf=prf, seeding=seeding, **kw)

    def sequential(self, gen, lm, *, algo, key, dedup, gamma, alpha, grid):
        m = gen.meta
        prompts, green_kind, seeding = _layout(gen)
        return sequential.sequential_autocov(gen.tokens, prompts, key, gamma, dedup=dedup, green_kind=green_kind, prf=m.get("prf", defaults.PRF),
                                             vocab_size=m["vocab_size"], h=m["h"], lengths=gen.lengths, alpha=alpha, grid=grid, seeding=seeding)

    def stream_setup(self, det, f, *, algo, score, m, weights, mask_repeated):
        det.g_eff = scores._stat_code("green", det.gamma, det.green_kind, det.vocab_size)[3]
        q_red, q_green = sequential.autocov_grids(det.g_eff, f)
        det.steps = {False: (np.log(q_red / det.g_eff), np.log((1 - q_red) / (1 - det.g_eff))),
                     True: (np.log(q_green / det.g_eff), np.log((1 - q_green) / (1 - det.g_eff)))}
        det.w = {False: np.zeros(f.size), True: np.zeros(f.size)}
        det.prev_green = False

    def stream_step(self, det, marks, j):
        x = bool(marks[j] > 0.5)
        up, dn = det.steps[det.prev_green]
        det.w[det.prev_green] += up if x else dn
        det.log_e = _logmeanexp(det.w[False]) + _logmeanexp(det.w[True])
        det.prev_green = x
        det.s += float(x)


class EMS(DetectorFamily):
    """EMS sum of -ln(1 - r) with the exact Gamma tail."""

    name = "ems"
    statistic = "EMS sum"
    description = "EMS sum of -log(1 - r), exact Gamma(n, 1) tail"
    prefix_stat = "ems"

    def score(self, gen, lm, *, algo, key, dedup, gamma, stat, params):
        gamma, prf, kw = self._checked(gen, lm, algo, gamma, stat)
        return scores.score_ems(gen.tokens, _layout(gen)[0], key, dedup=dedup, **kw)

    def sequential(self, gen, lm, *, algo, key, dedup, gamma, alpha, grid):
        m = gen.meta
        return sequential.sequential_ems(gen.tokens, _layout(gen)[0], key, dedup=dedup, vocab_size=m["vocab_size"], h=m["h"], lengths=gen.lengths,
                                         alpha=alpha, grid=grid)

    def marks(self, gen, key, *, gamma, dedup, lm=None, params=None):
        m = gen.meta
        values, scored, lengths = scores.token_marks(gen.tokens, _layout(gen)[0], key, stat="ems", h=m["h"], dedup=dedup, vocab_size=m["vocab_size"],
                                                     lengths=gen.lengths)
        return Marks(values, scored, lengths)

    def from_marks(self, marks):
        return ems_from_marks(marks.values, marks.scored, marks.lengths)

    def many_keys(self, gen, keys, lm, *, algo, dedup, gamma, step_probs):
        from sims.detect.multiple import _kernels as MK
        from sims.detect.stats.nulls import LN10, gamma_logsf

        m = gen.meta
        tokens, prompts, lengths = scores._check_inputs(gen.tokens, _layout(gen)[0], m["vocab_size"], m["h"], gen.lengths)
        code, stream, thr, _, tokmix = scores._stat_code("ems", None, "bernoulli", m["vocab_size"])
        _, scored = scores.token_scores(tokens, prompts, int(keys[0]), stat="ems", h=m["h"], dedup=dedup, vocab_size=m["vocab_size"], lengths=lengths)
        s = MK.multi_key_sums(tokens, prompts, lengths, scored, keys, int(m["h"]), stream, code, thr, tokmix)
        n = np.broadcast_to(scored.sum(axis=1), s.shape)
        return np.where(n <= 1, 0.0, gamma_logsf(s, n) / LN10), n

    def stream_setup(self, det, f, *, algo, score, m, weights, mask_repeated):
        if score == "ems-log":
            from sims.detect.anytime import sequential_laws

            det.mix = sequential_laws.tilt_mixture(sequential_laws.log_uniform_law(), f)
        else:
            det.mix = sequential.exponential_mixture(f)

    def stream_marks(self, det, new, probs):
        if not new.size:
            return np.zeros(0)
        prompt = np.asarray(det.seq[-det.h :], dtype=np.int64)[None, :]
        v, _ = scores.token_scores(new[None, :], prompt, det.key, stat="ems", gamma=None, green_kind=det.green_kind, seeding=det.seeding, **det.kw)
        if det.score == "ems-log":
            from sims.detect.stats.gumbel_scores import log_pivot

            return log_pivot(v[0])  # the ems-log terms ln Y (sims.detect.families.sequential_scores.ems_log_terms)
        return v[0]


class PositionEMS(EMS):
    """The EMS sum of -ln(1 - xi_{t mod n, y_t}) read at positions (EXP's key sequence, :mod:`sims.detect.stats.exp_scores`),
    exact Gamma tail and the ``ems`` e-process; dedup scores each (t mod n, token) pair once.  The streaming detector reads
    the ``exp_n`` it is given (:class:`sims.detect.families.stream.SequentialDetector`), else the registry's default."""

    name = "ems_position"
    statistic = "EMS sum at positions"
    description = "EMS sum of -log(1 - xi_{t mod n, y_t}) over the key sequence, exact Gamma(n, 1) tail"
    prefix_stat = "ems"  # the EMS sum's exact Gamma prefix tail, over the position marks (EMS's from_marks)

    def score(self, gen, lm, *, algo, key, dedup, gamma, stat, params):
        self._checked(gen, lm, algo, gamma, stat)
        return self.from_marks(self._marks(gen, key, algo=algo, dedup=dedup))[0]

    def _marks(self, gen, key, *, algo, dedup):
        from sims.detect.stats import exp_scores

        m = gen.meta
        tokens, _, lengths = scores._check_inputs(gen.tokens, _layout(gen)[0], m["vocab_size"], m["h"], gen.lengths)
        scores._check_key(key)
        values, scored = exp_scores.position_marks(tokens, lengths, int(key), exp_scores.exp_n_of(m, algo), dedup=dedup, vocab_size=m["vocab_size"])
        return Marks(values, scored, lengths)

    def marks(self, gen, key, *, gamma, dedup, lm=None, params=None):
        own = registry.names(family=self.name)
        return self._marks(gen, key, algo=gen.meta["algo"] if gen.meta["algo"] in own else own[0], dedup=dedup)

    def many_keys(self, gen, keys, lm, *, algo, dedup, gamma, step_probs):
        return DetectorFamily.many_keys(self, gen, keys, lm, algo=algo, dedup=dedup, gamma=gamma, step_probs=step_probs)

    def sequential(self, gen, lm, *, algo, key, dedup, gamma, alpha, grid):
        marks = self._marks(gen, key, algo=algo, dedup=dedup)
        return sequential.sequential_ems_marks(marks.values, marks.scored, marks.lengths, alpha=alpha, grid=grid)

    def stream_setup(self, det, f, *, algo, score, m, weights, mask_repeated):
        from sims.detect.stats.exp_scores import exp_n_of

        if score is not None:
            raise ValueError(f"algo {algo!r} streams its own EMS sum only; got score={score!r}")
        det.mix = sequential.exponential_mixture(f)
        det.exp_n = exp_n_of(dict(algo=algo, exp_n=det.exp_n), algo)  # the registry's default where none is given

    def stream_marks(self, det, new, probs):
        from sims.core.keys import position_hashes

        t = len(det.seq) - det.P + np.arange(new.size)  # the positions of the new tokens
        return -np.log1p(-prf_mod.uniforms(position_hashes(det.key, t, det.exp_n), new))

    def stream_skip(self, det, window, pair):
        return DetectorFamily.stream_skip(self, det, window, ((len(det.seq) - det.P - 1) % det.exp_n, pair[1]))  # y_t is appended


class KeyedOrder(DetectorFamily):
    """Keyed-order hits (ITS, UW) with the exact Poisson-binomial tail given the LM's probabilities."""

    name = "keyed"
    statistic = "keyed-order hits"
    description = "keyed-order hits, exact Poisson-binomial tail given the LM's probabilities"
    needs_lm = True

    def score(self, gen, lm, *, algo, key, dedup, gamma, stat, params):
        self._checked(gen, lm, algo, gamma, stat)
        if lm is None:
            raise ValueError(f"algo {algo!r} is detected with the model's probabilities: pass lm")
        step_probs = step_probs_of(lm, gen)  # sims.get_lm's LM: batched on a real LM
        return scores.score_keyed_order(gen, step_probs, key=key, algo=algo)

    def sequential(self, gen, lm, *, algo, key, dedup, gamma, alpha, grid):
        if lm is None:
            raise ValueError(f"algo {algo!r} is detected with the model's probabilities: pass lm")
        return sequential.sequential_keyed_order(gen, lm_step_probs(lm, gen), key=key, algo=algo, alpha=alpha, grid=grid)

    def many_keys(self, gen, keys, lm, *, algo, dedup, gamma, step_probs):
        if step_probs is None:
            if lm is None:
                raise ValueError(f"algo {algo!r} is detected with the model's probabilities: pass lm or step_probs")
            step_probs = lm_step_probs(lm, gen)
        res = [scores.score_keyed_order(gen, step_probs, key=int(k), algo=algo) for k in keys]
        return np.stack([r.log10_p for r in res]), np.stack([r.n_scored for r in res])

    def stream_setup(self, det, f, *, algo, score, m, weights, mask_repeated):
        det.c, det.w_keyed, det.probs = f, np.zeros(f.size), []

    def stream_marks(self, det, new, probs):
        if probs is None:
            raise ValueError(f"probs must be given for algo {det.algo!r} (keyed orders are detected with the model's probabilities)")
        return det._keyed_hits(new, probs)

    def stream_skip(self, det, window, pair):
        return False

    def stream_step(self, det, marks, j):
        hits, pi = marks
        p = max(pi[j], 1e-300)
        det.w_keyed += np.log1p(det.c * (1 - p) / p) if hits[j] else np.log1p(-det.c)
        det.log_e = _logmeanexp(det.w_keyed)
        det.s += float(hits[j])


class Tournament(DetectorFamily):
    """Tournament (SynthID) g-value scores with their exact Binomial tail over unrepeated contexts."""

    name = "tournament"
    statistic = "mean g-value sum"
    description = "tournament mean g-value, exact Binomial(m n, 1/2) tail over unrepeated contexts"
    own_dedup = ("context-mask", "generation")
    takes_weights = True

    def score(self, gen, lm, *, algo, key, dedup, gamma, stat, params):
        from sims.detect.stats.tournament_scores import score_family

        return score_family(gen, algo=algo, key=key, dedup=dedup, gamma=gamma, stat=stat, params=params)

    def sequential(self, gen, lm, *, algo, key, dedup, gamma, alpha, grid):
        from sims.detect.anytime.sequential_laws import sequential_tournament

        m = gen.meta
        own = m if m["algo"] == algo else {}
        prm = registry.resolve_params(algo, **{k: own.get(k) for k in registry.get(algo).params})
        return sequential_tournament(gen.tokens, _layout(gen)[0], key, prm["m"], alpha=alpha, h=m["h"], mask_repeated=bool(prm["mask_repeated"]),
                                     lengths=gen.lengths, grid=grid)

    def many_keys(self, gen, keys, lm, *, algo, dedup, gamma, step_probs):  # the tournament skips repeated contexts itself
        res = [self.score(gen, lm, algo=algo, key=int(k), dedup=False, gamma=None, stat=None, params=None) for k in keys]
        return np.stack([r.log10_p for r in res]), np.stack([r.n_scored for r in res])

    def stream_setup(self, det, f, *, algo, score, m, weights, mask_repeated):
        from sims.detect.anytime import sequential_laws
        from sims.detect.stats.tournament_scores import layer_weights

        det.m = registry.resolve_params(algo, m=m)["m"]
        det.weights = layer_weights(det.m, weights)
        det.mix = sequential_laws.tilt_mixture(sequential_laws.weighted_bernoulli_law(det.weights), f)
        det.mask_repeated = bool(mask_repeated)

    def stream_marks(self, det, new, probs):
        from sims.detect.anytime.sequential_laws import tournament_token_scores

        if not new.size:
            return np.zeros(0)
        prompt = np.asarray(det.seq[-det.h :], dtype=np.int64)[None, :]
        return tournament_token_scores(new[None, :], prompt, det.key, det.m, weights=det.weights, h=det.h, mask_repeated=False)[0][0]

    def stream_skip(self, det, window, pair):
        if det.mask_repeated and window in det.seen:
            return True
        det.seen.add(window)
        return False


_FAMILIES: dict[str, DetectorFamily] = {}


def register_family(family: DetectorFamily) -> DetectorFamily:
    """Add ``family`` (its name not registered yet); returns it.  The registered families are the one list of family names.

    Parameters
    ----------
    family : DetectorFamily
        The family object; its :attr:`~DetectorFamily.name` must be new.

    Returns
    -------
    DetectorFamily
        ``family`` itself.
    """
    if family.name in _FAMILIES:
        raise ValueError(f"family {family.name!r} is registered already")
    _FAMILIES[family.name] = family
    return family


for _f in (RedGreen(), EntropyGated(), AutoCov(), EMS(), PositionEMS(), KeyedOrder(), Tournament()):
    register_family(_f)


def names() -> tuple[str, ...]:
    """The registered families' names, in registration order.

    Returns
    -------
    tuple of str
        The names (``"redgreen"``, ``"entropy_gated"``, ``"autocov"``, ``"ems"``, ``"ems_position"``, ``"keyed"``, ``"tournament"``).
    """
    return tuple(_FAMILIES)


def get(name: str) -> DetectorFamily:
    """The family called ``name``; a ValueError naming it and the registered ones if there is none.

    Parameters
    ----------
    name : str
        A family name (:func:`names`).

    Returns
    -------
    DetectorFamily
        The registered family object.
    """
    try:
        return _FAMILIES[name]
    except (KeyError, TypeError):
        raise ValueError(f"detector family {name!r} is not registered (families: {names()})") from None


def of(algo: str) -> DetectorFamily:
    """The detector family of algorithm ``algo`` (its registry record's); a ValueError names an unknown algorithm or family.

    Parameters
    ----------
    algo : str
        A registry algorithm name (:func:`sims.watermarks.registry.names`).

    Returns
    -------
    DetectorFamily
        The family its :attr:`~sims.watermarks.registry.Algorithm.family` names.
    """
    name = registry.get(algo).family
    try:
        return _FAMILIES[name]
    except (KeyError, TypeError):
        raise ValueError(f"algo {algo!r} has detector family {name!r}, which is not registered (families: {names()})") from None
