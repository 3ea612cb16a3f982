"""The record of one numerical check."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass
class Check:
    """One quantity of one result: measured vs claimed, with the tolerance and why it is right.

    Attributes
    ----------
    result : str
        The paper's label (``prop:free_k``, ...); ``" (finding)"`` appended marks a row that
        reproduces a discrepancy with the paper (it passes when the counterexample is found).
    quantity : str
        What is measured.
    measured : float
        The value computed here.
    claimed : str
        The paper's claim about it (``"0"``, ``">= 0"``, ``"<= 0.32"``, ...).
    tolerance : str
        The allowance and its kind: a rounding bound, a solver accuracy, a test level.
    passed : bool
        The verdict.
    justification : str
        How the quantity is computed (sizes, seeds, solver, test).
    note : str
        Findings: a counterexample, an unstated assumption.
    """

    result: str
    quantity: str
    measured: float
    claimed: str
    tolerance: str
    passed: bool
    justification: str
    note: str = ""

    def as_dict(self) -> dict:
        """JSON-ready dict (Python floats and bools)."""
        d = asdict(self)
        d["measured"] = float(d["measured"])
        d["passed"] = bool(d["passed"])
        return d
