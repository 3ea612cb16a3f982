r"""Prop. negative_DLoP: the deterministic model :math:`\tilde q` that always emits the
sequence :math:`y^*` most likely under :math:`p_{eval}` has

.. math:: \mathrm{DLoP}(\tilde q, p \mid p_{eval}) = -\tfrac1T \log p_{eval}(y^*) - \tfrac1T E_{y\sim p}[-\log p_{eval}(y)] < 0
          \quad\text{while}\quad D_{kl}(\tilde q \| p) = -\log p(y^*) > 0.

Exact enumeration of the :math:`6^3` sequences of the "tiny" LM, with :math:`p_{eval} = p`
and with an evaluation LM that differs from p (the "tiny" preset under another seed).
"""

import numpy as np

from proofs_check._check import Check
from proofs_check._exact import sequence_laws
from sims.lm.synthetic import open_synthetic

RESULT = "prop:negative_DLoP"


def run(quick: bool, rng) -> list[Check]:
    """DLoP < 0 and KL > 0 for the construction of the proof, by enumeration.

    Parameters
    ----------
    quick : bool
        ``--quick``: unused: the construction is enumerated exactly in both modes.
    rng : numpy.random.Generator
        Unused (the checks are deterministic); passed as to every check module.

    Returns
    -------
    list of proofs_check._check.Check
        One row of the report per quantity checked: measured against claimed at the stated tolerance.
    """
    lm = open_synthetic("tiny")
    T, prompt = 3, np.array([4])
    p, _, _ = sequence_laws(None, lm, 0, prompt, T)
    out = []
    for label, ev in (("p_eval = p", lm), ("p_eval = another LM", open_synthetic("tiny", seed=1))):
        pe, _, _ = sequence_laws(None, ev, 0, prompt, T)
        order = np.sort(pe)[::-1]
        star = int(np.argmax(pe))
        dlop = float(-np.log(pe[star]) / T - np.sum(p * -np.log(pe)) / T)
        kl = float(-np.log(p[star]))
        out += [
            Check(RESULT, f"{label}: DLoP(q~, p | p_eval)", dlop, "< 0", "strict", dlop < 0,
                  f"exact enumeration of the {p.size} sequences; no tie at the top (gap {order[0] - order[1]:.3g})"),
            Check(RESULT, f"{label}: KL(q~ || p)", kl, "> 0", "strict", kl > 0, "q~ is a point mass on y*"),
        ]
    return out
