"""Lemma Lagrangian_dual (a)(b)(c): the infimum is at delta = lambda, the dual decomposes token-wise,
is concave with derivative Delta - DG, and strong duality holds."""

import numpy as np

import theory

from ._check import Check

RESULT = "lemma:Lagrangian_dual"


def run(quick: bool, rng) -> list[Check]:
    G = rng.beta(2.0, 3.0, size=200 if quick else 2000)
    Delta = 0.2
    grid = np.linspace(0.0, 15.0, 3001)
    lams = np.linspace(0.05, 6.0, 25)
    # (a): brute-force inf over delta of L(delta, lambda) vs L(lambda, lambda)
    L = lambda d, lam: np.mean(theory.kl_step(d, G)) - lam * (np.mean(theory.dg_step(d, G)) - Delta)  # noqa: E731
    gap_a = max(L(lam, lam) - min(L(d, lam) for d in grid[::10]) for lam in lams)
    # (b): g(lambda) = mean of g_t(lambda); concavity and derivative
    g = np.array([np.mean(theory.dual_step(lam, G, Delta)) for lam in lams])
    dec = float(np.max(np.abs(g - np.array([L(lam, lam) for lam in lams]))))
    h = 1e-5
    fd = np.array([(np.mean(theory.dual_step(l + h, G, Delta)) - np.mean(theory.dual_step(l - h, G, Delta))) / (2 * h) for l in lams])
    der = float(np.max(np.abs(fd - (Delta - np.array([np.mean(theory.dg_step(l, G)) for l in lams])))))
    fine = np.linspace(0.0, 6.0, 601)
    gf = np.array([np.mean(theory.dual_step(l, G, Delta)) for l in fine])
    conc = float(np.max(gf[2:] + gf[:-2] - 2 * gf[1:-1]))
    # (c): primal by brute force over constant boosts vs dual maximum
    dg = np.array([np.mean(theory.dg_step(d, G)) for d in grid])
    kl = np.array([np.mean(theory.kl_step(d, G)) for d in grid])
    primal_grid = kl[dg >= Delta].min()
    r = theory.offline_opt(G, Delta)
    return [
        Check(RESULT, "(a) L(lambda,lambda) - min_delta L(delta,lambda) (grid)", gap_a, "<= 0", "1e-12", gap_a <= 1e-12, "grid of 301 boosts in [0, 15]; the minimiser is exact, so no grid point can beat it"),
        Check(RESULT, "(b) max |g(lambda) - mean_t g_t(lambda)|", dec, "0", "1e-12", dec < 1e-12, "closed form vs the Lagrangian at delta = lambda"),
        Check(RESULT, "(b) max |finite difference - (Delta - DG)|", der, "0", "1e-7", der < 1e-7, "central differences, h = 1e-5: truncation O(h^2)"),
        Check(RESULT, "(b) max second difference of g (concavity)", conc, "<= 0", "1e-13", conc <= 1e-13, "601-point grid on [0, 6]"),
        Check(RESULT, "(c) duality gap primal - dual at lambda*", abs(r.duality_gap), "0", "1e-10", abs(r.duality_gap) < 1e-10, "exact dual solver; primal = mean KL at delta = lambda*"),
        Check(RESULT, "(c) grid primal - OPT (>= 0, small)", primal_grid - r.value, ">= 0", "[0, 1e-3]", 0 <= primal_grid - r.value < 1e-3, "3001-point grid of constant boosts can only be worse than the optimum"),
    ]
