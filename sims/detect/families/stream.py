"""Streaming anytime-valid detection: feed a text as it arrives, read an e-value and a decision.

:class:`SequentialDetector` holds the e-process of :mod:`sims.detect.anytime.sequential` for ONE text
and updates it with every chunk of tokens; the decision "watermarked" is final once the
e-value has reached 1/alpha (Ville's inequality: under the null that happens with
probability at most alpha, whenever and however often the state is read).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sims.core import defaults
from sims.core import seeding as seeding_mod
from sims.detect.anytime import sequential
from sims.detect.stats import scores


@dataclass(frozen=True)
class SequentialState:
    """What a stream has shown so far.

    Attributes
    ----------
    tokens_seen : int
        Tokens fed after the context.
    n_scored : int
        Tokens scored (after dedup).
    log_e : float
        Natural log of the current e-value.
    max_log_e : float
        Its running maximum (0 at the start: E_0 = 1).
    stop : int
        First token (1-based, after the context) at which the e-value reached 1/alpha; -1 if not yet.
    alpha : float
    """

    tokens_seen: int
    n_scored: int
    log_e: float
    max_log_e: float
    stop: int
    alpha: float

    @property
    def e_value(self) -> float:
        """The current e-value E_t."""
        return math.exp(min(self.log_e, 709.0))

    @property
    def detected(self) -> bool:
        """True once the e-value has reached 1/alpha (final)."""
        return self.stop > 0

    @property
    def decision(self) -> str:
        """``"watermarked"`` once detected, else ``"not yet"`` (an e-process never accepts the null)."""
        return "watermarked" if self.detected else "not yet"

    @property
    def log10_p(self) -> float:
        """log10 of the anytime-valid p-value min(1, 1 / max_s E_s)."""
        return -max(self.max_log_e, 0.0) / math.log(10.0)


class SequentialDetector:
    """Anytime-valid detection of one growing text (families of :mod:`sims.detect.anytime.sequential`).

    Parameters
    ----------
    key : int in [0, 2**64)
    algo : str
        The watermark's detector: a red-green algorithm, ``"autocov"``, ``"ems"``, ``"its"``,
        ``"uw-delta"`` or ``"uw-gamma"`` (keyed orders: :meth:`update` needs the model's
        next-token probabilities), ``"synthid"`` (tournament: the mean g-value score's e-process,
        :func:`sims.detect.anytime.sequential_laws.sequential_tournament`), ``"sweet"`` (the entropy-gated green
        count: :meth:`update` needs the model's probabilities; the gate's threshold is ``threshold``), or
        any registered algorithm of these detector families.
    context : 1-d int array
        The tokens before the text (at least ``h``): the first token's context.
    gamma : float, optional
        Green-list ratio (red-green and AutoCov; default ``defaults.GAMMA``).
    h, green_kind, vocab_size, dedup, alpha, grid :
        As :func:`sims.detect.anytime.sequential.sequential_redgreen`.
    seeding : str
        The green lists' seeding scheme (:mod:`sims.core.seeding`: ``"lefthash"``, ``"selfhash"``,
        ``"minhash"``, ``"skipgram"``; red-green and AutoCov, Bernoulli lists).  As in the batch
        detector, dedup then scores each (seed, token) pair once, across chunks; a scheme the
        algorithm's lists do not support is a ValueError (:func:`sims.watermarks.registry.check_seeding`).
    m, mask_repeated, weights : int, bool, array of ints
        Tournament family: its layers (default the registry's), whether a position whose context
        was already met is skipped (default True, as the generator; ``dedup`` does not apply) and the
        layer weights of the score (default all ones, the mean score; SynthID's weighted score:
        :func:`sims.detect.stats.tournament_scores.synthid_weights`), as
        :func:`sims.detect.anytime.sequential_laws.sequential_tournament`.
    score : str, optional
        A registered score family of ``algo`` with an e-process
        (:data:`sims.detect.families.sequential_scores.SEQUENTIAL_SCORES`; default the family's own, e.g.
        ``"ems-log"`` for EMS text: the tilt e-process of its :math:`\\ln Y` terms).
    threshold : float, optional
        The entropy-gated family (``"sweet"``): the gate's threshold in nats, the ``alpha`` the text was generated
        with (a generation's ``meta["alpha"]``, which the batch detector reads); None: the registry's default
        ``alpha``.  A ValueError for the other families (they have no gate).
    exp_n : int, optional
        A position-keyed algorithm (``"exp"``): the length of the key sequence the text was generated with (a generation's
        ``meta["exp_n"]``, which the batch detector reads); None: the registry's default.  A ValueError for an algorithm
        that takes no ``exp_n``.

    Examples
    --------
    >>> import sims
    >>> from sims.detect.families.stream import SequentialDetector
    >>> gen = sims.generate(sims.get_lm("news"), "srl", n=1, T=120, seed=0, key=7, delta=2.0)
    >>> det = SequentialDetector(7, algo="srl", context=gen.prompts[0], vocab_size=gen.meta["vocab_size"], alpha=1e-4)
    >>> for chunk in gen.tokens[0].reshape(12, 10):
    ...     state = det.update(chunk)
    >>> state.tokens_seen, state.decision, state.stop <= 120
    (120, 'watermarked', True)
    """

    def __init__(self, key: int, *, algo: str = "srl", context, gamma: float | None = None, h: int = defaults.H, green_kind: str = defaults.GREEN_KIND,
                 vocab_size: int | None = None, dedup: bool = True, alpha: float = defaults.FPR, grid=None, m: int | None = None,
                 mask_repeated: bool = True, score: str | None = None, seeding: str = seeding_mod.DEFAULT, weights=None,
                 threshold: float | None = None, exp_n: int | None = None):
        from sims.detect import families
        from sims.watermarks import registry

        self.family = families.of(algo)
        self.seeding = seeding
        self.seeded = registry.check_seeding(algo, seeding, green_kind=green_kind) != seeding_mod.LEFTHASH
        if weights is not None and not self.family.takes_weights:
            raise ValueError(f"weights are the tournament family's layer weights; algo {algo!r} has family {self.family.name!r}")
        if score is not None:
            from sims.detect.families.sequential_scores import check_score

            check_score(score, algo)
        self.score = score
        if threshold is not None:
            if self.family.gate_param is None:
                gated = tuple(a for a in registry.names() if families.of(a).gate_param is not None)
                raise ValueError(f"threshold is the entropy gate's (algo one of {gated}); algo {algo!r} has family {self.family.name!r}")
            from sims.detect.stats.gated_scores import check_threshold

            threshold = check_threshold(threshold)
        self.gate_threshold = threshold
        if exp_n is not None:
            if "exp_n" not in registry.get(algo).params:
                keyed = tuple(a for a in registry.names() if "exp_n" in registry.get(a).params)
                raise ValueError(f"exp_n is a position-keyed algorithm's key-sequence length (algo one of {keyed}); algo {algo!r} takes none")
        self.exp_n = exp_n  # checked and defaulted by the family's stream_setup
        self.algo, self.key, self.h, self.dedup = algo, key, int(registry.context_width(algo, h)), bool(dedup)
        self.alpha = sequential.check_alpha(alpha)
        self.bound = math.log(1.0 / self.alpha)
        scores._check_key(key)
        self.seq = [int(x) for x in np.asarray(context).ravel()]
        if self.h < 0 or len(self.seq) < self.h:
            raise ValueError(f"context must hold at least h={h} tokens (h >= 0); got {len(self.seq)}")
        self.P = len(self.seq)
        self.gamma = defaults.GAMMA if gamma is None else float(gamma)
        self.green_kind, self.vocab_size = registry.fixed_green_kind(algo, green_kind), vocab_size  # DiPmark: partition
        self.kw = dict(h=self.h, vocab_size=vocab_size)
        self.family.stream_setup(self, sequential.check_grid(grid), algo=algo, score=score, m=m, weights=weights, mask_repeated=mask_repeated)
        self.seen: set = set()
        self.s, self.n, self.log_e, self.max_log_e, self.stop = 0.0, 0, 0.0, 0.0, -1

    def _seed_pairs(self, new: np.ndarray) -> list[tuple[int, int]]:
        """The (seed, token) pair of each new token under a seeding scheme other than left-hash: what
        the batch detector's dedup names a token by (:mod:`sims.core.seeding`)."""
        seq = np.asarray(self.seq[-self.h :] + new.tolist(), dtype=np.int64)
        windows = np.lib.stride_tricks.sliding_window_view(seq, self.h)[: new.size]
        seeds = seeding_mod.seeds(int(self.key), windows, self.seeding, new)
        return list(zip(seeds.tolist(), new.tolist()))

    def _keyed_hits(self, new: np.ndarray, probs) -> tuple[np.ndarray, np.ndarray]:
        from sims.core import rng
        from sims.core.keys import ITS_STREAM, keyed_order
        from sims.detect.stats import _kernels as K

        probs = np.asarray(probs, dtype=np.float64)
        V = self.vocab_size
        if probs.ndim != 2 or probs.shape != (new.size, V or probs.shape[1]):
            raise ValueError(f"probs must be the (tokens, vocab_size) next-token distributions of the chunk; got shape {probs.shape}")
        self.probs.append(probs)
        allp = np.ascontiguousarray(np.concatenate(self.probs))
        V = allp.shape[1]
        perm = keyed_order(int(self.key), V)
        pos = np.empty(V, dtype=np.int64)
        pos[perm] = np.arange(V)
        T = allp.shape[0]
        probs_hit, hits = np.empty(T), np.zeros(T, dtype=np.bool_)
        seq = np.asarray(self.seq + [int(x) for x in new], dtype=np.int64)
        K.keyed_order_hits(allp, seq, self.P, self.h, np.uint64(self.key), perm, pos, rng.stream_key(int(self.key), ITS_STREAM),
                           scores.KEYED_ORDER_MODES[self.algo], probs_hit, hits)
        return hits[-new.size :], probs_hit[-new.size :]

    def update(self, tokens, probs=None) -> SequentialState:
        """Feed the next tokens (1-d ids; ``probs``: their (m, V) next-token distributions, keyed orders and SWEET's gate only).

        Parameters
        ----------
        tokens : (m,) int array
            The next token ids, each in ``[0, vocab_size)``.
        probs : (m, V) float array, optional
            The next-token distribution at each new token; needed by the keyed-order and entropy-gated families.

        Returns
        -------
        SequentialState
            The stream so far: tokens seen, tokens scored, the current and largest log e-value, the stopping time
            (-1 until the e-value reaches 1/alpha) and alpha.
        """
        new = np.asarray(tokens)
        if new.ndim != 1 or new.dtype.kind not in "iu":
            raise ValueError(f"tokens must be a 1-d array of integer ids; got dtype {new.dtype}, shape {new.shape}")
        new = new.astype(np.int64)
        if new.size and (new.min() < 0 or (self.vocab_size is not None and new.max() >= self.vocab_size)):
            raise ValueError(f"tokens must be in [0, {self.vocab_size}); got min {new.min()}, max {new.max()}")
        marks = self.family.stream_marks(self, new, probs)
        pairs = self._seed_pairs(new) if self.seeded and self.dedup else None
        t0 = len(self.seq) - self.P
        for j, y in enumerate(new):
            window = tuple(self.seq[len(self.seq) - self.h :])  # h = 0: the empty window (dedup: each distinct token once)
            self.seq.append(int(y))
            if self.family.stream_skip(self, window, (window, int(y)) if pairs is None else pairs[j]):
                continue
            self.n += 1
            self.family.stream_step(self, marks, j)
            self.max_log_e = max(self.max_log_e, self.log_e)
            if self.stop < 0 and self.log_e >= self.bound:
                self.stop = t0 + j + 1
        return SequentialState(len(self.seq) - self.P, self.n, self.log_e, self.max_log_e, self.stop, self.alpha)

