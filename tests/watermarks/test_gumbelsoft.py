"""GumbelSoft (:mod:`sims.watermarks.gumbelsoft`): the rule by hand, its limit at gs_tau -> 0, its draw, its detector.

The registry battery (tests/watermarks/test_registry_battery.py) compares the Numba step's KL and DG and the
torch processor's output law with the reference step at every step; here the reference is checked by hand,
against EMS in the limit, the generator's draw against the inverse CDF of the sampling uniform, and the
detector (the EMS family's Gumbel-max sum) for its power and its null.
"""

import math

import numpy as np
import pytest
from scipy import stats

import sims
from sims.core import prf, rng
from sims.detect.families import detectors
from sims.lm.synthetic import open_synthetic
from sims.watermarks import gumbelsoft, registry
from sims.watermarks.generate import generate_synthetic


def test_the_law_by_hand():
    """p = (1/2, 1/4, 1/4), g = (0, ln 2, -ln 2), tau = 1/2: (log p + g)/tau = 2 (-ln 2, -ln 2, -3 ln 2), so
    q is proportional to (1/4, 1/4, 1/64): (16, 16, 1) / 33."""
    q = gumbelsoft.soft_law(np.array([0.5, 0.25, 0.25]), np.array([0.0, math.log(2), -math.log(2)]), 0.5)
    np.testing.assert_allclose(q, np.array([16, 16, 1]) / 33, rtol=1e-14)


def test_the_noise_is_the_ems_streams_gumbel():
    window = np.array([8])
    r = prf.uniforms(prf.context_hash(3, window, prf.EMS), np.arange(50))
    np.testing.assert_allclose(gumbelsoft.gumbels(3, window, 50), -np.log(-np.log(r)), rtol=1e-15)


@pytest.mark.parametrize("key", [1, 2, 3, 4, 5])
def test_the_zero_temperature_limit_is_the_ems_token(key):
    """At gs_tau = 1e-3 the reference's law puts more than 1 - 1e-9 on EMS's token argmax_k log(r_k)/p_k for the same key
    (tiny LM after prefix [3]; the gap between the top two Gumbel scores is above 0.05 for these keys, so the limit is
    reached)."""
    lm = open_synthetic("tiny")
    p = lm.probs(np.array([3]))
    window = np.array([3])
    q_ems, _ = registry.get("ems").reference(p, window, 0, key, (0.0, False), dict(tau=1.0))
    q, _ = gumbelsoft.ref_gumbelsoft(p, window, 0, key, (0.0, False), dict(gs_tau=1e-3))
    top2 = np.sort(np.log(p) + gumbelsoft.gumbels(key, window, p.shape[0]))[-2:]
    assert top2[1] - top2[0] > 0.05
    assert q[np.argmax(q_ems)] > 1 - 1e-9


def test_the_generator_draws_the_inverse_cdf_of_its_uniform():
    """lfqa (V = 2000), 3 texts x 20 tokens, seed 6, key 8, gs_tau = 0.7: each token is where the cumulative q of the
    reference passes u = lane 2t of the text's counter stream (seed, i)."""
    lm = open_synthetic("lfqa", vocab_size=2000)
    gen = generate_synthetic(lm, "gumbelsoft", n=3, T=20, seed=6, key=8, gs_tau=0.7)
    P = gen.prompts.shape[1]
    for i in range(3):
        seq = np.concatenate([gen.prompts[i], gen.tokens[i]])
        u = rng.uniforms(rng.stream_key(6, i), 2 * np.arange(20))
        for t in range(20):
            q, _ = gumbelsoft.ref_gumbelsoft(lm.probs(seq[: P + t]), seq[P + t - 1 : P + t], t, 8, (0.0, False), dict(gs_tau=0.7))
            assert gen.tokens[i, t] == int(np.searchsorted(np.cumsum(q), u[t], side="right")), (i, t)


def test_gumbelsoft_texts_are_detected_and_diverse():
    """news (V = 2000), 20 texts x 100 tokens, gs_tau = 0.5, seed 1, key 9: every text below 1e-6 with its key, none below
    1e-4 with another (3); the same prompts under another sampling seed (2) give other texts (EMS would repeat them)."""
    lm = sims.get_lm("news", vocab_size=2000)
    gen = sims.generate(lm, "gumbelsoft", n=20, T=100, seed=1, key=9)
    assert (detectors.score(gen, lm, key=9).log10_p < -6).all()
    assert (detectors.score(gen, lm, key=3).log10_p > -4).all()
    again = sims.generate(lm, "gumbelsoft", n=20, T=100, seed=2, key=9, prompts=gen.prompts)
    assert (again.tokens != gen.tokens).any(axis=1).all()


def test_null_p_values_over_many_keys():
    """Real GumbelSoft texts under keys that did not mark them: news (V = 2000), 400 texts x 30 tokens (seed 5, key 1),
    dedup, scored under 2,500 other keys (1,000,000 p-values).  #(p <= 1e-4) lies in the two-sided 99.9 % band of
    Binomial(10^6, 1e-4) and #(p <= 1e-6) is not above the one-sided 99.9 % bound of Binomial(10^6, 1e-6).  (The
    level of the Gamma tail itself at 1e-4 and 1e-6, by importance sampling: tests/watermarks/test_pf.py.)"""
    lm = sims.get_lm("news", vocab_size=2000)
    gen = sims.generate(lm, "gumbelsoft", n=400, T=30, seed=5, key=1)
    lp, _ = detectors.score_keys(gen, np.arange(2, 2502))
    N = lp.size
    k4, k6 = int((lp <= -4).sum()), int((lp <= -6).sum())
    assert stats.binom.ppf(5e-4, N, 1e-4) <= k4 <= stats.binom.isf(5e-4, N, 1e-4)
    assert k6 <= stats.binom.isf(1e-3, N, 1e-6)


def test_the_record_and_its_parameter():
    rec = registry.get("gumbelsoft")
    assert (rec.code, rec.params, rec.family, rec.point_mass, rec.distortion_free) == (16, ("gs_tau",), "ems", False, False)
    assert registry.resolve_params("gumbelsoft")["gs_tau"] == 0.5 and "gs_tau" not in registry.resolve_params("ems")
    with pytest.raises(ValueError, match="gs_tau must be in \\(0, inf\\); got -1.0"):
        registry.resolve_params("gumbelsoft", gs_tau=-1.0)
