"""The compiled anytime-valid tournament scan (sims.detect.anytime._tournament) and the memoised AutoCov
e-process (sims.detect.anytime._kernels.markov_crossings): each equal to its NumPy reference / direct path."""

import math

import numpy as np
import pytest

import sims
from sims.detect.anytime import _kernels as SK
from sims.detect.anytime import _tournament as _seq_tournament
from sims.detect.anytime import e_mixtures, sequential, sequential_laws
from sims.detect.stats import tournament_scores as ts


def _texts():
    """SynthID texts of the loopy LM (h = 1: repeated contexts; detected), uniform tokens (the null),
    ragged lengths."""
    gen = sims.generate(sims.get_lm("loopy"), "synthid", n=3, T=60, seed=1, key=5, m=30, h=1)
    rng = np.random.default_rng(4)
    toks = np.concatenate([gen.tokens, rng.integers(0, 4096, size=(3, 60))])
    prompts = np.concatenate([gen.prompts[:, -1:], rng.integers(0, 4096, size=(3, 1))])
    return toks, prompts, np.array([60, 60, 45, 60, 0, 31])


@pytest.mark.parametrize("weights", [np.ones(30, dtype=np.int64), ts.synthid_weights(30)])
@pytest.mark.parametrize("mask_repeated", [True, False])
def test_kernel_equals_numpy_reference(weights, mask_repeated):
    """Sums, scored counts and first crossings of the kernel equal the reference's, which hashes with the
    vectorised PRF and reads the mixture's log e-value token by token (no threshold table)."""
    toks, prompts, lengths = _texts()
    alpha = 1e-4
    mix = sequential_laws.tilt_mixture(sequential_laws.weighted_bernoulli_law(weights))
    table = e_mixtures.linear_thresholds(mix, toks.shape[1], alpha)
    out = [np.zeros(len(toks), dtype=np.int64) for _ in range(3)]
    _seq_tournament.tournament_crossings(toks, prompts, lengths, np.uint64(5), 1, mask_repeated, weights, table, *out)
    ref = _seq_tournament.tournament_crossings_reference(toks, prompts, lengths, 5, 1, mask_repeated, weights, mix, math.log(1 / alpha))
    for got, want in zip(out, ref):
        assert got.tolist() == want.tolist()
    assert (out[2][:3] > 0).all() and (out[2][3:] < 0).all()  # the watermarked texts cross, the others do not
    assert (out[1].sum() < lengths.sum()) == mask_repeated  # the loopy texts repeat a context


def test_sequential_tournament_equals_the_values_path():
    """The public function (one compiled pass) equals the generic path: per-token scores from the hash
    words (sequential_laws.tournament_token_scores), then sequential_values, at two levels (the
    cached tables are per level)."""
    toks, prompts, lengths = _texts()
    w = ts.synthid_weights(30)
    for alpha in (1e-2, 1e-6):
        r = sequential_laws.sequential_tournament(toks, prompts, 5, 30, alpha=alpha, weights=w, h=1, lengths=lengths)
        values, scored, _ = sequential_laws.tournament_token_scores(toks, prompts, 5, 30, weights=w, h=1, lengths=lengths)
        ref = sequential_laws.sequential_values(values, scored, sequential_laws.weighted_bernoulli_law(w), alpha=alpha, lengths=lengths)
        assert r.stop.tolist() == ref.stop.tolist() and r.n_scored.tolist() == ref.n_scored.tolist()
        np.testing.assert_array_equal(r.score, ref.score)
        np.testing.assert_allclose(r.log_e, ref.log_e, rtol=1e-12)
    with pytest.raises(ValueError, match="key"):
        sequential_laws.sequential_tournament(toks, prompts, -1, 30, alpha=0.01, h=1)
    with pytest.raises(ValueError, match="weights"):
        sequential_laws.sequential_tournament(toks, prompts, 5, 30, alpha=0.01, h=1, weights=np.ones(3, dtype=np.int64))


def test_markov_memo_equals_direct():
    """More texts than tokens per text turns the memo on; each text scanned alone (memo off) gives the
    same final / peak log e-values and stops."""
    rng = np.random.default_rng(7)
    T = 40
    alternate = np.arange(T)[None, :] % 2 == 0  # green, red, green, ... (what AutoCov writes), flipped at rates 0 to 0.6
    values = (alternate ^ (rng.random((60, T)) < np.linspace(0.0, 0.6, 60)[:, None])).astype(float)
    scored = rng.random((60, T)) < 0.9
    lengths = rng.integers(0, T + 1, size=60)
    q_red, q_green = sequential.autocov_grids(0.25)
    bound = math.log(1e3)
    final, peak, stop = SK.markov_crossings(values, scored, lengths, 0.25, q_red, q_green, bound)
    for i in range(60):
        f1, p1, s1 = SK.markov_crossings(values[i : i + 1], scored[i : i + 1], lengths[i : i + 1], 0.25, q_red, q_green, bound)
        assert math.isclose(final[i], f1[0], rel_tol=1e-12, abs_tol=1e-12) and math.isclose(peak[i], p1[0], rel_tol=1e-12, abs_tol=1e-12)
        assert stop[i] == s1[0]
    assert 0 < (stop > 0).sum() < 60
