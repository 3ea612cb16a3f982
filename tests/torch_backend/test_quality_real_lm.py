"""Perplexity's token log-probabilities on a real LM (the random Llama): the teacher-forced path of
``LM.token_logprobs`` equals the step-by-step cached oracle's ``next_probs``, and ``evaluate`` reports the
quality numbers on a real LM as on a synthetic one."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")

import sims  # noqa: E402

LOGP_TOL = 1e-5  # float32 logits: a batched teacher-forced pass against one cached step at a time


def test_real_token_logprobs_equal_the_stepwise_oracle():
    lm = sims.get_lm("random-llama")
    gen = sims.generate(lm, "srl", n=2, T=7, seed=0, key=3, prompts=[[1, 2, 3], [4, 5]], delta=2.0)
    lp = lm.token_logprobs(gen)
    assert lp.shape == (2, 7) and np.all(lp <= 0)
    for i in range(2):
        seq = np.concatenate([gen.prompt(i), gen.tokens[i]])
        P = gen.prompt(i).size
        want = [np.log(lm.next_probs(seq[: P + t])[seq[P + t]]) for t in range(7)]
        np.testing.assert_allclose(lp[i], want, rtol=0, atol=LOGP_TOL)
    out = sims.evaluate(lm, "srl", n=2, T=7, seed=0, prompts=[[1, 2, 3], [4, 5]], delta=2.0)
    assert out["perplexity"] >= 1.0 and "self_bleu_ci95" in out and "null_perplexity" in out
