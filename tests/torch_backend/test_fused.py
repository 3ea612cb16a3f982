"""Fused watermark step and the static-cache decoding loop.

The Triton kernels run here on the CPU through Triton's interpreter (TRITON_INTERPRET=1,
set before the kernels are first imported); on a CUDA machine they run compiled.  Each is
checked against the plain-PyTorch reference path, which is itself checked against the
unfused processors and transformers' own forward.
"""

import math
import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

from sims.lm.real.model import load  # noqa: E402
from sims.torch_backend.fused import FIELDS, FusedBoost, triton_usable  # noqa: E402
from sims.torch_backend.processors import DualGAProcessor, SRLProcessor  # noqa: E402
from sims.torch_backend.static_decode import StaticLlama, generate_static  # noqa: E402

DEV = "cuda" if torch.cuda.is_available() else "cpu"
needs_triton = pytest.mark.skipif(not triton_usable(DEV), reason="triton not installed")


def _logits(gen, B, V, extra=0):
    x = torch.randn(B, V + extra, generator=gen) * 3
    x[0, : V // 10] = -math.inf  # masked tokens
    x[-1, V // 2 :] = -math.inf
    return x.to(DEV)


@pytest.mark.parametrize("eta", [0.0, 0.5])
def test_torch_reference_equals_unfused_processor(eta):
    """FusedBoost('torch') = DualGAProcessor / SRLProcessor step by step (logits and records)."""
    gen = torch.Generator().manual_seed(1)
    V, B = 3000, 4
    proc = (DualGAProcessor(key=5, vocab_size=V, Delta=0.3, eta=eta, fused=False) if eta
            else SRLProcessor(key=5, gamma=0.25, vocab_size=V, delta=1.7, fused=False))
    lam1 = proc.lam1 if eta else 1.7
    boost = FusedBoost(5, proc.gamma, V, B, 6, "cpu", lam1=lam1, Delta=0.3, eta=eta, backend="torch")
    ids = torch.randint(0, V, (B, 3), generator=gen)
    for _ in range(6):
        x = _logits(gen, B, V, extra=5).cpu()
        a = proc(ids, x)
        b = boost(ids[:, -1:], x, torch.empty_like(x))
        assert torch.equal(a, b)
        ids = torch.cat([ids, torch.randint(0, V, (B, 1), generator=gen)], 1)
    ra, rb = proc.stacked(), boost.stacked()
    for k in FIELDS:
        np.testing.assert_allclose(rb[k].numpy(), ra[k].numpy(), rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("h", [1, 3])
@pytest.mark.parametrize("eta", [0.0, 0.5])
def test_numba_boost_equals_reference(h, eta):
    """The CPU kernel: boosted logits bit for bit (float32 out, padding untouched, -inf kept),
    records to float64 rounding, lambda updated alike, and the same sampled tokens."""
    gen = torch.Generator().manual_seed(3 + h)
    V, B, T = 3001, 4, 5
    kw = dict(lam1=1.3, Delta=0.3, eta=eta, h=h)
    a = FusedBoost(9, 0.3, V, B, T, "cpu", backend="torch", **kw)
    b = FusedBoost(9, 0.3, V, B, T, "cpu", backend="numba", **kw)
    ids = torch.randint(0, V, (B, h), generator=gen)
    for _ in range(T - 1):
        x = _logits(gen, B, V, extra=7).cpu()
        oa, ob = a(ids, x, torch.empty_like(x)), b(ids, x, torch.empty_like(x))
        assert torch.equal(oa, ob)
        ids = torch.randint(0, V, (B, h), generator=gen)
    wa, wb = ids.clone(), ids.clone()
    ta, tb = torch.zeros((B, T), dtype=torch.int64), torch.zeros((B, T), dtype=torch.int64)
    x = _logits(gen, B, V).cpu()
    a.sample(wa, x, ta)
    b.sample(wb, x, tb)
    assert torch.equal(ta, tb) and torch.equal(wa, wb)
    ra, rb = a.stacked(), b.stacked()
    for k in FIELDS:
        np.testing.assert_allclose(rb[k].numpy(), ra[k].numpy(), rtol=1e-13, atol=1e-15)


def test_processors_use_the_numba_kernel_on_cpu():
    """fused=None on a CPU routes SRL and DualGA through the Numba kernel: same logits and
    records as the tensor code (fused=False)."""
    gen = torch.Generator().manual_seed(8)
    V, B = 2000, 3
    for make in (lambda f: DualGAProcessor(key=4, vocab_size=V, Delta=0.3, fused=f),
                 lambda f: SRLProcessor(key=4, gamma=0.25, vocab_size=V, delta=2.0, fused=f)):
        fast, ref = make(None), make(False)
        ids = torch.randint(0, V, (B, 2), generator=gen)
        for _ in range(4):
            x = _logits(gen, B, V).cpu()
            assert torch.equal(fast(ids, x), ref(ids, x))
            ids = torch.cat([ids, torch.randint(0, V, (B, 1), generator=gen)], 1)
        assert fast._boost is not None and fast._boost.backend == "numba"
        rf, rr = fast.stacked(), ref.stacked()
        for k in FIELDS:
            np.testing.assert_allclose(rf[k].numpy(), rr[k].numpy(), rtol=1e-13, atol=1e-15)


@needs_triton
@pytest.mark.parametrize("h", [1, 3])
@pytest.mark.parametrize("V", [2048, 5000])
def test_triton_boost_equals_reference(h, V):
    """Boosted logits bit for bit, records to float64 rounding, padding columns untouched."""
    gen = torch.Generator().manual_seed(V + h)
    B, T = 3, 5
    kw = dict(h=h, lam1=1.3, Delta=0.3, eta=0.5)
    a = FusedBoost(11, 0.25, V, B, T, DEV, backend="torch", **kw)
    b = FusedBoost(11, 0.25, V, B, T, DEV, backend="triton", **kw)
    for _ in range(T):
        x, w = _logits(gen, B, V, extra=7), torch.randint(0, V, (B, h), generator=gen).to(DEV)
        oa, ob = a(w, x, torch.empty_like(x)), b(w, x, torch.empty_like(x))
        assert torch.equal(oa, ob)
        assert torch.equal(ob[:, V:], x[:, V:])
    ra, rb = a.stacked(), b.stacked()
    for k in ra:
        np.testing.assert_allclose(rb[k].cpu().numpy(), ra[k].cpu().numpy(), rtol=1e-13, atol=1e-15)


@needs_triton
@pytest.mark.parametrize("watermark", [True, False])
def test_triton_sampler_equals_reference(watermark):
    """Same uniforms, same inverse-CDF token ids, same shifted windows; tokens never masked."""
    gen = torch.Generator().manual_seed(3)
    B, V, T, h = 4, 5000, 6, 2
    kw = dict(h=h, lam1=2.0, Delta=0.3, eta=0.5, watermark=watermark, sample_keys=[77, 78, 2**64 - 1, 0])
    a = FusedBoost(7, 0.25, V, B, T, DEV, backend="torch", **kw)
    b = FusedBoost(7, 0.25, V, B, T, DEV, backend="triton", **kw)
    wa = torch.randint(0, V, (B, h), generator=gen).to(DEV)
    wb = wa.clone()
    ta, tb = (torch.zeros(B, T, dtype=torch.long, device=DEV) for _ in range(2))
    for _ in range(T):
        x = _logits(gen, B, V)
        a.sample(wa, x, ta)
        b.sample(wb, x, tb)
        assert torch.isfinite(x.gather(1, tb[:, int(b.t) - 1 : int(b.t)])).all()
    assert torch.equal(ta, tb) and torch.equal(wa, wb) and torch.equal(wb, tb[:, -h:])
    ra, rb = a.stacked(), b.stacked()
    assert set(ra) == set(rb) == (set(FIELDS) if watermark else set())
    for k in ra:
        np.testing.assert_allclose(rb[k].cpu().numpy(), ra[k].cpu().numpy(), rtol=1e-13, atol=1e-15)


def test_sampler_draws_from_the_boosted_distribution():
    """Monte Carlo, seed 0: 2000 draws (500 steps x 4 rows) from a fixed 6-token distribution with
    its green list boosted; every token's count within 4.5 binomial sd of its exact q-probability
    (all 6 together at > 99.99 % confidence).  The reference sampler; the Triton one draws the
    same tokens (test_triton_sampler_equals_reference)."""
    backend = "torch"
    V, B, T = 6, 4, 500
    x = torch.log(torch.tensor([[0.4, 0.25, 0.15, 0.1, 0.07, 0.03]] * B, dtype=torch.float64)).to(DEV)
    s = FusedBoost(3, 0.5, V, B, T, DEV, lam1=1.0, backend=backend)
    w = torch.zeros(B, 1, dtype=torch.long, device=DEV)
    toks = torch.zeros(B, T, dtype=torch.long, device=DEV)
    boosted = FusedBoost(3, 0.5, V, B, 1, DEV, lam1=1.0, backend="torch")(w, x, torch.empty_like(x))
    for _ in range(T):
        s.sample(w, x, toks)
        w.zero_()  # the same context every step: one fixed q
    q = torch.softmax(boosted, dim=-1)[0].cpu().numpy()
    counts = np.bincount(toks.cpu().numpy().ravel(), minlength=V)
    n = B * T
    assert np.all(np.abs(counts - n * q) <= 4.5 * np.sqrt(n * q * (1 - q)))


@needs_triton
def test_triton_flags_nan_and_capacity():
    x = torch.randn(2, 3000).to(DEV)
    x[1, 17] = float("nan")
    b = FusedBoost(1, 0.25, 3000, 2, 2, DEV, lam1=1.0, backend="triton")
    b(torch.zeros(2, 1, dtype=torch.long, device=DEV), x, torch.empty_like(x))
    with pytest.raises(ValueError, match="NaN at step 0 of row 1"):
        b.stacked()
    c = FusedBoost(1, 0.25, 3000, 2, 1, DEV, lam1=1.0, backend="triton")
    w = torch.zeros(2, 1, dtype=torch.long, device=DEV)
    y = torch.randn(2, 3000).to(DEV)
    c(w, y, torch.empty_like(y))
    c(w, y, torch.empty_like(y))
    with pytest.raises(ValueError, match="records hold steps=1"):
        c.stacked()


def test_fused_boost_bad_input():
    with pytest.raises(ValueError, match="backend"):
        FusedBoost(1, 0.25, 100, 2, 2, "cpu", lam1=1.0, backend="cuda")
    with pytest.raises(ValueError, match="batch must be in"):
        FusedBoost(1, 0.25, 100, 0, 2, "cpu", lam1=1.0)
    with pytest.raises(ValueError, match="gamma"):
        FusedBoost(1, 1.5, 100, 2, 2, "cpu", lam1=1.0)
    with pytest.raises(ValueError, match="block must be a power of two"):
        FusedBoost(1, 0.25, 100, 2, 2, "cpu", lam1=1.0, block=1000)
    b = FusedBoost(1, 0.25, 100, 2, 2, "cpu", lam1=1.0, backend="torch")
    with pytest.raises(ValueError, match=r"logits must be \(2, >= 100\)"):
        b(torch.zeros(2, 1, dtype=torch.long), torch.zeros(2, 50), torch.zeros(2, 50))


@pytest.mark.parametrize("kernels", ["torch", pytest.param("triton", marks=needs_triton)])
def test_static_llama_matches_transformers(kernels):
    """Prefill + single-token steps from the static cache = transformers' full forward (fp32)."""
    model, _ = load("random-llama")
    model = model.to(DEV)
    gen = torch.Generator().manual_seed(2)
    seq = torch.randint(0, 512, (3, 12), generator=gen).to(DEV)
    dec = StaticLlama(model, 3, 16, kernels=kernels)
    with torch.no_grad():
        ref = model(seq).logits.float()
        got = [dec.forward(seq[:, :7], torch.arange(7, device=DEV), 7)]
        for j in range(7, 12):
            got.append(dec.forward(seq[:, j : j + 1], torch.tensor([j], device=DEV), 16))
    for j, g in zip(range(6, 12), got):
        torch.testing.assert_close(g, ref[:, j], rtol=1e-5, atol=1e-5)


def test_generate_static_records_and_backends_agree():
    """DualGA through the static loop on a left-padded batch: records obey the DualGA recursion
    and equal the unfused processor's on transformers' teacher-forced logits; every backend
    pair gives the same tokens."""
    model, _ = load("random-llama")
    model = model.to(DEV)
    prompts = [[5, 9, 1, 3, 7], [11, 2], [8, 8, 4]]
    g = generate_static(model, prompts, 20, algo="dualga", key=3, seed=1, backend="torch", kernels="torch")
    np.testing.assert_allclose(g.lam[:, 1:], np.clip(g.lam[:, :-1] + 0.5 * (0.3 - g.dg[:, :-1]), 0, 15), rtol=0, atol=1e-12)
    for i, p in enumerate(prompts):
        seq = torch.tensor([p + g.tokens[i].tolist()], device=DEV)
        with torch.no_grad():
            logits = model(seq).logits.float()[:, len(p) - 1 : -1]
        proc = DualGAProcessor(key=3, vocab_size=512, Delta=0.3, fused=False)
        for t in range(20):
            proc(seq[:, : len(p) + t], logits[:, t])
        rec = proc.stacked()
        for k in FIELDS:
            np.testing.assert_allclose(getattr(g, k)[i], rec[k][0].cpu().numpy(), rtol=1e-5, atol=1e-6)
    other = generate_static(model, prompts, 20, algo="dualga", key=3, seed=1, backend="numba" if DEV == "cpu" else "torch")
    assert np.array_equal(other.tokens, g.tokens)
    if triton_usable(DEV):
        for backend, kernels in (("triton", "torch"), ("triton", "triton")):
            other = generate_static(model, prompts, 20, algo="dualga", key=3, seed=1, backend=backend, kernels=kernels,
                                    cuda_graph=False)
            assert np.array_equal(other.tokens, g.tokens), (backend, kernels)


def test_generate_static_bad_input():
    model, _ = load("random-llama")
    p = torch.zeros(2, 3, dtype=torch.long)
    with pytest.raises(ValueError, match="algo must be"):
        generate_static(model, p, 4, algo="kgw")
    with pytest.raises(ValueError, match="T must be in"):
        generate_static(model, p, 0)
    with pytest.raises(ValueError, match="prompt of row 0 has 3 token"):
        generate_static(model, p, 4, h=4)
    with pytest.raises(ValueError, match="row 1 has 3 tokens: \\+ T=600"):
        generate_static(model, p, 600, rows=[1, 2])
    with pytest.raises(ValueError, match="kernels must be"):
        StaticLlama(model, 2, 8, kernels="cuda")
    gpt2, _ = load("random-gpt2")
    with pytest.raises(ValueError, match="Llama-family"):
        generate_static(gpt2, p, 4)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_graph_loop_equals_eager_loop():
    model, _ = load("random-llama")
    model = model.cuda()
    prompts = [[1, 2, 3, 4, 5, 6], [7, 8], [9, 10, 11, 12], [13, 14, 15]]
    a = generate_static(model, prompts, 70, seed=5, cuda_graph=True)
    b = generate_static(model, prompts, 70, seed=5, cuda_graph=False)
    assert np.array_equal(a.tokens, b.tokens)
    for k in FIELDS:
        np.testing.assert_allclose(getattr(a, k), getattr(b, k), rtol=1e-12)


def test_evaluate_with_the_static_engine():
    """`evaluate(..., engine="static")`: DualGA through the static loop is detected, the
    unwatermarked control is not, and the realised DG is near Delta."""
    from sims.experiments.evaluate import evaluate

    out = evaluate("random-llama", "dualga", n=2, T=150, seed=0, engine="static")
    assert out["tpr_at_1e-4"] == 1.0 and out["empirical_fpr_at_1e-4"] == 0.0
    assert abs(out["realized_dg"] - 0.3) < 0.05
    with pytest.raises(ValueError, match="engine must be"):
        evaluate("random-llama", "dualga", n=1, T=4, seed=0, engine="graph")
