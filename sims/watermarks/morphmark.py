r"""MorphMark (Wang et al. 2025): a red-green boost whose strength adapts to the green mass.

Wang, Gu, Wu, Yang, "MorphMark: Flexible Adaptive Watermarking for Large Language Models" (ACL 2025,
arXiv:2505.11541), the adaptive-strength rule of their method.  With :math:`G_t = \sum_{k\ \mathrm{green}} p_{t,k}` (their :math:`P_G`), the
watermark strength is a function of :math:`G_t` alone,

.. math::  r_t = \begin{cases} 0 & G_t < p_0, \\ \min\bigl(e^{\kappa G_t} - 1,\ 1\bigr) & G_t \ge p_0, \end{cases}

and the mass :math:`r_t (1 - G_t)` moves from the red list to the green list, each list rescaled in
proportion to p:

.. math::  q_{t,k} = p_{t,k}\Bigl(1 + \frac{r_t (1 - G_t)}{G_t}\Bigr)\ (k\ \mathrm{green}), \qquad
           q_{t,k} = p_{t,k} (1 - r_t)\ (k\ \mathrm{red}),

so that the watermarked green mass is :math:`q_{G,t} = G_t + r_t (1 - G_t)` and
:math:`\mathrm{DG}_t = r_t (1 - G_t)`.  Within each colour q is p rescaled, so a step is Algorithm kirchen's
tilt with the G-dependent boost :math:`\delta_t = \log(1 + r_t / (G_t (1 - r_t)))` (:math:`\delta_t = \infty`,
the hard red list, at :math:`r_t = 1`); its exact KL is the binary one,

.. math::  D_{kl}(q_t\|p_t) = q_{G,t} \log\frac{q_{G,t}}{G_t} + (1 - q_{G,t}) \log\frac{1 - q_{G,t}}{1 - G_t}
           = q_{G,t} \log\Bigl(1 + \frac{r_t (1 - G_t)}{G_t}\Bigr) + (1 - r_t)(1 - G_t) \log(1 - r_t).

Where DualGA (Algorithm DualGA of the package's paper) learns its boost for a target DG, MorphMark's DG grows with
:math:`G_t`: strong where the green list already holds much of p, none below :math:`p_0`.

Detection is the red-green family's green count with its exact binomial null (the paper's z-score on the
same count): the rule reads only the green mass, so unwatermarked text is scored exactly as for SRL.

Choices the paper leaves open, and ours:

- the exponential strength :math:`e^{\kappa G} - 1` (MarkLLM's implementation also offers a linear and a logarithmic one);
- the cap :math:`r \le 1`: :math:`r > 1` would make the red probabilities negative; MarkLLM's implementation
  clamps them at 0 and renormalises, which is :math:`r = 1` (p restricted to the green list);
- the boundary: :math:`G_t = p_0` is watermarked (no watermark strictly below :math:`p_0`);
- the green list is the package's keyed Bernoulli(gamma) list of the last ``h`` tokens (:mod:`sims.core.prf`);
- defaults ``gamma`` 0.5, :math:`\kappa` = 1.3, :math:`p_0` = 0.15 (:mod:`sims.core.defaults`), the settings
  of MarkLLM's MorphMark configuration (``config/MorphMark.json``, exponential type).

:func:`strength` and :func:`records` are inlined into the generator's kernel
(:func:`sims.watermarks.generate._generate`), whose Numba cache is keyed on ``generate.py``.
"""

from __future__ import annotations

import math

from numba import njit


@njit(cache=True, inline="always")
def strength(G, kappa, p0):
    r"""The strength :math:`r = \min(e^{\kappa G} - 1, 1)` where :math:`G \ge p_0`, else 0 (module docstring)."""
    if G < p0:
        return 0.0
    return min(math.expm1(kappa * G), 1.0)


@njit(cache=True, inline="always")
def records(r, G):
    r"""The watermarked green mass :math:`q_G = G + r(1 - G)` (exactly 1 at :math:`r = 1`), the exact
    :math:`D_{kl}(q\|p)` and :math:`\mathrm{DG} = r(1 - G)` of strength ``r`` at green mass ``G``.
    Returns ``(qG, kl, dg)``."""
    if r <= 0.0 or G >= 1.0:
        return G, 0.0, 0.0
    dg = r * (1.0 - G)
    if r >= 1.0:  # p restricted to the green list: KL = -log G
        return 1.0, -math.log(G), dg
    qG = G + dg
    return qG, qG * math.log1p(dg / G) + (1.0 - r) * (1.0 - G) * math.log1p(-r), dg
