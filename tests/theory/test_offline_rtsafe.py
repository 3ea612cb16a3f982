"""theory/offline.py's safeguarded Newton step when Newton lands exactly on an end of the bracket: that
end is a point already evaluated (or 0), so the step bisects instead (survivor of make mutate)."""

from theory.offline import rtsafe_step


def test_newton_landing_on_an_end_of_the_bracket_bisects():
    # f > 0: hi = lam = 2; Newton 2 - 1/1 = 1 = lo exactly -> bisect (1 + 2) / 2
    assert rtsafe_step(2.0, 1.0, 4.0, 1.0, 1.0, 1e-12) == (1.5, 1.0, 2.0, False)
    # f < 0: lo = lam = 2; Newton 2 + 2/1 = 4 = hi exactly -> bisect (2 + 4) / 2
    assert rtsafe_step(2.0, 0.0, 4.0, -2.0, 1.0, 1e-12) == (3.0, 2.0, 4.0, False)
    # just inside either end: Newton's point is kept
    assert rtsafe_step(2.0, 1.0, 4.0, 0.75, 1.0, 1e-12) == (1.25, 1.0, 2.0, False)
    assert rtsafe_step(2.0, 0.0, 4.0, -1.75, 1.0, 1e-12) == (3.75, 2.0, 4.0, False)
