"""The preset LMs' parameters, readable without loading Numba (:func:`sims.lm.synthetic.open_synthetic` builds them;
the planner's on-disk cache keys its LM samples by them, :mod:`sims.plan.cache`)."""

from __future__ import annotations

import pathlib

#: name: (V, order, beta_factual, beta_opinion, kappa, bump_scale, p_loop, loop_boost)
PRESETS = {
    "news": (32000, 2, 2.0, 1.1, 1.0, 2.0, 0.02, 8.0),  # ~ SmolLM2 sampled at T=1 (2.75 nats)
    "lfqa": (32000, 2, 3.0, 1.1, 1.0, 4.0, 0.03, 8.0),  # ~ SmolLM2 answers, greedy (2.2, median 2.0)
    "loopy": (4096, 1, 3.0, 1.1, 1.0, 4.0, 0.15, 10.0),  # short contexts, many near-deterministic successors
    "tiny": (6, 1, 1.0, 0.5, 1.0, 2.0, 0.0, 0.0),  # exact enumeration
}
#: fitted presets (sims.lm.fitted): name -> file of vocab_size, order, params, levels
FITTED_PRESETS = {"smollm2-fit": pathlib.Path(__file__).parent / "data" / "smollm2-fit.npz"}
#: Names of every synthetic-LM preset, the parametric ones (:data:`PRESETS`) then the fitted ones
#: (:data:`FITTED_PRESETS`): what ``sims.get_lm(name)`` opens without a file.
LM_PRESETS = tuple(PRESETS) + tuple(FITTED_PRESETS)
