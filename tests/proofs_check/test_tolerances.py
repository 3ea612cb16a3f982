"""proofs_check rows fail for an error just above their tolerance and pass just below it.

For each tolerance, an error is planted into what the row measures (a theory function or a helper
of the check module, monkeypatched) so that the row's measured value lands at twice the tolerance
beyond its claim (the row must fail) or at half of it (the row must pass).  Where the unplanted
measurement is not at the claim (a one-sided bound with slack), the planted shift first cancels
that slack, read from an unplanted run.  Loosening a tolerance (1e-12 to 1e-2, say) therefore
fails here, which a gross planted error could not show.

Tolerances covered: check_certainty CLOSED_TOL (two rows), FD1_TOL, FD2_TOL; check_type_errors
EXACT_TOL (alpha and beta rows); check_info_lower_bound BH_TOL, KL_RECORD_TOL; check_adv_robust
COUNT_TOL; check_lagrangian EXACT_TOL (two rows), CONCAVITY_TOL, FD_TOL.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

import proofs_check.check_adv_robust as adv
import proofs_check.check_certainty as cert
import proofs_check.check_info_lower_bound as ilb
import proofs_check.check_lagrangian as lag
import proofs_check.check_type_errors as te
import theory

SEED = 0
# the tolerances as the modules state them (their comments give the reason); the planted errors use
# these numbers, not the modules' constants, so that loosening a constant fails here
STATED = {"cert.CLOSED_TOL": 1e-12, "cert.FD1_TOL": 1e-8, "cert.FD2_TOL": 1e-5, "te.EXACT_TOL": 1e-12, "ilb.BH_TOL": 1e-12,
          "ilb.KL_RECORD_TOL": 1e-12, "adv.COUNT_TOL": 1e-12, "lag.EXACT_TOL": 1e-12, "lag.FD_TOL": 1e-7, "lag.CONCAVITY_TOL": 1e-13}


def _rows(mod) -> dict:
    return {c.quantity: c for c in mod.run(True, np.random.default_rng(SEED))}


@functools.cache
def _base(mod) -> dict:
    """The unplanted rows (each module run once per session)."""
    return _rows(mod)


def _row(rows: dict, part: str):
    hits = [c for q, c in rows.items() if part in q]
    assert len(hits) == 1, (part, list(rows))
    return hits[0]


def _planted(monkeypatch, owner, name: str, new):
    """Replace ``owner.name`` by ``new(original result, *args)``."""
    orig = getattr(owner, name)
    monkeypatch.setattr(owner, name, lambda *a, **k: new(orig(*a, **k), *a))


@pytest.fixture(params=[0.5, 2.0], ids=["half_tol_passes", "twice_tol_fails"])
def f(request):
    return request.param


def _expect(row, f):
    assert row.passed == (f < 1), (row.quantity, row.measured, row.tolerance, f)


# ---------------------------------------------------------------- check_certainty


def test_certainty_delta_star_relative_tolerance(monkeypatch, f):
    e = f * STATED["cert.CLOSED_TOL"]
    _planted(monkeypatch, theory, "delta_star", lambda v, *a: v * (1 + e))
    _expect(_row(_rows(cert), "delta* closed form"), f)


def test_certainty_kl_relative_tolerance(monkeypatch, f):
    e = f * STATED["cert.CLOSED_TOL"]
    _planted(monkeypatch, theory, "kl_step", lambda v, *a: v / (1 + e))  # KL / (KL / (1 + e)) - 1 = e
    _expect(_row(_rows(cert), "KL closed form - KL(root)"), f)


def test_certainty_first_derivative_tolerance(monkeypatch, f):
    e = f * STATED["cert.FD1_TOL"]
    _planted(monkeypatch, cert, "_d1", lambda v, *a: v + e * max(1.0, abs(v)))
    _expect(_row(_rows(cert), "dKL/dgamma - central"), f)


def test_certainty_second_derivative_tolerance(monkeypatch, f):
    base = _row(_base(cert), "d2KL/dgamma2 - second").measured
    assert base < 0.3 * STATED["cert.FD2_TOL"]
    e = f * STATED["cert.FD2_TOL"]
    _planted(monkeypatch, cert, "_d2", lambda v, *a: v + e * max(1.0, abs(v)))
    _expect(_row(_rows(cert), "d2KL/dgamma2 - second"), f)


# ---------------------------------------------------------------- check_type_errors


def test_type_errors_exact_tolerance_on_beta(monkeypatch, f):
    base = _row(_base(te), "exact beta - bound").measured
    e = -base + f * STATED["te.EXACT_TOL"]
    _planted(monkeypatch, te, "_exact_rates", lambda v, *a: (v[0], v[1] + e))
    _expect(_row(_rows(te), "exact beta - bound"), f)


def test_type_errors_exact_tolerance_on_alpha(monkeypatch, f):
    """The alpha bound holds with slack 3e-4: the shift cancels the slack and adds f x tol."""
    base = _row(_base(te), "exact alpha - bound").measured
    assert base < -1e-6
    e = -base + f * STATED["te.EXACT_TOL"]
    _planted(monkeypatch, te, "_exact_rates", lambda v, *a: (v[0] + e, v[1]))
    _expect(_row(_rows(te), "exact alpha - bound"), f)


# ---------------------------------------------------------------- check_info_lower_bound


def test_info_lower_bound_api_tolerance(monkeypatch, f):
    e = f * STATED["ilb.BH_TOL"]
    _planted(monkeypatch, theory, "bretagnolle_huber", lambda v, *a: v + e)
    _expect(_row(_rows(ilb), "theory.bretagnolle_huber - direct"), f)


def test_info_lower_bound_kl_record_tolerance(monkeypatch, f):
    e = f * STATED["ilb.KL_RECORD_TOL"]
    _planted(monkeypatch, ilb, "sequence_laws", lambda v, *a: (v[0], v[1], v[2] + e))
    _expect(_row(_rows(ilb), "generator KL_1 - enumerated KL_1"), f)


# ---------------------------------------------------------------- check_adv_robust


def test_adv_robust_count_tolerance(monkeypatch, f):
    """Raising every bound by f x tol: the rows attained with equality (contiguous deletion, the
    oracle insertion) fail at twice the tolerance and pass at half."""
    e = f * STATED["adv.COUNT_TOL"]
    _planted(monkeypatch, theory, "robust_delta", lambda v, *a: v + e)
    rows = _rows(adv)
    _expect(_row(rows, "contiguous deletion l=0.02: min(worst excess"), f)
    _expect(_row(rows, "insertion l=0.1: min over texts"), f)


# ---------------------------------------------------------------- check_lagrangian


def test_lagrangian_closed_form_tolerance(monkeypatch, f):
    e = f * STATED["lag.EXACT_TOL"]
    _planted(monkeypatch, theory, "dg_step", lambda v, *a: v + e)
    _expect(_row(_rows(lag), "closed forms vs sums"), f)


def test_lagrangian_decomposition_tolerance(monkeypatch, f):
    e = f * STATED["lag.EXACT_TOL"]
    _planted(monkeypatch, theory, "dual_step", lambda v, *a: v + e)
    _expect(_row(_rows(lag), "(b) max |g(lambda) - mean_t"), f)


def test_lagrangian_derivative_tolerance(monkeypatch, f):
    e = f * STATED["lag.FD_TOL"]
    _planted(monkeypatch, theory, "dg_step", lambda v, *a: v + e)
    _expect(_row(_rows(lag), "finite difference of g"), f)


def test_lagrangian_concavity_tolerance(monkeypatch, f):
    """A convex term a lam^2 adds 2 a h^2 to every second difference on the 0.01 grid; a is chosen
    to cancel the measured slack (-3e-8) and add f x tol."""
    base = _row(_base(lag), "second difference of each g_t").measured
    h = 0.01
    a = (-base + f * STATED["lag.CONCAVITY_TOL"]) / (2 * h * h)
    _planted(monkeypatch, theory, "dual_step", lambda v, lam, *rest: v + a * np.asarray(lam, dtype=float) ** 2)
    _expect(_row(_rows(lag), "second difference of each g_t"), f)
