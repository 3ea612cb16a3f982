"""Generic tilt e-processes (sims.detect.anytime.sequential_laws) and the tournament (SynthID) family."""

import math

import numpy as np
import pytest
from scipy.stats import binom

import sims
from sims.detect.anytime import peeking, sequential, sequential_laws
from sims.detect.families import detectors
from sims.detect.families.stream import SequentialDetector
from sims.detect.stats import tournament_scores as ts


def test_tilt_mixture_reproduces_redgreen_and_ems_bets():
    for g in (0.1, 0.25, 0.5):
        a, b = sequential.bernoulli_mixture(g), sequential_laws.tilt_mixture(sequential_laws.bernoulli_law(g))
        np.testing.assert_allclose(b.a, a.a, rtol=1e-9)
        np.testing.assert_allclose(b.b, a.b, rtol=1e-9, atol=1e-12)
    a, b = sequential.exponential_mixture(), sequential_laws.tilt_mixture(sequential_laws.exponential_law())
    np.testing.assert_allclose(b.a, a.a)
    np.testing.assert_allclose(b.b, a.b)


def test_weighted_bernoulli_law_is_exact():
    law = sequential_laws.weighted_bernoulli_law(np.ones(30, dtype=np.int64))
    np.testing.assert_allclose(np.exp(law.log_pmf), binom.pmf(np.arange(31), 30, 0.5), rtol=1e-12)
    th = np.array([-1.0, 0.3, 2.0])
    np.testing.assert_allclose(law.psi(th), 30 * np.log((1 + np.exp(th)) / 2), rtol=1e-12)
    w = sequential_laws.weighted_bernoulli_law(np.array([3, 1]), 0.5)
    assert w.values.tolist() == [0, 1, 3, 4] and np.allclose(np.exp(w.log_pmf), 0.25)
    # every bet is a test martingale: E_0 exp(theta X - psi(theta)) = 1
    mix = sequential_laws.tilt_mixture(law)
    np.testing.assert_allclose(np.exp(mix.a[:, None] * law.values + mix.b[:, None] + law.log_pmf).sum(axis=1), 1.0, rtol=1e-10)


def test_tournament_grid_keeps_the_kelly_rate():
    """Against i.i.d. Bernoulli(1/2 + d) layers (the watermark's mean-g drift) the best grid bet grows at
    >= 98 % of the optimal rate m KL(Ber(1/2 + d) || Ber(1/2)) for d in [0.005, 0.25]."""
    m = 30
    mix = sequential_laws.tilt_mixture(sequential_laws.weighted_bernoulli_law(np.ones(m, dtype=np.int64)))
    for d in np.geomspace(0.005, 0.25, 25):
        q = 0.5 + d
        kl = m * (q * math.log(2 * q) + (1 - q) * math.log(2 * (1 - q)))
        rate = mix.a * m * q + mix.b  # E[theta S - psi] per token
        assert rate.max() >= 0.98 * kl, (d, rate.max() / kl)


def _reference_stop(values, scored, law, alpha):
    mix = sequential_laws.tilt_mixture(law)
    return sequential.first_crossing(sequential.log_e_path(values, scored, mix), alpha)


@pytest.mark.parametrize("law", [sequential_laws.weighted_bernoulli_law(np.array([10, 7, 4, 1])),
                                 sequential_laws.lattice_law([-1.0, 0.5, 2.5], [0.5, 0.3, 0.2])])
def test_sequential_values_equals_numpy_reference(law):
    rng = np.random.default_rng(1)
    p = np.exp(law.log_pmf)
    tilt = p * np.exp(law.values / np.ptp(law.values))
    values = np.concatenate([rng.choice(law.values, size=(100, 150), p=p), rng.choice(law.values, size=(100, 150), p=tilt / tilt.sum())])
    scored = rng.random(values.shape) < 0.9
    values = np.where(scored, values, 0.0)
    r = sequential_laws.sequential_values(values, scored, law, alpha=1e-3)
    ref = _reference_stop(values, scored, law, 1e-3)
    assert (r.stop == ref).all() and r.detected.any() and not r.detected.all()


def _null_texts(n, T, seed):
    toks = np.random.default_rng(seed).integers(0, 32000, size=(n, T + 4))
    return toks[:, 4:], toks[:, :4]


def test_tournament_eprocess_is_valid_and_the_naive_rule_is_not():
    """Null texts (i.i.d. uniform tokens, seed 3, 10000 texts x 200 tokens, m = 30): the anytime test's
    false-positive rate at alpha = 0.01 is not above alpha (one-sided Clopper-Pearson at 99.9 %), for
    the mean and SynthID's weighted score; stopping at the first prefix whose exact fixed-length
    p-value is <= alpha is (same level)."""
    tokens, prompts = _null_texts(10000, 200, 3)
    for weights in (None, ts.synthid_weights(30)):
        r = sequential_laws.sequential_tournament(tokens, prompts, 11, 30, alpha=0.01, weights=weights)
        assert not peeking.exceeds_level(int(r.detected.sum()), r.stop.size, 0.01)
    values, scored, _ = sequential_laws.tournament_token_scores(tokens[:2000], prompts[:2000], 11, 30)
    s, n = np.cumsum(values, axis=1).astype(np.int64), np.cumsum(scored, axis=1)
    naive = (ts.mean_logsf(s, n, 30) <= math.log(0.01)).any(axis=1)
    assert peeking.exceeds_level(int(naive.sum()), naive.size, 0.01)


def test_tournament_detects_synthid_and_streams_the_same():
    gen = sims.generate(sims.get_lm("loopy"), "synthid", n=4, T=120, seed=0, key=7, m=5)
    r = detectors.sequential_score(gen, alpha=1e-4)
    assert r.detected.all() and (r.stop < 120).all()
    assert not detectors.sequential_score(gen, alpha=1e-4, key=8).detected.any()
    for i in range(4):
        det = SequentialDetector(7, algo="synthid", context=gen.prompts[i], h=gen.meta["h"], m=5, alpha=1e-4)
        for chunk in gen.tokens[i].reshape(12, 10):
            st = det.update(chunk)
        assert st.stop == r.stop[i] and st.n_scored == r.n_scored[i] and math.isclose(st.log_e, r.log_e[i], rel_tol=1e-9)


def test_family_of_an_algorithm_reads_the_registry(monkeypatch):
    from sims.detect import families
    from sims.watermarks import registry

    assert families.of("synthid").name == "tournament" and families.of("dualga").name == "redgreen"
    with pytest.raises(ValueError, match="algo must be one of"):
        families.of("nope")
    rec = registry.get("srl")
    monkeypatch.setattr(registry, "get", lambda name: type("R", (), dict(family="newfam", name=rec.name))())
    with pytest.raises(ValueError, match="family 'newfam'"):
        families.of("srl")


def test_laws_validate():
    with pytest.raises(ValueError, match="pmf"):
        sequential_laws.lattice_law([0, 1], [0.5, 0.6])
    with pytest.raises(ValueError, match="weights"):
        sequential_laws.weighted_bernoulli_law(np.array([0.5]))
    with pytest.raises(ValueError, match="p must be"):
        sequential_laws.bernoulli_law(1.0)
