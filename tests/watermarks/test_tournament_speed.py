"""Issue 32's fast paths of tournament sampling: the blocked generator kernel against the NumPy
reference across block boundaries, tokens pinned from before the rewrite, the block factors against
the layer-by-layer map, and the weighted tail's folded, cached FFT against the whole-lattice reference."""

import hashlib
import math

import numpy as np
import pytest

from sims.core import prf
from sims.detect.stats import tournament_scores as ts
from sims.lm.synthetic import open_synthetic
from sims.watermarks import tournament as tn

LM = open_synthetic("news", vocab_size=64)
TAIL_REL = 1e-11  # |ln p - ln p_ref| / max(1, |ln p_ref|): the weighted tail's stated accuracy (test_tournament_scores.REL)


@pytest.mark.parametrize(("m", "mode"), [(12, "non-distortionary"), (23, "distortionary"), (64, "non-distortionary")])
def test_multi_block_kernel_equals_reference(m, mode):
    """m over one block of BLOCK_MAX bits (2, 3 and 6 blocks): identical tokens, records to 1e-12."""
    g = tn.generate_tournament(LM, n=2, T=30, seed=6, key=5, m=m, h=2, mode=mode)
    tok, rec = tn.generate_tournament_reference(LM, g.prompts, 30, 6, 5, m, 2, g.meta["candidates"], True)
    assert np.array_equal(tok, g.tokens)
    for j, name in enumerate(("kl", "G", "dg", "entropy")):
        assert np.allclose(rec[j], getattr(g, name), rtol=0, atol=1e-12), name


@pytest.mark.parametrize(("lm", "m", "mode", "mask", "seed", "digest"), [
    ("news", 30, "non-distortionary", True, 0, "a262d405161b451e"),
    ("lfqa", 64, "distortionary", True, 7, "0863ef675f23a6ce"),
    ("news", 1, "non-distortionary", False, 0, "36f3fc3628a93aa5"),
])
def test_tokens_pinned_from_before_the_fused_kernels(lm, m, mode, mask, seed, digest):
    """V = 32000, 4 texts x 40 tokens: the SHA-256 of the tokens written by the generator before issue
    32's kernel rewrite (commit df473fb): a given seed keeps giving the same texts."""
    g = tn.generate_tournament(open_synthetic(lm), n=4, T=40, seed=seed, key=12345 + m, m=m, mode=mode, mask_repeated=mask)
    assert hashlib.sha256(np.ascontiguousarray(g.tokens, dtype=np.int64).tobytes()).hexdigest()[:16] == digest


@pytest.mark.parametrize(("nb", "K"), [(1, 2), (2, 2), (5, 2), (10, 2), (7, 4)])
def test_block_solve_equals_the_layer_map(nb, K):
    """_solve_block (marginals, then the products layer by layer) on random class masses: each class's
    product (and log-sum) of factors equals nb steps of q_l = q_{l-1} f_l(g_l) with G_l from the current
    masses over all classes (layer_factors)."""
    rng = np.random.default_rng(nb)
    bins = rng.dirichlet(np.ones(1 << nb))
    fac = np.empty(1 << tn.BLOCK_MAX)
    lfac = np.empty(1 << tn.BLOCK_MAX)
    tn._solve_block(bins, nb, K, fac, lfac, np.empty(1 << tn.BLOCK_MAX))
    c = np.arange(1 << nb)
    f_ref = np.ones(1 << nb)
    for b in range(nb):
        bit = (c >> b) & 1
        f0, f1 = tn.layer_factors(float(np.sum(bins * f_ref * bit)), K)
        f_ref = f_ref * np.where(bit == 1, f1, f0)
    assert np.allclose(fac[: 1 << nb], f_ref, rtol=1e-13, atol=0)
    assert np.allclose(lfac[: 1 << nb], np.log(f_ref), rtol=0, atol=1e-13)
    assert abs(float(bins @ fac[: 1 << nb]) - 1.0) < 1e-13


@pytest.mark.parametrize(("m", "n"), [(30, 60), (8, 300), (64, 40)])
def test_folded_tail_equals_whole_lattice_reference(m, n):
    """Every s from 0 to n sum(w) + 1 (p from 1 down to 1e-300 and beyond, then 0): the folded FFT
    with cached, grid-centred tilts equals the whole-lattice reference with a fresh tilt at each s."""
    w = ts.synthid_weights(m)
    full = 1 << (n * int(w.sum())).bit_length()
    assert ts._fold_size(n, w) < full  # the fast path really folds
    s = np.arange(0, n * int(w.sum()) + 2)
    ts._tilt_cached.cache_clear()
    fast = ts.weighted_logsf(s, n, w)
    ref = ts.weighted_logsf(s, n, w, reference=True)
    assert np.array_equal(np.isneginf(fast), np.isneginf(ref)) and fast[-1] == -np.inf
    fin = np.isfinite(ref)
    assert ref[fin].min() < -600  # reached far below 1e-6 (and 1e-260)
    assert np.all(np.abs(fast[fin] - ref[fin]) <= TAIL_REL * np.maximum(1.0, np.abs(ref[fin])))
    again = ts.weighted_logsf(s[::-1], n, w)[::-1]  # from the cache, in another order
    assert np.array_equal(again, fast)


def test_fold_size_holds_the_hoeffding_bound():
    """The folded window N leaves d = (N - 4) / 2 on each side with 2 exp(-2 d^2 / (n sum w^2)) <= FOLD_EPS."""
    for m, n in ((1, 1), (30, 200), (64, 5000), (5, 17)):
        w = ts.synthid_weights(m)
        d = (ts._fold_size(n, w) - 4) / 2
        assert 2.0 * math.exp(-2.0 * d * d / (n * float(w @ w))) <= ts.FOLD_EPS


@pytest.mark.parametrize(("m", "weights"), [(30, None), (30, "unit"), (13, [7, 0, 5, 3, 1, 9, 2, 2, 4, 1, 6, 8, 3]), (64, None)])
def test_scan_sums_equal_a_python_reference(m, weights):
    """The vectorised scan (context hashes for the whole text, then the repeated-context set, then
    popcounts / byte look-ups) against per-position PRF words and a Python set: the same scored
    counts and weighted g-value sums, on texts with repeated contexts (vocabulary 3) and ragged lengths."""
    rng = np.random.default_rng(m)
    n, T, h, key = 5, 60, 3, 2**63 + 7
    toks = rng.integers(0, 3, size=(n, T))
    toks[1, 40:] = -1
    toks[3, 7:] = -1
    prompts = rng.integers(0, 3, size=(n, h))
    w = np.ones(m, dtype=np.int64) if weights == "unit" else (ts.synthid_weights(m) if weights is None else np.array(weights))
    r = ts.score_tournament(tokens=toks, prompts=prompts, key=key, m=m, h=h, stat="weighted", weights=w)
    for i in range(n):
        text = np.concatenate([prompts[i], toks[i][toks[i] >= 0]])
        seen, total, cnt = set(), 0, 0
        for t in range(h, text.size):
            ch = int(prf.context_hash(key, text[t - h : t], tn.TOURNAMENT_STREAM))
            if ch not in seen:
                cnt += 1
                total += int(tn.g_values(tn.g_words(key, text[t - h : t], text[t]), m).astype(np.int64) @ w)
            seen.add(ch)
        assert r.n_scored[i] == cnt and r.score[i] == total, i
    assert r.n_scored.min() < T - 20  # repeated contexts were masked


@pytest.mark.parametrize(("m", "mode"), [(3, "non-distortionary"), (10, "distortionary")])
def test_lone_block_over_several_runs_equals_reference(m, mode):
    """m <= BLOCK_MAX (classes binned per run of SAMPLE_IDS ids, padded to PAD_BITS below 6 layers) on
    V = 9000: three runs, the last partial; identical tokens, records to 1e-12."""
    lm = open_synthetic("news", vocab_size=9000)
    assert lm.vocab_size > 2 * tn.SAMPLE_IDS and lm.vocab_size % tn.SAMPLE_IDS
    g = tn.generate_tournament(lm, n=2, T=12, seed=3, key=9, m=m, h=2, mode=mode)
    tok, rec = tn.generate_tournament_reference(lm, g.prompts, 12, 3, 9, m, 2, g.meta["candidates"], True)
    assert np.array_equal(tok, g.tokens)
    for j, name in enumerate(("kl", "G", "dg", "entropy")):
        assert np.allclose(rec[j], getattr(g, name), rtol=0, atol=1e-12), name
