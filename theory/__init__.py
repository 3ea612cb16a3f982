"""Closed forms, offline optimum and bounds of "Towards Better Statistical
Understanding of Watermarking LLMs".

Pure functions on NumPy arrays; importing this package loads neither cvxpy,
matplotlib nor torch.
"""

from theory import _numba_cache  # noqa: F401  (first: keys Numba's cache by this package's source)
from theory.bounds import (
    bretagnolle_huber,
    ems_expected_kl,
    entropy,
    optimal_test_error,
    robust_delta,
    type1_bound,
    type2_bound,
)
from theory.certainty import delta_star, gamma_star, kl_certainty_equivalent
from theory.dual_ascent import LAMBDA_MAX, autocov_update, dualga_update
from theory.offline import OfflineResult, offline_opt
from theory.soft import dg_slope_step, dg_step, dual_step, dual_step_grad, green_mass_step, kl_step, lagrangian_step

__all__ = [
    "LAMBDA_MAX",
    "OfflineResult",
    "autocov_update",
    "bretagnolle_huber",
    "delta_star",
    "dg_slope_step",
    "dg_step",
    "dualga_update",
    "dual_step",
    "dual_step_grad",
    "ems_expected_kl",
    "entropy",
    "gamma_star",
    "green_mass_step",
    "kl_certainty_equivalent",
    "kl_step",
    "lagrangian_step",
    "offline_opt",
    "optimal_test_error",
    "robust_delta",
    "type1_bound",
    "type2_bound",
]
