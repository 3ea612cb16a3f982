"""One door per language model: :func:`get_lm` opens any LM as one kind of object, :class:`LM`.

A synthetic preset (``news``, ``lfqa``, ``loopy``, ``tiny``), a fitted synthetic LM (``smollm2-fit``
or a ``.npz`` from ``python -m sims fit-lm``), a ``loopy-V<V>-p<p>`` variant, SmolLM2, a random
test model or a local transformers folder: whatever the name, the object answers next-token
probabilities along a text (:meth:`LM.next_probs`, :meth:`LM.probs_along`, :meth:`LM.step_probs`),
tokenises and decodes (:meth:`LM.encode`, :meth:`LM.decode`), gives a real LM's prompts
(:meth:`LM.prompt_ids`) and says its ``name``, ``kind`` and ``vocab_size``.  Which kind it is is
decided once, by :func:`sims.lm.kind.lm_kind`: a synthetic LM answers from its exact tables, a
real one through the adapter of :mod:`sims.lm.real` (torch imported only when a real LM is
opened).  :func:`sims.generate` (:mod:`sims.generation`) draws watermarked texts from the object;
everything downstream (scores, attacks, evaluate, sweeps, figures) takes it and never asks which
kind it is.
"""

from __future__ import annotations

import re

import numpy as np

from sims.core import seeding as seeding_mod
from sims.core.record import Generation
from sims.lm import synthetic
from sims.lm.kind import REAL_KINDS, lm_kind
from sims.lm.synthetic import lm_step_probs

DEFAULT_PROMPTS = "lfqa"  #: a real LM's prompt set when none is given
_OPEN: dict = {}  # real LMs already opened in this process, by (name, dtype, device): their weights load once


class LM:
    """A language model behind one door, synthetic or real (build with :func:`get_lm`).

    Parameters
    ----------
    name : str
        The name it was opened by (kept in ``Generation.meta["lm"]``).
    kind : str
        One of :data:`sims.lm.kind.KINDS`.
    synthetic : SyntheticLM, optional
        The exact LM of a synthetic kind (None for a real LM).
    dtype, device : optional
        A real LM's weights' dtype (default float32) and device (default the GPU when there is
        one, else the CPU); loaded at first use.

    Returns
    -------
    LM

    Attributes
    ----------
    name, kind : str
    real : bool
        Whether it runs on the torch backend (kind ``smollm2``, ``random`` or ``folder``).
    vocab_size : int
        The ids it samples (a real LM's: its tokenizer's length; loads the model).
    synthetic : SyntheticLM or None
        A synthetic LM's exact tables; their attributes (``order``, ``params``, ``logits``, ...) are
        also read through this object.
    model, tokenizer :
        A real LM's transformers model and tokenizer (None for the random test models and for a
        synthetic LM).

    References
    ----------
    Towards Better Statistical Understanding of Watermarking LLMs, Section 2: the unwatermarked LM p whose
    next-token distributions the watermarks reweight (Algorithm 1, alg:kirchen).

    Examples
    --------
    >>> import sims
    >>> lm = sims.get_lm("tiny")
    >>> type(lm).__name__, lm.name, lm.kind, lm.real, lm.vocab_size
    ('LM', 'tiny', 'preset', False, 6)
    >>> lm.decode(lm.encode("3 1 4"))
    '3 1 4'
    >>> lm.next_probs([0]).round(3).tolist()
    [0.283, 0.141, 0.075, 0.201, 0.269, 0.032]
    """

    def __init__(self, name: str, kind: str, synthetic: synthetic.SyntheticLM | None = None, *, dtype=None, device=None):
        self.name, self.kind, self.synthetic = str(name), kind, synthetic
        self.real = kind in REAL_KINDS
        if self.real == (synthetic is not None):
            raise ValueError(f"synthetic must be given exactly for the synthetic kinds; got kind={kind!r}, synthetic={synthetic!r}")
        self._dtype, self._device, self._loaded, self._oracle, self._clusters = dtype, device, None, None, None

    def __repr__(self) -> str:
        return f"LM(name={self.name!r}, kind={self.kind!r})"

    def __getattr__(self, attr):
        # a synthetic LM's tables and exact functions (order, params, levels, logits, ...) read through
        syn = self.__dict__.get("synthetic")
        if syn is not None and not attr.startswith("__"):
            return getattr(syn, attr)
        raise AttributeError(f"{type(self).__name__} {self.__dict__.get('name')!r} has no attribute {attr!r}")

    # -- a real LM's weights, loaded once at first use -------------------------------------------
    def _load(self):
        if self._loaded is None:
            import torch

            from sims.lm.real.model import load, sampled_vocab

            model, tok = load(self.name, dtype=self._dtype)
            model = model.to(self._device or ("cuda" if torch.cuda.is_available() else "cpu"))
            self._loaded = (model, tok, sampled_vocab(model, tok))
        return self._loaded

    @property
    def model(self):
        return self._load()[0] if self.real else None

    @property
    def tokenizer(self):
        """A real LM's tokenizer (read without loading the weights); None for a random test model or a synthetic LM."""
        if not self.real:
            return None
        if self._loaded is not None:
            return self._loaded[1]
        from sims.lm.real.model import load_tokenizer

        return load_tokenizer(self.name)

    @property
    def vocab_size(self) -> int:
        return self.synthetic.vocab_size if not self.real else self._load()[2]

    def cluster_table(self) -> np.ndarray:
        """``semantic`` seeding's cluster of every id this LM samples (:mod:`sims.core.seeding`).

        A real LM's come from its own input embeddings (:func:`sims.core.seeding.embedding_clusters`: a SimHash of
        each centred row), so that the green list follows what the LM itself treats as near-synonyms; the input
        embeddings rather than a hidden state because they are one fixed vector per id, the same at generation and
        at detection, and need no forward pass to read.  The table is kept in the cache by content
        (:func:`sims.core.seeding.store_clusters`), where detection finds it by the name a generation records.  A
        synthetic LM has no embedding: :data:`sims.core.seeding.NO_CLUSTERS` (the public hash of the id stands in).

        Returns
        -------
        ndarray of int64, shape (vocab_size,) for a real LM, (0,) for a synthetic one
        """
        if not self.real:
            return seeding_mod.NO_CLUSTERS
        if self._clusters is None:
            weight = self.model.get_input_embeddings().weight.detach().float().cpu().numpy()[: self.vocab_size]
            self._clusters = seeding_mod.embedding_clusters(weight)
            seeding_mod.store_clusters(self._clusters)
        return self._clusters

    def prompt_ids(self, source: str = DEFAULT_PROMPTS, n: int | None = None, *, seed: int = 0) -> list:
        """A real LM's prompts: the first ``n`` of set ``source`` (lfqa, news or a JSONL file) encoded, or
        ``n`` random id sequences (seed ``seed``) for a random test model (:func:`sims.lm.real.prompts.prompt_ids`).

        Parameters
        ----------
        source : str, default DEFAULT_PROMPTS
            Prompt set: ``"lfqa"``, ``"news"`` or a JSONL file.
        n : int, optional
            Number of prompts (default all of the set).
        seed : int, default 0
            Seed of a random test model's prompts.

        Returns
        -------
        list of ndarray of int64
            The encoded prompts.

        Raises
        ------
        ValueError
            For a synthetic LM (it samples its own prompts).
        """
        if not self.real:
            raise ValueError(f"prompt sets are a real LM's; synthetic LM {self.name!r} samples its prompts (sims.sample_prompts)")
        from sims.lm.real.prompts import prompt_ids

        _, tok, V = self._load()
        return prompt_ids(source, n, tokenizer=tok, vocab_size=V, seed=seed)

    def null_prompts(self, gen: Generation, n_null: int):
        """The prompts of ``n_null`` unwatermarked controls of ``gen``: a synthetic LM samples fresh ones
        (None); a real LM reuses ``gen``'s prompts, cycled.

        Parameters
        ----------
        gen : Generation
            The watermarked generation.
        n_null : int
            Number of controls.

        Returns
        -------
        list of ndarray or None
            The controls' prompts, or None for a synthetic LM.
        """
        return None if not self.real else [gen.prompt(i % gen.n) for i in range(int(n_null))]

    # -- probabilities ----------------------------------------------------------------------------
    def _probs(self):
        if not self.real:
            return self.synthetic
        if self._oracle is None:
            from sims.lm.real.oracle import ModelOracle

            model, _, V = self._load()
            self._oracle = ModelOracle(model, V)
        return self._oracle

    def next_probs(self, context) -> np.ndarray:
        """The (V,) next-token distribution after ``context`` (token ids), float64.

        Parameters
        ----------
        context : array_like of int
            Token ids, oldest first.

        Returns
        -------
        ndarray of float64, shape (V,)
            The unwatermarked next-token distribution.
        """
        return self._probs().next_probs(context)

    def probs_along(self, seq, P: int, T: int) -> np.ndarray:
        """The (T, V) distributions of tokens ``seq[P:P + T]`` given what precedes each (``seq``: a prompt row of width ``P``, then the text).

        Parameters
        ----------
        seq : array_like of int
            Prompt row, then the text.
        P : int
            Width of the prompt row.
        T : int
            Number of text positions.

        Returns
        -------
        ndarray of float64, shape (T, V)
            The unwatermarked next-token distributions.
        """
        return self._probs().probs_along(seq, P, T)

    def step_probs(self, gen: Generation):
        """``step_probs(i)``: the (T, V) next-token distributions along text i of ``gen`` (what UW / ITS
        detection reads): exact for a synthetic LM, a real LM's teacher-forced softmax, batched
        (:func:`sims.lm.real.oracle.teacher_forced_probs`).

        Parameters
        ----------
        gen : Generation
            The texts.

        Returns
        -------
        callable
            ``step_probs(i) -> ndarray of shape (T, V)``.
        """
        if not self.real:
            return lm_step_probs(self.synthetic, gen)
        from sims.lm.real.oracle import teacher_forced_probs

        return teacher_forced_probs(self._load()[0], gen)

    def token_logprobs(self, gen: Generation) -> np.ndarray:
        """(n, T) natural log-probabilities of ``gen``'s tokens under this (unwatermarked) LM, nan past each
        text's length: a synthetic LM's exact law (:func:`sims.lm.logprobs.token_logprobs`, O(1) per token),
        a real LM's teacher-forced softmax (:meth:`step_probs`); what perplexity reads (:mod:`sims.experiments.quality`).

        Parameters
        ----------
        gen : Generation
            The texts.

        Returns
        -------
        ndarray, shape (n, T)
            Log-probability of each token.
        """
        if not self.real:
            from sims.lm.logprobs import token_logprobs

            return token_logprobs(self.synthetic, gen.prompts, gen.tokens, gen.lengths)
        probs, (n, T) = self.step_probs(gen), gen.tokens.shape
        inside = np.arange(T)[None, :] < gen.lengths[:, None]
        tok = np.where(inside, gen.tokens, 0)
        with np.errstate(divide="ignore"):
            out = np.stack([np.log(probs(i)[np.arange(T), tok[i]]) for i in range(n)])
        return np.where(inside, out, np.nan)

    # -- text -------------------------------------------------------------------------------------
    def encode(self, text: str) -> np.ndarray:
        """Token ids of ``text``: the tokenizer's, or the ids written as integers separated by spaces
        (a synthetic LM, a random test model).

        Parameters
        ----------
        text : str
            The text.

        Returns
        -------
        ndarray of int64
            Its token ids (no special tokens added).

        Raises
        ------
        ValueError
            Without a tokenizer, if the text is not integers separated by spaces.
        """
        tok = self.tokenizer
        if tok is None:
            try:
                return np.array([int(w) for w in str(text).split()], dtype=np.int64)
            except ValueError:
                raise ValueError(f"text of LM {self.name!r} (no tokenizer) must be token ids separated by spaces; got {text[:40]!r}") from None
        return np.asarray(tok(str(text), add_special_tokens=False)["input_ids"], dtype=np.int64)

    def decode(self, ids) -> str:
        """The text of token ids: the tokenizer's decoding, or the ids joined by spaces (no tokenizer).

        Parameters
        ----------
        ids : iterable of int
            Token ids.

        Returns
        -------
        str
            The text.
        """
        tok = self.tokenizer
        if tok is None:
            return " ".join(str(int(t)) for t in ids)
        return tok.decode([int(t) for t in ids])


def get_lm(name, vocab_size: int | None = None, seed: int = 0, *, dtype=None, device=None) -> LM:
    """Open any LM by name or path: one kind of object, :class:`LM`, whatever the LM.

    Parameters
    ----------
    name : str, LM or SyntheticLM
        A synthetic preset (``news``, ``lfqa``, ``loopy``, ``tiny``), a fitted LM (``smollm2-fit`` or
        the path of a ``.npz`` from ``python -m sims fit-lm``), a ``loopy-V<V>-p<p>`` variant,
        ``smollm2``, a random test model (``random-llama``, ...), a local transformers folder; an
        :class:`LM` (returned as is) or a :class:`~sims.lm.synthetic.SyntheticLM` (wrapped).  The
        kind is :func:`sims.lm.kind.lm_kind`'s.
    vocab_size : int, optional
        A synthetic preset's vocabulary (default the preset's; not for fitted or real LMs).
    seed : int
        Seed of a synthetic LM's tables.
    dtype, device : optional
        A real LM's weights' dtype and device (see :class:`LM`); a real LM opened twice with the
        same ones is the same object (its weights load once per process).

    Returns
    -------
    LM

    References
    ----------
    Towards Better Statistical Understanding of Watermarking LLMs, Section 2: the unwatermarked LM p whose
    next-token distributions the watermarks reweight (Algorithm 1, alg:kirchen).

    Examples
    --------
    >>> import sims
    >>> lm = sims.get_lm("news", vocab_size=1000)
    >>> lm.name, lm.kind, lm.vocab_size
    ('news', 'preset', 1000)
    >>> gen = sims.generate(lm, "srl", n=2, T=10, seed=0, key=15485863, delta=2.0)
    >>> gen.tokens.shape, gen.meta["lm"]
    ((2, 10), 'news')
    >>> sims.get_lm("smollm2-fit").kind
    'fitted'
    """
    if isinstance(name, LM):
        return name
    if isinstance(name, synthetic.SyntheticLM):
        kind = "fitted" if name.fitted else "loop" if re.fullmatch(r"loopy-V\d+-p.+", name.name) else "preset"
        return LM(name.name, kind, name)
    kind = lm_kind(name)
    if kind not in REAL_KINDS and (dtype is not None or device is not None):
        raise ValueError(f"dtype and device apply to real LMs (the torch backend); synthetic LM {name!r} got dtype={dtype!r}, device={device!r}")
    if kind in REAL_KINDS:
        if vocab_size is not None:
            raise ValueError(f"vocab_size applies to synthetic LMs (a real LM samples its tokenizer's); got {vocab_size!r} for {name!r}")
        tag = (str(name), str(dtype), str(device))
        if tag not in _OPEN:
            _OPEN[tag] = LM(str(name), kind, dtype=dtype, device=device)
        return _OPEN[tag]
    if kind == "loop":
        lm = synthetic.lm_from_meta(dict(lm=name, lm_seed=seed))
        if vocab_size is not None and int(vocab_size) != lm.vocab_size:
            raise ValueError(f"vocab_size of {name!r} must be its own {lm.vocab_size}; got {vocab_size!r}")
        return LM(name, kind, lm)
    return LM(name, kind, synthetic.open_synthetic(name, vocab_size=vocab_size, seed=seed))


def lm_of(meta: dict) -> LM:
    """The LM a saved :class:`~sims.core.record.Generation` was drawn from (its ``meta``: ``lm``, ``vocab_size``, ``lm_seed``).

    Parameters
    ----------
    meta : dict
        A generation's metadata.

    Returns
    -------
    LM
        The LM, opened by :func:`get_lm`.
    """
    if lm_kind(meta["lm"]) in REAL_KINDS:
        return get_lm(meta["lm"])
    return get_lm(synthetic.lm_from_meta(meta))
