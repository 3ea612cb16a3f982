"""Reduced simulator: Numba kernels vs the NumPy reference, hindsight optimum, the
O(1/sqrt T) rates of Theorem dualGA_performance_iid, per-replication consistency."""

import json
import subprocess
import sys

import numpy as np
import pytest

import theory
from sims import gprocess, online, reduced

SPECS = ["uniform", "beta:2,2", "mixture:0.3:0.5:4,0.7:4:2", "regime:0.05,2,5,5,2", "blocks:50,2,5,5,2", "drift:200,0.3", "adversarial:0.2,0.7"]


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("algo", sorted(online.ALGOS))
def test_numba_kernel_equals_numpy_reference_bit_for_bit(spec, algo):
    T, seed = 300, 11
    proc = gprocess.parse_spec(spec).with_switch_time(T)
    ap, _ = reduced.controller_params(algo, proc, T, Delta=0.15, gamma=None, eta=0.5, eta_mode="sqrt", lam1=1.0, delta=1.5, M=15.0)
    state = np.zeros((3, online.N_STATE))
    state[:, online.S_LAM] = ap[3]
    counts = np.zeros((3, len(proc.tables)), dtype=np.int64)
    online.run_chunk(online.ALGOS[algo], ap, proc.kind_code, proc.tables, proc.step, proc.params, seed, 0, T, state, counts)
    for r in range(3):
        ref = online.run_reference(online.ALGOS[algo], ap, proc, seed, r, T)
        assert np.array_equal(ref, state[r]), (ref, state[r])


def test_chunking_does_not_change_results():
    proc = gprocess.parse_spec("regime:0.05,2,5,5,2")
    ap, _ = reduced.controller_params("dualga", proc, 1000, Delta=0.2, gamma=None, eta=None, eta_mode="const", lam1=None, delta=None, M=15.0)
    out = []
    for cuts in ([0, 1000], [0, 123, 777, 1000]):
        s = np.zeros((2, online.N_STATE))
        s[:, online.S_LAM] = ap[3]
        c = np.zeros((2, 2), dtype=np.int64)
        for a, b in zip(cuts[:-1], cuts[1:]):
            online.run_chunk(0, ap, proc.kind_code, proc.tables, proc.step, proc.params, 5, a, b, s, c)
        out.append((s[:, :3].copy(), c.copy()))
    assert np.array_equal(out[0][0], out[1][0]) and np.array_equal(out[0][1], out[1][1])


def test_hindsight_optimum_is_that_of_the_regenerated_sequence():
    res = reduced.simulate("dualga", "beta:2,5", T=2000, reps=3, seed=4, Delta=0.25)
    proc = gprocess.parse_spec("beta:2,5")
    for r in range(3):
        G = online.regenerate(proc.kind_code, proc.tables, proc.step, proc.params, 4, r, 2000)
        assert res.per_rep["opt_kl"][r] == pytest.approx(theory.offline_opt(G, 0.25).value, rel=1e-12)
    tr = reduced.traces("dualga", "beta:2,5", T=2000, rep=1, seed=4, Delta=0.25)
    G = online.regenerate(proc.kind_code, proc.tables, proc.step, proc.params, 4, 1, 2000)
    assert np.array_equal(tr["G"], G)
    assert np.mean(tr["kl"]) == pytest.approx(res.per_rep["avg_kl"][1], rel=1e-12)


def test_regret_and_dg_gap_decay_like_inverse_sqrt_T():
    """Theorem dualGA_performance_iid on i.i.d. Beta(2,2): seed 0, 48 replications per T,
    T = 1e3..1e5, eta = 1/sqrt(T), lambda_1 = 3 (away from lambda* ~ 1.03); slopes with
    95% bootstrap CIs must contain -1/2 (within 0.1) and exclude 0."""
    Ts = np.array([1000, 3000, 10000, 30000, 100000])
    reg, gap = [], []
    for T in Ts:
        r = reduced.simulate("dualga", "beta:2,2", T=int(T), reps=48, seed=0, Delta=0.2, lam1=3.0)
        reg.append(np.abs(r.per_rep["avg_kl"] - r.per_rep["opt_kl"]))
        gap.append(np.abs(r.per_rep["avg_dg"] - 0.2))
    for values in (reg, gap):
        s, lo, hi = reduced.slope_ci(Ts, values, seed=0)
        assert hi < 0.0
        assert lo - 0.1 <= -0.5 <= hi + 0.1, (s, lo, hi)


def test_dualga_dg_concentrates_while_srl_spreads():
    """Per-prompt consistency: across 64 replications of a regime-switching process whose
    regimes last long, DualGA's realised DG stays near Delta; SRL's fixed boost does not."""
    spec = "regime:0.0005,2,8,8,2"
    d = reduced.simulate("dualga", spec, T=4000, reps=64, seed=3, Delta=0.2, eta=0.5)
    s = reduced.simulate("srl", spec, T=4000, reps=64, seed=3, Delta=0.2, delta=1.0)
    assert d.dg_spread * 3 < s.dg_spread
    assert abs(d.avg_dg - 0.2) < 0.01


def test_nonstationarity_measure():
    assert reduced.simulate("dualga", "beta:2,2", T=500, reps=2).W1 == 0.0
    r = reduced.simulate("dualga", "adversarial:0.2,0.7", T=1000, reps=2, Delta=0.2)
    assert r.W1 > 0 and r.W2 > 0
    # half the steps under each law: each step is |F_l - mean| = |F_1 - F_2| / 2 in sup norm
    proc = gprocess.parse_spec("adversarial:0.2,0.7")
    kl, dg = gprocess.law_functions(proc)
    assert r.W2 == pytest.approx(1000 * np.max(np.abs(dg[0] - dg[1])) / 2, rel=1e-12)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(G="gauss:1"), "G spec must be one of uniform | beta:a,b"),
        (dict(G="beta:2"), "beta takes 2 numbers; got 1"),
        (dict(G="beta:-1,2"), "beta a must be in (0, inf); got -1.0"),
        (dict(T=0), "T must be in [1, inf); got 0"),
        (dict(reps=0), "reps must be in [1, inf); got 0"),
        (dict(eta=-1.0), "eta must be in (0, inf); got -1.0"),
        (dict(M=0.0), "M must be in (0, inf); got 0.0"),
        (dict(Delta=0.7), "Delta must be in (0, E[1 - G]) = (0, 0.5) for G=beta:2,2; got 0.7"),
        (dict(algo="srl"), "delta must be given for algo 'srl'"),
        (dict(algo="pid"), "algo must be one of ['backpressure', 'dualga', 'srl']; got 'pid'"),
    ],
)
def test_bad_input(kwargs, message):
    import re

    args = dict(algo="dualga", G="beta:2,2", T=100, reps=2)
    args.update(kwargs)
    algo, G = args.pop("algo"), args.pop("G")
    with pytest.raises(ValueError, match=re.escape(message)):
        reduced.simulate(algo, G, **args)


def test_cli_json_keys():
    out = subprocess.run(
        [sys.executable, "-m", "sims", "reduced", "--algo", "dualga", "--G", "beta:2,2", "--T", "2000", "--reps", "2", "--seed", "1", "--json"],
        capture_output=True, text=True, check=True,
    ).stdout
    res = json.loads(out)
    for key in ("avg_kl", "avg_dg", "opt_kl", "regret", "violation", "green_fraction", "z_mean", "steps", "elapsed_s"):
        assert key in res
    assert res["steps"] == 4000


def test_cli_bad_spec_is_one_line_error():
    p = subprocess.run([sys.executable, "-m", "sims", "reduced", "--G", "nope", "--T", "10"], capture_output=True, text=True)
    assert p.returncode == 2 and p.stderr.startswith("error: G spec must be one of")
