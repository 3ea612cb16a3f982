"""The O(log V) sampler of unwatermarked text (sims.watermarks.null_sampler, issue 30) and the sweep's opt-in key."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import sims
from sims.sweep.chunk import run_chunk
from sims.sweep.grid import GridError, load_grid
from sims.watermarks import null_sampler as ns
from sims.watermarks.generate import generate_synthetic

PROB_TOL = 1e-12  # the tolerance on the per-step probabilities
CHI2_LEVEL = 1e-3  # a chi-square p-value below this fails the Monte Carlo check
LMS = ("news", "lfqa", "loopy", "tiny", "smollm2-fit")


@pytest.mark.parametrize("name", LMS)
def test_implied_probs_equal_probs_along(name):
    """The distribution the sampler searches equals the LM's exact p_t at every step of 3 texts x 30 tokens."""
    lm = sims.get_lm(name).synthetic
    gen = ns.generate_null(lm, n=3, T=30, seed=11, key=1)
    for i in range(3):
        seq = np.concatenate([gen.prompts[i], gen.tokens[i]])
        P = gen.prompts.shape[1]
        got, want = ns.implied_probs(lm, seq, P, 30), lm.probs_along(seq, P, 30)
        assert np.abs(got - want).max() < PROB_TOL


@pytest.mark.parametrize("name", ("news", "loopy", "smollm2-fit"))
def test_same_texts_and_entropy_as_the_generator_on_a_fixed_seed(name):
    """Seed 4, 40 texts x 60 tokens: the same inverse-CDF draw in id order gives today's texts (no uniform
    falls within rounding of a boundary here), and the entropy record equals the generator's."""
    lm = sims.get_lm(name).synthetic
    old = generate_synthetic(lm, "none", n=40, T=60, seed=4, key=42)
    new = ns.generate_null(lm, n=40, T=60, seed=4, key=42)
    np.testing.assert_array_equal(new.prompts, old.prompts)
    np.testing.assert_array_equal(new.tokens, old.tokens)
    np.testing.assert_allclose(new.entropy, old.entropy, rtol=0, atol=1e-12)
    assert (new.kl == 0).all() and np.isnan(new.G).all() and np.isnan(new.dg).all()
    assert {k: v for k, v in new.meta.items() if k != "sampler"} == old.meta and new.meta["sampler"] == "levels"


@pytest.mark.parametrize(("V", "ctx"), ((64, 0), (64, 5), (64, 17)))
def test_draws_follow_p_chi_square(V, ctx):
    """Monte Carlo: 100000 draws (seed 9, one uniform lane each) of the next token after a fixed context of
    ``loop_lm(V, p_loop=0.5)`` (contexts with and without a loop successor); Pearson's chi-square against
    the exact p (bins of expected count < 5 merged) must not reject at level CHI2_LEVEL."""
    lm = sims.loop_lm(vocab_size=V, p_loop=0.5, seed=0)
    n = 100_000
    gen = ns.generate_null(lm, n=n, T=1, seed=9, key=1, prompts=np.full((n, 1), ctx))
    p = lm.probs([ctx])
    counts = np.bincount(gen.tokens[:, 0], minlength=V)
    order = np.argsort(p)
    exp, obs = n * p[order], counts[order]
    small = np.cumsum(exp) < 5.0
    k = int(small.sum())
    exp = np.concatenate([[exp[: k + 1].sum()], exp[k + 1 :]])
    obs = np.concatenate([[obs[: k + 1].sum()], obs[k + 1 :]])
    assert stats.chisquare(obs, exp).pvalue > CHI2_LEVEL
    assert p.max() > 0.3 or ctx == 0  # at least one context with a dominant successor is drawn (loop or bump)


def test_draw_next_is_the_reference_inverse_cdf():
    """NumPy reference: the first token whose cumulative p in id order reaches u (seed 2, 2000 uniforms, 6 contexts of news)."""
    lm = sims.get_lm("news").synthetic
    C = ns.prefix_sums(lm)
    rng = np.random.default_rng(2)
    from sims.lm import synthetic as lm_mod

    for ctx in rng.integers(0, lm.vocab_size, size=(6, 2)):
        mod_tok, mod_logit = np.empty(lm_mod.N_BUMPS, dtype=np.int64), np.empty(lm_mod.N_BUMPS)
        state = lm_mod.context_into(lm.vocab_size, lm.order, lm.seed, lm.params, lm.levels, lm.base, ctx, mod_tok, mod_logit)
        tok, delta = np.empty(lm_mod.N_BUMPS, dtype=np.int64), np.empty(lm_mod.N_BUMPS)
        s = lm.level_sums[state[0], 0] + ns._sorted_bumps(state, mod_tok, mod_logit, lm.table[state[0]], lm.vocab_size, tok, delta)
        cum = np.cumsum(lm.probs(ctx))
        for u in np.concatenate([rng.random(2000), [0.0, 1.0 - 1e-16]]):
            want = min(int(np.searchsorted(cum, u)), lm.vocab_size - 1)
            got = ns.draw_next(C[state[0]], state[1], state[2], tok, delta, s, lm.vocab_size, u)
            assert got == want or abs(cum[min(got, want)] - u) < 1e-12


def test_input_checks():
    lm = sims.get_lm("tiny").synthetic
    with pytest.raises(ValueError, match="n and T"):
        ns.generate_null(lm, n=0, T=5, seed=0, key=1)
    with pytest.raises(ValueError, match="key"):
        ns.generate_null(lm, n=1, T=5, seed=0, key=-1)
    with pytest.raises(ValueError, match="prompts"):
        ns.generate_null(lm, n=2, T=5, seed=0, key=1, prompts=np.zeros((1, 3), dtype=np.int64))
    with pytest.raises(ValueError, match="P must be"):
        ns.implied_probs(lm, [0], 0, 1)


GRID = """lm = ["{lm}"]
n = 40
T = 30
chunk = 20
controls = true
metrics = ["log10_p", "dg", "peek_log10_p"]
{extra}
[[algo]]
name = "none"
gamma = 0.25
"""


def _load(tmp_path, lm="news", extra=""):
    p = tmp_path / "g.toml"
    p.write_text(GRID.format(lm=lm, extra=extra))
    return load_grid(p)


def test_sweep_sampler_key_is_opt_in(tmp_path):
    """A grid without the key (or with "blocks") keeps its hash; "levels" changes it; other values and
    non-synthetic LMs are refused with the key's line."""
    plain = _load(tmp_path)
    assert _load(tmp_path, extra='sampler = "blocks"').hash == plain.hash and plain.sampler is None
    levels = _load(tmp_path, extra='sampler = "levels"')
    assert levels.hash != plain.hash and levels.sampler == "levels"
    with pytest.raises(GridError, match="g.toml:7: key 'sampler'"):
        _load(tmp_path, extra='sampler = "alias"')
    with pytest.raises(GridError, match="not one"):
        _load(tmp_path, lm="uniform", extra='sampler = "levels"')


def test_sweep_chunk_with_levels_sampler_equals_generate_null(tmp_path):
    """run_chunk under sampler = "levels" scores the texts generate_null draws (and its controls)."""
    from sims import sweep

    grid = _load(tmp_path, extra='sampler = "levels"')
    task = next(iter(sweep.tasks(grid).values()))
    rows = run_chunk(task)
    plain = run_chunk({**task, "sampler": None})
    # the same texts here (test_same_texts...), so the same p-values; DG is recorded by the generator only
    np.testing.assert_array_equal(rows["log10_p"], plain["log10_p"])
    assert rows["log10_p"].shape == (40,) and np.isnan(rows["dg"]).all() and np.isfinite(plain["dg"]).all()
