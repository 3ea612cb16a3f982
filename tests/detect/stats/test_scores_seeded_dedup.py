"""sims.detect.stats.scores' NumPy reference under a seeding scheme with dedup (the survivor of make
mutate's sampled run on this module): a (seed, token) pair repeated is scored once."""

import numpy as np

from sims.detect.stats import scores


def test_reference_dedup_counts_each_seed_token_pair_once_under_minhash():
    """min-hash at h = 2 gives windows (7, 3) and (3, 7) one seed: the second 9 after them is not scored
    with dedup; left-hash keeps both (the windows differ)."""
    tokens = np.array([[7, 3, 9, 3, 7, 9]])
    prompts = np.array([[1, 2]])
    kw = dict(gamma=0.5, h=2, vocab_size=20)
    for fn in (scores.token_scores_reference, scores.token_scores):
        _, sc = fn(tokens, prompts, 5, dedup=True, seeding="minhash", **kw)
        assert sc[0].tolist() == [True, True, True, True, True, False], fn
        _, sc = fn(tokens, prompts, 5, dedup=False, seeding="minhash", **kw)
        assert sc[0].all()
        _, sc = fn(tokens, prompts, 5, dedup=True, seeding="lefthash", **kw)
        assert sc[0].all()
