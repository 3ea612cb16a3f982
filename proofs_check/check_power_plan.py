r"""The power planner (:mod:`sims.experiments.plan`, :mod:`theory.power`) against simulation.

For each of 29 settings (algorithm and its parameter, LM preset ``news`` or the fitted
``smollm2-fit``, level 1e-4 or 1e-6, unattacked or a 10 / 30 % substitution attack, and the
detection score: the green count or the likelihood-ratio score ``lr``; ``ems-ars``, ``ems-log``,
``ems-opt``, ``ems-hc`` or ``ems-trgof`` for EMS), the planner
picks the text length T at which it predicts a power of at least 0.5 (so that the check is
informative), then ``N`` texts of T tokens are generated with another key and seed than the
planner's LM sample (:func:`sims.watermarks.generate.generate`), attacked
(:func:`sims.experiments.attacks.attack`) and detected with the exact test of the score; the
claim is that the planner's power lies in the simulated TPR's Clopper-Pearson interval at level
0.999, widened by ``MODEL_TOL`` (the planner's own sampling error from its 64-text LM sample
and its independence approximations: the attacked positions, DualGA's step transient).
``--quick``: the settings ``QUICK`` (one per kind), N = 100; full: all 29, N = 600.
"""

from __future__ import annotations

import numpy as np

from proofs_check._check import Check
from sims.detect import gumbel_scores as gs
from sims.detect.lr_scores import lr_delta
from sims.detect.score_families import score_generation
from sims.detect.scores import score
from sims.experiments.attacks import attack
from sims.experiments.evaluate import clopper_pearson
from sims.experiments.plan import plan, power_function
from sims.lm.synthetic import get_lm
from sims.watermarks.generate import generate

RESULT = "power planner"
LEVEL = 0.999
MODEL_TOL = 0.04  # absolute allowance for the planner's approximations (see module docstring)
SIM_KEY, SIM_SEED = 99991, 4242

SETTINGS = [  # (algo, params, lm, fpr, score, attack)
    ("srl", dict(delta=1.0), "news", 1e-4, None, None),
    ("srl", dict(delta=1.0), "smollm2-fit", 1e-4, None, None),
    ("srl", dict(delta=2.0), "news", 1e-6, None, None),
    ("srl", dict(delta=2.0), "smollm2-fit", 1e-6, None, None),
    ("dualga", dict(Delta=0.1), "news", 1e-4, None, None),
    ("dualga", dict(Delta=0.1), "smollm2-fit", 1e-4, None, None),
    ("dualga", dict(Delta=0.2), "news", 1e-6, None, None),
    ("dualga", dict(Delta=0.2), "smollm2-fit", 1e-6, None, None),
    ("dualga", dict(Delta=0.3), "news", 1e-6, None, None),
    ("dualga", dict(Delta=0.3), "smollm2-fit", 1e-6, None, None),
    ("hard", {}, "news", 1e-6, None, None),
    ("srl", dict(delta=2.0), "news", 1e-6, None, "substitution:0.3"),
    ("dualga", dict(Delta=0.2), "smollm2-fit", 1e-6, None, "substitution:0.1"),
    ("dualga", dict(Delta=0.3), "news", 1e-6, None, "substitution:0.3"),
    ("ems", {}, "news", 1e-6, "ems-ars", None),
    ("ems", {}, "news", 1e-6, "ems-log", None),
    ("ems", {}, "news", 1e-6, "ems-opt", None),
    ("ems", {}, "smollm2-fit", 1e-6, "ems-ars", None),
    ("ems", {}, "smollm2-fit", 1e-6, "ems-opt", None),
    ("ems", {}, "smollm2-fit", 1e-4, "ems-log", None),
    ("ems", {}, "news", 1e-6, "ems-ars", "substitution:0.3"),
    ("ems", {}, "news", 1e-6, "ems-opt", "substitution:0.1"),
    ("srl", dict(delta=2.0), "news", 1e-6, "lr", None),
    ("dualga", dict(Delta=0.2), "news", 1e-6, "lr", None),
    ("dualga", dict(Delta=0.2), "smollm2-fit", 1e-4, "lr", None),
    ("dualga", dict(Delta=0.3), "news", 1e-6, "lr", "substitution:0.1"),
    ("ems", {}, "news", 1e-6, "ems-trgof", None),
    ("ems", {}, "smollm2-fit", 1e-4, "ems-trgof", "substitution:0.1"),
    ("ems", {}, "news", 1e-2, "ems-hc", None),
]


QUICK = (2, 7, 12, 16, 18, 21, 23, 25, 26, 28)  # srl, dualga, attacked dualga, ems-opt on both LMs, attacked ems-opt; lr, attacked lr, Tr-GoF, HC


def simulated_tpr(algo, params, lm, fpr, score_name, att, T, n, seed):
    """Share of n watermarked texts of T tokens (attacked if asked) that the exact test flags at fpr."""
    model = get_lm(lm)
    gen = generate(model, algo, n=n, T=T, seed=seed, key=SIM_KEY, **params)
    if att is not None:
        gen = attack(gen, "substitution", float(att.split(":")[1]), seed + 1)
    if score_name == "lr":
        res = score_generation(gen, "lr", model, delta=lr_delta(gen.meta))
    elif algo == "ems":
        m = gen.meta
        res = gs.score_gumbel(gen.tokens, gen.prompts[:, -m["h"]:], SIM_KEY, score_name, vocab_size=m["vocab_size"], h=m["h"], lengths=gen.lengths)
    else:
        res = score(gen)
    return int(np.sum(res.log10_p <= np.log10(fpr)))


def run(quick: bool, rng):
    n = 100 if quick else 600
    for j, (algo, params, lm, fpr, score_name, att) in enumerate(SETTINGS):
        if quick and j not in QUICK:
            continue
        T = plan(algo, lm=lm, fpr=fpr, power=0.5, score=score_name, attack=att, **params)["tokens_needed"]
        predicted = power_function(algo, lm=lm, fpr=fpr, score=score_name, attack=att, **params)(T)
        k = simulated_tpr(algo, params, lm, fpr, score_name, att, T, n, SIM_SEED + 17 * j)
        lo, hi = clopper_pearson(k, n, LEVEL)
        ok = lo - MODEL_TOL <= predicted <= hi + MODEL_TOL
        label = f"{algo} {params or ''} {lm} fpr {fpr:g} {score_name or 'green'} {att or 'unattacked'} T={T}"
        yield Check(RESULT, f"power, {label}", predicted, f"in simulated TPR {k}/{n} CI [{lo:.3f}, {hi:.3f}]", f"CP {LEVEL} +- {MODEL_TOL}", ok,
                    f"planner at T = its tokens for power 0.5; {n} texts, key {SIM_KEY}, seed {SIM_SEED + 17 * j}, exact test of the score")
