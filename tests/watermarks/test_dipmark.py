"""DiPmark (Wu et al. 2023): the alpha-reweight, its distribution preservation, exact KL, and its detector's exact null.

Expected values are computed here independently: the reweight by hand on a 4-token example, the green
list from the NumPy PRF's partition, distinct pairs with ``set``, tails by exact rational summation and scipy.
"""

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

import sims
from sims.core import prf
from sims.detect.families import detectors
from sims.detect.families.stream import SequentialDetector
from sims.detect.stats import nulls, scores
from sims.lm.synthetic import open_synthetic
from sims.watermarks import dipmark
from sims.watermarks.generate import generate_synthetic

KEY = 99
LOG_RTOL = 1e-12  # log-space tails: float64 sums of a few hundred exact terms
MC_Z = 4.5  # Monte Carlo checks: |estimate - truth| within 4.5 standard errors (fixed seeds)


@pytest.fixture(scope="module")
def lm():
    return open_synthetic("lfqa", vocab_size=2000)


def test_the_reweight_by_hand():
    """p = (.1, .2, .3, .4) in permutation order, alpha = 1/4: F = (.1, .3, .6, 1), g = (0, .05, .35, 1),
    so q = (0, .05, .30, .65): the first token dropped, the straddlers cut, the last doubled past 3/4."""
    p = np.array([0.1, 0.2, 0.3, 0.4])
    q = dipmark.reweight(p, np.arange(4), 0.25)
    np.testing.assert_allclose(q, [0.0, 0.05, 0.30, 0.65], rtol=0, atol=1e-15)
    q = dipmark.reweight(p, np.array([3, 2, 1, 0]), 0.25)  # order 3, 2, 1, 0: F = (.4, .7, .9, 1), g = (.15, .45, .8, 1)
    np.testing.assert_allclose(q, [0.2, 0.35, 0.3, 0.15], rtol=0, atol=1e-15)
    np.testing.assert_allclose(dipmark.reweight(p, np.arange(4), 0.0), p, rtol=0, atol=1e-15)  # alpha = 0: no change


@pytest.mark.parametrize("alpha", [0.1, 0.3, 0.45, 0.5])
def test_a_permutation_and_its_reverse_average_to_p(alpha):
    """g(x) - g(1 - x) = 2x - 1, so q_pi + q_reversed = 2 p exactly (Wu et al., Theorem 4.2's argument)."""
    rng = np.random.default_rng(1)
    for _ in range(20):
        p = rng.dirichlet(np.full(9, 0.4))
        perm = rng.permutation(9)
        np.testing.assert_allclose(dipmark.reweight(p, perm, alpha) + dipmark.reweight(p, perm[::-1], alpha), 2 * p, rtol=0, atol=1e-14)


def test_the_key_averaged_law_is_p():
    """Over 4,000 keys the mean of q is p, within MC_Z standard errors at each token."""
    p = np.array([0.05, 0.1, 0.15, 0.3, 0.4])
    qs = np.array([dipmark.ref_dipmark(p, np.array([7]), 0, key, None, dict(dip_alpha=0.4))[0] for key in range(4000)])
    se = qs.std(axis=0, ddof=1) / math.sqrt(len(qs))
    assert (np.abs(qs.mean(axis=0) - p) <= MC_Z * se).all(), (qs.mean(axis=0), p, se)


def test_the_permutations_tail_is_the_partition_green_list():
    for key, window in ((1, [4]), (99, [3, 17]), (2**63 + 5, [0])):
        for gamma in (0.5, 0.3):
            V = 101
            perm = dipmark.permutation(key, window, V)
            green = prf.green_mask(prf.context_hash(key, np.array(window)), V, gamma, "partition")
            n_green = int(math.floor(gamma * V))
            assert set(perm[V - n_green :].tolist()) == set(np.flatnonzero(green).tolist())


def test_the_records_kl_and_dg_are_exact_on_a_hand_step(lm):
    """The generator's KL and DG at each step equal sum q log(q / p) and q(G) - p(G) of the reweight of the
    LM's p_t along the independently built permutation (the battery's check, with the formula written out)."""
    gen = generate_synthetic(lm, "dipmark", n=1, T=12, seed=7, key=KEY, dip_alpha=0.35)
    P = gen.prompts.shape[1]
    seq = np.concatenate([gen.prompts[0], gen.tokens[0]])
    for t in range(12):
        p = lm.probs(seq[: P + t])
        perm = dipmark.permutation(KEY, seq[P + t - 1 : P + t], lm.vocab_size)
        F = np.cumsum(p[perm])
        Fp = np.concatenate([[0.0], F[:-1]])
        q = np.zeros_like(p)
        q[perm] = (np.clip(F - 0.35, 0, None) + np.clip(F - 0.65, 0, None)) - (np.clip(Fp - 0.35, 0, None) + np.clip(Fp - 0.65, 0, None))
        q /= q.sum()
        nz = q > 0
        green = np.zeros(lm.vocab_size, dtype=bool)
        green[perm[lm.vocab_size - lm.vocab_size // 2 :]] = True
        assert gen.kl[0, t] == pytest.approx(np.sum(q[nz] * np.log(q[nz] / p[nz])), rel=1e-9, abs=1e-14)
        assert gen.dg[0, t] == pytest.approx(q[green].sum() - p[green].sum(), rel=1e-9, abs=1e-12)
        assert q[gen.tokens[0, t]] > 0


@pytest.mark.parametrize("dedup", [False, True])
def test_detection_is_the_partition_count_with_the_binomial_tail(lm, dedup):
    gen = generate_synthetic(lm, "dipmark", n=3, T=60, seed=2, key=KEY)
    tok = gen.tokens.copy()
    tok[2, 30:] = tok[2, :30]  # from t = 31 on, every (context, token) pair repeats one of t - 30
    gen = gen.__class__(tok, gen.prompts, gen.kl, gen.G, gen.dg, gen.entropy, gen.lam, gen.meta)
    res = detectors.score(gen, lm, dedup=dedup)
    assert gen.meta["green_kind"] == "partition" and gen.meta["gamma"] == dipmark.GAMMA
    V = lm.vocab_size
    g = (V // 2) / V
    for i in range(3):
        seq = np.concatenate([gen.prompts[i, -1:], tok[i]])
        pairs = [(int(seq[t]), int(seq[t + 1])) for t in range(60)]
        if dedup:
            pairs = list(dict.fromkeys(pairs))
        k = sum(bool(prf.green_mask(prf.context_hash(KEY, np.array([c])), V, 0.5, "partition")[y]) for c, y in pairs)
        n = len(pairs)
        assert res.n_scored[i] == n and res.score[i] == k
        assert res.log10_p[i] * math.log(10) == pytest.approx(stats.binom.logsf(k - 1, n, g), rel=1e-9)
        assert res.z[i] == pytest.approx((k - g * n) / math.sqrt(n * g * (1 - g)), rel=1e-12)  # = Wu et al.'s Phi / sqrt(g (1 - g))


@pytest.mark.parametrize("target", [1e-4, 1e-6])
def test_the_exact_tail_at_1e4_and_1e6_in_log_space(target):
    """The partition null probability floor(gamma V) / V (V = 2001, gamma = 0.5: 1000/2001), n = 150 pairs:
    binom_logsf at the k nearest ``target`` equals the exact rational tail in log space, and the detector's
    null probability is that fraction."""
    g = Fraction(1000, 2001)
    n = 150

    def tail(k):
        return sum((Fraction(math.comb(n, j)) * g**j * (1 - g) ** (n - j) for j in range(k, n + 1)), Fraction(0))

    def ln(x):
        return math.log(x.numerator) - math.log(x.denominator)

    k = min(range(76, n + 1), key=lambda j: abs(ln(tail(j)) - math.log(target)))
    assert abs(ln(tail(k)) - math.log(target)) < 1.0
    assert nulls.binom_logsf(k, n, float(g)) == pytest.approx(ln(tail(k)), rel=LOG_RTOL)
    assert scores._stat_code("green", 0.5, "partition", 2001)[3] == float(g)


def test_the_false_positive_rate_on_unwatermarked_text(lm):
    """Texts sampled from p (independent of the key), scored by DiPmark's detector with dedup under 6 keys:
    the rate of p <= 0.01 is at most 0.01 (one-sided, MC_Z standard errors)."""
    gen = generate_synthetic(lm, "none", n=400, T=40, seed=9, key=0)
    lp = np.concatenate([scores.score_redgreen(gen.tokens, gen.prompts, key, 0.5, green_kind="partition", vocab_size=lm.vocab_size,
                                               dedup=True).log10_p for key in range(1, 7)])
    rate = np.mean(lp <= -2)
    assert rate <= 0.01 + MC_Z * math.sqrt(0.01 * 0.99 / lp.size), rate


def test_the_stream_detector_reads_the_records_green_kind(lm):
    gen = generate_synthetic(lm, "dipmark", n=2, T=50, seed=4, key=KEY)
    res = detectors.sequential_score(gen, lm, alpha=1e-3)
    for i in range(2):
        det = SequentialDetector(KEY, algo="dipmark", context=gen.prompts[i], gamma=0.5, vocab_size=lm.vocab_size, alpha=1e-3)
        assert det.green_kind == "partition"
        for a in range(0, 50, 9):
            state = det.update(gen.tokens[i, a : a + 9])
        assert state.n_scored == res.n_scored[i]
        assert state.log_e == pytest.approx(res.log_e[i], rel=1e-9, abs=1e-9)


def test_bad_settings_are_refused(lm):
    with pytest.raises(ValueError, match=r"dip_alpha must be in \[0, 0.5\]"):
        generate_synthetic(lm, "dipmark", n=1, T=2, seed=0, key=KEY, dip_alpha=0.6)
    with pytest.raises(ValueError, match="algo 'srl' takes no parameter 'dip_alpha'"):
        generate_synthetic(lm, "srl", n=1, T=2, seed=0, key=KEY, dip_alpha=0.3)


def test_the_cli_generates_and_detects(tmp_path, capsys):
    from sims.cli.main import main

    out = tmp_path / "d.npz"
    assert main(["generate", "--lm", "tiny", "--algo", "dipmark", "--dip_alpha", "0.4", "--n", "2", "--T", "30", "--out", str(out)]) == 0
    assert '"green_kind": "partition"' in capsys.readouterr().out
    assert main(["detect", str(out), "--key", str(sims.core.defaults.KEY), "--dedup", "--json"]) == 0
    assert '"log10_p"' in capsys.readouterr().out


@pytest.mark.parametrize("V, conc, alpha", [(20000, 1.0, 0.45), (20000, 0.05, 0.3), (50, 1.0, 0.2), (3, 1.0, 0.5)])
def test_the_bucketed_numba_step_equals_the_sorted_reweight(V, conc, alpha):
    """dip_step (buckets of words, only the knee buckets sorted) gives the q of the full argsort reweight, its
    KL and DG, at V = 20,000 (about 5 tokens per bucket: knee buckets of several tokens), on flat and
    concentrated p, and on tiny vocabularies."""
    rng = np.random.default_rng(V)
    window = np.array([12])
    for rep in range(3):
        p = rng.dirichlet(np.full(V, conc))
        ctx = prf.context_hash(KEY + rep, window)
        bits = prf.token_bits(ctx, np.arange(V))
        green = prf.green_mask(ctx, V, 0.5, "partition").astype(np.float64)
        q = np.empty(V)
        y, kl, dg = dipmark.dip_step(alpha, p * 7.0, 1 / 7.0, bits, green, 0.37, p @ green, q)
        ref = dipmark.reweight(p, dipmark.permutation(KEY + rep, window, V), alpha)
        np.testing.assert_allclose(q, ref, rtol=1e-9, atol=1e-15)
        nz = ref > 0
        assert kl == pytest.approx(np.sum(ref[nz] * np.log(ref[nz] / p[nz])), rel=1e-9, abs=1e-14)
        assert dg == pytest.approx(ref @ green - p @ green, rel=1e-9, abs=1e-12)
        assert ref[y] > 0 and np.cumsum(ref)[y] >= 0.37 - 1e-12 and (y == 0 or np.cumsum(ref)[y - 1] < 0.37 + 1e-12)
