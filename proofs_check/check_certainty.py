r"""Appendix "Discussions on Choosing Green List Ratio" (problem opt:certainty_equivalent).

.. math:: \delta^*(\Delta,\gamma) = \log\Bigl(1+\frac{\Delta}{\gamma}\Bigr) + \log\Bigl(1+\frac{\Delta}{1-\gamma-\Delta}\Bigr),\qquad
          D_{kl}(\delta^*) = (\Delta+\gamma)\log\frac{\gamma+\Delta}{\gamma} + (1-\Delta-\gamma)\log\frac{1-\gamma-\Delta}{1-\gamma},

the paper's first and second derivatives of :math:`D_{kl}(\delta^*(\Delta,\gamma))` in gamma,
convexity, and the first-order condition eq. certainty_equivalent at :func:`theory.gamma_star`.
The closed forms are compared with a root of the exact DG (brentq), with the KL of
that root, and with central finite differences of the closed-form KL.
"""

import math

import numpy as np
from scipy.optimize import brentq

import theory
from proofs_check._check import Check

RESULT = "certainty equivalent"
CLOSED_TOL = 1e-12  # relative; brentq to 1e-15 and a few float64 operations
H1, H2 = 1e-6, 1e-4  # finite-difference steps for the first / second derivative
FD1_TOL = 1e-8  # central difference: truncation |f'''| h^2/6 <= 1e-9 (|f'''| < 1e3 at gamma >= 0.05), rounding eps/h ~ 1e-10
FD2_TOL = 1e-5  # second difference: rounding eps/h^2 ~ 1e-8 of values O(1), truncation O(h^2)


def _kl(Delta: float, g: float) -> float:
    return (Delta + g) * math.log((g + Delta) / g) + (1 - Delta - g) * math.log((1 - g - Delta) / (1 - g))


def _d1(Delta: float, g: float) -> float:
    return -Delta / g - Delta / (1 - g) + math.log(g + Delta) - math.log(g) - math.log(1 - g - Delta) + math.log(1 - g)


def _d2(Delta: float, g: float) -> float:
    return Delta**2 / (g**2 * (g + Delta)) + Delta**2 / ((1 - g) ** 2 * (1 - g - Delta))


def run(quick: bool, rng) -> list[Check]:
    """Closed forms of delta*, its KL, the gamma-derivatives and gamma*.

    Parameters
    ----------
    quick : bool
        ``--quick``: unused: the closed forms are checked on one fixed grid in both modes.
    rng : numpy.random.Generator
        Unused (the checks are deterministic); passed as to every check module.

    Returns
    -------
    list of proofs_check._check.Check
        One row of the report per quantity checked: measured against claimed at the stated tolerance.
    """
    worst_d = worst_k = worst_foc = worst_d1 = worst_d2 = 0.0
    min_d2 = np.inf
    for Delta in (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.7):
        for g in np.linspace(0.05, 0.95 - Delta, 6):
            ds = theory.delta_star(Delta, g)
            root = brentq(lambda d: theory.dg_step(d, g) - Delta, 0.0, 60.0, xtol=1e-15)
            worst_d = max(worst_d, abs(ds - root) / root)
            worst_k = max(worst_k, abs(_kl(Delta, g) / theory.kl_step(root, g) - 1))
            fd1 = (_kl(Delta, g + H1) - _kl(Delta, g - H1)) / (2 * H1)
            fd2 = (_kl(Delta, g + H2) - 2 * _kl(Delta, g) + _kl(Delta, g - H2)) / H2**2
            worst_d1 = max(worst_d1, abs(fd1 - _d1(Delta, g)) / max(1.0, abs(_d1(Delta, g))))
            worst_d2 = max(worst_d2, abs(fd2 - _d2(Delta, g)) / max(1.0, abs(_d2(Delta, g))))
            min_d2 = min(min_d2, _d2(Delta, g))
        gs = theory.gamma_star(Delta)
        worst_foc = max(worst_foc, abs((_kl(Delta, gs + H1) - _kl(Delta, gs - H1)) / (2 * H1)))
    return [
        Check(RESULT, "max rel. |delta* closed form - root of DG = Delta|", worst_d, "0", f"{CLOSED_TOL:g}", worst_d < CLOSED_TOL,
              "brentq to 1e-15 on theory.dg_step, 42 (Delta, gamma) pairs"),
        Check(RESULT, "max rel. |KL closed form - KL(root)|", worst_k, "0", f"{CLOSED_TOL:g}", worst_k < CLOSED_TOL,
              "paper's formula vs theory.kl_step at the root"),
        Check(RESULT, "max rel. |paper's dKL/dgamma - central difference|", worst_d1, "0", f"{FD1_TOL:g}", worst_d1 < FD1_TOL, f"h = {H1:g}"),
        Check(RESULT, "max rel. |paper's d2KL/dgamma2 - second difference|", worst_d2, "0", f"{FD2_TOL:g}", worst_d2 < FD2_TOL, f"h = {H2:g}"),
        Check(RESULT, "min of the paper's d2KL/dgamma2 (convexity)", min_d2, "> 0", "strict", min_d2 > 0, "same grid"),
        Check(RESULT, "max |dKL/dgamma| at theory.gamma_star (central diff.)", worst_foc, "0", f"{FD1_TOL:g}", worst_foc < FD1_TOL,
              f"eq. certainty_equivalent; h = {H1:g}, 7 values of Delta"),
    ]
