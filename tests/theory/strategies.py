"""Hypothesis builders for valid inputs (no filtering)."""

import numpy as np
from hypothesis import strategies as st


@st.composite
def g_sequences(draw, min_T=1, max_T=2000, lo=1e-9):
    """A realised G_1..G_T in [lo, 1 - lo] from a Beta(a, b) law with drawn shape and seed."""
    T = draw(st.integers(min_T, max_T))
    a = draw(st.floats(0.3, 5.0))
    b = draw(st.floats(0.3, 5.0))
    seed = draw(st.integers(0, 2**32 - 1))
    G = np.random.default_rng(seed).beta(a, b, size=T)
    return np.clip(G, lo, 1 - lo)


@st.composite
def feasible_problems(draw, max_T=2000, lo=1e-9):
    """(G, Delta) with Delta strictly inside the feasible range (0, mean(1 - G))."""
    G = draw(g_sequences(max_T=max_T, lo=lo))
    frac = draw(st.floats(0.02, 0.9))
    return G, float(frac * np.mean(1.0 - G))


@st.composite
def simplices(draw, n):
    """A probability vector of length n with entries bounded away from 0."""
    w = np.array(draw(st.lists(st.floats(0.05, 1.0), min_size=n, max_size=n)))
    return w / w.sum()
