"""The record of one numerical check."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass
class Check:
    """One quantity of one result: measured vs claimed, with the tolerance and why it is right.

    ``passed`` is the verdict; ``note`` carries findings (a counterexample, an unstated
    assumption) that the report prints beside the row.
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
        d = asdict(self)
        d["measured"] = float(d["measured"])
        d["passed"] = bool(d["passed"])
        return d
