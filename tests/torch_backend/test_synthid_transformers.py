"""transformers' SynthID-Text: our g-values and repeated-context mask equal its processor's token by
token, our processor reproduces its generations under the same draws, and its texts are scored with
exact tails (valid on unwatermarked text, decisive on watermarked text)."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from transformers import LogitsProcessorList, SynthIDTextWatermarkingConfig  # noqa: E402
from transformers.generation.logits_process import SynthIDTextWatermarkLogitsProcessor  # noqa: E402

from sims.lm.real.model import load  # noqa: E402
from sims.torch_backend import synthid_transformers as st  # noqa: E402

KEYS = [654, 400, 836, 123, 340, 443, 597, 160, 57]


def _theirs(ngram_len=5, history=1024, seed=0, size=2**16):
    return SynthIDTextWatermarkLogitsProcessor(ngram_len=ngram_len, keys=KEYS, sampling_table_size=size, sampling_table_seed=seed,
                                               context_history_size=history, device="cpu")


@pytest.mark.parametrize(("ngram_len", "history", "seed", "size"), [(5, 1024, 0, 2**16), (3, 4, 11, 1000)])
def test_g_values_and_mask_equal_transformers_token_by_token(ngram_len, history, seed, size):
    """ids over a 3-token alphabet (contexts repeat) plus large ids (int64 wrap-around), a table size
    that is not a power of two: every g-value and mask entry equals compute_g_values /
    compute_context_repetition_mask."""
    rng = np.random.default_rng(0)
    ids = rng.integers(0, 3, size=(4, 60))
    ids[0, :4] = [2**40, 3, 70000, 2**62]
    theirs = _theirs(ngram_len, history, seed, size)
    g = st.g_values(ids, KEYS, ngram_len, st.sampling_table(seed, size))
    assert np.array_equal(g, theirs.compute_g_values(torch.as_tensor(ids)).numpy())
    mask = st.repetition_mask(ids, ngram_len, history=history)
    assert np.array_equal(mask, theirs.compute_context_repetition_mask(torch.as_tensor(ids)).numpy().astype(bool))
    assert 0 < mask.sum() < mask.size  # both kinds occur


def test_processor_output_is_bit_identical_over_steps():
    """Ten decoding steps of random float32 scores (batch 3, V = 700): our processor's output equals
    transformers' exactly, repeated contexts included (ids over 2 symbols)."""
    torch.manual_seed(0)
    theirs = _theirs()
    ours = st.TransformersSynthIDProcessor(vocab_size=700, keys=KEYS)
    ids = torch.randint(0, 2, (3, 6))
    for _ in range(10):
        scores = torch.randn(3, 700) * 2
        a, b = theirs(ids, scores.clone()), ours(ids, scores.clone())
        assert torch.equal(a, b)
        ids = torch.cat([ids, torch.randint(0, 2, (3, 1))], dim=1)
    rec = ours.stacked()
    assert rec["kl"].shape == (3, 10) and bool((rec["kl"] >= 0).all())


def test_generate_reproduces_transformers_tokens_and_is_detected():
    """A random Llama: model.generate with SynthIDTextWatermarkingConfig and with our processor, same
    torch seed -> identical tokens (2 x 24); the generated part scored with zero_context has p < 1e-4,
    with other keys p > 1e-3."""
    model, _ = load("random-llama")
    cfg = SynthIDTextWatermarkingConfig(keys=KEYS, ngram_len=5)
    prompt = torch.tensor([[1, 2, 3, 4, 5, 6], [9, 8, 7, 6, 5, 4]])
    kw = dict(do_sample=True, max_new_tokens=24, top_k=0, pad_token_id=0)
    torch.manual_seed(7)
    theirs = model.generate(prompt, watermarking_config=cfg, **kw)
    torch.manual_seed(7)
    ours = model.generate(prompt, logits_processor=LogitsProcessorList([st.transformers_processor_equivalent(512, cfg)]), **kw)
    assert torch.equal(theirs, ours)
    gen = theirs[:, 6:].numpy()
    assert np.all(st.score_ids(gen, KEYS, 5, zero_context=True).log10_p < -4)
    assert np.all(st.score_ids(gen, [k + 1 for k in KEYS], 5, zero_context=True).log10_p > -3)


def test_null_false_positive_rate_on_random_text():
    """Monte Carlo (seed 1): 2000 texts of 80 uniform ids in [0, 50000), 9 keys: the mean score's
    rejections at 1e-2 stay within the upper 99.9 % Clopper-Pearson bound of a 1e-2 rate (the
    16-bit-table coincidences of the module docstring do not break it at this length)."""
    from scipy import stats

    rng = np.random.default_rng(1)
    ids = rng.integers(0, 50000, size=(2000, 80))
    p = 10.0 ** st.score_ids(ids, KEYS, 5).log10_p
    assert np.mean(p <= 1e-2) <= stats.binomtest(20, 2000).proportion_ci(0.999, method="exact")[1]
    assert np.median(p) > 0.3


def test_bad_input():
    with pytest.raises(ValueError, match="keys"):
        st.g_values(np.zeros((1, 8), dtype=np.int64), [], 5, st.sampling_table())
    with pytest.raises(ValueError, match="ngram_len"):
        st.g_values(np.zeros((1, 8), dtype=np.int64), KEYS, 1, st.sampling_table())
    with pytest.raises(ValueError, match="size"):
        st.sampling_table(0, 2**25)
    with pytest.raises(ValueError, match="key must"):
        st.parse_keys("1,x")
    assert st.parse_keys("654, 400") == [654, 400]


def synthid_text_folder(tmp_path, new_tokens: int):
    """A text transformers' generate watermarked with SynthID (KEYS, ngram_len 5; tiny random Llama, seed 0)
    in ``tmp_path/t.txt``, and the model with a word-level tokenizer ("w0" .. "w511") in ``tmp_path/lm``;
    returns the token ids (prompt and text, shape (1, 6 + new_tokens))."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    model, _ = load("random-llama")
    tk = Tokenizer(models.WordLevel({f"w{i}": i for i in range(512)}, unk_token="w0"))
    tk.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    model.save_pretrained(tmp_path / "lm")
    tok = PreTrainedTokenizerFast(tokenizer_object=tk)
    tok.save_pretrained(tmp_path / "lm")
    torch.manual_seed(0)
    out = model.generate(torch.tensor([[5, 17, 300, 41, 9, 250]]), watermarking_config=SynthIDTextWatermarkingConfig(keys=KEYS, ngram_len=5),
                         do_sample=True, max_new_tokens=new_tokens, top_k=0, pad_token_id=0)
    (tmp_path / "t.txt").write_text(tok.decode(out[0]))
    return out.numpy()


def test_cli_scores_transformers_synthid_text(tmp_path, capsys):
    """``python -m sims detect --text --scheme transformers-synthid``: a text transformers' generate
    watermarked (tiny Llama + word-level tokenizer, 40 new tokens) is flagged at FPR 1e-4 with the
    score_ids numbers; with other keys it is not; the table output prints; --html is refused."""
    import json

    from sims.cli.main import main

    ids = synthid_text_folder(tmp_path, 40)
    keys = ",".join(map(str, KEYS))

    def run(*extra):
        rc = main(["detect", "--text", str(tmp_path / "t.txt"), "--lm", str(tmp_path / "lm"), "--scheme", "transformers-synthid", *extra])
        o, e = capsys.readouterr()
        return rc, o, e

    rc, o, _ = run("--key", keys, "--json")
    doc = json.loads(o)
    ref = st.score_ids(ids, KEYS, 5)
    assert rc == 0 and doc["texts"][0]["watermarked"] and doc["texts"][0]["log10_p"] == pytest.approx(float(ref.log10_p[0]))
    assert doc["texts"][0]["n_scored"] == int(ref.n_scored[0]) and doc["ngram_len"] == 5
    rc, o, _ = run("--key", ",".join(str(k + 1) for k in KEYS), "--json")
    assert not json.loads(o)["texts"][0]["watermarked"]
    rc, o, _ = run("--key", keys)
    assert rc == 0 and "transformers-synthid" in o
    rc, _, e = run("--key", keys, "--html", str(tmp_path / "x.html"))
    assert rc == 2 and "--html" in e
    rc, _, e = run("--key", "1,x")
    assert rc == 2 and "key must" in e
