"""The one DualGA update and the one AutoCov update (:mod:`theory.dual_ascent`) against every
implementation in the package, step by step.

Each implementation runs T steps and returns what it recorded: (G_t, DG_t, lambda_t) and, for
AutoCov, the colour of y_{t-1}.  Two checks per implementation:

* the update, step by step: lambda_{t+1} == theory.dualga_update(lambda_t, DG_t, ...) (or
  autocov_update) BIT FOR BIT -- every implementation performs the same float64 operations
  (lam + eta (Delta - dg), then the projection), Triton included under its CPU interpreter;
* the whole sequence from the same inputs: lambda_t against theory's own recursion fed the same
  G sequence (DG from :func:`theory.dg_step`).  Bit for bit where DG is the same arithmetic (the
  Numba kernels, which inline theory._scalar); within SEQ_RTOL where DG is re-expressed (torch's
  expm1/exp, Triton's series for 1 - e^{-lambda}).

The Numba-side implementations (scalar, generator, reduced controller) all see the generator's
own G sequence on a synthetic LM; the torch-side ones (FusedBoost numba/torch/triton backends,
the unfused processors) all see the same random logits.
"""

import math
import os

import numpy as np
import pytest

import theory
from theory import _scalar

DELTA, ETA, M, T, LAM1 = 0.3, 0.5, 1.25, 40, 0.5  # M = 1.25: some steps are projected, some not (checked below)
SEQ_RTOL = 1e-14  # torch/Triton re-express DG (expm1, a series): a few ulp per step, carried over T steps


def _generator(algo):
    from sims.lm.synthetic import open_synthetic
    from sims.watermarks.generate import generate_synthetic

    gen = generate_synthetic(open_synthetic("news", vocab_size=2000), algo, n=1, T=T, seed=2, key=5, Delta=DELTA, eta=ETA, M=M, lam1=LAM1)
    return dict(G=gen.G[0], dg=gen.dg[0], lam=gen.lam[0], gamma=gen.meta["gamma"], lam1=gen.meta["lam1"])


def _numba_scalar():
    g = _generator("dualga")
    lam = np.empty(T)
    dg = np.empty(T)
    lam[0] = g["lam1"]
    for t in range(T):
        dg[t] = _scalar.dg(lam[t], g["G"][t])
        if t + 1 < T:
            lam[t + 1] = _scalar.dualga_update(lam[t], dg[t], DELTA, ETA, M)
    return dict(G=g["G"], dg=dg, lam=lam, lam1=g["lam1"])


def _reduced():
    """The reduced simulator's DualGA controller fed the generator's G sequence: process kind
    "blocks" of width 1 over T one-point laws, so G_t = law t's only value."""
    from sims.reduced import gprocess, online

    g = _generator("dualga")
    prm = online.ControllerParams(Delta=DELTA, eta=ETA, eta_mode=0.0, lam1=g["lam1"], M=M, delta=0.0, V=1.0, alpha=1.0)
    out = online.trace(online.DUALGA, prm, gprocess.KINDS["blocks"], g["G"][:, None].copy(), True, np.array([1.0]), 0, 0, T, 1)
    return dict(G=out[1], dg=out[2], lam=out[0], lam1=g["lam1"])


def _torch_inputs(torch, V, B):
    gen = torch.Generator().manual_seed(7)
    ids = torch.randint(0, V, (B, T + 2), generator=gen)
    logits = [torch.randn(B, V, generator=gen) * 3 for _ in range(T)]
    return ids, logits


def _fused(backend):
    torch = pytest.importorskip("torch")
    if backend == "triton":
        if not torch.cuda.is_available():
            os.environ.setdefault("TRITON_INTERPRET", "1")
        from sims.torch_backend.fused import triton_usable

        if not triton_usable("cpu"):
            pytest.skip("triton not installed")
    from sims.torch_backend.fused import FusedBoost

    V, B = 1500, 2
    ids, logits = _torch_inputs(torch, V, B)
    boost = FusedBoost(5, 0.25, V, B, T, "cpu", lam1=LAM1, Delta=DELTA, eta=ETA, M=M, backend=backend)
    for t in range(T):
        boost(ids[:, t : t + 1], logits[t], torch.empty_like(logits[t]))
    r = {k: v[0].numpy() for k, v in boost.stacked().items()}
    return dict(G=r["G"], dg=r["dg"], lam=r["lam"], lam1=LAM1)


def _processor(algo):
    torch = pytest.importorskip("torch")
    from sims.torch_backend.processors import AutoCovProcessor, DualGAProcessor

    V, B = 1500, 2
    ids, logits = _torch_inputs(torch, V, B)
    cls = DualGAProcessor if algo == "dualga" else AutoCovProcessor
    proc = cls(key=5, vocab_size=V, Delta=DELTA, gamma=0.25, eta=ETA, lam1=LAM1, M=M, fused=False)
    for t in range(T):
        proc(ids[:, : t + 2], logits[t])
    r = {k: v[0].numpy() for k, v in proc.stacked().items()}
    return dict(G=r["G"], dg=r["dg"], lam=r["lam"], gamma=0.25, lam1=LAM1)


DUALGA = {
    "numba-scalar": _numba_scalar,
    "generator": lambda: _generator("dualga"),
    "reduced-controller": _reduced,
    "fused-numba": lambda: _fused("numba"),
    "fused-torch": lambda: _fused("torch"),
    "fused-triton": lambda: _fused("triton"),
    "processor": lambda: _processor("dualga"),
}
BIT_EXACT_SEQUENCE = {"numba-scalar", "generator", "reduced-controller", "fused-numba"}
AUTOCOV = {"generator": lambda: _generator("autocov"), "processor": lambda: _processor("autocov")}


@pytest.mark.parametrize("impl", sorted(DUALGA))
def test_every_dualga_update_is_theorys(impl):
    r = DUALGA[impl]()
    lam, dg, G = r["lam"], r["dg"], r["G"]
    assert lam.shape == (T,) and lam[0] == r["lam1"]
    step = theory.dualga_update(lam[:-1], dg[:-1], DELTA, ETA, M)
    assert np.array_equal(lam[1:], step), np.flatnonzero(lam[1:] != step)
    ref = np.empty(T)
    ref[0] = r["lam1"]
    for t in range(T - 1):
        ref[t + 1] = theory.dualga_update(ref[t], theory.dg_step(ref[t], G[t]), DELTA, ETA, M)
    if impl in BIT_EXACT_SEQUENCE:
        assert np.array_equal(lam, ref)
    else:
        np.testing.assert_allclose(lam, ref, rtol=SEQ_RTOL, atol=0)
    assert (lam[1:] == M).any() and (lam[1:] < M).any(), "the steps must exercise the projection and the interior"


@pytest.mark.parametrize("impl", sorted(AUTOCOV))
def test_every_autocov_update_is_theorys(impl):
    """After a green token AutoCov boosts the red list, so DG_t < 0 exactly when y_{t-1} is green
    (DG_t = 0 gives the same update either way: -DA_t = 0)."""
    r = AUTOCOV[impl]()
    lam, dg = r["lam"], r["dg"]
    assert lam[0] == r["lam1"] and (dg < 0).any() and (dg > 0).any()
    step = theory.autocov_update(lam[:-1], dg[:-1], dg[:-1] < 0, r["gamma"], DELTA, ETA, M)
    assert np.array_equal(lam[1:], step), np.flatnonzero(lam[1:] != step)


def test_public_updates_vectorise_and_project():
    lam = np.array([0.0, 1.0, 14.9, 2.0])
    dg = np.array([0.9, 0.2, 0.0, 0.3])
    out = theory.dualga_update(lam, dg, 0.3, 0.5, 15.0)
    assert np.array_equal(out, [0.0, 1.05, 15.0, 2.0])
    assert theory.dualga_update(1.0, 0.2, 0.3, 0.5) == 1.0 + 0.5 * (0.3 - 0.2)
    # -DA_t: gamma DG after red, (1 - gamma)(-DG) after green
    assert theory.autocov_update(1.0, 0.2, False, 0.25, 0.3, 0.5) == 1.0 + 0.5 * (0.3 - 0.25 * 0.2)
    assert theory.autocov_update(1.0, -0.2, True, 0.25, 0.3, 0.5) == 1.0 + 0.5 * (0.3 - 0.75 * 0.2)
    assert math.isclose(theory.LAMBDA_MAX, 15.0)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: theory.dualga_update(16.0, 0.1, 0.3, 0.5), "lam must be in [0, M] = [0, 15.0]; got 16.0"),
        (lambda: theory.dualga_update(1.0, 1.5, 0.3, 0.5), "dg must be in [-1, 1]; got 1.5"),
        (lambda: theory.dualga_update(1.0, 0.1, 1.3, 0.5), "Delta must be in [0, 1]; got 1.3"),
        (lambda: theory.dualga_update(1.0, 0.1, 0.3, -0.5), "eta must be in [0, inf); got -0.5"),
        (lambda: theory.dualga_update(1.0, 0.1, 0.3, 0.5, M=0.0), "M must be in (0, inf); got 0.0"),
        (lambda: theory.autocov_update(1.0, 0.1, True, 1.0, 0.3, 0.5), "gamma must be in (0, 1); got 1.0"),
    ],
)
def test_bad_input(call, message):
    import re

    with pytest.raises(ValueError, match=re.escape(message)):
        call()
