"""Synthetic LMs fitted to a real LM's recorded next-token statistics (no torch here).

A fitted LM is a :class:`sims.lm.synthetic.SyntheticLM` whose context's temperature level is
no longer uniform and independent of everything else but follows a latent Gaussian process
(a Gaussian copula).  For text i (identified by the hash of its first ``order`` tokens) at
context length L (prompt included):

.. math::
    Z_{i,L} = a\\,A_i + b\\,S_{i,L} + c\\,\\varepsilon(h(c_L)),\\qquad
    S_{i,L} = w^{-1/2} \\sum_{j<w} \\xi_{i,L-j},\\qquad c = \\sqrt{1 - a^2 - b^2},

with :math:`A_i, \\xi_{i,m}, \\varepsilon` independent standard normals drawn by Box-Muller from
the PRF (:func:`sims.lm.synthetic.latent_uniform`): :math:`A_i` is the text's own temperature
offset (prompt-level variation), :math:`S` a moving average over ``w`` positions (stretches of
low or high entropy; its autocorrelation is :math:`(1 - k/w)^+`) and :math:`\\varepsilon` the
context's own draw (what the context hash carries, so a repeated context repeats its
temperature: loops).  :math:`Z \\sim N(0, 1)`, so the level
:math:`l = \\lfloor 32\\,\\Phi(Z) \\rfloor` is uniform on the 32 levels and the per-token
entropy keeps the marginal the levels were calibrated to.  Every part is a pure function of
the context, so :math:`p_t` stays exact, and the step stays the tabulated one: the extra cost
is ``w`` + 2 PRF calls per step.

A fitted LM's logits are those of the synthetic family at temperature :math:`1/\\beta_l` with
bump logits scaled by it, :math:`s_j = \\beta_l\\, b\\,(u_j - 1/2)`, so that every level is one
shape sharpened or flattened (a sharp level is near-deterministic, not a tie between its head
and the bumps).

Fitting (:func:`fit`) to the recorded statistics of :mod:`sims.torch_backend.lm_stats`:

1. levels: :math:`\\beta_l` (increasing in l) solves
   :math:`\\bar H(\\beta_l) = \\hat Q_H(1 - (l + 1/2)/32)` by bisection, where :math:`\\bar H` is the
   mean entropy over random bump draws and :math:`\\hat Q_H` the real per-token entropy quantile;
2. the bump scale b (a grid) makes the level's mean collision probability :math:`\\sum_k p_k^2`
   (hence the spread of :math:`G_t` under random keys, :math:`\\gamma(1-\\gamma)\\sum_k p_k^2`)
   closest to the real one among tokens of that entropy quantile;
3. (a, b, w) (a grid) match, by simulating :math:`Z` directly, the standard deviation of the
   per-text mean entropy and the entropy autocorrelation at lags 1-10 and 20.

``p_loop`` is 0: the real LM's near-deterministic stretches are the sharp levels.
"""

from __future__ import annotations

import math
import pathlib

import numpy as np
from scipy import special, stats

from sims.lm.synthetic import N_BUMPS, N_FIT_PARAMS, N_LEVELS, zipf_base

#: Lags of the per-token entropy's autocorrelation that the fit of (a, b, w) matches (step 3 above).
ACF_LAGS = tuple(range(1, 11)) + (20,)
#: Candidate bump scales b of step 2's grid.
BUMP_GRID = (1.0, 2.0, 3.0, 4.0, 6.0, 8.0)
#: Candidate values of :math:`a^2`, the share of Z's variance of the per-text offset :math:`A_i` (step 3's grid).
A2_GRID = tuple(np.round(np.arange(0.0, 0.61, 0.05), 2))
#: Candidate values of :math:`b^2`, the share of Z's variance of the moving average :math:`S` (step 3's grid).
B2_GRID = tuple(np.round(np.arange(0.0, 0.81, 0.1), 2))
#: Candidate windows w (positions) of the moving average :math:`S` (step 3's grid).
W_GRID = (2, 4, 8, 12, 16, 24, 32)


def entropy_acf(H: np.ndarray, lags=ACF_LAGS) -> np.ndarray:
    """Autocorrelation of per-token entropy ``H`` (texts x steps) at ``lags``, pooled over texts
    around the grand mean (so the per-text level shifts count, as in one long stream of texts).

    Parameters
    ----------
    H : ndarray, shape (n, T)
        Per-token entropies.
    lags : sequence of int, default ACF_LAGS
        Lags, >= 1.

    Returns
    -------
    ndarray, shape (len(lags),)
        The autocorrelations.
    """
    H = np.asarray(H, dtype=np.float64)
    x = H - H.mean()
    var = np.mean(x * x)
    return np.array([np.mean(x[:, k:] * x[:, :-k]) / var for k in lags])


def ks_distance(x, y) -> float:
    r"""Two-sample Kolmogorov-Smirnov distance :math:`\sup_t |F_x(t) - F_y(t)|`.

    Parameters
    ----------
    x, y : array_like
        The samples (flattened).

    Returns
    -------
    float
        The distance, in [0, 1].
    """
    return float(stats.ks_2samp(np.ravel(x), np.ravel(y)).statistic)


def _level_stats(betas: np.ndarray, bump_scale: float, V: int, n_ctx: int = 256, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Mean entropy and collision probability of the fitted family at each inverse temperature,
    over ``n_ctx`` random bump draws: the Zipf sums once per beta, then the bumped tokens' corrections
    (as the generator's tabulated step does; a token bumped twice counts once, with its largest bump)."""
    base = zipf_base(V, seed)
    betas = np.asarray(betas, dtype=np.float64)[:, None]
    E = np.exp(betas * base[None, :])
    Z0, A0, C0 = E.sum(axis=1), (E * betas * base).sum(axis=1), (E * E).sum(axis=1)
    rng = np.random.default_rng([seed, 99])
    H = np.zeros(betas.shape[0])
    C = np.zeros(betas.shape[0])
    for _ in range(n_ctx):
        toks = rng.integers(0, V, N_BUMPS)
        vals = bump_scale * (rng.random(N_BUMPS) - 0.5)
        uniq = np.unique(toks)
        old = betas * base[uniq][None, :]  # (levels, bumped tokens)
        new = np.maximum(old, betas * np.array([vals[toks == k].max() for k in uniq])[None, :])
        c = np.maximum(0.0, new.max(axis=1, keepdims=True))
        sc = np.exp(-c[:, 0])
        e0, e1 = np.exp(old - c), np.exp(new - c)
        Z = sc * Z0 + (e1 - e0).sum(axis=1)
        S1 = sc * (A0 - c[:, 0] * Z0) + (e1 * (new - c) - e0 * (old - c)).sum(axis=1)
        S2 = sc * sc * C0 + (e1 * e1 - e0 * e0).sum(axis=1)
        H += (np.log(Z) - S1 / Z) / n_ctx
        C += S2 / (Z * Z) / n_ctx
    return H, C


def calibrate_levels(targets: np.ndarray, bump_scale: float, V: int, seed: int = 0, iters: int = 24) -> np.ndarray:
    r""":math:`\beta_l` with mean entropy ``targets[l]`` (bisection on log beta in [0.02, 200]).

    Parameters
    ----------
    targets : ndarray, shape (L,)
        Target mean entropy of each level (nats).
    bump_scale : float
        Scale of the logits' bumps.
    V : int
        Vocabulary size.
    seed : int, default 0
        Seed of the simulated logits.
    iters : int, default 24
        Bisection steps.

    Returns
    -------
    ndarray, shape (L,)
        The inverse temperatures :math:`\beta_l`.
    """
    lo = np.full(len(targets), math.log(0.02))
    hi = np.full(len(targets), math.log(200.0))
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        H, _ = _level_stats(np.exp(mid), bump_scale, V, seed=seed)
        too_flat = H > targets  # entropy falls as beta grows
        lo = np.where(too_flat, mid, lo)
        hi = np.where(too_flat, hi, mid)
    return np.exp(0.5 * (lo + hi))


def _simulate_latent(a2: float, b2: float, w: int, n: int, T: int, seed: int = 0) -> np.ndarray:
    """Level indices (n, T) of the latent process of the module docstring."""
    rng = np.random.default_rng(seed)
    xi = rng.standard_normal((n, T + w - 1))
    cs = np.concatenate([np.zeros((n, 1)), np.cumsum(xi, axis=1)], axis=1)
    slow = (cs[:, w:] - cs[:, :-w]) / math.sqrt(w)
    z = math.sqrt(a2) * rng.standard_normal((n, 1)) + math.sqrt(b2) * slow + math.sqrt(max(0.0, 1 - a2 - b2)) * rng.standard_normal((n, T))
    return np.minimum((N_LEVELS * special.ndtr(z)).astype(np.int64), N_LEVELS - 1)


def fit_latent(H: np.ndarray, level_entropy: np.ndarray, n_sim: int = 256, seed: int = 0) -> tuple[float, float, int, float]:
    """(a^2, b^2, w, loss): the grid point whose simulated per-text mean sd and entropy ACF are
    closest (squared error, the sd relative to the pooled sd) to the real ones.

    Parameters
    ----------
    H : ndarray, shape (n, T)
        Real per-token entropies.
    level_entropy : ndarray, shape (L,)
        Mean entropy of each level.
    n_sim : int, default 256
        Simulated texts per grid point.
    seed : int, default 0
        Seed of the simulation.

    Returns
    -------
    tuple
        ``(a2, b2, w, loss)``.
    """
    H = np.asarray(H, dtype=np.float64)
    T = H.shape[1]
    sd_all = H.std()
    target = np.concatenate([[H.mean(axis=1).std() / sd_all], entropy_acf(H)])
    best = (0.0, 0.0, 1, np.inf)
    for w in W_GRID:
        for a2 in A2_GRID:
            for b2 in B2_GRID:
                if a2 + b2 > 0.95:
                    continue
                Hs = level_entropy[_simulate_latent(a2, b2, w, n_sim, T, seed)]
                got = np.concatenate([[Hs.mean(axis=1).std() / Hs.std()], entropy_acf(Hs)])
                loss = float(np.sum((got - target) ** 2))
                if loss < best[3]:
                    best = (float(a2), float(b2), int(w), loss)
    return best


def fit(stats_: dict, order: int = 2, seed: int = 0) -> dict:
    """A fitted LM's parameters from recorded statistics (``entropy``, ``coll``, ``meta.vocab_size``).

    Parameters
    ----------
    stats_ : dict
        Recorded statistics of a real LM: ``entropy`` and ``coll`` (collision probability), both (texts, steps >= 21),
        and ``vocab_size``.
    order : int, default 2
        Context order of the fitted LM.
    seed : int, default 0
        Seed of the simulations the fit runs.

    Returns
    -------
    dict
        ``dict(vocab_size, order, params, levels, bump_scale, latent=(a2, b2, w), diagnostics)``.

    Raises
    ------
    ValueError
        If the entropy array is not (texts, steps >= 21).
    """
    H = np.asarray(stats_["entropy"], dtype=np.float64)
    coll = np.asarray(stats_["coll"], dtype=np.float64)
    V = int(stats_["vocab_size"])
    if H.ndim != 2 or H.shape[1] < 21:
        raise ValueError(f"entropy must have shape (texts, steps >= 21); got {H.shape}")
    qs = 1.0 - (np.arange(N_LEVELS) + 0.5) / N_LEVELS
    targets = np.maximum(np.quantile(H, qs), 1e-3)
    # the real collision probability in each entropy quantile bin (level l <-> bin of quantile 1 - (l+1/2)/32)
    edges = np.quantile(H, np.linspace(1.0, 0.0, N_LEVELS + 1))
    bin_of = np.clip(np.searchsorted(-edges, -H.ravel(), side="right") - 1, 0, N_LEVELS - 1)
    real_coll = np.array([coll.ravel()[bin_of == l].mean() if np.any(bin_of == l) else np.nan for l in range(N_LEVELS)])
    best = None
    for bs in BUMP_GRID:
        levels = calibrate_levels(targets, bs, V, seed)
        Hl, Cl = _level_stats(levels, bs, V, seed=seed)
        err = float(np.nanmean((Cl - real_coll) ** 2))
        if best is None or err < best[0]:
            best = (err, bs, levels, Hl, Cl)
    err, bs, levels, Hl, Cl = best
    a2, b2, w, loss = fit_latent(H, Hl, seed=seed)
    params = np.array([levels[-1], levels[0], 1.0, bs, 0.0, 0.0, math.sqrt(a2), math.sqrt(b2), float(w)])
    assert params.shape == (N_FIT_PARAMS,)
    return dict(vocab_size=V, order=int(order), params=params, levels=levels, bump_scale=bs, latent=(a2, b2, w),
                diagnostics=dict(coll_mse=err, latent_loss=loss, level_entropy=Hl, level_coll=Cl, real_coll=real_coll, targets=targets))


def save_fit(path, fitted: dict) -> pathlib.Path:
    """Write the small ``.npz`` that :func:`sims.lm.synthetic.load_fitted` reads.

    Parameters
    ----------
    path : str or os.PathLike
        The file (its folder is created).
    fitted : dict
        A result of :func:`fit`.

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, vocab_size=fitted["vocab_size"], order=fitted["order"], params=fitted["params"], levels=fitted["levels"])
    return path
