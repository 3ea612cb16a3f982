"""Simulators: everything that draws or scores tokens.

The rooms of this package, lowest first (a module imports only its own room and those
below it; ``tests/test_imports.py`` checks it)::

    core/          the keyed PRF (green lists), counter RNG, keyed orders, defaults, the Generation record, word sets
    lm/            synthetic LMs with exact next-token distributions (presets, fitted, the looping LM); lm.kind: the one rule naming an LM's kind
    watermarks/    generation with every watermark of the paper, exact per-token records
    detect/        scores and exact null distributions (binomial, Gamma, AutoCov tails)
    reduced/       the reduced simulator: G_t processes, online controllers, runner vs hindsight OPT
    torch_backend/ the same algorithms on a real LM (optional extra ``[torch]``, imported only when a real LM is opened)
    experiments/   one door per LM (``get_lm``), evaluate (TPR at fixed FPR, KL, DG), attacks, repetition, stealing, sweeps
    cli/           ``python -m sims COMMAND``

The names below are the public API (``sims.__all__``); everything else is an implementation
detail.  Importing this package loads neither torch, matplotlib nor cvxpy.
"""

import theory._numba_cache  # noqa: F401  (first: Numba's cache keyed by the package source)
from sims.core import defaults
from sims.core.keys import keyed_order
from sims.core.record import Generation
from sims.detect.scores import DetectResult, green_indicators, prefix_log10p, score, score_redgreen, tokens_to_detect
from sims.experiments.attacks import attack
from sims.experiments.evaluate import clopper_pearson, evaluate, null_fpr
from sims.experiments.lms import LM, generate, get_lm
from sims.experiments.repetition import monitor as lambda_monitor
from sims.experiments.repetition import repeated_ngram_mask, repetition_rate
from sims.lm.synthetic import LM_PRESETS, SyntheticLM, lm_from_meta, loop_lm
from sims.reduced.gprocess import parse_spec as g_process
from sims.reduced.runner import ReducedResult, simulate, traces
from sims.watermarks.generate import ALGOS, sample_prompts

__all__ = [
    "ALGOS",
    "DetectResult",
    "Generation",
    "LM",
    "LM_PRESETS",
    "ReducedResult",
    "SyntheticLM",
    "attack",
    "clopper_pearson",
    "defaults",
    "evaluate",
    "g_process",
    "generate",
    "get_lm",
    "green_indicators",
    "keyed_order",
    "lambda_monitor",
    "lm_from_meta",
    "loop_lm",
    "null_fpr",
    "prefix_log10p",
    "repeated_ngram_mask",
    "repetition_rate",
    "sample_prompts",
    "score",
    "score_redgreen",
    "simulate",
    "tokens_to_detect",
    "traces",
]
