"""The edit-tolerant ITS score's inputs and p-values (sims.detect.stats.edit_scores) on a hand-made generation:
the weight cap at e^-50, the permutation p-value against its definition (fresh keys from
default_rng([seed, i]), seed 0 by default, every resample's alignment by the NumPy twin), band 0 accepted
and non-integer counts refused."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sims.core.record import Generation
from sims.detect.stats import edit_scores as E

V, T = 12, 9


def _gen(n=2, seed=5):
    rng = np.random.default_rng(seed)
    tokens, prompts = rng.integers(0, V, size=(n, T)), rng.integers(0, V, size=(n, 1))
    z = np.zeros((n, T))
    meta = dict(lm="news", vocab_size=V, algo="its", key=9, h=1, gamma=0.25, green_kind="bernoulli")
    probs = rng.dirichlet(np.ones(V), size=(n, T))
    return Generation(tokens, prompts, z, z, z, z, z, meta, lengths=np.array([T, 6])[:n]), (lambda i: probs[i])


def test_weight_is_minus_log_p_capped_at_50():
    """Token probabilities e^-49.5 and e^-50.5 (the rest spread evenly): weights 49.5 and exactly 50 (the cap,
    W_MAX; kills W_MAX = 50.0 -> 51.0)."""
    gen, _ = _gen(1)
    probs = np.full((T, V), 0.0)
    for t, lp in ((0, -49.5), (1, -50.5)):
        probs[t] = (1.0 - math.exp(lp)) / (V - 1)
        probs[t, gen.tokens[0, t]] = math.exp(lp)
    probs[2:] = 1.0 / V
    _, _, w = E.edit_inputs(gen, lambda i: probs, 9, 0)
    assert w[0] == pytest.approx(49.5, rel=1e-12) and w[1] == 50.0 and w[2] == pytest.approx(math.log(V), rel=1e-12)


@pytest.mark.parametrize("band", [0, 3])
def test_prefix_pvalues_equal_their_definition(band):
    """Two texts (9 and 6 tokens), 30 resamples: log10 p of prefix t = log10((1 + #{r: S_t(U_r) >= S_t(u_key)}) / 31),
    U_r the rows of default_rng([0, i]).random((30, L + band)) and S_t by the NumPy twin of the alignment.
    Band 0 must be accepted (kills ``band < 0`` -> ``<=``); seed 0 is the default (kills EDIT_SEED = 1)."""
    gen, step = _gen()
    got, stat = E.edit_prefix_log10p(gen, step, band=band, resamples=30)
    for i, L in enumerate(gen.lengths):
        lo, hi, w = E.edit_inputs(gen, step, 9, i)
        J = L + band
        obs = E.align_prefix_max_reference(lo, hi, w, E.key_uniforms(9, J), band, 1.0)
        U = np.random.default_rng([0, i]).random((30, J))
        counts = sum((E.align_prefix_max_reference(lo, hi, w, u, band, 1.0) >= obs).astype(int) for u in U)
        np.testing.assert_allclose(got[i, :L], np.log10((1.0 + counts) / 31.0), rtol=1e-13)
        assert np.isnan(got[i, L:]).all() and stat[i] == pytest.approx(obs[-1], rel=1e-13)


def test_counts_must_be_integers():
    gen, step = _gen()
    for kw, msg in ((dict(resamples=True), r"resamples must be an integer in \[1, inf\); got True"),
                    (dict(resamples=2.5), r"resamples must be an integer in \[1, inf\); got 2.5"),
                    (dict(band=1.5), r"band must be an integer in \[0, inf\); got 1.5"),
                    (dict(seed=True), r"seed must be an integer in \[0, inf\); got True")):
        with pytest.raises(ValueError, match=msg):
            E.edit_prefix_log10p(gen, step, **kw)
