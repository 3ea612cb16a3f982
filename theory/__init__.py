"""Closed forms, offline optimum and bounds of "Towards Better Statistical
Understanding of Watermarking LLMs".

Pure functions on NumPy arrays; importing this package loads neither cvxpy,
matplotlib nor torch.
"""

import importlib

from theory import _numba_cache  # noqa: F401  (first: keys Numba's cache by this package's source)

# Public name -> the module that holds it; a name's module is imported on first use (``import theory``
# stays light: the Numba ufuncs load and scipy.optimize import only when a function is asked for).
_HOMES = {
    "LAMBDA_MAX": "theory.constants",
    "OfflineResult": "theory.offline",
    "autocov_update": "theory.dual_ascent",
    "bretagnolle_huber": "theory.bounds",
    "delta_star": "theory.certainty",
    "dg_slope_step": "theory.soft",
    "dg_step": "theory.soft",
    "dualga_update": "theory.dual_ascent",
    "dual_step": "theory.soft",
    "dual_step_grad": "theory.soft",
    "dualga_text_boost": "theory.power",
    "ems_expected_kl": "theory.bounds",
    "entropy": "theory.bounds",
    "gamma_star": "theory.certainty",
    "green_mass_step": "theory.soft",
    "kl_certainty_equivalent": "theory.certainty",
    "kl_step": "theory.soft",
    "lagrangian_step": "theory.soft",
    "offline_opt": "theory.offline",
    "optimal_test_error": "theory.bounds",
    "robust_delta": "theory.bounds",
    "type1_bound": "theory.bounds",
    "type2_bound": "theory.bounds",
}
__all__ = list(_HOMES)


def __getattr__(name: str):
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'theory' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
