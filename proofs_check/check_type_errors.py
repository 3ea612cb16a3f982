r"""Prop. type_I&II: Hoeffding bounds for the z-test :math:`z \ge z_0` of eq. z_score,

.. math:: \alpha \le e^{-2\gamma(1-\gamma) z_0^2},\qquad
          \beta \le e^{-2(\Delta\sqrt{T-1} - \sqrt{\gamma(1-\gamma)} z_0)^2}.

1. Simulated alpha (i.i.d. Bernoulli(gamma) colours) and beta (DualGA on the reduced
   simulator :mod:`sims.reduced.runner`), each with a Clopper-Pearson interval: the check fails
   only if the interval lies entirely above the bound (a significant violation).
2. Exact binomial alpha and beta over a grid of (T, gamma, Delta, z0), where the colours
   are independent with green probability gamma (null) or gamma + Delta (watermark, the
   constraint met with equality at every step).
3. Findings: the beta bound needs :math:`\Delta\sqrt{T-1} \ge \sqrt{\gamma(1-\gamma)} z_0`,
   which the proposition does not state (counterexample computed exactly); and
   eq. three_brick_p's :math:`P(S > s_0)` is not a valid p-value (its exact size exceeds
   the level), while :func:`sims.detect.stats.nulls.binom_logsf`'s :math:`P(S \ge s_0)` is.
"""

import math

import numpy as np
from scipy.stats import binom

from proofs_check._check import Check
from sims.detect.stats.nulls import binom_logsf
from sims.experiments.evaluate import clopper_pearson
from sims.reduced import runner as reduced

RESULT = "prop:type_I&II"
LEVEL = 0.999  # Clopper-Pearson confidence of the simulated rates
EXACT_TOL = 1e-12  # rounding of exact binomial tails


def _exact_rates(n: int, gamma: float, Delta: float, z0: float) -> tuple[float, float]:
    """Exact alpha, beta of the test z >= z0 on n colours (green prob. gamma, resp. gamma + Delta)."""
    k0 = math.ceil(gamma * n + z0 * math.sqrt(n * gamma * (1 - gamma)) - 1e-9)  # smallest count with z >= z0
    return float(binom.sf(k0 - 1, n, gamma)), float(binom.cdf(k0 - 1, n, gamma + Delta))


def run(quick: bool, rng) -> list[Check]:
    """Simulated and exact error rates against the bounds, and the two findings.

    Parameters
    ----------
    quick : bool
        ``--quick``: 20000 simulated texts instead of 200000.
    rng : numpy.random.Generator
        The module's generator, seeded ``[seed, crc32(module name)]`` by ``python -m proofs_check``.

    Returns
    -------
    list of proofs_check._check.Check
        One row of the report per quantity checked: measured against claimed at the stated tolerance.
    """
    out = []
    n = 20000 if quick else 200000
    T, gamma, z0 = 200, 0.5, 1.5
    greens = rng.binomial(T - 1, gamma, size=n)
    z = (greens - gamma * (T - 1)) / np.sqrt((T - 1) * gamma * (1 - gamma))
    k = int(np.sum(z >= z0))
    lo, _ = clopper_pearson(k, n, LEVEL)
    a_bound = math.exp(-2 * gamma * (1 - gamma) * z0**2)
    out.append(Check(RESULT, f"simulated alpha at z0={z0}, T={T}", k / n, f"<= {a_bound:.4f}", f"{LEVEL:.1%} CP lower end <= bound",
                     lo <= a_bound, f"{n} null texts of i.i.d. Bernoulli({gamma}) colours"))
    Delta = 0.1
    r = reduced.simulate("dualga", "beta:5,5", T=T, reps=4000 if quick else 40000, seed=int(rng.integers(2**31)), Delta=Delta, gamma=gamma, eta=0.5)
    zw = r.per_rep["z"] * np.sqrt(T / (T - 1))  # the simulator's z over T colours, rescaled to eq. z_score's T - 1
    kb = int(np.sum(zw < z0))
    lo_b, _ = clopper_pearson(kb, zw.size, LEVEL)
    b_bound = math.exp(-2 * (Delta * math.sqrt(T - 1) - math.sqrt(gamma * (1 - gamma)) * z0) ** 2)
    out.append(Check(RESULT, f"simulated beta at z0={z0}, Delta={Delta}, T={T} (DualGA)", kb / zw.size, f"<= {b_bound:.4f}",
                     f"{LEVEL:.1%} CP lower end <= bound", lo_b <= b_bound,
                     f"{zw.size} DualGA runs on Beta(5,5) green masses (E G = {gamma})",
                     note="the bound assumes the realised DG meets Delta on every text; DualGA meets it up to O(1/sqrt T)"))
    # exact rates over a grid (bounds in the form the paper states, with the validity condition for beta)
    worst_a = worst_b = -np.inf
    n_grid = 0
    for Tn in (20, 100, 500):
        for g in (0.1, 0.25, 0.5, 0.7):
            for D in (0.05, 0.1, 0.2):
                for zz in (0.5, 1.0, 2.0, 3.0, 4.0):
                    if g + D >= 1:
                        continue
                    a, b = _exact_rates(Tn - 1, g, D, zz)
                    n_grid += 1
                    worst_a = max(worst_a, a - math.exp(-2 * g * (1 - g) * zz**2))
                    if D * math.sqrt(Tn - 1) >= math.sqrt(g * (1 - g)) * zz:
                        worst_b = max(worst_b, b - math.exp(-2 * (D * math.sqrt(Tn - 1) - math.sqrt(g * (1 - g)) * zz) ** 2))
    out.append(Check(RESULT, f"exact alpha - bound, max over {n_grid} (T, gamma, Delta, z0)", worst_a, "<= 0", f"{EXACT_TOL:g}", worst_a <= EXACT_TOL,
                     "exact binomial tails, T in {20, 100, 500}, gamma in {.1,.25,.5,.7}, z0 in {.5,...,4}"))
    out.append(Check(RESULT, "exact beta - bound where Delta sqrt(T-1) >= sqrt(g(1-g)) z0", worst_b, "<= 0", f"{EXACT_TOL:g}", worst_b <= EXACT_TOL,
                     "exact binomial tails, colours green w.p. gamma + Delta (constraint met with equality)"))
    # finding: the beta formula without its validity condition
    Tc, gc, Dc, zc = 100, 0.5, 0.1, 3.0
    _, b_exact = _exact_rates(Tc - 1, gc, Dc, zc)
    paper = math.exp(-2 * (Dc * math.sqrt(Tc - 1) - math.sqrt(gc * (1 - gc)) * zc) ** 2)
    out.append(Check(RESULT + " (finding)", f"exact beta - paper's formula at T={Tc}, gamma={gc}, Delta={Dc}, z0={zc}", b_exact - paper,
                     "> 0: a counterexample to the formula as stated", "exact", b_exact - paper > 0,
                     "exact binomial; here Delta sqrt(T-1) = 0.995 < sqrt(gamma(1-gamma)) z0 = 1.5",
                     note=(f"The beta bound is only valid when Delta sqrt(T-1) >= sqrt(gamma(1-gamma)) z0 (Hoeffding needs a positive "
                           f"deviation); otherwise the squared term makes it small again: at T={Tc}, gamma={gc}, Delta={Dc}, z0={zc} "
                           f"the formula gives {paper:.3f} while the exact beta is {b_exact:.3f}. theory.type2_bound returns 1 there.")))
    # finding: eq. three_brick_p
    nT, gT = 200, 0.25
    s = np.arange(nT + 1)
    pmf = binom.pmf(s, nT, gT)
    p_gt = binom.sf(s, nT, gT)  # P(S > s), eq. three_brick_p
    p_ge = np.exp(binom_logsf(s, np.full_like(s, nT), gT))  # P(S >= s), the package
    levels = np.unique(np.concatenate([p_gt, p_ge]))
    levels = levels[(levels > 1e-12) & (levels < 0.5)]
    size_gt = np.array([pmf[p_gt <= a].sum() / a for a in levels])
    size_ge = np.array([pmf[p_ge <= a * (1 + 1e-12)].sum() / a for a in levels])
    s25 = np.arange(26)
    fpr25 = float(binom.pmf(s25, 25, gT)[binom.sf(s25, 25, gT) <= 1e-4].sum())
    out.append(Check("eq:three_brick_p (finding)", f"max over levels a of P_H0(P(S > s0) <= a) / a, Bin({nT}, {gT})", float(size_gt.max()),
                     "> 1: P(S > s0) is not a valid p-value", "exact", size_gt.max() > 1 + 1e-9, "exact binomial pmf over all levels a that are attained",
                     note=f"eq. three_brick_p writes p = P(S > s0): its false-positive rate exceeds the level by up to a factor {size_gt.max():.2f} "
                          f"here (at a = 1e-4 and T = 25 the false-positive rate is {fpr25:.2g}, {fpr25 / 1e-4:.2f} times the level); "
                          "the valid p-value is P(S >= s0), used by sims.detect.stats.nulls."))
    out.append(Check(RESULT, "max over levels a of P_H0(P(S >= s0) <= a) / a (sims.detect.stats.nulls.binom_logsf)", float(size_ge.max()),
                     "<= 1 (valid p-value)",
                     "1e-9 relative", size_ge.max() <= 1 + 1e-9, "exact binomial pmf over all attained levels"))
    return out
