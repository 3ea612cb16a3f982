"""Seeding schemes (:mod:`sims.core.seeding`): generation and detection speed of SRL and DualGA under each
scheme at h = 4, against left-hash at h = 4 and the default (left-hash, h = 1), on ``news`` (V = 32k).

Left-hash, min-hash and skip-gram keep the fused tabulated step (one seed per step); self-hash has a
green list per candidate (h + 2 mixing rounds per token id) and builds p_t over the vocabulary.
Detection: :func:`sims.detect.scores.score_redgreen` with dedup on 256 texts x 200 tokens.
"""

from __future__ import annotations

import time

import numpy as np

from sims.core.seeding import SEEDINGS
from sims.detect import scores
from sims.lm.synthetic import get_lm
from sims.watermarks.generate import generate

REPEATS = 3  # best of three: this machine's timings are noisy


def _best(f) -> float:
    f()
    t = np.inf
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        f()
        t = min(t, time.perf_counter() - t0)
    return t


def main(argv=None) -> dict:
    lm = get_lm("news")
    n, T, h = 64, 200, 4
    prompts = (np.arange(n)[:, None] * 7 + np.arange(4)[None, :]) % lm.vocab_size
    res = {}
    for algo in ("srl", "dualga"):
        res[f"{algo}_default_tokens_per_s"] = n * T / _best(lambda: generate(lm, algo, n=n, T=T, seed=1, key=1, prompts=prompts))
        for s in SEEDINGS:
            m = n if s != "selfhash" else 8  # self-hash runs the materialised step: fewer texts
            dt = _best(lambda: generate(lm, algo, n=m, T=T, seed=1, key=1, h=h, prompts=prompts[:m], seeding=s))
            res[f"{algo}_{s}_h4_tokens_per_s"] = m * T / dt
            res[f"{algo}_default_over_{s}_h4"] = res[f"{algo}_default_tokens_per_s"] / res[f"{algo}_{s}_h4_tokens_per_s"]
    gen = generate(lm, "srl", n=256, T=T, seed=2, key=1, h=h, prompts=np.tile(prompts, (4, 1)))
    for s in SEEDINGS:
        dt = _best(lambda: scores.score_redgreen(gen.tokens, gen.prompts, 1, 0.25, h=h, dedup=True, seeding=s))
        res[f"detect_{s}_h4_tokens_per_s"] = gen.tokens.size / dt
    for k, v in res.items():
        print(f"{k:40s} {v:12.4g}")
    return res


if __name__ == "__main__":
    main()
