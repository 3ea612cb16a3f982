"""check_sequential passes, and fails when the upper bound loses its regret term ln J + u_j
(the simulated mean stopping time lies above ln(1/alpha) / r_j)."""

import numpy as np

import proofs_check.check_sequential as cs


def test_rows_pass_and_the_regret_term_is_needed(monkeypatch):
    rows = cs.run(True, np.random.default_rng(0))
    assert len(rows) == 10 and all(r.passed for r in rows)
    real = cs.stopping_time_bounds

    def without_regret(Delta, gamma, alpha):
        b = real(Delta, gamma, alpha)
        return b | {"upper": b["lower"] * 1.02}  # ~ ln(1/alpha) / r_j of the best grid bet: no ln J, no overshoot

    monkeypatch.setattr(cs, "stopping_time_bounds", without_regret)
    rows = cs.run(True, np.random.default_rng(0))
    assert not any(r.passed for r in rows if "upper" in r.quantity)
