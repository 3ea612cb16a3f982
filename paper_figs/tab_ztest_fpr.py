r"""The z-test's false-positive rate (App. detection_ps): the exact size of the normal-tail test of eq.
normal_z_pcal under the i.i.d. null, against its nominal level.

Under H0 each of the T scored tokens is green with probability gamma, independently, so the green count is
Bin(T, gamma) exactly.  The z-test rejects when :math:`z = (S - \gamma T) / \sqrt{T \gamma (1 - \gamma)} \ge z_\alpha`,
:math:`z_\alpha = \Phi^{-1}(1 - \alpha)`; its true size is :math:`P(\mathrm{Bin}(T, \gamma) \ge k^*)` with
:math:`k^* = \lceil \gamma T + z_\alpha \sqrt{T \gamma (1 - \gamma)} \rceil`, computed here in log space
(:func:`sims.detect.stats.nulls.binom_logsf`), no simulation.  The ratio size / alpha is what the normal tail gets
wrong before any repetition in the text (which, without dedup, inflates it further).  The exact test of
eq. three_brick_p with P(S >= s) holds its level by construction.
"""

from __future__ import annotations

import math
import pathlib

import numpy as np

from paper_figs._out import md_table, write

TITLE = "The z-test's exact size under the i.i.d. null vs its nominal level"
LENGTHS = (25, 50, 100, 200, 400)
GAMMAS = (0.1, 0.25, 0.5)
LEVELS = (1e-2, 1e-4, 1e-6)


def z_size(T: int, gamma: float, alpha: float) -> float:
    """Exact P_H0(z >= z_alpha) for T i.i.d. Bernoulli(gamma) colours (0 where no count reaches z_alpha).

    Parameters
    ----------
    T : int
        Tokens.
    gamma : float
        The null green probability.
    alpha : float
        The nominal level.

    Returns
    -------
    float
        The z-test's exact size.
    """
    from scipy.stats import norm

    from sims.detect.stats.nulls import binom_logsf

    k = math.ceil(gamma * T + norm.isf(alpha) * math.sqrt(T * gamma * (1 - gamma)) - 1e-12)
    if k > T:
        return 0.0
    return float(np.exp(binom_logsf(np.array([k]), np.array([T]), gamma))[0])


def main(out_dir: pathlib.Path, quick: bool, lms=None) -> list[pathlib.Path]:
    """Tabulate the z-test's exact size under the i.i.d. null against its nominal level (exact binomial law, no simulation).

    Parameters
    ----------
    out_dir : pathlib.Path
        The folder the files are written to.
    quick : bool
        Unused: the table is exact.
    lms : sequence of str, optional
        Ignored.

    Returns
    -------
    list of pathlib.Path
        The files written: tab_ztest_fpr.png, tab_ztest_fpr.json and tab_ztest_fpr.md
        (:func:`paper_figs._out.write`).
    """
    cells = [dict(T=T, gamma=g, alpha=a, size=z_size(T, g, a)) for T in LENGTHS for g in GAMMAS for a in LEVELS]
    for c in cells:
        c["ratio"] = c["size"] / c["alpha"]
    summary = dict(lengths=list(LENGTHS), gammas=list(GAMMAS), levels=list(LEVELS), cells=cells,
                   max_ratio={f"{a:g}": max(c["ratio"] for c in cells if c["alpha"] == a) for a in LEVELS})
    rows = [[c["T"], c["gamma"], f"{c['alpha']:g}", f"{c['size']:.3g}", f"{c['ratio']:.3g}"] for c in cells]
    table = "Exact binomial law, no simulation.\n\n" + md_table(["T", "gamma", "nominal alpha", "exact size of the z-test", "size / alpha"], rows)
    return write(out_dir, "tab_ztest_fpr", summary, table, TITLE)
