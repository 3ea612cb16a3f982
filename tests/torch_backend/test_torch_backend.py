"""Torch backend: bit-identical PRF, exact records, DualGA on device, interop with transformers,
bad input, and one real SmolLM2 generation + detection."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import sims  # noqa: E402
import theory  # noqa: E402
from sims.core import prf  # noqa: E402
from sims.core.lm_names import RANDOM_LMS  # noqa: E402
from sims.core.record import RECORDS  # noqa: E402
from sims.detect.families import detectors  # noqa: E402
from sims.detect.stats import scores as detect  # noqa: E402
from sims.lm.real.model import load  # noqa: E402
from sims.torch_backend import prf_crypto_torch, prf_torch  # noqa: E402
from sims.torch_backend.generate_torch import generate_with_processor  # noqa: E402
from sims.torch_backend.processors import PROCESSOR_ALGOS, SRLProcessor, TransformersSRLProcessor, make_processor, soft_records  # noqa: E402
from sims.torch_backend.static_decode import generate_static  # noqa: E402

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("h", [1, 3])
@pytest.mark.parametrize("stream", [prf.GREEN, prf.EMS])
def test_prf_is_bit_identical_to_numpy(device, h, stream):
    rng = np.random.default_rng(h)
    key = int(rng.integers(0, 2**63)) * 2 + 1
    ctx = rng.integers(0, 128000, size=(64, h))
    toks = rng.integers(0, 128000, size=500)
    ref_ctx = prf.context_hash(key, ctx, stream)
    c = prf_torch.context_hash(key, torch.tensor(ctx, device=device), stream)
    assert np.array_equal(c.cpu().numpy().view(np.uint64), ref_ctx)
    ref = prf.is_green(ref_ctx[:, None], toks[None, :], 0.25)
    got = prf_torch.green_mask(c, 128000, 0.25, vocab_tokens=torch.tensor(toks, device=device))
    assert np.array_equal(got.cpu().numpy(), ref)


def test_soft_records_match_theory():
    d = torch.tensor([0.0, 1e-6, 0.5, 2.0, 15.0, 50.0], dtype=torch.float64)
    for G in (1e-9, 0.1, 0.5, 0.97):
        kl, dg = soft_records(d, torch.full_like(d, G))
        assert np.allclose(kl.numpy(), theory.kl_step(d.numpy(), G), rtol=1e-12, atol=1e-300)
        assert np.allclose(dg.numpy(), theory.dg_step(d.numpy(), G), rtol=1e-12, atol=1e-300)


def test_records_equal_a_recomputation_from_the_model_logits():
    """DualGA on a left-padded batch of mixed prompt lengths: every record (G, entropy, KL, DG,
    lambda) of every row equals an independent recomputation from transformers' own
    teacher-forced logits of that row alone (NumPy PRF, theory's closed forms, the DualGA
    recursion), to float32-logit accuracy."""
    model, _ = load("random-llama")
    prompts = [[5, 9, 1, 3, 7, 2], [11, 2], [8, 8, 4]]
    g = generate_with_processor(model, prompts, 30, make_processor("dualga", vocab_size=512, key=3), seed=0)
    gamma, lam = g.meta["gamma"], g.meta["lam1"]
    assert np.array_equal(g.prompt_lens, [6, 2, 3]) and np.all(g.prompts[1, :4] == -1)
    for i, p in enumerate(prompts):
        seq = np.array(p + g.tokens[i].tolist())
        with torch.no_grad():
            logits = model(torch.tensor(seq[None])).logits[0, len(p) - 1 : -1].double()
        probs = torch.softmax(logits, -1).numpy()
        green = prf.green_mask(prf.context_hash(3, seq[len(p) - 1 : -1, None]), 512, gamma)
        G = (probs * green).sum(1)
        lam_rec = np.empty(30)
        for t in range(30):
            lam_rec[t] = lam
            lam = float(np.clip(lam + 0.5 * (0.3 - theory.dg_step(lam, G[t])), 0, 15))
        lam = g.meta["lam1"]
        np.testing.assert_allclose(g.G[i], G, rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(g.entropy[i], -(probs * np.log(probs)).sum(1), rtol=1e-5)
        np.testing.assert_allclose(g.lam[i], lam_rec, rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(g.dg[i], theory.dg_step(lam_rec, G), rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(g.kl[i], theory.kl_step(lam_rec, G), rtol=1e-5, atol=1e-9)


@pytest.mark.parametrize("lm", RANDOM_LMS)
def test_padded_batch_equals_each_row_alone(lm):
    """Any family: a row of a left-padded batch draws the same tokens and records as the row
    alone (its own sampling stream (seed, row)), on the loop engine; the static engine too (Llama family)."""
    model, _ = load(lm)
    prompts = [[5, 9, 1, 3, 7, 2], [11, 2], [8, 8, 4]]
    engines = [lambda ps, rows: generate_with_processor(model, ps, 12, make_processor("dualga", vocab_size=512, key=3), seed=4, rows=rows)]
    if lm in ("random-llama", "random-qwen2", "random-mistral"):
        engines.append(lambda ps, rows: generate_static(model, ps, 12, algo="dualga", key=3, seed=4, rows=rows))
    for run in engines:
        g = run(prompts, None)
        for i in range(3):
            one = run([prompts[i]], [i])
            assert np.array_equal(one.tokens[0], g.tokens[i])
            for k in RECORDS:
                np.testing.assert_allclose(getattr(one, k)[0], getattr(g, k)[i], rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("algo", PROCESSOR_ALGOS)
def test_loop_and_static_engines_draw_the_same_tokens(algo):
    model, _ = load("random-llama")
    prompts = [[5, 9, 1, 3, 7, 2], [11, 2], [8, 8, 4]]
    a = generate_with_processor(model, prompts, 10, make_processor(algo, vocab_size=512, key=3), seed=2)
    b = generate_static(model, prompts, 10, algo=algo, key=3, seed=2)
    assert np.array_equal(a.tokens, b.tokens)
    for k in RECORDS:
        np.testing.assert_allclose(getattr(a, k), getattr(b, k), rtol=1e-5, atol=1e-7)
    assert a.meta["algo"] == b.meta["algo"] == algo


def test_half_precision_models_keep_float64_records():
    model, _ = load("random-llama", dtype=torch.bfloat16)
    g = generate_with_processor(model, [[1, 2, 3], [4, 5]], 6, make_processor("dualga", vocab_size=512, key=1), seed=0)
    assert all(getattr(g, k).dtype == np.float64 and np.isfinite(getattr(g, k)).all() for k in RECORDS)


def test_srl_green_lists_detected_by_sims_detect():
    model, _ = load("random-llama")
    prompts = torch.randint(0, 512, (3, 4), generator=torch.Generator().manual_seed(1))
    g = generate_with_processor(model, prompts, 120, SRLProcessor(key=9, gamma=0.25, vocab_size=512, delta=4.0), seed=2)
    assert np.all(detectors.score(g).log10_p < -4)
    assert np.all(detectors.score(g, key=10).log10_p > -4)


def test_siphash_processor_greens_equal_numba_and_are_detected():
    """SipHash-keyed SRL on random-llama (3 texts of 40 tokens): the torch green lists of every step's
    window (all 512 tokens) are the NumPy reference's, the detector's Numba kernel finds the same
    colours, and the texts are detected (p < 1e-4) with the key, not with another or with SplitMix64."""
    from sims.core import prf_crypto, windows

    key = bytes(range(16))
    model, _ = load("random-llama")
    prompts = torch.randint(0, 512, (3, 4), generator=torch.Generator().manual_seed(1))
    proc = SRLProcessor(key=key, gamma=0.25, vocab_size=512, delta=4.0, prf="siphash")
    g = generate_with_processor(model, prompts, 40, proc, seed=2)
    assert g.meta["prf"] == "siphash" and g.meta["key"] == int.from_bytes(key, "little")
    win = windows.windows(g.tokens, g.prompts, 1)
    ref = prf_crypto.is_green(prf_crypto.context_state(key, win), g.tokens, 0.25)
    numba, _ = detect.token_scores(g.tokens, g.prompts, key, gamma=0.25, prf="siphash")
    assert np.array_equal(numba > 0.5, ref)
    st = prf_crypto_torch.context_state(key, torch.as_tensor(win.reshape(-1, 1)))
    masks = prf_crypto_torch.green_mask(st, 512, 0.25).numpy()
    assert np.array_equal(masks, prf_crypto.is_green(prf_crypto.context_state(key, win.reshape(-1, 1))[:, None, :], np.arange(512), 0.25))
    assert np.all(detectors.score(g).log10_p < -4)
    assert np.all(detectors.score(g, key=int.from_bytes(key, "little") ^ 1).log10_p > -4)
    assert np.all(detect.score_redgreen(g.tokens, g.prompts, int.from_bytes(key[:8], "little"), 0.25).log10_p > -4)


SIPHASH_PARAMS = dict(none={}, hard={}, srl=dict(delta=4.0), atw=dict(delta=4.0, alpha=0.5), dualga=dict(Delta=0.6),
                      autocov=dict(Delta=0.6))


@pytest.mark.parametrize("algo, engine", [(a, "loop") for a in SIPHASH_PARAMS] + [("srl", "static")])
def test_siphash_on_every_redgreen_processor_round_trips_through_real_lm(algo, engine):
    """``prf="siphash"`` through :func:`real_lm.generate_texts` on random-llama (4 texts of 48 tokens,
    seed 3): every step's torch green list (all 512 tokens) and AutoCov's previous-token colour are
    the NumPy reference's; ``meta`` keeps prf and the 128-bit key; :func:`sims.score` detects every
    watermarked text (p <= 1e-4) with that key and none with another key or with SplitMix64 (the
    key's low word). Deterministic: a failure is a bug, not chance (each wrong-key p is that of
    48 independent colours green with probability gamma)."""
    from sims.core import prf_crypto, windows
    from sims.torch_backend import real_lm

    key = bytes(range(7, 23))
    model, _ = load("random-llama")
    prompts = [np.arange(4) * 37 + 5 * i for i in range(4)]
    g = real_lm.generate_texts(model, prompts, 48, algo, seed=3, key=key, prf="siphash", engine=engine, show=False,
                               **SIPHASH_PARAMS[algo])
    k = int.from_bytes(key, "little")
    assert g.meta["prf"] == "siphash" and g.meta["key"] == k and g.meta["algo"] == algo
    win = windows.windows(g.tokens, g.prompts, 1).reshape(-1, 1)
    proc = make_processor(algo, vocab_size=512, key=key, prf="siphash", **SIPHASH_PARAMS[algo])
    assert proc.gamma == g.meta["gamma"]
    ref = prf_crypto.is_green(prf_crypto.context_state(key, win)[:, None, :], np.arange(512)[None, :], g.meta["gamma"])
    assert np.array_equal(proc.green_lists(torch.as_tensor(win)).numpy(), ref)
    assert np.array_equal(proc.is_green(torch.as_tensor(win), torch.as_tensor(g.tokens.ravel())).numpy(),
                          ref[np.arange(win.shape[0]), g.tokens.ravel()])
    if algo == "none":
        return
    assert np.all(detectors.score(g).log10_p <= -4)
    assert np.all(detectors.score(g, key=k ^ (1 << 100)).log10_p > -4)
    g.meta.pop("prf")  # the same texts read as SplitMix64 texts keyed by the key's low word
    assert np.all(detectors.score(g, key=k & (2**64 - 1)).log10_p > -4)


def test_siphash_rejected_by_schemes_it_does_not_key():
    with pytest.raises(ValueError, match="prf='siphash' keys the red-green schemes"):
        make_processor("ems", vocab_size=512, key=bytes(16), prf="siphash")
    with pytest.raises(ValueError, match="prf must be 'splitmix64' or 'siphash'"):
        make_processor("srl", vocab_size=512, key=1, prf="blake2b")


@pytest.mark.parametrize("dedup", [False, True])
def test_transformers_interop_green_counts_agree(dedup):
    from transformers import LlamaConfig, WatermarkDetector, WatermarkingConfig

    model, _ = load("random-llama")
    proc = TransformersSRLProcessor(vocab_size=512, gamma=0.25, delta=3.0)
    prompts = torch.randint(0, 512, (3, 4), generator=torch.Generator().manual_seed(3))
    g = generate_with_processor(model, prompts, 60, proc, seed=4)
    cfg = WatermarkingConfig(greenlist_ratio=0.25, bias=3.0, hashing_key=15485863, seeding_scheme="lefthash", context_width=1)
    det = WatermarkDetector(model_config=LlamaConfig(vocab_size=512), device="cpu", watermarking_config=cfg, ignore_repeated_ngrams=dedup)
    seq = torch.tensor(np.concatenate([g.prompts[:, -1:], g.tokens], axis=1))
    theirs = det(seq, return_dict=True)
    ours = proc.count_green(torch.tensor(g.prompts[:, -1]), torch.tensor(g.tokens), dedup=dedup)
    assert np.array_equal(np.asarray(theirs.num_green_tokens), ours.numpy())


def test_bad_input(tmp_path, monkeypatch):
    p = SRLProcessor(key=1, gamma=0.25, vocab_size=10, delta=2.0)
    with pytest.raises(ValueError, match="fewer than vocab_size=10"):
        p(torch.zeros((1, 2), dtype=torch.long), torch.zeros((1, 8)))
    padded = p(torch.zeros((1, 2), dtype=torch.long), torch.zeros((1, 12)))  # OPT-style padding: untouched
    assert torch.all(padded[:, 10:] == 0)
    masked = p(torch.zeros((1, 2), dtype=torch.long), torch.tensor([[-float("inf")] + [0.0] * 9]))
    assert masked[0, 0] == -float("inf")
    with pytest.raises(TypeError):
        SRLProcessor(1, 0.25, 10, 2.0)  # keyword-only
    model, _ = load("random-llama")
    with pytest.raises(ValueError, match="prompt of row 1 has 500 tokens: \\+ T=20 is 520, past the model's context window 512"):
        generate_with_processor(model, [[1, 2], [3] * 500], 20)
    with pytest.raises(ValueError, match="prompt of row 0 is empty"):
        generate_with_processor(model, [[], [1]], 4)
    with pytest.raises(ValueError, match="algo must be one of"):
        make_processor("kgw", vocab_size=10)
    with pytest.raises(ValueError, match="green_kind must be 'bernoulli'"):
        make_processor("srl", vocab_size=10, green_kind="partition")
    (tmp_path / "config.json").write_text('{"model_type": "vit"}')
    with pytest.raises(ValueError, match="does not hold a causal LM"):
        load(str(tmp_path))
    with pytest.raises(ValueError, match="lm must be 'smollm2'"):
        load(str(tmp_path / "nowhere"))
    # NaN logits: named by step and row (row 1 poisoned from step 2 on)
    forward = model.forward

    def poisoned(*a, **kw):
        out = forward(*a, **kw)
        if kw["attention_mask"].shape[1] >= 4:  # prompt 2 + step 2
            out.logits[1] = float("nan")
        return out

    monkeypatch.setattr(model, "forward", poisoned)
    with pytest.raises(ValueError, match="NaN at step 2 of row 1"):
        generate_with_processor(model, [[1, 2], [3, 4]], 5, make_processor("dualga", vocab_size=512))


def test_a_batch_that_does_not_fit_is_halved(monkeypatch, capsys):
    """OOM at batch 4 (simulated): the runner says which size fits and loses no row."""
    from sims.torch_backend import real_lm

    model, _ = load("random-llama")
    prompts = [[1, 2, 3], [4, 5], [6, 7, 8, 9], [1, 1], [2, 2, 2]]
    real = real_lm.generate_with_processor

    def small_memory(model, prompts, *a, **kw):
        if len(prompts) > 2:
            raise torch.OutOfMemoryError("simulated")
        return real(model, prompts, *a, **kw)

    ref = real_lm.generate_texts(model, prompts, 5, "dualga", batch=8)
    monkeypatch.setattr(real_lm, "generate_with_processor", small_memory)
    g = real_lm.generate_texts(model, prompts, 5, "dualga", batch=4)
    assert "batch 4 does not fit in memory; continuing with batch 2" in capsys.readouterr().err
    assert g.meta["batch"] == 2 and np.array_equal(g.tokens, ref.tokens)


@pytest.mark.parametrize("algo", ["dualga", "uw-delta"])
def test_rows_stop_at_their_first_end_token(algo):
    """With end tokens, a row is the fixed-length row cut after its first end token (same draws,
    same records), padded after; it is scored as that cut text; the static engine refuses."""
    from sims.torch_backend import real_lm

    model, _ = load("random-llama")
    prompts = [[1, 2, 3], [4, 5], [6, 7, 8, 9], [1, 1], [2, 2, 2], [3, 1]]
    stops = tuple(range(0, model.config.vocab_size, 9))  # about 1 id in 9 ends a row
    full = real_lm.generate_texts(model, prompts, 40, algo, seed=4, batch=4, show=False)
    cut = real_lm.generate_texts(model, prompts, 40, algo, seed=4, batch=4, show=False, stop_ids=stops)
    ends = np.isin(full.tokens, stops)
    L = np.where(ends.any(1), ends.argmax(1) + 1, 40)
    assert 1 < L.min() and L.max() < 40  # rows end at different steps, none runs to T
    assert np.array_equal(cut.lengths, L)
    for i in range(len(prompts)):
        assert np.array_equal(cut.text(i), full.tokens[i, : L[i]]) and np.all(cut.tokens[i, L[i]:] == -1)
        for k in RECORDS:
            np.testing.assert_array_equal(getattr(cut, k)[i, : L[i]], getattr(full, k)[i, : L[i]])
            assert np.all(np.isnan(getattr(cut, k)[i, L[i]:]))
    full.lengths = L
    lm = sims.get_lm("random-llama")  # the same seeded weights
    mine, ref = detectors.score(cut, lm), detectors.score(full, lm)
    np.testing.assert_array_equal(mine.n_scored, L)
    np.testing.assert_allclose(mine.log10_p, ref.log10_p, rtol=1e-12)
    with pytest.raises(ValueError, match="stop_ids needs engine='loop'"):
        real_lm.generate_texts(model, prompts, 4, algo, engine="static", stop_ids=stops)


@pytest.mark.slow  # SmolLM2 on 2 CPU cores: ~60 s for 2 x 200 tokens at batch 2
def test_smollm2_watermark_is_detected_within_200_tokens():
    """SmolLM2-135M-Instruct, DualGA at Delta = 0.3: detected at p < 1e-4 within 200 tokens;
    the same prompt without watermark is not (seeds 0, 1)."""
    from sims.lm.real.prompts import encode, lfqa_questions

    model, tok = load("smollm2")
    ids = encode(tok, lfqa_questions(1)[0], chat=True)
    V = len(tok)
    proc = make_processor("dualga", vocab_size=V, Delta=0.3)
    g = generate_with_processor(model, [ids], 200, proc, seed=0, vocab_size=V)
    g0 = generate_with_processor(model, [ids], 200, make_processor("none", vocab_size=V, gamma=proc.gamma), seed=1, vocab_size=V)
    lp = detect.redgreen_prefix_log10p(g.tokens, g.prompts, 15485863, proc.gamma, vocab_size=V)
    assert lp[0, -1] < -4
    assert detectors.score(g0, algo="dualga").log10_p[0] > -4


def test_nan_logits_are_reported_after_generation_not_per_step():
    for fused in (None, False):
        p = make_processor("dualga", vocab_size=10, key=1, fused=fused)
        x = torch.zeros((2, 10))
        p(torch.zeros((2, 2), dtype=torch.long), x)
        x[1, 3] = float("nan")
        p(torch.zeros((2, 2), dtype=torch.long), x)
        with pytest.raises(ValueError, match="NaN at step 1 of row 1"):
            p.stacked()


def test_detect_text_with_a_tokenizer():
    from sims.torch_backend.detect_text import detect_text

    class Tok:
        def __len__(self):
            return 100

        def __call__(self, text, add_special_tokens=False):
            return {"input_ids": [ord(c) % 100 for c in text]}

    res = detect_text(["hello world, hello watermark"], Tok(), key=3, gamma=0.25)
    assert res.n_scored[0] == len("hello world, hello watermark") - 1
    with pytest.raises(ValueError, match="more than h=1 tokens"):
        detect_text(["a"], Tok(), key=3, gamma=0.25)



def test_detect_text_scores_with_the_algorithms_own_family():
    """Texts watermarked with EXP, PF and DiPmark (news LM, V = 100, seed 0), given as characters to a character
    tokenizer: detect_text's log10 p equals the generation's own detector on the same tokens (EXP's position sum,
    not the context-hashed EMS sum nor the green count; DiPmark's partition lists), and an algorithm whose detector
    reads the model is refused."""
    from sims.torch_backend.detect_text import detect_text

    class Tok:
        def __len__(self):
            return 100

        def __call__(self, text, add_special_tokens=False):
            return {"input_ids": [ord(c) - 32 for c in text]}

    lm = sims.get_lm("news", vocab_size=100)
    for algo in ("exp", "pf", "dipmark"):
        gen = sims.generate(lm, algo, n=3, T=60, seed=0, key=5, h=1, prompt_len=2)
        texts = ["".join(chr(int(t) + 32) for t in np.concatenate([gen.prompts[i, -1:], gen.tokens[i]])) for i in range(3)]
        got = detect_text(texts, Tok(), key=5, gamma=gen.meta["gamma"], algo=algo, h=1)
        want = sims.score(gen).log10_p
        np.testing.assert_allclose(got.log10_p, want, rtol=1e-12)
        assert np.all(got.log10_p < -2), algo
    with pytest.raises(ValueError, match="algo 'its' is detected with the model's probabilities"):
        detect_text(texts, Tok(), key=5, gamma=0.25, algo="its")


@pytest.mark.slow  # a second SmolLM2 generation test: ~120 s idle, 300 s on a loaded 2-core CPU
def test_smollm2_paraphrase_attack_weakens_detection():
    """Watermark 150 tokens with DualGA (Delta = 0.4), ask SmolLM2 to paraphrase 50 % of the words,
    and score both with the key: the paraphrase's log10 p is higher (seeds 0, 1)."""
    from sims.lm.real.prompts import encode, lfqa_questions
    from sims.torch_backend.detect_text import detect_text
    from sims.torch_backend.paraphrase import paraphrase

    model, tok = load("smollm2")
    V = len(tok)
    proc = make_processor("dualga", vocab_size=V, Delta=0.4)
    g = generate_with_processor(model, [encode(tok, lfqa_questions(3)[2], chat=True)], 150, proc, seed=0, vocab_size=V)
    text = tok.decode(torch.as_tensor(g.tokens[0]), skip_special_tokens=True)
    att = paraphrase(model, tok, text, 0.5, seed=1)
    assert att["record"]["kind"] == "paraphrase-lm" and att["text"]
    before, after = detect_text([text, att["text"]], tok, 15485863, proc.gamma).log10_p
    assert before < -4 and after > before


@pytest.mark.parametrize("algo, T", [("its", 40), ("uw-gamma", 40), ("dualga", 150)])
def test_evaluate_on_a_random_llama_uses_the_matching_detector(algo, T):
    out = sims.evaluate("random-llama", algo, n=2, T=T, seed=0, batch=2)
    assert out["tpr_at_1e-4"] == 1.0 and out["empirical_fpr_at_1e-4"] == 0.0
    assert set(out) == set(sims.evaluate("tiny", algo, n=2, T=4, seed=0))  # one set of keys for both backends


def test_cli_generate_detect_attack_on_a_real_lm(tmp_path):
    """`python -m sims generate --lm random-gpt2 ... --out F` -> `detect F` and `attack F` read it."""

    from sims.cli.main import main
    from sims.core.record import Generation

    f, f2 = tmp_path / "g.npz", tmp_path / "a.npz"
    assert main(["generate", "--lm", "random-gpt2", "--algo", "srl", "--delta", "4", "--n", "3", "--T", "60", "--batch", "2",
                 "--out", str(f)]) == 0
    g = Generation.load(f)
    assert g.meta["lm"] == "random-gpt2" and g.meta["batch"] == 2 and np.isfinite(g.entropy).all()
    assert main(["attack", str(f), "--kind", "deletion", "--rate", "0.2", "--out", str(f2)]) == 0
    assert Generation.load(f2).lengths.max() == 48
    assert main(["attack", str(f), "--kind", "color", "--rate", "0.5", "--out", str(f2)]) == 0  # the model's probabilities
    assert detectors.score(Generation.load(f2)).score.sum() < 0.75 * detectors.score(g).score.sum()  # half the tokens: greens made red
    assert main(["detect", str(f), "--key", "15485863", "--json"]) == 0
    assert main(["generate", "--lm", "no-such-lm", "--out", str(f)]) == 2
    assert main(["generate", "--lm", "random-gpt2", "--n", "8", "--T", "120", "--stop-at-eos", "--out", str(f)]) == 0
    g = Generation.load(f)  # random-gpt2's end token is id 0: a row holds it only as its last token
    assert all(0 not in g.text(i)[:-1] and (g.lengths[i] == 120 or g.text(i)[-1] == 0) for i in range(g.n))
    assert main(["generate", "--lm", "news", "--stop-at-eos", "--out", str(f)]) == 2


def test_model_oracle_answers_as_a_fresh_forward_pass():
    """ModelOracle.next_probs (a cache cut back to the shared prefix) equals a fresh forward pass on
    the context, through the access pattern of the attacks (extensions, an earlier token replaced,
    a shorter context, padding); probs_along (one pass per text) scores UW texts as the batched,
    left-padded teacher-forced path of sims.get_lm's LM does; the LM-dependent attacks run on it."""
    from sims.experiments.attacks import attack
    from sims.lm.real.oracle import ModelOracle
    from sims.torch_backend import real_lm

    model, _ = load("random-llama")
    V = model.config.vocab_size
    oracle = ModelOracle(model, V)
    seq = np.random.default_rng(0).integers(0, V, 40)

    def fresh(ctx):
        with torch.no_grad():
            return torch.softmax(model(input_ids=torch.tensor(ctx)[None]).logits[0, -1, :V].double(), -1).numpy()

    for ctx in (seq[:5], seq[:9], seq[:10], np.r_[seq[:7], 3, seq[8:20]], seq[:3], np.r_[-1, -1, seq[:30]], seq[:30]):
        np.testing.assert_allclose(oracle.next_probs(ctx), fresh(ctx[ctx >= 0]), atol=1e-7)
    gen = real_lm.generate_texts(model, [[1, 2, 3], [4, 5], [6, 7, 8, 9]], 30, "uw-delta", seed=2, batch=3, show=False)
    mine, ref = detectors.score(gen, oracle), detectors.score(gen, sims.get_lm("random-llama"))
    np.testing.assert_array_equal(mine.score, ref.score)
    np.testing.assert_allclose(mine.log10_p, ref.log10_p, rtol=1e-6)
    for kind in ("entropy", "paraphrase", "color"):
        att = attack(gen, kind, 0.3, seed=1, lm=oracle)
        assert att.meta["attacks"][-1]["n_changed"] > 0 and att.tokens.min() >= 0 and att.tokens.max() < V
    with pytest.raises(ValueError, match="context must hold at least one token"):
        oracle.next_probs([-1, -1])
