"""One door per LM (issue 28), the real kinds: a random test model, a local folder and SmolLM2 (when
its converted copy is cached) opened by :func:`sims.get_lm` behave as the synthetic ones do."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import sims  # noqa: E402
from sims.lm.real.model import cache_dir, load  # noqa: E402
from sims.torch_backend.real_lm import generate_texts  # noqa: E402


def _check_probs(lm, gen):
    """next_probs / probs_along / step_probs: distributions over the sampled vocabulary that agree
    (a forward pass per call vs the batched teacher-forced one: float32 logits, 1e-5)."""
    seq = np.concatenate([gen.prompt(0), gen.tokens[0]])
    P = len(gen.prompt(0))
    along = lm.probs_along(seq, P, gen.tokens.shape[1])
    assert along.shape == (gen.tokens.shape[1], lm.vocab_size)
    np.testing.assert_allclose(along.sum(1), 1.0, rtol=1e-9)
    np.testing.assert_allclose(along[2], lm.next_probs(seq[: P + 2]), atol=1e-6)
    np.testing.assert_allclose(lm.step_probs(gen)(0), along, atol=1e-5)


def test_get_lm_on_a_random_test_model():
    """random-llama: one object (kind, real, vocabulary, no tokenizer); opened twice it is the same
    object (weights loaded once); generate equals the torch engine on the same prompts and seed;
    sims.score with it detects UW (its teacher-forced probabilities); ids round-trip as text."""
    lm = sims.get_lm("random-llama")
    assert (lm.kind, lm.real, lm.name, lm.vocab_size, lm.tokenizer) == ("random", True, "random-llama", 512, None)
    assert sims.get_lm("random-llama") is lm
    gen = sims.generate(lm, "uw-delta", n=3, T=10, seed=4, key=7)
    ref = generate_texts(load("random-llama")[0], lm.prompt_ids("lfqa", 3, seed=4), 10, "uw-delta", seed=4, key=7, vocab_size=512,
                         lm="random-llama", show=False)
    assert np.array_equal(gen.tokens, ref.tokens) and np.array_equal(gen.kl, ref.kl) and gen.meta["lm"] == "random-llama"
    assert np.all(sims.score(gen, lm).log10_p < sims.score(gen, lm, key=8).log10_p)
    _check_probs(lm, gen)
    assert lm.decode(lm.encode("5 0 511")) == "5 0 511"
    with pytest.raises(ValueError, match="vocab_size applies to synthetic LMs"):
        sims.get_lm("random-llama", vocab_size=64)
    with pytest.raises(ValueError, match="prompt_len applies to synthetic LMs"):
        sims.generate(lm, "srl", n=1, T=2, prompt_len=4)


def test_get_lm_on_a_local_folder_and_evaluate_on_it(tmp_path):
    """A transformers folder (random-llama saved with a word-level tokenizer, words w0..w511): kind
    folder, its tokenizer encodes and decodes, and sims.evaluate takes the opened LM."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    model, _ = load("random-llama")
    tk = Tokenizer(models.WordLevel({f"w{i}": i for i in range(512)}, unk_token="w0"))
    tk.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    model.save_pretrained(tmp_path)
    PreTrainedTokenizerFast(tokenizer_object=tk).save_pretrained(tmp_path)
    lm = sims.get_lm(str(tmp_path))
    assert lm.kind == "folder" and lm.real and lm.tokenizer is not None
    assert list(lm.encode("w3 w17 w5")) == [3, 17, 5] and lm.decode([3, 17, 5]) == "w3 w17 w5"
    gen = sims.generate(lm, "srl", n=2, T=8, seed=1, key=3, prompts=[[1, 2, 3], [4, 5]], delta=3.0)
    assert gen.tokens.shape == (2, 8) and gen.meta["lm"] == str(tmp_path) and gen.meta["vocab_size"] == lm.vocab_size
    out = sims.evaluate(lm, "its", n=2, T=12, seed=0, prompts=[[1, 2, 3], [4, 5]])
    assert out["lm"] == str(tmp_path) and out["n"] == 2 and set(out) == set(sims.evaluate("tiny", "its", n=2, T=4, seed=0))


@pytest.mark.slow  # SmolLM2 on a CPU: ~10 s to load, 2 texts of 6 tokens
@pytest.mark.skipif(not (cache_dir() / "smollm2-135m-instruct" / "config.json").exists(), reason="SmolLM2's converted copy is not cached")
def test_get_lm_on_smollm2():
    lm = sims.get_lm("smollm2")
    assert lm.kind == "smollm2" and lm.real and lm.vocab_size == len(lm.tokenizer)
    ids = lm.encode("The cat sat on the mat.")
    assert lm.decode(ids) == "The cat sat on the mat."
    gen = sims.generate(lm, "dualga", n=2, T=6, seed=0, key=1)
    assert gen.tokens.shape == (2, 6) and gen.meta["lm"] == "smollm2"
    _check_probs(lm, gen)
