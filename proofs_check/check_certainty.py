"""Appendix "Choosing Green List Ratio": delta* closed form, KL formula, gamma* first-order
condition and convexity."""

import numpy as np
from scipy.optimize import brentq

import theory

from ._check import Check

RESULT = "certainty equivalent"


def run(quick: bool, rng) -> list[Check]:
    worst_d = worst_k = worst_foc = 0.0
    min_curv = np.inf
    for Delta in (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.7):
        for gamma in np.linspace(0.05, 0.95 - Delta, 6):
            ds = theory.delta_star(Delta, gamma)
            root = brentq(lambda d: theory.dg_step(d, gamma) - Delta, 0.0, 60.0, xtol=1e-15)
            worst_d = max(worst_d, abs(ds - root) / root)
            worst_k = max(worst_k, abs(theory.kl_certainty_equivalent(Delta, gamma) / theory.kl_step(root, gamma) - 1))
        g = theory.gamma_star(Delta)
        f = lambda x: theory.kl_certainty_equivalent(Delta, x)  # noqa: E731
        h = 1e-5
        worst_foc = max(worst_foc, abs((f(g + h) - f(g - h)) / (2 * h)))
        grid = np.linspace(0.01, 0.99 - Delta, 200)
        vals = np.array([f(x) for x in grid])
        min_curv = min(min_curv, float(np.min(vals[2:] + vals[:-2] - 2 * vals[1:-1])))
    return [
        Check(RESULT, "max rel. |delta* closed form - root of DG = Delta|", worst_d, "0", "1e-12", worst_d < 1e-12, "brentq to 1e-15 on the exact DG"),
        Check(RESULT, "max rel. |KL formula - KL(delta*)|", worst_k, "0", "1e-12", worst_k < 1e-12, "closed form vs theory.kl_step"),
        Check(RESULT, "max |d KL / d gamma| at gamma* (central diff.)", worst_foc, "0", "1e-8", worst_foc < 1e-8, "h = 1e-5: truncation O(h^2)"),
        Check(RESULT, "min second difference of KL in gamma", min_curv, "> 0 (convex)", "> 0", min_curv > 0, "200-point grid per Delta"),
    ]
