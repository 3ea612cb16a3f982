"""Unwatermarked generation on the synthetic presets: the ``levels`` sampler (:mod:`sims.watermarks.null_sampler`,
O(log V) per token) vs the generator's ``none`` step (``sims.generate``, an O(V) green-mass pass per token for
its exact records), same prompts and seed, in one process, interleaved, best of 3 (issue 30).

Also printed: the share of texts the two draw identically (the same inverse-CDF draw in id order; they part
only where a uniform falls within rounding of a token boundary).
"""

from __future__ import annotations

import sys
import time

import numpy as np

import sims
from sims.watermarks import null_sampler as ns
from sims.watermarks.generate import generate_synthetic

REPEATS = 3
N, T = 300, 200


def main(argv=None) -> dict:
    argv = sys.argv[1:] if argv is None else argv
    n, T = (int(argv[0]), int(argv[1])) if len(argv) == 2 else (N, globals()["T"])
    res = {}
    for name in ("news", "lfqa", "loopy"):
        lm = sims.get_lm(name).synthetic
        pr = ns.sample_prompts(lm, n, 1)
        generate_synthetic(lm, "none", n=2, T=2, seed=0, key=1, prompts=pr[:2])  # compile
        ns.generate_null(lm, n=2, T=2, seed=0, key=1, prompts=pr[:2])
        best = {"blocks": np.inf, "levels": np.inf}
        for _ in range(REPEATS):
            t0 = time.perf_counter()
            a = generate_synthetic(lm, "none", n=n, T=T, seed=5, key=42, prompts=pr)
            best["blocks"] = min(best["blocks"], time.perf_counter() - t0)
            t0 = time.perf_counter()
            b = ns.generate_null(lm, n=n, T=T, seed=5, key=42, prompts=pr)
            best["levels"] = min(best["levels"], time.perf_counter() - t0)
        res[f"{name}_generator_none_tokens_per_s"] = n * T / best["blocks"]
        res[f"{name}_levels_tokens_per_s"] = n * T / best["levels"]
        res[f"{name}_ratio_levels_over_generator"] = best["blocks"] / best["levels"]
        res[f"{name}_identical_text_share"] = float((a.tokens == b.tokens).all(axis=1).mean())
    for k, v in res.items():
        print(f"{k:42s} {v:12.4g}")
    print(f"({n} texts x {T} tokens per LM; tokens/s are this process's on a shared machine: only the ratios compare)")
    return res


if __name__ == "__main__":
    main()
