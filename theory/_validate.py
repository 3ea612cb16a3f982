"""Input checks shared by the public functions: each error names the parameter,
the offending value and the valid range."""

from __future__ import annotations

import math

import numpy as np


def _describe(x) -> str:
    arr = np.asarray(x)
    if arr.ndim == 0:
        return repr(arr.item())
    return f"array of shape {arr.shape}"


def finite_or_inf_array(name: str, x, *, allow_inf: bool = False) -> np.ndarray:
    """Return ``x`` as a float64 array, refusing NaN (and +-inf unless allowed)."""
    arr = np.asarray(x, dtype=np.float64)
    if np.isnan(arr).any():
        raise ValueError(f"{name} must not contain NaN; got {_describe(x)} with NaN entries")
    if not allow_inf and np.isinf(arr).any():
        raise ValueError(f"{name} must be finite; got {_describe(x)} with infinite entries")
    return arr


def in_unit_interval(name: str, x, *, closed: bool = True) -> np.ndarray:
    """Check ``x`` lies in [0, 1] (``closed``) or (0, 1) elementwise."""
    arr = finite_or_inf_array(name, x)
    if closed:
        bad = (arr < 0.0) | (arr > 1.0)
        rng = "[0, 1]"
    else:
        bad = (arr <= 0.0) | (arr >= 1.0)
        rng = "(0, 1)"
    if bad.any():
        first = float(arr[bad].flat[0])
        raise ValueError(f"{name} must be in {rng}; got {first!r}")
    return arr


def boost(name: str, x) -> np.ndarray:
    """A logit boost: a number in [0, +inf] (+inf is the hard red list)."""
    arr = finite_or_inf_array(name, x, allow_inf=True)
    if (arr < 0.0).any():
        first = float(arr[arr < 0.0].flat[0])
        raise ValueError(f"{name} must be in [0, inf]; got {first!r}")
    return arr


def gamma(x) -> float:
    """The green-list ratio: a float in (0, 1)."""
    g = float(x)
    if not (0.0 < g < 1.0) or math.isnan(g):
        raise ValueError(f"gamma must be in (0, 1); got {x!r}")
    return g


def positive(name: str, x) -> float:
    v = float(x)
    if not (v > 0.0) or math.isinf(v):
        raise ValueError(f"{name} must be in (0, inf); got {x!r}")
    return v


def Delta_for_gamma(Delta, gamma_: float) -> float:
    """Delta in (0, 1 - gamma): the range where a finite boost reaches it."""
    d = float(Delta)
    if not (0.0 < d < 1.0 - gamma_):
        raise ValueError(
            f"Delta must be in (0, 1 - gamma) = (0, {1.0 - gamma_!r}) for gamma={gamma_!r}; got {Delta!r}"
        )
    return d
