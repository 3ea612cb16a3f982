r"""An edit-tolerant detector: inverse transform sampling re-aligned against its key after insertions
and deletions (Kuditipudi, Thickstun, Hashimoto and Liang 2023, "Robust distortion-free watermarks for
language models"), with an exact permutation p-value.

**Where alignment applies.**  A watermark keyed by *position* loses its key after an insertion or a
deletion: every later token is read against the wrong key.  In this package only ITS is keyed so:
step t's uniform :math:`u_t` comes from the key and t alone (:func:`sims.watermarks.registry._ref_its`).
EMS, UW and every red-green watermark key each token by a hash of the ``h`` tokens before it, so
an edit spoils only the edited token and the ``h`` after it and the key re-synchronises by itself:
there is no key sequence to shift (an insertion costs them what h + 1 substitutions cost;
docs/results/fig_edit_scores shows it).  Their edit-robust tests are the plain sums and Tr-GoF
(Li et al. 2024, :mod:`sims.detect.stats.gumbel_scores`); for EMS, ``ems-edit``
(:mod:`sims.detect.stats.ems_edit`) also skips inserted tokens to restore the next token's window.

**The statistic.**  Step t of the text has the interval :math:`(a_t, b_t]` of keyed-order cumulative
mass of its token (length :math:`\pi_t = p_t(y_t)`); ITS puts its uniform in it (a *hit*).  A hit of
text token t by key position j weighs :math:`w_t = -\ln \pi_t` (the likelihood ratio of a hit), and
a monotone alignment of text and key scores its hits less ``gap`` per text token left unmatched
(an insertion) or key position skipped (a deletion):

.. math:: D_{t,j} = \max\bigl(D_{t-1,j-1} + w_t 1\{a_t < u_j \le b_t\},\ D_{t-1,j} - g,\ D_{t,j-1} - g\bigr),
          \qquad S_t = \max_j D_{t,j},

on the band :math:`|t - j| \le W` (``band``), :math:`D_{0,j} = -g j`, :math:`D_{t,0} = -g t`; key
positions run to :math:`L + W`.  With W = 0 it is the weighted hit sum of the default test.
Kuditipudi et al. align with a Levenshtein cost on the same principle; their ITS cost
:math:`|u - \eta(y)|` reads no LM, ours reads the LM as the package's ITS detector does.

**The null, exact.**  Under the null (text independent of the key) the key's uniforms are i.i.d.
U(0, 1) given the text, and so are those of ``resamples`` fresh keys; the statistics with the true
key and with the fresh ones are exchangeable, so

.. math:: \hat p = \frac{1 + \#\{r : S^{(r)} \ge S\}}{N + 1}

satisfies :math:`P(\hat p \le \alpha) \le \alpha` at every level (equality at multiples of
1/(N + 1) without ties): an exact permutation p-value, whose smallest value is 1/(N + 1)
(the guarantee, like the default ITS test's Poisson-binomial one, is over a random key; for one fixed
key the level over texts of an LM whose mass sits on fixed tokens varies with the key: 22 / 600
null texts at 0.05 for key 9 on ``news`` at vocabulary 500, tests/detect/stats/test_edit_scores.py)
(``resamples`` = 9999 resolves 1e-4).  The fresh keys are drawn by
``numpy.random.default_rng([seed, i])`` for text i.  Every prefix's p-value comes from the same
dynamic programme (row t is prefix t).
"""

from __future__ import annotations

import math

import numpy as np

from sims.core import rng
from sims.core.keys import ITS_STREAM, keyed_order
from sims.detect.stats import _edit_kernels as EK
from sims.detect.stats.scores import DetectResult, _check_inputs
from sims.lm.synthetic import step_probs_of
from sims.watermarks import registry

EDIT_SCORES = ("its-edit",)  #: the score names this module adds (``--score its-edit``)
EDIT_ALGOS = registry.names(edit_score=True, keyed_order=True)  #: position-keyed: the only watermark here an insertion or deletion misaligns
EDIT_BAND = 32  #: largest net shift ``|t - j|`` the alignment follows
EDIT_GAP = 1.0  #: nats per unmatched text token or skipped key position
EDIT_RESAMPLES = 9999  #: fresh keys of the permutation p-value (its resolution 1 / (N + 1) = 1e-4)
EDIT_SEED = 0  #: seed of the fresh keys: text i's are drawn by ``numpy.random.default_rng([seed, i])``
W_MAX = 50.0  #: weight of a token the LM gives probability < e^-50 (it can never be hit)


def _check(band, gap, resamples, seed) -> tuple[int, float, int, int]:
    if isinstance(band, bool) or int(band) != band or band < 0:
        raise ValueError(f"band must be an integer in [0, inf); got {band!r}")
    if not (isinstance(gap, (int, float, np.floating)) and 0.0 <= float(gap) < math.inf):
        raise ValueError(f"gap must be in [0, inf); got {gap!r}")
    if isinstance(resamples, bool) or int(resamples) != resamples or resamples < 1:
        raise ValueError(f"resamples must be an integer in [1, inf); got {resamples!r}")
    if isinstance(seed, bool) or int(seed) != seed or seed < 0:
        raise ValueError(f"seed must be an integer in [0, inf); got {seed!r}")
    return int(band), float(gap), int(resamples), int(seed)


def interval_ends_reference(probs, tokens, perm) -> tuple[np.ndarray, np.ndarray]:
    """NumPy twin of :func:`sims.detect.stats._edit_kernels.its_interval_ends`: (a_t, b_t) of each token.

    Parameters
    ----------
    probs : array_like, shape (L, V)
        Next-token distributions.
    tokens : array_like of int, shape (L,)
        The tokens.
    perm : ndarray of int, shape (V,)
        The keyed order of the vocabulary.

    Returns
    -------
    lo, hi : ndarray, shape (L,)
        Cumulative keyed-order mass before and through each token.
    """
    probs, tokens = np.asarray(probs, dtype=np.float64), np.asarray(tokens, dtype=np.int64)
    cum = np.cumsum(probs[:, perm], axis=1)
    pos = np.empty(perm.size, dtype=np.int64)
    pos[perm] = np.arange(perm.size)
    r = pos[tokens]
    rows = np.arange(tokens.size)
    hi = cum[rows, r]
    lo = np.where(r > 0, cum[rows, np.maximum(r - 1, 0)], 0.0)
    return lo, hi


def align_prefix_max_reference(lo, hi, w, u, band: int, gap: float) -> np.ndarray:
    r"""NumPy twin of :func:`sims.detect.stats._edit_kernels.align_prefix_max`: :math:`S_t` (module docstring) for t = 1..L, on the full matrix.

    Parameters
    ----------
    lo, hi : ndarray, shape (L,)
        Interval ends :math:`(a_t, b_t]` of the text's tokens.
    w : ndarray, shape (L,)
        Hit weights :math:`w_t = -\ln \pi_t`.
    u : ndarray, shape (J,)
        The key's uniforms :math:`u_1..u_J`.
    band : int
        Largest net shift W.
    gap : float
        Cost g of an unmatched text token or skipped key position.

    Returns
    -------
    ndarray, shape (L,)
        :math:`S_t = \max_j D_{t,j}` of every prefix.
    """
    lo, hi, w, u = (np.asarray(x, dtype=np.float64) for x in (lo, hi, w, u))
    M = np.where((lo[:, None] < u[None, :]) & (u[None, :] <= hi[:, None]), w[:, None], 0.0)
    return align_matrix_reference(M, band, gap)


def align_matrix_reference(M, band: int, gap: float) -> np.ndarray:
    r"""NumPy twin of :func:`sims.detect.stats._edit_kernels.align_band_max` on the full matrix of match scores.

    Parameters
    ----------
    M : ndarray, shape (L, J)
        ``M[t-1, j-1]``: the score of matching text token t with key position j.
    band : int
        Largest net shift W.
    gap : float
        Cost g of an unmatched text token or skipped key position.

    Returns
    -------
    ndarray, shape (L,)
        :math:`S_t = \max_j D_{t,j}` of every prefix, D the recursion of the module docstring with ``M`` as match scores.
    """
    L, J = M.shape
    D = np.full((L + 1, J + 1), -np.inf)
    D[0, : min(band, J) + 1] = -gap * np.arange(min(band, J) + 1)
    for t in range(1, L + 1):
        for j in range(max(0, t - band), min(J, t + band) + 1):
            if j == 0:
                D[t, 0] = -gap * t
                continue
            D[t, j] = max(D[t - 1, j - 1] + M[t - 1, j - 1], D[t - 1, j] - gap, D[t, j - 1] - gap)
    return D[1:].max(axis=1)


def key_uniforms(key: int, J: int) -> np.ndarray:
    """ITS's uniforms u_0..u_{J-1} of ``key`` (stream ``ITS_STREAM``), as the generator draws them.

    Parameters
    ----------
    key : int
        The ITS key.
    J : int
        Number of uniforms.

    Returns
    -------
    ndarray, shape (J,)
        The uniforms.
    """
    return rng.uniforms(rng.stream_key(int(key), ITS_STREAM), np.arange(J))


def edit_inputs(gen, step_probs, key: int, i: int):
    r"""(a, b, w) of text i's tokens (module docstring) from its next-token distributions ``step_probs(i)``.

    Parameters
    ----------
    gen : Generation
        The texts.
    step_probs : callable
        ``step_probs(i)``: the (T, V) next-token distributions along text i.
    key : int
        The ITS key (draws the keyed order of the vocabulary).
    i : int
        The text's index.

    Returns
    -------
    lo, hi : ndarray, shape (L,)
        Interval ends :math:`a_t, b_t` of each token in the keyed-order cumulative mass.
    w : ndarray, shape (L,)
        Hit weights :math:`-\ln \pi_t`, capped at :data:`W_MAX`.
    """
    V, h = gen.meta["vocab_size"], gen.meta["h"]
    L = int(_check_inputs(gen.tokens[i : i + 1], gen.prompts[i : i + 1, -h:], V, h, None if gen.lengths is None else gen.lengths[i : i + 1])[2][0])
    perm = keyed_order(int(key), V)
    pos = np.empty(V, dtype=np.int64)
    pos[perm] = np.arange(V)
    probs = np.ascontiguousarray(step_probs(i)[:L], dtype=np.float64)
    tokens = np.ascontiguousarray(gen.tokens[i, :L], dtype=np.int64)
    lo, hi = np.empty(L), np.empty(L)
    EK.its_interval_ends(probs, tokens, perm, pos, lo, hi)
    with np.errstate(divide="ignore"):
        w = np.minimum(-np.log(probs[np.arange(L), tokens]), W_MAX)
    return lo, hi, w


def edit_prefix_log10p(gen, step_probs, *, key: int | None = None, band: int = EDIT_BAND, gap: float = EDIT_GAP,
                  resamples: int = EDIT_RESAMPLES, seed: int = EDIT_SEED) -> tuple[np.ndarray, np.ndarray]:
    r"""Exact permutation log10 p of every prefix of every text (module docstring) and the full texts' statistics.

    Parameters
    ----------
    gen : Generation
        The texts.
    step_probs : callable
        ``step_probs(i)``: the (T, V) next-token distributions along text i.
    key : int or array_like of int, optional
        One key, or one per text (default the generation's).
    band : int, default EDIT_BAND
        Largest net shift W of the alignment.
    gap : float, default EDIT_GAP
        Cost g per unmatched token or skipped key position.
    resamples : int, default EDIT_RESAMPLES
        Number N of fresh keys.
    seed : int, default EDIT_SEED
        Seed of the fresh keys.

    Returns
    -------
    log10_p : ndarray, shape (n, T)
        log10 :math:`\hat p` of every prefix, nan past a text's end.
    S : ndarray, shape (n,)
        The full texts' statistics :math:`S_L`.
    """
    band, gap, resamples, seed = _check(band, gap, resamples, seed)
    n_txt, T = gen.tokens.shape
    keys = np.broadcast_to(np.asarray(gen.meta["key"] if key is None else key, dtype=np.uint64), (n_txt,))
    out, stat = np.full((n_txt, T), np.nan), np.zeros(n_txt)
    for i in range(n_txt):
        key = int(keys[i])
        lo, hi, w = edit_inputs(gen, step_probs, key, i)
        L = lo.size
        if L == 0:
            continue
        J = L + band
        U = np.random.default_rng([seed, i]).random((resamples, J))
        obs, counts, scratch = np.empty(L), np.zeros(L, dtype=np.int64), np.empty(L)
        EK.exceedances(lo, hi, w, key_uniforms(key, J), U, band, gap, obs, counts, scratch)
        out[i, :L] = np.log10((1.0 + counts) / (resamples + 1.0))
        stat[i] = obs[-1]
    return out, stat


def score_its_edit(gen, lm, *, key: int | None = None, band: int = EDIT_BAND, gap: float = EDIT_GAP, resamples: int = EDIT_RESAMPLES,
                   seed: int = EDIT_SEED) -> DetectResult:
    """Detect ITS text that may have been edited (insertions, deletions, substitutions): exact permutation p-values.

    Parameters
    ----------
    gen : Generation
        ITS texts (or any texts scored with an ITS key).
    lm : LM or SyntheticLM
        The LM, whose next-token distributions place each token's interval (as for the default ITS detector).
    key : int, optional
        Default the generation's.
    band : int >= 0
        Largest net shift between text and key positions followed (0: no alignment, the weighted hit sum).
    gap : float >= 0
        Cost in nats of an unmatched text token or a skipped key position.
    resamples : int >= 1
        Fresh keys of the permutation p-value; its smallest value is 1 / (resamples + 1).
    seed : int >= 0
        Seed of the fresh keys.

    Returns
    -------
    DetectResult whose ``score`` is the alignment score S (nats), ``z`` nan; empty texts too short to test (p = 1).
    """
    if lm is None:
        raise ValueError("the edit-tolerant ITS score reads the model's probabilities: pass lm")
    step_probs = step_probs_of(lm, gen)
    log10p, stat = edit_prefix_log10p(gen, step_probs, key=key, band=band, gap=gap, resamples=resamples, seed=seed)
    h = gen.meta["h"]
    n = _check_inputs(gen.tokens, gen.prompts[:, -h:], gen.meta["vocab_size"], h, gen.lengths)[2]
    last = np.array([log10p[i, n[i] - 1] if n[i] > 0 else 0.0 for i in range(n.size)])
    return DetectResult(n, stat, np.full(n.size, np.nan), last, n < 1)
