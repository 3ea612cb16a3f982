"""The weighted score's tilted lattice pmf: Numba kernel (real modulus / argument) == NumPy complex-log reference."""

import numpy as np
import pytest

from sims.detect.stats import tournament_scores as ts


@pytest.mark.parametrize("n,m,theta,rate", [(1, 1, 0.0, 0.5), (7, 5, 0.3, 0.5), (200, 30, 0.0, 0.5), (200, 30, 0.05, 0.5), (50, 12, 0.2, 0.3)])
def test_tilted_pmf_kernel_equals_reference(n, m, theta, rate):
    w = ts.synthid_weights(m)
    lr = np.log(rate) - np.log1p(-rate)
    a, b = ts._tilted_pmf(n, w, theta, lr), ts._tilted_pmf_reference(n, w, theta, lr)
    assert a.shape == b.shape == (n * int(w.sum()) + 1,)
    assert np.max(np.abs(a - b)) < 1e-14
    assert abs(a.sum() - 1.0) < 1e-12
