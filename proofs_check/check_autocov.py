r"""Appendix "Possibility for Other Variants": under the null the statistic

.. math:: Z_T = \frac{\sqrt T S_T}{\gamma(1-\gamma)},\qquad S_T = \frac1T\sum_{t<T} N_t N_{t+1},\quad N_t = 1\{y_t\ \mathrm{green}\} - \gamma,

is asymptotically N(0, 1), and DualGA-AutoCov (Algorithm DualGA_autocov) shifts it.
Z_T is the package's (:func:`sims.detect.stats.scores.score_autocov`), computed on texts of uniformly
random tokens scored with a key (the null), and on generated DualGA-AutoCov texts.

* KS test against N(0, 1) at a long T.  gamma is chosen irrational-looking (the
  certainty-equivalent gamma*(0.2) = 0.4328...): Z_T is a function of two integer counts
  (green pairs and greens), and for a rational gamma such as 0.4 it lives on a lattice
  whose CDF jumps a KS test with many texts detects, whatever T.
* At gamma = 1/2 the null law is exact: :math:`N_t N_{t+1} = \pm 1/4` are i.i.d. signs, so
  :math:`(\sqrt T Z_T + T - 1)/2 \sim \mathrm{Bin}(T-1, 1/2)` (chi-square goodness of fit).
* DualGA-AutoCov texts: the 99.9% t-interval of the mean Z_T lies below 0.
"""

import numpy as np
from scipy.stats import binom, chisquare, kstest
from scipy.stats import t as student

import theory
from proofs_check._check import Check
from sims.detect.families import detectors
from sims.detect.stats import scores as detect
from sims.lm.synthetic import open_synthetic
from sims.watermarks.generate import generate_synthetic

RESULT = "AutoCov (Z_T)"
ALPHA = 1e-3  # level of the KS and chi-square tests
LEVEL = 0.999  # confidence of the interval on the watermarked mean
V = 32000
MIN_EXPECTED = 5.0  # chi-square cells with fewer expected counts are pooled


def _null_z(rng, n: int, T: int, gamma: float) -> np.ndarray:
    toks = rng.integers(0, V, size=(n, T))
    prompts = rng.integers(0, V, size=(n, 1))
    return detect.score_autocov(toks, prompts, int(rng.integers(2**62)), gamma, vocab_size=V).z


def run(quick: bool, rng) -> list[Check]:
    """KS and exact-null checks of Z_T, and its shift under DualGA-AutoCov.

    Parameters
    ----------
    quick : bool
        ``--quick``: 2000 null texts of 2000 tokens and 4000 texts at gamma = 1/2, instead of 5000 of 8000 and 40000.
    rng : numpy.random.Generator
        The module's generator, seeded ``[seed, crc32(module name)]`` by ``python -m proofs_check``.

    Returns
    -------
    list of proofs_check._check.Check
        One row of the report per quantity checked: measured against claimed at the stated tolerance.
    """
    gamma = theory.gamma_star(0.2)
    n, T = (2000, 2000) if quick else (5000, 8000)
    Z = _null_z(rng, n, T, gamma)
    pv = float(kstest(Z, "norm").pvalue)
    out = [Check(RESULT, f"KS p-value of Z_T vs N(0,1) under H0, T={T}, gamma={gamma:.4f}", pv, f"> {ALPHA:g}", f"alpha = {ALPHA:g}", pv > ALPHA,
                 f"{n} texts of uniform random tokens (V = {V}), a fresh key; mean {Z.mean():.3f}, sd {Z.std(ddof=1):.3f}")]
    n2, T2 = (4000, 200) if quick else (40000, 200)
    Zh = _null_z(rng, n2, T2, 0.5)
    K = np.rint((np.sqrt(T2) * Zh + T2 - 1) / 2).astype(np.int64)
    obs = np.bincount(K, minlength=T2)
    exp = binom.pmf(np.arange(T2), T2 - 1, 0.5) * n2
    big = exp >= MIN_EXPECTED
    o = np.append(obs[big], obs[~big].sum())
    e = np.append(exp[big], exp[~big].sum())
    pv2 = float(chisquare(o, e * o.sum() / e.sum()).pvalue)
    out.append(Check(RESULT, f"gamma=1/2: chi-square p of (sqrt(T) Z_T + T - 1)/2 vs Bin(T-1, 1/2), T={T2}", pv2, f"> {ALPHA:g}",
                     f"alpha = {ALPHA:g}", pv2 > ALPHA, f"{n2} null texts; the exact null law at gamma = 1/2 (cells < {MIN_EXPECTED:g} expected pooled)"))
    lm = open_synthetic("lfqa", vocab_size=4000)
    m = 16 if quick else 128
    g = generate_synthetic(lm, "autocov", n=m, T=400, seed=int(rng.integers(2**31)), key=99, gamma=gamma, Delta=0.2)
    Zw = detectors.score(g, lm).z
    hi = float(Zw.mean() + student.ppf(LEVEL, m - 1) * Zw.std(ddof=1) / np.sqrt(m))
    out.append(Check(RESULT, "DualGA-AutoCov texts: upper end of the one-sided CI of mean Z_T", hi, "< 0 (shifted)",
                     f"{LEVEL:.1%} one-sided t-interval", hi < 0, f"{m} generated texts, T = 400, Delta = 0.2; mean Z_T = {Zw.mean():.2f}"))
    return out
