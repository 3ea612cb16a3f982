"""Reduced simulator runner: hindsight optimum, the O(1/sqrt T) rates of Theorem
dualGA_performance_iid, per-replication consistency, CLI and bad input.
(Kernel-level tests: test_online.py; processes and W_T: test_gprocess.py.)"""

import json

import numpy as np
import pytest

import theory
from sims.cli.main import main
from sims.core.progress import progress
from sims.reduced import gprocess, online
from sims.reduced import runner as reduced

# the bootstrap CI covers resampling noise only; the fitted line also carries the curvature
# of the O(1/T) transient at small T, hence a slack around -1/2
SLOPE_SLACK = 0.1
OPT_RTOL = 1e-12  # streamed OPT vs theory.offline_opt on the stored sequence (same solver, tol 1e-13)
SLOPE_SLACK_SLOW = 0.05

def test_streamed_hindsight_optimum_is_that_of_the_regenerated_sequence():
    res = reduced.simulate("dualga", "beta:2,5", T=2000, reps=3, seed=4, Delta=0.25)
    proc = gprocess.parse_spec("beta:2,5")
    for r in range(3):
        G = online.regenerate(proc.kind_code, proc.tables, proc.step, proc.params, 4, r, 2000)
        exact = theory.offline_opt(G, 0.25)
        assert res.per_rep["opt_kl"][r] == pytest.approx(exact.value, rel=OPT_RTOL)
        streamed = online.hindsight_opt(proc.kind_code, proc.tables, proc.step, proc.params, 4, r, 2000, 0.25, reduced.OPT_TOL)
        assert streamed[1] == pytest.approx(exact.lam, rel=OPT_RTOL)
    # Delta above the sequence's mean of (1 - G) 1{G > 0}: reported as infeasible (nan)
    assert np.isnan(online.hindsight_opt(proc.kind_code, proc.tables, proc.step, proc.params, 4, 0, 2000, 0.99, 1e-13)[0])
    tr = reduced.traces("dualga", "beta:2,5", T=2000, rep=1, seed=4, Delta=0.25)
    G = online.regenerate(proc.kind_code, proc.tables, proc.step, proc.params, 4, 1, 2000)
    assert np.array_equal(tr["G"], G)
    assert np.mean(tr["kl"]) == pytest.approx(res.per_rep["avg_kl"][1], rel=1e-12)


def _slopes(Ts, reps):
    reg, gap = [], []
    for T in Ts:
        r = reduced.simulate("dualga", "beta:2,2", T=int(T), reps=reps, seed=0, Delta=0.2, lam1=3.0)
        reg.append(np.abs(r.per_rep["avg_kl"] - r.per_rep["opt_kl"]))
        gap.append(np.abs(r.per_rep["avg_dg"] - 0.2))
    return [reduced.slope_ci(Ts, values, seed=0) for values in (reg, gap)]


def test_regret_and_dg_gap_decay_like_inverse_sqrt_T():
    """Theorem dualGA_performance_iid on i.i.d. Beta(2,2): seed 0, 48 replications per T,
    T = 1e3..1e5, eta = 1/sqrt(T), lambda_1 = 3 (away from lambda* ~ 1.03); slopes of
    |avg KL - OPT| and |avg DG - Delta| with 95% bootstrap CIs must exclude 0 and come
    within SLOPE_SLACK of containing -1/2."""
    for s, lo, hi in _slopes(np.array([1000, 3000, 10000, 30000, 100000]), 48):
        assert hi < 0.0
        assert lo - SLOPE_SLACK <= -0.5 <= hi + SLOPE_SLACK, (s, lo, hi)


@pytest.mark.slow
def test_rates_up_to_ten_million_steps():
    """As above over T = 1e3..1e7 (seed 0, 32 replications): the 95% CIs contain -1/2
    within SLOPE_SLACK_SLOW."""
    for s, lo, hi in _slopes(np.logspace(3, 7, 5).astype(int), 32):
        assert lo - SLOPE_SLACK_SLOW <= -0.5 <= hi + SLOPE_SLACK_SLOW, (s, lo, hi)


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
    r = reduced.simulate("dualga", "adversarial:0.2,0.7", T=1000, reps=2, Delta=0.2, M=10.0)
    proc = gprocess.parse_spec("adversarial:0.2,0.7")
    assert (r.W1, r.W2) == gprocess.nonstationarity(proc, np.array([500, 500]), M=10.0)
    assert r.W1 > 0 and r.W2 > 0


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
        (dict(Delta=0.7), "Delta must be in (0, E[(1 - G) 1{G > 0}]) = (0, 0.5) for G=beta:2,2; got 0.7"),
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


def test_cli_json_keys(capsys):
    """``sims reduced ... --json`` in this process (sims.cli.main.main; the shell entry point is checked
    in test_detect_cli / test_cli_bad_input)."""
    assert main(["reduced", "--algo", "dualga", "--G", "beta:2,2", "--T", "2000", "--reps", "2", "--seed", "1", "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    for key in ("avg_kl", "avg_dg", "opt_kl", "regret", "violation", "green_fraction", "z_mean", "steps", "elapsed_s"):
        assert key in res
    assert res["steps"] == 4000


def test_cli_bad_spec_is_one_line_error(capsys):
    rc = main(["reduced", "--G", "nope", "--T", "10"])
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith("error: G spec must be one of") and err.count("\n") == 1


def test_progress_is_silent_off_a_terminal_and_a_bar_on_request():
    with progress(10, "x") as bar:  # pytest captures stderr: not a TTY
        bar.update(3)
    assert type(bar).__name__ == "_Silent"
    assert list(progress([1, 2], "x")) == [1, 2]
    with progress(10, "x", force=True) as bar:
        bar.update(4)
        assert bar.n == 4


def test_long_runs_show_a_bar_on_a_terminal(monkeypatch, capsys):
    """Runs above PROGRESS_ABOVE steps draw a tqdm bar when stderr is a terminal (lowered here)."""
    import sys

    monkeypatch.setattr(reduced, "PROGRESS_ABOVE", 1000)
    monkeypatch.setattr(reduced, "CHUNK_STEPS", 500)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    reduced.simulate("dualga", "uniform", T=2000, reps=2, with_opt=False)
    assert "dualga on uniform" in capsys.readouterr().err
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False)
    reduced.simulate("dualga", "uniform", T=2000, reps=2, with_opt=False)
    assert capsys.readouterr().err == ""
