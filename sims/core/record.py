"""The one record of generated text, shared by the synthetic generator and the torch backend.

Everything downstream of generation (detection, attacks, evaluate, sweeps, figures) reads a
:class:`Generation`, whichever LM produced it, and the same ``.npz`` file format stores it.
"""

from __future__ import annotations

import json
import pathlib
import zipfile
from dataclasses import dataclass, field

import numpy as np

RECORDS = ("kl", "G", "dg", "entropy", "lam")  #: per-token records, float64 (n, T); nan where not defined
#: Format tag written into every ``.npz`` of :meth:`Generation.save` and required by :meth:`Generation.load`.
FORMAT = "wmstats.generation/1"


def first_pad_lengths(tokens) -> np.ndarray:
    """Each row's length up to its first negative id (``-1`` pads a text past its end).

    Parameters
    ----------
    tokens : ndarray of int, shape (n, T)
        Token ids, ``-1`` for padding.

    Returns
    -------
    ndarray of int64, shape (n,)
        The index of each row's first negative id, ``T`` where it has none.
    """
    pad = np.asarray(tokens) < 0
    return np.where(pad.any(axis=1), pad.argmax(axis=1), pad.shape[1]).astype(np.int64)


@dataclass
class Generation:
    """Texts and their exact per-token records.

    Attributes
    ----------
    tokens : ndarray (n, T) int64
        Generated token ids (``T`` is the longest row; see ``lengths``).
    prompts : ndarray (n, P) int64
        Prompt token ids, left-padded with ``PAD = -1`` to the longest prompt.
    kl, G, dg, entropy, lam : ndarray (n, T) float64
        Per token: :math:`D_{kl}(q_t \\| p_t)`, the green mass :math:`G_t` of :math:`p_t`,
        :math:`\\mathrm{DG}_t = q_t(\\text{green}) - G_t`, the entropy of :math:`p_t` (nats) and the
        boost :math:`\\lambda_t` (nan for algorithms without one).  nan where unknown (attacked
        texts) or past a row's length.
    meta : dict
        How the texts were made: ``lm``, ``vocab_size``, ``algo``, its parameters, ``key``,
        ``seed``, ``h``, ``green_kind`` (JSON-serialisable).
    prompt_lens : ndarray (n,) int64
        Real (unpadded) prompt length of each row; default: all ``P``.
    lengths : ndarray (n,) int64
        Generated tokens of each row (a row can stop early at its end-of-sequence token);
        default: all ``T``.  ``tokens[i, lengths[i]:]`` is padding.

    Parameters
    ----------
    tokens, prompts, kl, G, dg, entropy, lam, meta, prompt_lens, lengths
        The attributes above (built by :func:`sims.generate`).

    Returns
    -------
    Generation
        The record.

    References
    ----------
    Towards Better Statistical Understanding of Watermarking LLMs, eq. (1) (eq:define_DG), Def. 2.2 (def:conditional_KL) and Algorithms 1-3.

    Examples
    --------
    >>> import sims
    >>> lm = sims.get_lm("tiny")
    >>> gen = sims.generate(lm, "srl", n=2, T=20, seed=0, key=42, gamma=0.25, delta=2.0, prompt_len=4)
    >>> type(gen).__name__, gen.tokens.shape, gen.prompts.shape, gen.meta["algo"]
    ('Generation', (2, 20), (2, 4), 'srl')
    """

    tokens: np.ndarray
    prompts: np.ndarray
    kl: np.ndarray
    G: np.ndarray
    dg: np.ndarray
    entropy: np.ndarray
    lam: np.ndarray
    meta: dict = field(default_factory=dict)
    prompt_lens: np.ndarray | None = None
    lengths: np.ndarray | None = None

    PAD = -1

    def __post_init__(self):
        self.tokens = np.asarray(self.tokens, dtype=np.int64)
        self.prompts = np.asarray(self.prompts, dtype=np.int64)
        if self.tokens.ndim != 2 or self.prompts.ndim != 2 or self.prompts.shape[0] != self.tokens.shape[0]:
            raise ValueError(f"tokens (n, T) and prompts (n, P) must share n; got {self.tokens.shape} and {self.prompts.shape}")
        n, T = self.tokens.shape
        for name in RECORDS:
            a = np.asarray(getattr(self, name), dtype=np.float64)
            if a.shape != (n, T):
                raise ValueError(f"record {name} must have shape {(n, T)}; got {a.shape}")
            setattr(self, name, a)
        self.prompt_lens = (np.full(n, self.prompts.shape[1], dtype=np.int64) if self.prompt_lens is None
                            else np.asarray(self.prompt_lens, dtype=np.int64))
        self.lengths = np.full(n, T, dtype=np.int64) if self.lengths is None else np.asarray(self.lengths, dtype=np.int64)
        if self.prompt_lens.shape != (n,) or self.lengths.shape != (n,):
            raise ValueError(f"prompt_lens and lengths must have shape ({n},)")
        if np.any(self.prompt_lens < 0) or np.any(self.prompt_lens > self.prompts.shape[1]):
            raise ValueError(f"prompt_lens must be in [0, {self.prompts.shape[1]}]")
        if np.any(self.lengths < 0) or np.any(self.lengths > T):
            raise ValueError(f"lengths must be in [0, {T}]")

    @property
    def n(self) -> int:
        """Number of texts."""
        return self.tokens.shape[0]

    def scored_lengths(self) -> np.ndarray:
        """Each text's token count as the detectors score it: ``lengths`` cut at the first ``-1`` pad
        (an attack or a splice can leave pads inside a text's length; :func:`first_pad_lengths`).

        Returns
        -------
        ndarray of int64, shape (n,)
            Tokens of each text before its first pad, at most its ``lengths``.
        """
        return np.minimum(first_pad_lengths(self.tokens), self.lengths)

    def prompt(self, i: int) -> np.ndarray:
        """Row ``i``'s prompt without its padding.

        Parameters
        ----------
        i : int
            Row (text) index.

        Returns
        -------
        ndarray of int64
            The last ``prompt_lens[i]`` prompt tokens of row i (prompts are left-padded).
        """
        return self.prompts[i, self.prompts.shape[1] - self.prompt_lens[i]:]

    def text(self, i: int) -> np.ndarray:
        """Row ``i``'s generated tokens without padding.

        Parameters
        ----------
        i : int
            Row (text) index.

        Returns
        -------
        ndarray of int64
            The first ``lengths[i]`` generated tokens of row i.
        """
        return self.tokens[i, : self.lengths[i]]

    def save(self, path) -> None:
        """Write a compressed ``.npz`` archive (no pickles; ``meta`` as JSON) to exactly ``path``
        (NumPy would add ``.npz`` to a name without it).

        Parameters
        ----------
        path : str or os.PathLike
            File to write.
        """
        with open(path, "wb") as f:
            np.savez_compressed(
                f, format=FORMAT, tokens=self.tokens, prompts=self.prompts, prompt_lens=self.prompt_lens, lengths=self.lengths,
                meta=json.dumps(self.meta), **{k: getattr(self, k) for k in RECORDS},
            )

    @staticmethod
    def nbytes(n: int, T: int) -> int:
        """Bytes that ``n`` texts of ``T`` tokens take in memory: int64 tokens and the float64 ``RECORDS``.

        Parameters
        ----------
        n : int
            Number of texts.
        T : int
            Tokens per text.

        Returns
        -------
        int
            ``8 n T (1 + len(RECORDS))``.
        """
        return int(n) * int(T) * 8 * (1 + len(RECORDS))

    @classmethod
    def load(cls, path, *, records: bool = True) -> Generation:
        """Read a file written by :meth:`save`; a clear ``ValueError`` for anything else.

        ``records=False`` leaves the per-token records (:data:`RECORDS`) unread: each is then a read-only
        view of nan (what detection, which reads the texts only, loads).

        Parameters
        ----------
        path : str or os.PathLike
            The ``.npz`` file.
        records : bool, default True
            Whether to read the per-token records.

        Returns
        -------
        Generation
            The generation the file holds.

        Raises
        ------
        ValueError
            If the file is missing, not an ``.npz`` archive, or lacks the generation's arrays.
        """
        path = pathlib.Path(path)
        if not path.is_file():
            raise ValueError(f"{path}: no such file")
        try:
            z = np.load(path, allow_pickle=False)
        except (ValueError, OSError, zipfile.BadZipFile):  # numpy's own message would suggest unpickling: never
            raise ValueError(f"{path} is not a wmstats generation file (an .npz archive written by Generation.save)") from None
        if not isinstance(z, np.lib.npyio.NpzFile):
            raise ValueError(f"{path} is not a wmstats generation file: a single array, not an .npz archive")
        with z:
            missing = {"tokens", "prompts", "meta", *RECORDS} - set(z.files)
            if missing:
                raise ValueError(f"{path} is not a wmstats generation file: missing arrays {sorted(missing)}")
            extra = {k: z[k] for k in ("prompt_lens", "lengths") if k in z.files}
            tokens = z["tokens"]
            recs = [z[k] for k in RECORDS] if records else [np.broadcast_to(np.float64(np.nan), tokens.shape)] * len(RECORDS)
            return cls(tokens, z["prompts"], *recs, meta=json.loads(str(z["meta"])), **extra)
