"""One home for the package's default parameters (every other module reads them from here).

The paper's code leaves several of these implicit; the choices are documented in the user guide
(docs/book/guide/design.md, "Choices the paper's code leaves implicit").
"""

from __future__ import annotations

from theory.constants import LAMBDA_MAX

KEY = 15485863  #: watermark key (Kirchenbauer et al.'s hash key, so examples line up with transformers')
GAMMA = 0.25  #: green-list ratio of SRL / hard / ATW (DualGA and AutoCov use gamma*(Delta))
DELTA = 2.0  #: SRL / ATW logit boost
TARGET_DG = 0.3  #: Delta, DualGA's / AutoCov's target green-probability increase per token
ETA = 0.5  #: DualGA step size (the paper's tuned range is [0.1, 2])
M = LAMBDA_MAX  #: projection bound of lambda (the paper's code truncates at 15; theory.constants)
TAU = 1.0  #: EMS / PF temperature
GUMBELSOFT_TAU = 0.5  #: GumbelSoft's softmax temperature (sims.watermarks.gumbelsoft)
EXP_N = 256  #: length of EXP's key sequence xi_1..xi_n (Kuditipudi et al. 2023 take 256)
ALPHA = 2.0  #: ATW entropy threshold (nats)
H = 1  #: context width of the green-list hash
PRF = "splitmix64"  #: the keyed PRF of green lists: sims.core.prf; "siphash" = sims.core.prf_crypto (128-bit key)
GREEN_KIND = "bernoulli"  #: per-token Bernoulli(gamma) green lists, or "partition" (exactly floor(gamma V))
FPR = 1e-4  #: false-positive rate of a detection decision
MORPH_GAMMA = 0.5  #: MorphMark's green-list ratio (sims.watermarks.morphmark)
MORPH_KAPPA = 1.3  #: MorphMark's exponential strength constant kappa: r = min(exp(kappa G) - 1, 1)
MORPH_P0 = 0.15  #: MorphMark's threshold p0: no watermark where the green mass G < p0
