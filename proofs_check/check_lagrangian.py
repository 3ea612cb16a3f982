r"""Lemma Lagrangian_dual for (opt:nofree), with
:math:`L(\delta,\lambda) = \frac1T\sum_t D_{kl,t}(\delta) - \lambda(\frac1T\sum_t \mathrm{DG}_t(\delta) - \Delta)`:

(a) :math:`g(\lambda) = \inf_\delta L(\delta,\lambda) = L(\lambda,\lambda)`; the proof's derivative
:math:`\partial L/\partial\nu = \frac1T\sum_t \frac{G_t(1-G_t)}{(G_t\nu - G_t + 1)^2}(\log\nu - \lambda)`, :math:`\nu = e^\delta`;
(b) :math:`g = \frac1T\sum_t g_t`, each :math:`g_t` concave with :math:`g_t' = \Delta - \mathrm{DG}_t(\lambda)`;
(c) strong duality, :math:`\delta^* = \lambda^*`.

KL and DG come from theory's closed forms, checked here against sums over explicit
two-entry distributions (green mass G tilted by :math:`e^\delta`); the infimum is taken
over a grid, the derivatives by central differences, the primal by a grid of boosts.
"""

import numpy as np

import theory
from proofs_check._check import Check

RESULT = "lemma:Lagrangian_dual"
EXACT_TOL = 1e-12  # closed forms vs direct sums: rounding only
H = 1e-5  # central-difference step
FD_TOL = 1e-7  # truncation O(h^2) * |third derivative| (< 1e2 here) plus rounding eps/h ~ 1e-11
CONCAVITY_TOL = 1e-13  # rounding of second differences of O(1) values on a 0.01 grid
PRIMAL_GRID_TOL = 1e-3  # a grid of spacing 5e-3 in delta can only overshoot OPT by O(spacing * |dKL/ddelta|)


def _kl_dg_direct(d: float, G: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """KL and DG of the tilted two-colour distribution, from its entries."""
    qg = G * np.exp(d) / (G * np.exp(d) + 1 - G)
    with np.errstate(divide="ignore", invalid="ignore"):
        kl = np.where(qg > 0, qg * np.log(qg / G), 0.0) + np.where(qg < 1, (1 - qg) * np.log((1 - qg) / (1 - G)), 0.0)
    return kl, qg - G


def run(quick: bool, rng) -> list[Check]:
    """Parts (a)-(c) on random green masses.

    Parameters
    ----------
    quick : bool
        ``--quick``: 200 random green masses instead of 2000.
    rng : numpy.random.Generator
        The module's generator, seeded ``[seed, crc32(module name)]`` by ``python -m proofs_check``.

    Returns
    -------
    list of proofs_check._check.Check
        One row of the report per quantity checked: measured against claimed at the stated tolerance.
    """
    G = rng.beta(2.0, 3.0, size=200 if quick else 2000)
    Delta = 0.2
    grid = np.linspace(0.0, 15.0, 3001)
    lams = np.linspace(0.05, 6.0, 25)
    closed = max(max(float(np.max(np.abs(a - b))) for a, b in zip(_kl_dg_direct(d, G), (theory.kl_step(d, G), theory.dg_step(d, G))))
                 for d in grid[::100])

    def L(d, lam):
        return np.mean(theory.kl_step(d, G)) - lam * (np.mean(theory.dg_step(d, G)) - Delta)

    gap_a = max(L(lam, lam) - min(L(d, lam) for d in grid[::10]) for lam in lams)
    nu_err = 0.0
    for lam in lams[::4]:
        for d in (0.1, 1.0, 3.0):
            nu = np.exp(d)
            fd = (L(np.log(nu + H), lam) - L(np.log(nu - H), lam)) / (2 * H)
            paper = np.mean(G * (1 - G) / (G * nu - G + 1) ** 2) * (np.log(nu) - lam)
            nu_err = max(nu_err, abs(fd - paper))
    g = np.array([np.mean(theory.dual_step(lam, G, Delta)) for lam in lams])
    dec = float(np.max(np.abs(g - np.array([L(lam, lam) for lam in lams]))))
    fd = np.array([(np.mean(theory.dual_step(lam + H, G, Delta)) - np.mean(theory.dual_step(lam - H, G, Delta))) / (2 * H) for lam in lams])
    der = float(np.max(np.abs(fd - (Delta - np.array([np.mean(theory.dg_step(lam, G)) for lam in lams])))))
    fine = np.linspace(0.0, 6.0, 601)
    worst_conc = -np.inf
    for Gt in G[:20]:  # each g_t separately
        gt = theory.dual_step(fine, Gt, Delta)
        worst_conc = max(worst_conc, float(np.max(gt[2:] + gt[:-2] - 2 * gt[1:-1])))
    dg = np.array([np.mean(theory.dg_step(d, G)) for d in grid])
    kl = np.array([np.mean(theory.kl_step(d, G)) for d in grid])
    primal_grid = kl[dg >= Delta].min()
    r = theory.offline_opt(G, Delta)
    lam_fine = np.linspace(0.0, 6.0, 6001)
    lam_g = float(lam_fine[np.argmax(theory.dual_step(lam_fine[:, None], G[None, :], Delta).mean(axis=1))])
    return [
        Check(RESULT, "KL_t, DG_t closed forms vs sums over the tilted distribution", closed, "0", f"{EXACT_TOL:g}", closed < EXACT_TOL,
              "theory.kl_step / dg_step vs entries of q"),
        Check(RESULT, "(a) L(lambda,lambda) - min over a delta grid of L(delta,lambda)", gap_a, "<= 0", f"{EXACT_TOL:g}", gap_a <= EXACT_TOL,
              "301 boosts in [0, 15], 25 values of lambda: no grid point beats delta = lambda"),
        Check(RESULT, "(a) proof's dL/dnu vs central difference", nu_err, "0", f"{FD_TOL:g}", nu_err < FD_TOL, f"h = {H:g} in nu = e^delta"),
        Check(RESULT, "(b) max |g(lambda) - mean_t g_t(lambda)|", dec, "0", f"{EXACT_TOL:g}", dec < EXACT_TOL,
              "theory.dual_step vs the Lagrangian at delta = lambda"),
        Check(RESULT, "(b) max |finite difference of g - (Delta - DG)|", der, "0", f"{FD_TOL:g}", der < FD_TOL, f"central differences, h = {H:g}"),
        Check(RESULT, "(b) max second difference of each g_t (concavity)", worst_conc, "<= 0", f"{CONCAVITY_TOL:g}", worst_conc <= CONCAVITY_TOL,
              "601-point grid on [0, 6], 20 tokens",
              note="the lemma states parts (a)-(c) but its proof has parts (a)-(d): the proof's (c) proves the statement's (b) (derivative "
                   "and concavity), its (d) the statement's (c)"),
        Check(RESULT, "(c) duality gap primal - dual at lambda*", abs(r.duality_gap), "0", "1e-10", abs(r.duality_gap) < 1e-10,
              "theory.offline_opt: mean KL at delta = lambda* vs g(lambda*)"),
        Check(RESULT, "(c) grid primal - OPT", primal_grid - r.value, f"in [0, {PRIMAL_GRID_TOL:g})", f"[0, {PRIMAL_GRID_TOL:g})",
              0 <= primal_grid - r.value < PRIMAL_GRID_TOL, "3001 constant boosts: feasible ones can only be worse than the optimum"),
        Check(RESULT, "(c) |argmax of g on a lambda grid - delta*|", abs(lam_g - r.delta), "<= grid spacing 1e-3",
              "one grid spacing", abs(lam_g - r.delta) <= 1e-3, "6001-point lambda grid on [0, 6]: delta* = lambda*, the dual maximiser is the primal boost"),
    ]
