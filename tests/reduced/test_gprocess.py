"""G_t processes: inverse-CDF tables, schedules, SPEC parsing and the non-stationarity
measures W_{T,1}, W_{T,2} (paper, after Theorem dualGA_performance_iid)."""

import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from sims.core import rng
from sims.reduced import gprocess, online

ALPHA = 0.001  # level of every Monte Carlo test in this file
# CDF of a Beta table at its own nodes vs the node level: loosened from 1e-12 to 1e-6 because
# for a or b < 1 the density near 0 or 1 is ~1e9 and one ulp of rounding in the node moves the CDF 1e-7
NODE_TOL = 1e-6
MEAN_TOL = 1e-5  # mean of a tabulated law vs the exact mean (trapezoid error of the quantile table)
N_DRAWS = 20000


def _draws(proc, seed, n, law=0):
    u = rng.uniforms(rng.stream_key(seed, 0), np.arange(n))
    return np.array([gprocess.draw_from_table(proc.tables[law], proc.step, x) for x in u])


def _law_counts(spec, T, reps=1, seed=0):
    proc = gprocess.parse_spec(spec).with_switch_time(T)
    state = np.zeros((reps, online.N_STATE))
    counts = np.zeros((reps, len(proc.tables)), dtype=np.int64)
    ap = online.ControllerParams(Delta=0.1, eta=0.01, eta_mode=0.0, lam1=1.0, M=15.0, delta=0.0, V=1.0, alpha=1.0)
    online.run_chunk(0, ap, proc.kind_code, proc.tables, proc.step, proc.params, seed, 0, T, state, counts)
    return counts


@st.composite
def beta_params(draw):
    return draw(st.floats(0.3, 8.0)), draw(st.floats(0.3, 8.0))


@given(beta_params())
def test_beta_table_is_exact_at_its_nodes(ab):
    """Each node is the exact quantile, so the interpolated law's CDF is within
    1 / (TABLE_SIZE - 1) of Beta(a, b)'s everywhere (Kolmogorov distance)."""
    a, b = ab
    table = gprocess.parse_spec(f"beta:{a!r},{b!r}").tables[0]
    u = np.linspace(0.0, 1.0, gprocess.TABLE_SIZE)
    assert np.all(np.diff(table) >= 0.0)
    assert np.max(np.abs(stats.beta.cdf(table, a, b) - u)) < NODE_TOL


@pytest.mark.parametrize("spec, cdf", [
    ("uniform", stats.uniform.cdf),
    ("beta:2,5", stats.beta(2, 5).cdf),
    ("beta:0.5,0.5", stats.beta(0.5, 0.5).cdf),
    ("mixture:0.3:0.5:4,0.7:4:2", lambda x: 0.3 * stats.beta.cdf(x, 0.5, 4) + 0.7 * stats.beta.cdf(x, 4, 2)),
])
def test_draws_pass_kolmogorov_smirnov(spec, cdf):
    """Seed 0, 20000 draws from the counter stream: KS test at level ALPHA."""
    x = _draws(gprocess.parse_spec(spec), 0, N_DRAWS)
    assert stats.kstest(x, cdf).pvalue > ALPHA


@pytest.mark.parametrize("spec, mean", [
    ("uniform", 0.5), ("beta:2,5", 2 / 7), ("mixture:1:2:2,3:1:3", 0.25 * 0.5 + 0.75 * 0.25),
    ("regime:0.1,2,6,6,2", 0.5), ("adversarial:0.2,0.7", 0.45),
])
def test_process_mean(spec, mean):
    assert gprocess.parse_spec(spec).mean() == pytest.approx(mean, abs=MEAN_TOL)


def test_file_resamples_the_array(tmp_path):
    """Draws take only the array's values, each with frequency 1/n: chi-square at level ALPHA."""
    data = np.array([0.05, 0.2, 0.2, 0.5, 0.9])
    path = tmp_path / "g.npy"
    np.save(path, data)
    proc = gprocess.parse_spec(f"file:{path}")
    x = _draws(proc, 1, N_DRAWS)
    values, counts = np.unique(x, return_counts=True)
    assert np.array_equal(values, np.unique(data))
    expected = N_DRAWS * np.array([1, 2, 1, 1]) / 5
    assert stats.chisquare(counts, expected).pvalue > ALPHA
    assert proc.mean() == pytest.approx(data.mean(), rel=1e-15)


def test_max_dg_excludes_empty_green_lists(tmp_path):
    """DG = 0 whenever G = 0 (no green token to boost), so max DG = E[(1 - G) 1{G > 0}]."""
    path = tmp_path / "g.npy"
    np.save(path, np.array([0.0, 0.0, 0.5, 0.25]))
    assert gprocess.parse_spec(f"file:{path}").max_dg() == pytest.approx((0.5 + 0.75) / 4, rel=1e-15)
    assert gprocess.parse_spec("adversarial:0,0.6").max_dg() == pytest.approx(0.2, rel=1e-15)


def test_blocks_adversarial_and_drift_schedules_are_deterministic():
    assert _law_counts("blocks:50,2,5,5,2", 1000).tolist() == [[500, 500]]
    assert _law_counts("blocks:300,2,5,5,2", 1000).tolist() == [[600, 400]]
    assert _law_counts("adversarial:0.2,0.7", 1001).tolist() == [[500, 501]]
    c = _law_counts("drift:640,0.3", 6400)[0]
    assert c.size == gprocess.DRIFT_BINS and np.all(c == 100)


def test_regime_switching_spends_half_the_time_in_each_regime():
    """200 replications of 2000 steps, switch probability 0.05: per-replication
    fractions in regime 1 have mean 1/2 (t-test at level ALPHA)."""
    c = _law_counts("regime:0.05,2,5,5,2", 2000, reps=200, seed=2)
    frac = c[:, 1] / 2000
    assert stats.ttest_1samp(frac, 0.5).pvalue > ALPHA
    assert 0.0 < frac.std()  # the regime does switch between replications


def test_nonstationarity_vanishes_for_iid_and_grows_linearly():
    proc = gprocess.parse_spec("blocks:10,2,5,5,2")
    assert gprocess.nonstationarity(gprocess.parse_spec("beta:2,2"), np.array([1000])) == (0.0, 0.0)
    w1 = gprocess.nonstationarity(proc, np.array([500, 500]))
    w2 = gprocess.nonstationarity(proc, np.array([5000, 5000]))
    assert w2 == pytest.approx((10 * w1[0], 10 * w1[1]), rel=1e-12)
    # equal time under two laws: every step contributes half the sup distance of the two laws
    grid = np.linspace(0.0, 15.0, gprocess.W_GRID_POINTS)
    kl, dg = gprocess.law_functions(proc, grid)
    assert w1[0] == pytest.approx(1000 * np.max(np.abs(kl[0] - kl[1])) / 2, rel=1e-12)
    assert w1[1] == pytest.approx(1000 * np.max(np.abs(dg[0] - dg[1])) / 2, rel=1e-12)


def test_nonstationarity_of_point_masses_matches_theory():
    """Adversarial point masses g1, g2: the law functions are theory's KL and DG at g1, g2."""
    import theory

    proc = gprocess.parse_spec("adversarial:0.2,0.7")
    grid = np.linspace(0.0, 4.0, gprocess.W_GRID_POINTS)
    kl, dg = gprocess.law_functions(proc, grid)
    # a mean of 256 equal numbers: equal up to summation rounding
    np.testing.assert_allclose(kl[0], theory.kl_step(grid, 0.2), rtol=1e-14, atol=0)
    np.testing.assert_allclose(dg[1], theory.dg_step(grid, 0.7), rtol=1e-14, atol=0)
    w1, w2 = gprocess.nonstationarity(proc, np.array([10, 30]), M=4.0)
    f = theory.dg_step(grid, 0.2) - theory.dg_step(grid, 0.7)
    assert w2 == pytest.approx(10 * np.max(np.abs(0.75 * f)) + 30 * np.max(np.abs(0.25 * f)), rel=1e-12)


@pytest.mark.parametrize("spec, message", [
    ("gauss:1", "G spec must be one of uniform | beta:a,b | mixture:"),
    ("uniform:3", "G spec must be one of"),
    ("beta:2", "beta takes 2 numbers; got 1 in '2'"),
    ("beta:x,2", "beta parameters must be numbers; got 'x,2'"),
    ("beta:0,2", "beta a must be in (0, inf); got 0.0"),
    ("mixture:1:2", "mixture component w:a:b takes 3 numbers; got 2"),
    ("mixture:-1:2:2", "mixture weight must be in (0, inf); got -1.0"),
    ("regime:1.5,2,2,2,2", "regime switch probability must be in (0, 1]; got 1.5"),
    ("blocks:2.5,2,2,2,2", "blocks length must be an integer in [1, inf); got 2.5"),
    ("drift:100,0.6", "drift amplitude must be in [0, 0.5); got 0.6"),
    ("adversarial:0.2,1.3", "adversarial green masses must be in [0, 1]; got 1.3"),
    ("file:/nonexistent/g.npy", "file:/nonexistent/g.npy must be a readable .npy array"),
])
def test_bad_spec(spec, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        gprocess.parse_spec(spec)


def test_file_values_outside_unit_interval(tmp_path):
    path = tmp_path / "bad.npy"
    np.save(path, np.array([0.2, 1.5]))
    with pytest.raises(ValueError, match=re.escape(f"file:{path} must hold a non-empty array of green masses in [0, 1]")):
        gprocess.parse_spec(f"file:{path}")
