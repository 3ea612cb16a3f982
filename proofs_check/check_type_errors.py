"""Prop. type_I&II: the Hoeffding bounds on alpha and beta hold for simulated detection."""

import numpy as np

import theory
from sims import reduced
from sims.evaluate import clopper_pearson

from ._check import Check

RESULT = "prop:type_I&II"


def run(quick: bool, rng) -> list[Check]:
    n = 20000 if quick else 200000
    T, gamma, z0 = 200, 0.5, 1.5
    # null: green indicators i.i.d. Bernoulli(gamma)
    greens = rng.binomial(T - 1, gamma, size=n)
    z = (greens - gamma * (T - 1)) / np.sqrt((T - 1) * gamma * (1 - gamma))
    k = int(np.sum(z >= z0))
    lo, hi = clopper_pearson(k, n, 0.999)
    a_bound = theory.type1_bound(z0, gamma)
    out = [Check(RESULT, f"alpha at z0={z0}, T={T} (sim.)", k / n, f"<= {a_bound:.4f}", "99.9% CP lower end <= bound", lo <= a_bound,
                 f"{n} null texts, seed from the run's generator", note="Hoeffding is loose here: the simulated alpha is far below it")]
    # watermarked: DualGA on the reduced model samples colours with probability G + DG
    Delta = 0.1
    r = reduced.simulate("dualga", "beta:5,5", T=T, reps=4000 if quick else 40000, seed=int(rng.integers(2**31)), Delta=Delta, gamma=gamma, eta=0.5)
    zw = r.per_rep["z"] * np.sqrt(T / (T - 1))  # z over T tokens ~ over T-1
    kb = int(np.sum(zw < z0))
    lo_b, _ = clopper_pearson(kb, zw.size, 0.999)
    b_bound = theory.type2_bound(z0, gamma, Delta, T)
    out.append(Check(RESULT, f"beta at z0={z0}, Delta={Delta}, T={T} (DualGA sim.)", kb / zw.size, f"<= {b_bound:.4f}", "99.9% CP lower end <= bound",
                     lo_b <= b_bound, f"{zw.size} DualGA replications on Beta(5,5) green masses (E G = gamma = 0.5)",
                     note="the bound assumes the realised DG meets Delta; DualGA meets it up to O(1/sqrt T)"))
    return out
