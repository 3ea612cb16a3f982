"""Mean green fraction of null texts under fixed keys (issue 30, the note under docs/results/tab_peeking_sweep.md):
``python bench/null_green_fraction.py`` -- 20000 texts x 200 tokens per LM (levels sampler, seed 123), gamma 0.25, dedup,
keys 15485863, 1, 99; the mean over texts of green / scored, and the sd of the green count beside the binomial's."""
import numpy as np

import sims
from sims.detect.stats import scores
from sims.watermarks.null_sampler import generate_null

for name in ("loopy", "news"):
    lm = sims.get_lm(name).synthetic
    g = generate_null(lm, n=20000, T=200, seed=123, key=15485863, gamma=0.25)
    for key in (15485863, 1, 99):
        v, sc = scores.token_scores(g.tokens, g.prompts[:, -1:], key, gamma=0.25, vocab_size=lm.vocab_size, dedup=True)
        green, n = (v * sc).sum(1), sc.sum(1)
        se = (green / n).std() / np.sqrt(green.size)
        print(f"{name} key {key}: mean green fraction {(green / n).mean():.5f} (se {se:.5f}), sd of the count {green.std():.3f} "
              f"(binomial {np.sqrt((n * 0.25 * 0.75).mean()):.3f})")
