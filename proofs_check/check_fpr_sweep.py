r"""The exact red-green test keeps its false-positive rate: the empirical FPR of
:math:`p = P(\mathrm{Bin}(n, \gamma) \ge k) \le \alpha` on key-independent texts, counted over
:math:`10^7` texts at :math:`\alpha = 10^{-6}` (``--quick``: :math:`10^5` at :math:`10^{-3}`), run
through the sweep engine (:mod:`sims.sweep`; a local Dask cluster in full mode, in
process in quick mode).

The cheapest honest null: texts of i.i.d. uniform tokens over V = 32000 (the sweep's ``lm =
"uniform"``, algorithm ``none``), T = 64 tokens after a 2-token prompt, scored with dedup, h = 1,
gamma = 1/2, by the detector under test.  The text does not depend on the key, and with V = 32000
two texts almost never share a (context, token) pair, so under one fixed key the colours of
distinct pairs are independent Bernoulli(gamma) draws (:mod:`sims.core.prf`) and the green count of
text i is exactly Binomial(n_i, gamma), n_i its distinct pairs.  (A small-vocabulary LM such as
``tiny`` is no null here: its 36 pairs carry the same 36 colours in every text under a fixed key.)
The test's size given n_i is :math:`s_i = P(\mathrm{Bin}(n_i, \gamma) \ge k_\alpha(n_i))`, with
:math:`k_\alpha(n)` the smallest count whose tail is :math:`\le \alpha`; gamma = 1/2 makes the tail
fine-grained, so a test that rejects one count too early would show.

1. The claim: the count of rejections is not significantly above :math:`\alpha N` (exact
   one-sided binomial test, level 1e-3).
2. Sharper: the count against its exact expectation :math:`\sum_i s_i` (two-sided Poisson test
   at level 1e-3; the Poisson law of a sum of rare independent Bernoullis is off by at most
   :math:`\sum_i s_i^2 \le N \alpha^2` in total variation, Le Cam).
"""

from __future__ import annotations

import pathlib
import tempfile

import numpy as np
from scipy.stats import binomtest, poisson

from proofs_check._check import Check
from sims.detect.stats.nulls import binom_logsf
from sims.sweep import run_sweep

RESULT = "exact red-green test: size <= alpha"
TEST_LEVEL = 1e-3
GAMMA = 0.5
T = 64
GRID = """lm = "uniform"
n = {n}
T = {T}
chunk = {chunk}
seeds = [{seed}]
prompt_len = 2
dedup = true
fprs = [{alpha}]
metrics = ["log10_p", "n_scored"]

[[algo]]
name = "none"
gamma = {gamma}
"""


def sizes(n_max: int, alpha: float, gamma: float) -> np.ndarray:
    r"""Exact size of the test p <= alpha at each number of scored tokens 0..n_max (0 for n <= 1: p = 1).

    The size at n is :math:`P(\mathrm{Bin}(n, \gamma) \ge k_\alpha(n))`, :math:`k_\alpha(n)` the smallest count
    whose tail is :math:`\le \alpha`.

    Parameters
    ----------
    n_max : int
        The largest number of scored tokens.
    alpha : float
        The level.
    gamma : float
        The null green probability.

    Returns
    -------
    numpy.ndarray
        (n_max + 1,) sizes, each <= alpha.
    """
    out = np.zeros(n_max + 1)
    for n in range(2, n_max + 1):
        tail = np.exp(binom_logsf(np.arange(n + 2), n, gamma))
        out[n] = tail[np.argmax(tail <= alpha)]
    return out


def run(quick: bool, rng) -> list[Check]:
    """The empirical FPR of the exact red-green test over null texts run through the sweep engine (module docstring).

    Parameters
    ----------
    quick : bool
        ``--quick``: 1e5 null texts at alpha = 1e-3 in this process, instead of 1e7 at 1e-6 on a local Dask cluster.
    rng : numpy.random.Generator
        The module's generator, seeded ``[seed, crc32(module name)]`` by ``python -m proofs_check``.

    Returns
    -------
    list of proofs_check._check.Check
        One row of the report per quantity checked: measured against claimed at the stated tolerance.
    """
    import pyarrow.parquet as pq

    N, alpha, chunk = (100_000, 1e-3, 10_000) if quick else (10_000_000, 1e-6, 100_000)
    seed = int(rng.integers(2**31))
    with tempfile.TemporaryDirectory() as tmp:
        grid = pathlib.Path(tmp) / "null_fpr.toml"
        grid.write_text(GRID.format(n=N, T=T, chunk=chunk, seed=seed, alpha=alpha, gamma=GAMMA))
        run_sweep(grid, pathlib.Path(tmp) / "out", workers=0 if quick else None, log=lambda s: None)
        k, n_texts, expected = 0, 0, 0.0
        size = sizes(T, alpha, GAMMA)
        for f in sorted((pathlib.Path(tmp) / "out" / "chunks").glob("*.parquet")):
            t = pq.read_table(f, columns=["log10_p", "n_scored"])
            lp, ns = t.column("log10_p").to_numpy(), t.column("n_scored").to_numpy()
            k += int(np.sum(lp <= np.log10(alpha)))
            n_texts += lp.size
            expected += float(size[ns].sum())
    p_claim = binomtest(k, n_texts, alpha, alternative="greater").pvalue
    p_exact = min(1.0, 2 * min(poisson.cdf(k, expected), poisson.sf(k - 1, expected)))
    how = (f"{n_texts} texts of i.i.d. uniform tokens (V=32000), T={T}, gamma={GAMMA}, dedup, h=1, seed {seed}, through "
           f"python -m sims sweep ({'in process' if quick else 'local Dask cluster'}); {k} rejections at p <= {alpha:g}")
    return [
        Check(RESULT, f"empirical FPR at {alpha:g} ({n_texts:.0e} null texts)", k / n_texts, f"<= {alpha:g}",
              f"exact one-sided binomial test vs {alpha:g}, p-value {p_claim:.3g} >= {TEST_LEVEL:g}", p_claim >= TEST_LEVEL, how),
        Check(RESULT, f"rejections at {alpha:g} vs their exact expectation {expected:.2f}", float(k), f"= sum_i P(Bin(n_i, {GAMMA}) >= k_alpha(n_i))",
              f"two-sided Poisson test, p-value {p_exact:.3g} >= {TEST_LEVEL:g}", p_exact >= TEST_LEVEL,
              how + "; expectation from each text's n_scored and the exact binomial tail (Le Cam: Poisson within N alpha^2)"),
    ]
