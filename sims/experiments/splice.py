"""Splicing ("copy-paste") attack: a watermarked passage pasted into plain text at a random place.

The setting of windowed detectors (WinMax, Kirchenbauer et al. 2024; the local score,
:mod:`sims.detect.stats.local_scores`): the watermark is intact inside the passage, the whole-text score
dilutes it in the plain tokens around it.  The first pasted token reads a plain context and the
first plain token after the passage a watermarked one: both get fresh colours, as at any edit.
"""

from __future__ import annotations

import numpy as np

from sims.core.record import Generation
from sims.experiments.attacks import _pack, _rows


def splice(wm: Generation, plain: Generation, seed: int) -> tuple[Generation, np.ndarray]:
    """Paste text i of ``wm`` whole into text i of ``plain`` at a uniform place.

    Parameters
    ----------
    wm : sims.core.record.Generation
        The watermarked passages.
    plain : sims.core.record.Generation
        The host texts, as many as ``wm``'s, of the same vocabulary.
    seed : int
        Seed of ``numpy.random.default_rng`` choosing the places.

    Returns
    -------
    spliced : sims.core.record.Generation
        ``wm``'s record with ``plain``'s prompts, the per-token records nan and the attack recorded in
        ``meta["attacks"]`` (kind ``splice``, rate: the mean watermarked share).
    start : numpy.ndarray of int64
        (n,) each passage's first position.

    Raises
    ------
    ValueError
        If ``wm`` and ``plain`` hold different numbers of texts or vocabulary sizes.
    """
    if wm.tokens.shape[0] != plain.tokens.shape[0]:
        raise ValueError(f"plain must hold as many texts as wm ({wm.tokens.shape[0]}); got {plain.tokens.shape[0]}")
    if wm.meta["vocab_size"] != plain.meta["vocab_size"]:
        raise ValueError(f"plain's vocab_size must equal wm's {wm.meta['vocab_size']}; got {plain.meta['vocab_size']}")
    rng = np.random.default_rng(seed)
    rows_wm, rows_plain = _rows(wm), _rows(plain)
    at = np.array([rng.integers(0, len(p) + 1) for p in rows_plain], dtype=np.int64)
    rows = [np.concatenate([p[:c], w, p[c:]]) for p, w, c in zip(rows_plain, rows_wm, at)]
    share = float(np.mean([len(w) / len(r) for w, r in zip(rows_wm, rows)]))
    host = Generation(wm.tokens, plain.prompts, wm.kl, wm.G, wm.dg, wm.entropy, wm.lam, wm.meta, prompt_lens=plain.prompt_lens)
    return _pack(host, rows, dict(kind="splice", rate=share, seed=int(seed), n_changed=int(sum(len(p) for p in rows_plain)))), at
