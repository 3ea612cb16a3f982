"""Detectors of tournament sampling: g-values of texts == the generator's, the exact weighted tail
against 50-digit mpmath, null p-values of the package's own unwatermarked texts, the Bayesian
detector's calibration on held-apart null texts."""

import math

import mpmath as mp
import numpy as np
import pytest
from scipy import stats

from sims.core import prf
from sims.detect.stats import tournament_scores as ts
from sims.lm.synthetic import open_synthetic
from sims.watermarks import tournament as tn
from sims.watermarks.generate import generate_synthetic

LM = open_synthetic("news", vocab_size=256)
REL = 1e-11  # relative accuracy promised for ln p of the weighted tail


def _exact_logsf(s, n, w):
    """ln P(sum_l w_l Bin(n, 1/2) >= s) by exact integer convolution in 50-digit mpmath."""
    mp.mp.dps = 50
    pmf = {0: mp.mpf(1)}
    b = [mp.binomial(n, j) / mp.mpf(2) ** n for j in range(n + 1)]
    for wl in w:
        new = {}
        for k, v in pmf.items():
            for j in range(n + 1):
                new[k + wl * j] = new.get(k + wl * j, 0) + v * b[j]
        pmf = new
    return float(mp.log(mp.fsum(v for k, v in pmf.items() if k >= s)))


@pytest.mark.parametrize(("n", "w"), [(12, [10, 6, 4, 2]), (40, [3, 2, 1]), (9, [7, 0, 5, 3, 1])])
def test_weighted_tail_against_mpmath(n, w):
    """Every s from 0 to n sum(w) + 1 (p from 1 down to 2**-120 and 0), 50-digit reference."""
    w = np.array(w)
    top = n * int(w.sum())
    s = np.arange(0, top + 2)
    got = ts.weighted_logsf(s, n, w)
    assert got[-1] == -np.inf and got[0] == 0.0
    for sv in range(1, top + 1, max(1, top // 40)):
        ref = _exact_logsf(sv, n, w.tolist())
        assert got[sv] == pytest.approx(ref, rel=REL, abs=1e-14), sv
    assert got[top] == pytest.approx(-n * np.count_nonzero(w) * math.log(2.0), rel=REL)


def test_weighted_tail_with_unit_weights_is_binomial_and_gcd():
    """Unit weights: the Binomial(m n, 1/2) tail (exact binom_logsf); weights 4 x (3, 1): the same
    as (3, 1) at ceil(s / 4)."""
    s = np.arange(0, 201, 7)
    assert np.allclose(ts.weighted_logsf(s, 50, np.ones(4, dtype=np.int64)), ts.mean_logsf(s, 50, 4), rtol=REL, atol=1e-14)
    assert np.allclose(ts.weighted_logsf(s, 30, np.array([12, 4])), ts.weighted_logsf(-(-s // 4), 30, np.array([3, 1])), rtol=0, atol=0)


def test_weighted_tail_monte_carlo():
    """Monte Carlo (seed 0, 2e6 draws of sum_l w_l Bin(20, 1/2), m = 6 SynthID weights): the empirical
    tail at three levels near 1e-2, 1e-4, 1e-5 lies in its 99.9 % Clopper-Pearson interval."""
    rng = np.random.default_rng(0)
    w = ts.synthid_weights(6)
    S = rng.binomial(20, 0.5, size=(2_000_000, 6)) @ w
    for target in (1e-2, 1e-4, 1e-5):
        lnp = ts.weighted_logsf(np.arange(0, 20 * w.sum() + 1), 20, w)
        s = int(np.argmax(lnp < math.log(target)))
        k = int(np.sum(S >= s))
        lo, hi = stats.binomtest(k, S.size).proportion_ci(0.999, method="exact")
        assert lo <= math.exp(lnp[s]) <= hi, (target, s, k)


def test_text_g_values_equal_the_generators():
    """The detector's words are the generator's PRF words of each (context, token) and its scored
    mask is "context not seen before at a generated position" (Python set reference)."""
    g = tn.generate_tournament(LM, n=3, T=40, seed=1, key=11, m=8, h=1)
    words, scored = ts.g_words(g.tokens, g.prompts, 11, h=1)
    for i in range(3):
        text = np.concatenate([g.prompt(i), g.text(i)])
        P = g.prompts.shape[1]
        seen = set()
        for t in range(40):
            ctx = text[P + t - 1 : P + t]
            assert words[i, t] == tn.g_words(11, ctx, text[P + t])
            ch = int(prf.context_hash(11, ctx, tn.TOURNAMENT_STREAM))
            assert scored[i, t] == (ch not in seen)
            seen.add(ch)
    assert (~scored).sum() > 0


def test_null_p_values_are_valid_on_unwatermarked_texts():
    """300 unwatermarked texts of the package's LM (200 tokens, h = 4, m = 10): the mean and
    weighted p-values are valid: the share below 0.05 and below 0.01 within the upper 99.9 %
    Clopper-Pearson bound of a rate of 0.05 and 0.01, and the median p-value is not small."""
    nul = generate_synthetic(LM, "none", n=300, T=200, seed=5, key=0)
    for stat in ("mean", "weighted"):
        r = ts.score_tournament(tokens=nul.tokens, prompts=nul.prompts, key=99, m=10, h=4, stat=stat)
        p = 10.0 ** r.log10_p
        assert np.mean(p <= 0.05) <= stats.binomtest(15, 300).proportion_ci(0.999, method="exact")[1]
        assert np.mean(p <= 0.01) <= stats.binomtest(3, 300).proportion_ci(0.999, method="exact")[1]
        assert np.median(p) > 0.3


def test_watermarked_texts_are_detected_and_other_keys_are_not():
    g = tn.generate_tournament(LM, n=6, T=100, seed=3, key=21, m=10)
    for stat in ("mean", "weighted"):
        assert np.all(ts.score_tournament(g, stat=stat).log10_p < -6)
        assert np.all(ts.score_tournament(g, stat=stat, key=22).log10_p > -3)
    r = ts.score_tournament(g)
    assert np.array_equal(r.score, [int(np.sum(tn.g_values(w, 10))) for w in (
        ts.g_words(g.tokens, g.prompts[:, -4:], 21)[0][i][ts.g_words(g.tokens, g.prompts[:, -4:], 21)[1][i]] for i in range(6))])


def test_bayesian_detector_calibration_on_held_apart_nulls():
    """Fit on 60 watermarked texts (m = 8, 60 tokens), calibrate at FPR 0.05 on 200 null texts,
    measure on 1000 other null texts: the FPR lies in the 99.9 % interval of a threshold set from 200
    texts (binomial bound at 0.05 + 3 sd of the calibration quantile), and 60 fresh watermarked
    texts are all flagged; the posterior is monotone in the LLR."""
    m, T = 8, 60
    train = tn.generate_tournament(LM, n=60, T=T, seed=7, key=5, m=m)
    test_wm = tn.generate_tournament(LM, n=60, T=T, seed=8, key=5, m=m)
    nulls = generate_synthetic(LM, "none", n=1200, T=T, seed=9, key=0)

    def gv(gen, rows=slice(None)):
        words, scored = ts.g_words(gen.tokens[rows], gen.prompts[rows], 5, h=4)
        return ts.g_values_of(words, scored, m)

    det = ts.BayesianDetector(m).fit(gv(train))
    assert det.coef[0][0] > 0.1  # layer 0 leans towards g = 1 under the watermark
    det.calibrate(gv(nulls, slice(0, 200)), 0.05)
    fpr = det.flag(gv(nulls, slice(200, 1200))).mean()
    sd_quantile = math.sqrt(0.05 * 0.95 / 200)
    assert fpr <= 0.05 + 3.3 * (sd_quantile + math.sqrt(0.05 * 0.95 / 1000))
    assert det.flag(gv(test_wm)).all()
    llr, post = det.llr(gv(test_wm)), det.posterior(gv(test_wm), prior=0.1)
    assert np.all(np.diff(post[np.argsort(llr)]) >= 0)
    with pytest.raises(ValueError, match="fpr"):
        det.calibrate(gv(nulls, slice(0, 10)), 0.0)
    with pytest.raises(ValueError, match="at least"):
        det.calibrate(gv(nulls, slice(0, 10)), 0.01)


def test_bad_input():
    with pytest.raises(ValueError, match="weights"):
        ts.weighted_logsf(3, 5, np.array([0.5, 1.0]))
    with pytest.raises(ValueError, match="weights"):
        ts.weighted_logsf(3, 5, np.array([0, 0]))
    with pytest.raises(ValueError, match="n must"):
        ts.weighted_logsf(3, -1, np.array([1, 2]))
    with pytest.raises(ValueError, match="stat"):
        ts.score_tournament(tokens=np.zeros((1, 3), dtype=np.int64), prompts=np.zeros((1, 4), dtype=np.int64), key=1, m=3, stat="x")
    with pytest.raises(ValueError, match="m must"):
        ts.score_tournament(tokens=np.zeros((1, 3), dtype=np.int64), prompts=np.zeros((1, 4), dtype=np.int64), key=1, m=0)
    with pytest.raises(ValueError, match="key"):
        ts.g_words(np.zeros((1, 3), dtype=np.int64), np.zeros((1, 4), dtype=np.int64), key=-2)


def test_weighted_tail_at_another_rate_is_the_binomial_for_unit_weights():
    """rate 0.37: unit weights give the Binomial(m n, 0.37) tail of binom_logsf (exact, log space)."""
    from sims.detect.stats.nulls import binom_logsf

    s = np.arange(0, 121, 3)
    assert np.allclose(ts.weighted_logsf(s, 40, np.ones(3, dtype=np.int64), rate=0.37), binom_logsf(s, 120, 0.37), rtol=REL, atol=1e-13)
    with pytest.raises(ValueError, match="rate"):
        ts.weighted_logsf(3, 5, np.array([1, 2]), rate=1.0)


def test_attacked_texts_flow_through_the_detector():
    """sims.attack keeps the record's meta: 10 % substitution of 6 x 100 tournament tokens (m = 10,
    h = 4: ~59 % of the 5-grams intact) is still detected at p < 1e-4; 30 % deletion scores the 70
    remaining tokens and weakens every text's evidence."""
    from sims.experiments.attacks import attack

    g = tn.generate_tournament(LM, n=6, T=100, seed=3, key=21, m=10)
    clean = ts.score_tournament(g).log10_p
    sub = ts.score_tournament(attack(g, "substitution", 0.1, 0)).log10_p
    assert np.all(sub < -4)
    dele = ts.score_tournament(attack(g, "deletion", 0.3, 0))
    assert np.all(dele.n_scored <= 70) and np.all(dele.log10_p > clean)
