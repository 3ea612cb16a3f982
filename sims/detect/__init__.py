"""Detection: green counts and scores per text, exact null distributions (binomial, Gamma,
AutoCov, Poisson-binomial tails), Numba kernels; anytime-valid e-processes (``sequential``,
``stream``, ``peeking``), many keys and many texts (``multiple``), the decision document
(``decision``)."""

from sims.detect import score_families as _score_families  # noqa: F401, E402  (registers the score families in sims.watermarks.registry)
from sims.detect import tournament_scores  # noqa: F401, E402  (sims.detect.tournament_scores as an attribute of the package)
