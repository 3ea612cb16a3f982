"""Counter-based uniforms shared bit for bit by the Numba kernels and their NumPy references.

``uniform(seed, stream, i)`` is a pure function of three integers (SplitMix64 of a
keyed counter), so a replication can be regenerated -- e.g. to compute the
hindsight optimum of the very G sequence a run saw -- without storing it, and
parallel replications are reproducible whatever the thread count.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from sims.core.prf import GOLDEN, _mix64, mix64_nb

_SCALE = 1.0 / 9007199254740992.0  # 2**-53


@njit(cache=True, inline="always")
def stream_key_nb(seed, stream):
    return mix64_nb(np.uint64(seed) ^ (np.uint64(stream) * np.uint64(GOLDEN)))


@njit(cache=True, inline="always")
def uniform_nb(key, i):
    """Uniform in (0, 1) number ``i`` of the stream with key ``stream_key_nb(seed, stream)``."""
    z = mix64_nb(key + np.uint64(i) * np.uint64(GOLDEN))
    return ((z >> np.uint64(11)) + 0.5) * _SCALE


def stream_key(seed: int, stream: int) -> np.uint64:
    """Key of stream ``stream`` of seed ``seed``: ``mix64(seed ^ stream * GOLDEN)`` (NumPy twin of :func:`stream_key_nb`).

    Parameters
    ----------
    seed : int
        The run's seed.
    stream : int
        The stream's number (independent uses of one seed).

    Returns
    -------
    numpy.uint64
        The key that :func:`uniforms` and :func:`uniform_nb` count from.
    """
    with np.errstate(over="ignore"):
        x = np.array([seed], dtype=np.uint64) ^ (np.array([stream], dtype=np.uint64) * np.uint64(GOLDEN))
    return _mix64(x)[0]


def uniforms(key, i) -> np.ndarray:
    """NumPy reference of :func:`uniform_nb` for an array of counters ``i``.

    Parameters
    ----------
    key : int or numpy.uint64
        A stream key (:func:`stream_key`).
    i : int or array_like of int
        Counters: uniform number i of the stream.

    Returns
    -------
    ndarray of float64
        Uniforms in (0, 1), ``((mix64(key + i GOLDEN) >> 11) + 0.5) / 2**53``.
    """
    with np.errstate(over="ignore"):
        z = _mix64(np.uint64(key) + np.asarray(i, dtype=np.uint64) * np.uint64(GOLDEN))
    return ((z >> np.uint64(11)).astype(np.float64) + 0.5) * _SCALE
