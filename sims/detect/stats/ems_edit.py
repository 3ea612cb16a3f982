r"""An edit-tolerant detector of exponential minimum sampling: EXP-edit (Kuditipudi, Thickstun, Hashimoto
and Liang 2023, "Robust distortion-free watermarks for language models") on context-hashed keys, with a
permutation p-value over fresh keys.

**Their cost.**  Kuditipudi et al. key step j by a fixed sequence :math:`\xi_1, \xi_2, \dots` of uniform
vectors and score a text y against it with the Levenshtein cost

.. math:: d_\gamma(y, \xi) = \min\bigl(d_\gamma(y_{2:}, \xi_{2:}) + \ln(1 - \xi_{1, y_1}),\
          d_\gamma(y, \xi_{2:}) + \gamma,\ d_\gamma(y_{2:}, \xi) + \gamma\bigr),

:math:`d_\gamma` of an empty sequence against m items being :math:`\gamma m`: a matched pair costs
:math:`\ln(1 - \xi_{j, y_i})` (the EXP score's summand, negated), an unmatched text token or key
position costs :math:`\gamma`.  Their statistic is the smallest cost over the text's blocks of k tokens
and the key's shifts (they take k = the text's length in their experiments, key length 256, and
:math:`\gamma = 0` for EXP-edit), and their p-value is :math:`(1 + \#\{t : \phi_t \le \phi\}) / (T + 1)`
over T fresh key sequences (their public detector, ``demo/detect.py`` of github.com/jthickstun/watermark).

**Alignment on context-hashed keys.**  The package's ``ems`` keys step t by the hash of the h tokens
before it (:func:`sims.watermarks.registry._ref_ems`), not by a position: there is no key sequence to
shift, and each token's key is read from the text itself.  An insertion costs the plain sum the
inserted token and the h after it, whose windows now hold it; a deletion costs the h tokens after it and
a substitution the substituted token and the h after it, whose windows lost or changed a token the text
no longer holds.  Alignment can undo the first and not the others, so here it is the insertion half
of :math:`d_\gamma`: an alignment picks the
text tokens taken as inserted, each costing ``gap`` nats, and scores every other token against the key
of the window ending at the *previous kept* token.  With :math:`g(s, t) = -\ln(1 - r_{W_s}(y_t))`,
:math:`r_{W}` the uniforms of window W's hash and :math:`W_s` the h ids ending at text token s
(:math:`W_0` the prompt's last h),

.. math:: D_0 = 0, \qquad D_t = \max_{t - 1 - B \le s < t}\bigl(D_s + g(s, t) - g_{\mathrm{ap}} (t - 1 - s)\bigr),
          \qquad S_t = \max_{t - B \le s \le t}\bigl(D_s - g_{\mathrm{ap}} (t - s)\bigr),

B = ``band`` the longest run of tokens skipped at once and :math:`g_{\mathrm{ap}}` = ``gap``; S = S_L is
:math:`-d_\gamma` restricted to insertions, on the whole text (k = L).  At h = 1 the window is the previous
kept token itself, so the alignment restores the key of the token after every insertion; at h > 1 the
h - 1 ids before the previous kept token are read as the text holds them (exact when insertions are at
least h tokens apart).  With ``band`` = 0 or ``gap`` = inf nothing is skipped and S is the ``ems-ars`` sum
:math:`\sum_t -\ln(1 - Y_t)` (without dedup); for every band and gap S is at least that sum (the identity
alignment is one of the alignments).

This reading keeps ``ems`` texts and every EMS detector as they are; Kuditipudi's position-indexed key
sequence would be another generator (a step of its own in the generator, the torch processor and every
EMS score), under which an edit breaks the key of every later token for the plain scores.

**The null.**  Under the null (text independent of the key) a key K drawn uniformly from
:math:`[0, 2^{64})` and N fresh keys drawn the same way give i.i.d. statistics given the text, so

.. math:: \hat p = \frac{1 + \#\{r : S(K_r) \ge S(K)\}}{N + 1}

satisfies :math:`P(\hat p \le \alpha) \le \alpha` at every level and every N (ties count as
exceedances); its smallest value is 1 / (N + 1), and ``resamples`` = 9999 resolves 1e-4.  A repeated
(context, token) pair shares its uniform under every key, so no dedup is needed.  The guarantee, like
the ``its-edit`` one (:mod:`sims.detect.stats.edit_scores`), is over a random key.  The fresh keys of
text i are ``numpy.random.default_rng([seed, i]).integers(0, 2**64, N, dtype=uint64)``; every prefix's
p-value comes from the same dynamic programme (row t is prefix t).
"""

from __future__ import annotations

import math

import numpy as np

from sims.core import prf
from sims.detect.stats import _ems_edit_kernels as EK
from sims.detect.stats.scores import DetectResult, _check_inputs, _check_key
from sims.watermarks import registry

EMS_EDIT_ALGOS = registry.names(edit_score=True, family="ems")  #: context-hashed EMS: an insertion moves the key of the next h tokens

EMS_EDIT_BAND = 4  #: longest run of text tokens one alignment skips as inserted
EMS_EDIT_GAP = 0.0  #: nats per skipped token (Kuditipudi et al.'s gamma of EXP-edit)
EMS_EDIT_RESAMPLES = 9999  #: fresh keys of the permutation p-value (its resolution 1 / (N + 1) = 1e-4)
EMS_EDIT_SEED = 0  #: default seed of the fresh keys


def _check(band, gap, resamples, seed) -> tuple[int, float, int, int]:
    """Validated (band, gap, resamples, seed); ``gap`` = inf is returned as band 0, gap 0 (nothing skipped)."""
    if isinstance(band, bool) or not isinstance(band, (int, np.integer)) or band < 0:
        raise ValueError(f"band must be an integer in [0, inf); got {band!r}")
    if isinstance(gap, bool) or not isinstance(gap, (int, float, np.integer, np.floating)) or not float(gap) >= 0.0:
        raise ValueError(f"gap must be in [0, inf]; got {gap!r}")
    if isinstance(resamples, bool) or not isinstance(resamples, (int, np.integer)) or resamples < 1:
        raise ValueError(f"resamples must be an integer in [1, inf); got {resamples!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be an integer in [0, inf); got {seed!r}")
    if math.isinf(float(gap)):
        return 0, 0.0, int(resamples), int(seed)
    return int(band), float(gap), int(resamples), int(seed)


def window_hashes_reference(seq, h: int, key: int) -> np.ndarray:
    """NumPy twin of :func:`sims.detect.stats._ems_edit_kernels.window_hashes`: the EMS hash of each
    window ``seq[s : s + h]``, s = 0..len(seq) - h - 1.

    Parameters
    ----------
    seq : array_like of int
        Token ids: the prompt's last h followed by the text's L tokens (length L + h).
    h : int
        Context width of the hash (the window length).
    key : int
        Watermark key, in [0, 2**64).

    Returns
    -------
    numpy.ndarray of uint64, shape (len(seq) - h,)
        Entry s is the EMS context hash of ``seq[s : s + h]`` (:math:`W_s` of the module docstring).
    """
    seq = np.asarray(seq, dtype=np.int64)
    L = seq.size - h
    windows = np.stack([seq[s : s + h] for s in range(L)]) if L else np.zeros((0, h), dtype=np.int64)
    return prf.context_hash(key, windows.reshape(L, h), prf.EMS)


def align_prefix_max_reference(y, ctx, band: int, gap: float) -> np.ndarray:
    r"""NumPy twin of :func:`sims.detect.stats._ems_edit_kernels.align_prefix_max`: :math:`S_t`
    (module docstring) for t = 1..L, from the table :math:`g(s, t)` of every window and token.

    Parameters
    ----------
    y : array_like of int, shape (L,)
        The text's token ids.
    ctx : array_like of uint64, shape (L,)
        Context hashes of the windows :math:`W_0, \dots, W_{L-1}` (:func:`window_hashes_reference`): window
        s ends at text token s, :math:`W_0` being the prompt's last h ids.
    band : int
        B, the longest run of text tokens skipped at once as inserted.
    gap : float
        :math:`g_{\mathrm{ap}}`, the cost in nats of each skipped token.

    Returns
    -------
    numpy.ndarray of float, shape (L,)
        Entry t - 1 is :math:`S_t`, the best alignment score of the prefix of t tokens.
    """
    y, ctx = np.asarray(y, dtype=np.int64), np.asarray(ctx, dtype=np.uint64)
    L = y.size
    g = -np.log1p(-prf.uniforms(ctx[:, None], y[None, :]))  # g[s, t-1]: token t under window s
    D = np.full(L + 1, -np.inf)
    D[0] = 0.0
    out = np.empty(L)
    for t in range(1, L + 1):
        s = np.arange(max(0, t - 1 - band), t)
        D[t] = np.max(D[s] + g[s, t - 1] - gap * (t - 1 - s))
        s = np.arange(max(0, t - band), t + 1)
        out[t - 1] = np.max(D[s] - gap * (t - s))
    return out


def fresh_keys(seed: int, i: int, resamples: int) -> np.ndarray:
    """The ``resamples`` fresh keys of text ``i``: uniform on [0, 2**64) from ``default_rng([seed, i])``.

    Parameters
    ----------
    seed : int
        Seed of the fresh keys, shared by all texts.
    i : int
        Index of the text in its batch.
    resamples : int
        N, the number of fresh keys of the permutation p-value.

    Returns
    -------
    numpy.ndarray of uint64, shape (resamples,)
        The fresh keys K_1, ..., K_N of the module docstring's null.
    """
    return np.random.default_rng([seed, i]).integers(0, 2**64, size=resamples, dtype=np.uint64)


def ems_edit_prefix_log10p(gen, *, key: int | None = None, band: int = EMS_EDIT_BAND, gap: float = EMS_EDIT_GAP,
                           resamples: int = EMS_EDIT_RESAMPLES, seed: int = EMS_EDIT_SEED) -> tuple[np.ndarray, np.ndarray]:
    """Permutation log10 p of every prefix of every text (module docstring) and the full texts' statistics.

    Parameters
    ----------
    gen : Generation
        Texts scored with an EMS key (their ``meta`` gives h and the vocabulary size).
    key : int or array of int, optional
        One key, or one per text (default the generation's).
    band, gap, resamples, seed
        As in :func:`score_ems_edit`.

    Returns
    -------
    log10_p : (n, T) float64
        log10 of the prefix p-values, nan past a text's end.
    S : (n,) float64
        The full texts' alignment scores (0 for an empty text).
    """
    band, gap, resamples, seed = _check(band, gap, resamples, seed)
    m = gen.meta
    h = int(m["h"])
    tokens, prompts, lengths = _check_inputs(gen.tokens, gen.prompts, m["vocab_size"], h, gen.lengths)
    n_txt, T = tokens.shape
    keys = np.broadcast_to(np.asarray(m["key"] if key is None else key, dtype=object), (n_txt,))
    for k in set(keys.tolist()):
        _check_key(k)
    out, stat = np.full((n_txt, T), np.nan), np.zeros(n_txt)
    for i in range(n_txt):
        L = int(lengths[i])
        if L == 0:
            continue
        seq = np.concatenate([prompts[i], tokens[i, :L]])
        obs, counts = np.empty(L), np.zeros(L, dtype=np.int64)
        EK.exceedances(seq, h, np.uint64(int(keys[i])), fresh_keys(seed, i, resamples), band, gap, obs, counts)
        out[i, :L] = np.log10((1.0 + counts) / (resamples + 1.0))
        stat[i] = obs[-1]
    return out, stat


def score_ems_edit(gen, *, key: int | None = None, band: int = EMS_EDIT_BAND, gap: float = EMS_EDIT_GAP,
                   resamples: int = EMS_EDIT_RESAMPLES, seed: int = EMS_EDIT_SEED) -> DetectResult:
    """Detect EMS text that may hold inserted tokens: the insertion alignment score with its permutation p-value.

    Parameters
    ----------
    gen : Generation
        EMS texts (or any texts scored with an EMS key).
    key : int, optional
        In [0, 2**64); default the generation's.
    band : int >= 0
        Longest run of text tokens skipped as inserted (0: no alignment, the ``ems-ars`` sum).
    gap : float in [0, inf]
        Cost in nats of a skipped token (inf: nothing skipped, the ``ems-ars`` sum).
    resamples : int >= 1
        Fresh keys N of the permutation p-value; its smallest value is 1 / (N + 1).
    seed : int >= 0
        Seed of the fresh keys.

    Returns
    -------
    DetectResult
        ``score`` the alignment score S (nats), ``z`` nan, ``n_scored`` the text lengths; an empty text is
        too short to test (p = 1).

    Examples
    --------
    >>> import sims
    >>> from sims.detect.stats.ems_edit import score_ems_edit
    >>> gen = sims.generate(sims.get_lm("news"), "ems", n=2, T=60, seed=0, key=7)
    >>> res = score_ems_edit(gen, resamples=99)
    >>> bool((res.log10_p <= -2).all())
    True
    """
    log10p, stat = ems_edit_prefix_log10p(gen, key=key, band=band, gap=gap, resamples=resamples, seed=seed)
    n = _check_inputs(gen.tokens, gen.prompts, gen.meta["vocab_size"], int(gen.meta["h"]), gen.lengths)[2]
    last = np.array([log10p[i, n[i] - 1] if n[i] > 0 else 0.0 for i in range(n.size)])
    return DetectResult(n, stat, np.full(n.size, np.nan), last, n < 1)
