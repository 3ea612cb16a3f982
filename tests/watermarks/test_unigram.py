"""Unigram (Zhao et al. 2023): one fixed green list, context width 0 -- generation, detection and its exact null.

Every expected value is computed here independently of the kernels: the green list from the NumPy PRF
(:func:`sims.watermarks.unigram.green_list`), distinct tokens with ``set``, binomial tails by exact
rational summation (``fractions``) and by scipy.
"""

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

import sims
from sims.core import prf, windows
from sims.detect.families import detectors
from sims.detect.families.stream import SequentialDetector
from sims.detect.stats import nulls, scores
from sims.lm.synthetic import open_synthetic
from sims.watermarks import unigram
from sims.watermarks.generate import generate_synthetic

KEY = 99
LOG_RTOL = 1e-12  # log-space tails: float64 sums of a few hundred exact terms
FPR_CONF = 1e-4  # two-sided level of the Monte Carlo rate checks (fixed seeds: a failure is a bug at this level)


@pytest.fixture(scope="module")
def lm():
    return open_synthetic("lfqa", vocab_size=2000)


def _exact_tail(k: int, n: int, g: Fraction) -> Fraction:
    """P(Bin(n, g) >= k) as an exact rational."""
    return sum((Fraction(math.comb(n, j)) * g**j * (1 - g) ** (n - j) for j in range(max(k, 0), n + 1)), Fraction(0))


def _ln(x: Fraction) -> float:
    """Natural log of a positive rational, exact to float precision however small (numerator and denominator apart)."""
    return math.log(x.numerator) - math.log(x.denominator)


def test_the_record_runs_at_width_zero_with_the_papers_defaults(lm):
    gen = generate_synthetic(lm, "unigram", n=2, T=10, seed=0, key=KEY)
    assert gen.meta["h"] == 0 and gen.meta["gamma"] == unigram.GAMMA == 0.5 and gen.meta["delta"] == 2.0
    assert generate_synthetic(lm, "unigram", n=2, T=10, seed=0, key=KEY, h=0).meta["h"] == 0
    with pytest.raises(ValueError, match="algo 'unigram' runs at context width h = 0"):
        generate_synthetic(lm, "unigram", n=1, T=2, seed=0, key=KEY, h=3)
    with pytest.raises(ValueError, match="h = 0 .* Bernoulli lefthash green lists"):
        generate_synthetic(lm, "srl", n=1, T=2, seed=0, key=KEY, h=0, green_kind="partition")


def test_one_green_list_for_every_position_and_text(lm):
    """G_t is p_t's mass on the key's one list, whatever the context; SRL at h = 0 is the same generator."""
    gen = generate_synthetic(lm, "unigram", n=2, T=15, seed=1, key=KEY, gamma=0.3, delta=1.5)
    green = unigram.green_list(KEY, lm.vocab_size, 0.3)
    P = gen.prompts.shape[1]
    for i in range(2):
        seq = np.concatenate([gen.prompts[i], gen.tokens[i]])
        for t in range(15):
            assert gen.G[i, t] == pytest.approx(lm.probs(seq[: P + t])[green].sum(), rel=1e-12)
    srl0 = generate_synthetic(lm, "srl", n=2, T=15, seed=1, key=KEY, gamma=0.3, delta=1.5, h=0)
    np.testing.assert_array_equal(srl0.tokens, gen.tokens)
    np.testing.assert_array_equal(srl0.kl, gen.kl)


def test_windows_of_width_zero_are_empty():
    w = windows.windows(np.array([[3, 4, 5]]), np.array([[1, 2]]), 0)
    assert w.shape == (1, 3, 0)
    names = windows.window_names(np.array([[3, 4, 5]]), np.array([[1, 2]]), 0)
    assert len(set(names.ravel().tolist())) == 1  # one (empty) window
    with pytest.raises(ValueError, match=r"h must be an integer in \[0, inf\)"):
        windows.windows(np.array([[3]]), np.array([[1]]), -1)


def _text_with_repeats(rng, V, n_distinct, T):
    vocab = rng.choice(V, size=n_distinct, replace=False)
    return vocab[rng.integers(0, n_distinct, size=T)]


@pytest.mark.parametrize("dedup", [False, True])
def test_detection_counts_distinct_tokens_and_its_tail_is_the_binomials(lm, dedup):
    """On watermarked text and on a text of 12 distinct tokens repeated to 80: the green count, the
    number scored (dedup: the distinct tokens), z and log10 p equal the independent computation."""
    gen = generate_synthetic(lm, "unigram", n=3, T=80, seed=2, key=KEY)
    tok = gen.tokens.copy()
    tok[2] = _text_with_repeats(np.random.default_rng(0), lm.vocab_size, 12, 80)
    gen2 = gen.__class__(tok, gen.prompts, gen.kl, gen.G, gen.dg, gen.entropy, gen.lam, gen.meta)
    res = detectors.score(gen2, lm, dedup=dedup)
    green = unigram.green_list(KEY, lm.vocab_size, 0.5)
    g = prf.green_threshold(0.5) / prf.TOP53  # the exact null probability of green
    for i in range(3):
        row = list(dict.fromkeys(tok[i].tolist())) if dedup else tok[i].tolist()
        n, k = len(row), int(green[row].sum())
        assert res.n_scored[i] == n and res.score[i] == k
        assert res.z[i] == pytest.approx((k - g * n) / math.sqrt(n * g * (1 - g)), rel=1e-12)  # Zhao et al.'s z
        assert res.log10_p[i] * math.log(10) == pytest.approx(stats.binom.logsf(k - 1, n, g), rel=1e-9)
    if dedup:
        assert res.n_scored[2] == 12


@pytest.mark.parametrize("target", [1e-4, 1e-6])
def test_the_exact_tail_at_1e4_and_1e6_in_log_space(target):
    """The k whose tail is nearest ``target`` at n = 200 distinct tokens, gamma = 0.5 and 0.25 (exact null
    probabilities): binom_logsf equals the exact rational tail in log space."""
    for gamma in (0.5, 0.25):
        g = Fraction(prf.green_threshold(gamma), prf.TOP53)
        n = 200
        k = min(range(n + 1), key=lambda j: abs(_ln(_exact_tail(j, n, g)) - math.log(target)) if j > n * gamma else math.inf)
        exact = _ln(_exact_tail(k, n, g))
        assert abs(exact - math.log(target)) < 1.0  # the test sits at the level named
        assert nulls.binom_logsf(k, n, float(g)) == pytest.approx(exact, rel=LOG_RTOL)
        assert nulls.binom_logsf(k + 1, n, float(g)) == pytest.approx(_ln(_exact_tail(k + 1, n, g)), rel=LOG_RTOL)


def test_the_false_positive_rate_is_the_tests_size_with_dedup_and_not_without():
    """A fixed text of 10 distinct tokens, each repeated 20 times, scored under 4,000 keys (the null: a
    text independent of the key).  With dedup the rate of p <= 0.05 is the exact size of the discrete
    test, P(Bin(10, g) >= 9); without dedup the repeats repeat their colours and it is far above 0.05."""
    V, K = 5000, 4000
    rng = np.random.default_rng(11)
    vocab = rng.choice(V, size=10, replace=False)
    tokens = np.repeat(vocab, 20)[rng.permutation(200)][None, :]
    prompts = np.zeros((1, 1), dtype=np.int64)
    g = prf.green_threshold(0.5) / prf.TOP53
    size = stats.binom.sf(8, 10, g)  # P(S >= 9): the largest attainable p at or below 0.05
    rates = {}
    for dedup in (True, False):
        lp = np.array([scores.score_redgreen(tokens, prompts, key, 0.5, h=0, vocab_size=V, dedup=dedup).log10_p[0] for key in range(K)])
        rates[dedup] = np.mean(lp <= math.log10(0.05))
    lo, hi = stats.binom.interval(1 - FPR_CONF, K, size)
    assert lo / K <= rates[True] <= hi / K, (rates[True], size)
    assert rates[False] > 0.25  # ~ P(Bin(10, 1/2) >= 7) = 0.17 ... the count is 20 x Bin(10, 1/2)


def test_the_stream_detector_runs_at_width_zero_and_ends_in_the_batch_state(lm):
    """SequentialDetector for Unigram (h from the record: 0) on text with repeated tokens, fed in chunks:
    its dedup skips every repeat of a token, as the batch e-process does."""
    gen = generate_synthetic(lm, "unigram", n=2, T=60, seed=4, key=KEY)
    tok = gen.tokens.copy()
    tok[1, 30:] = tok[1, :30]  # every token of the second half repeats one of the first
    gen = gen.__class__(tok, gen.prompts, gen.kl, gen.G, gen.dg, gen.entropy, gen.lam, gen.meta)
    res = detectors.sequential_score(gen, lm, alpha=1e-3)
    for i in range(2):
        det = SequentialDetector(KEY, algo="unigram", context=gen.prompts[i], gamma=0.5, vocab_size=lm.vocab_size, alpha=1e-3)
        assert det.h == 0
        for a in range(0, 60, 7):
            state = det.update(tok[i, a : a + 7])
        assert state.n_scored == res.n_scored[i] == len(set(tok[i].tolist()))
        assert state.log_e == pytest.approx(res.log_e[i], rel=1e-9, abs=1e-9)


def test_score_keys_at_width_zero(lm):
    gen = generate_synthetic(lm, "unigram", n=2, T=40, seed=5, key=KEY)
    lp, n = detectors.score_keys(gen, [KEY, 3], lm, dedup=True)
    for j, key in enumerate((KEY, 3)):
        one = detectors.score(gen, lm, dedup=True, key=key)
        np.testing.assert_allclose(lp[j], one.log10_p, rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(n[j], one.n_scored)
    assert (lp[0] < -3).all() and (lp[1] > -3).all()


def test_the_cli_generates_and_detects(tmp_path, capsys):
    from sims.cli.main import main

    out = tmp_path / "u.npz"
    assert main(["generate", "--lm", "tiny", "--algo", "unigram", "--n", "2", "--T", "30", "--out", str(out)]) == 0
    assert '"h": 0' in capsys.readouterr().out
    assert main(["detect", str(out), "--key", str(sims.core.defaults.KEY), "--dedup", "--json"]) == 0
    assert '"h": 0' in capsys.readouterr().out
    assert main(["generate", "--lm", "tiny", "--algo", "unigram", "--h", "2", "--n", "1", "--T", "3", "--out", str(out)]) == 2
    assert "runs at context width h = 0" in capsys.readouterr().err


def test_a_real_lms_left_padded_prompts_are_not_read_at_width_zero():
    """A real LM's prompts are left-padded with -1; at h = 0 no prompt id is read, so the pads pass and the
    result equals that of a zero-width prompt."""
    tokens = np.array([[5, 9, 5, 7]])
    a = scores.score_redgreen(tokens, np.array([[-1, -1, 3]]), KEY, 0.5, h=0, vocab_size=20, dedup=True)
    b = scores.score_redgreen(tokens, np.zeros((1, 0), dtype=np.int64), KEY, 0.5, h=0, vocab_size=20, dedup=True)
    assert a.n_scored[0] == b.n_scored[0] == 3 and a.score[0] == b.score[0] and a.log10_p[0] == b.log10_p[0]
