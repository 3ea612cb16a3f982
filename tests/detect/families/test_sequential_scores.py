"""E-processes of the registered score families (sims.detect.families.sequential_scores): the ln Y law, validity
by Monte Carlo against the naive prefix rule, streaming equal to batch, and ``detect --sequential --score``."""

import json
import math

import numpy as np
import pytest
from scipy.stats import gamma as gamma_dist

import sims
from sims.cli.main import main
from sims.core.record import Generation
from sims.detect.anytime import e_mixtures, peeking, sequential, sequential_laws
from sims.detect.families import detectors, sequential_scores
from sims.detect.families.stream import SequentialDetector


def test_log_uniform_law_bets():
    """ln Y, Y ~ U(0, 1): psi(theta) = -ln(1 + theta); bet j's tilted mean is f_j - 1 (theta_j = f_j / (1 - f_j)),
    its factor (1 + theta) Y^theta; thresholds are negative and equal the reference crossing on simulated
    null and Beta(1 + theta, 1) data (a watermark-like drift of Y upwards)."""
    law = sequential_laws.log_uniform_law()
    mix = sequential_laws.tilt_mixture(law)
    f = e_mixtures.GRID
    np.testing.assert_allclose(mix.a, f / (1 - f), rtol=1e-12)
    np.testing.assert_allclose(mix.b, np.log1p(mix.a), rtol=1e-12)
    np.testing.assert_allclose(law.tilted_mean(mix.a), f - 1, rtol=1e-12)
    assert law.top == 0.0 and law.mean == -1.0
    rng = np.random.default_rng(5)
    y = np.concatenate([rng.random((100, 150)), rng.random((100, 150)) ** (1 / 1.6)])
    values, scored = np.log(y), rng.random(y.shape) < 0.9
    values = np.where(scored, values, 0.0)
    r = sequential_laws.sequential_values(values, scored, law, alpha=1e-3)
    ref = sequential.first_crossing(sequential.log_e_path(values, scored, mix), 1e-3)
    assert (r.stop == ref).all() and r.detected[100:].mean() > 0.5 and not r.detected[:100].any()
    assert (e_mixtures.linear_thresholds(mix, 150, 1e-3)[60:] < 0).all()


def _null_gen(n, T, seed):
    toks = np.random.default_rng(seed).integers(0, 32000, size=(n, T + 1))
    z = np.zeros((n, T))
    meta = dict(lm="news", vocab_size=32000, algo="ems", key=3, h=1, gamma=0.25, green_kind="bernoulli")
    return Generation(toks[:, 1:], toks[:, :1], z, z, z, z, z, meta)


def test_ems_log_eprocess_is_valid_and_the_naive_rule_is_not():
    """Null texts (i.i.d. uniform tokens, seed 6, 4000 texts x 200 tokens, dedup): the ems-log e-process's
    false-positive rate at alpha = 0.01 is not above alpha (one-sided Clopper-Pearson at 99.9 %); stopping at
    the first prefix whose fixed-length ems-log p-value P(Gamma(n, 1) <= -S_n) is <= alpha is (same level, on
    the first 1000 texts)."""
    gen = _null_gen(4000, 200, 6)
    r = sequential_scores.sequential_score_family(gen, "ems-log", alpha=0.01)
    assert not peeking.exceeds_level(int(r.detected.sum()), r.stop.size, 0.01)
    from sims.detect.stats import scores

    v, scored = scores.token_scores(gen.tokens[:1000], gen.prompts[:1000], 3, stat="ems", h=1, dedup=True, vocab_size=32000)
    s = np.cumsum(np.where(scored, sequential_scores.ems_log_terms(v), 0.0), axis=1)
    n = np.cumsum(scored, axis=1)
    naive = (gamma_dist.cdf(-s, np.maximum(n, 1)) <= 0.01).any(axis=1)
    assert peeking.exceeds_level(int(naive.sum()), naive.size, 0.01)


def test_ems_log_detects_streams_the_same_and_is_refused_where_it_does_not_apply():
    gen = sims.generate(sims.get_lm("news", vocab_size=2000), "ems", n=3, T=100, seed=0, key=7)
    r = sequential_scores.sequential_score_family(gen, "ems-log", alpha=1e-4)
    assert r.detected.all() and not sequential_scores.sequential_score_family(gen, "ems-log", alpha=1e-4, key=8).detected.any()
    ars = sequential_scores.sequential_score_family(gen, "ems-ars", alpha=1e-4)
    assert ars.stop.tolist() == detectors.sequential_score(gen, alpha=1e-4).stop.tolist()
    for i in range(3):
        det = SequentialDetector(7, algo="ems", context=gen.prompts[i, -1:], h=1, vocab_size=2000, alpha=1e-4, score="ems-log")
        for chunk in gen.tokens[i].reshape(10, 10):
            st = det.update(chunk)
        assert st.stop == r.stop[i] and st.n_scored == r.n_scored[i] and math.isclose(st.log_e, r.log_e[i], rel_tol=1e-9)
    with pytest.raises(ValueError, match="no anytime-valid e-process"):
        sequential_scores.sequential_score_family(gen, "ems-hc", alpha=1e-4)
    with pytest.raises(ValueError, match="score"):
        sequential_scores.sequential_score_family(gen, "green", alpha=1e-4)  # not a score of EMS texts
    with pytest.raises(ValueError, match="no anytime-valid e-process"):
        SequentialDetector(7, algo="ems", context=[1], h=1, score="ems-trgof")


def test_cli_sequential_score(tmp_path, capsys):
    gen = sims.generate(sims.get_lm("news", vocab_size=2000), "ems", n=3, T=100, seed=0, key=7)
    gen.save(tmp_path / "ems.npz")
    rc = main(["detect", str(tmp_path / "ems.npz"), "--key", "7", "--sequential", "--dedup", "--score", "ems-log", "--fpr", "1e-4", "--json"])
    doc = json.loads(capsys.readouterr()[0])
    r = sequential_scores.sequential_score_family(gen, "ems-log", alpha=1e-4)
    assert rc == 0 and doc["score"] == "ems-log" and [t["first_flagged"] for t in doc["texts"]] == r.stop.tolist()
    rc = main(["detect", str(tmp_path / "ems.npz"), "--key", "7", "--sequential", "--score", "ems-hc"])
    assert rc == 2 and "no anytime-valid e-process" in capsys.readouterr()[1]
