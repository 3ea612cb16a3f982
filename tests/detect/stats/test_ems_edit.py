"""The edit-tolerant EMS score (sims.detect.stats.ems_edit): the kernels equal their NumPy twins and a
brute-force enumeration of alignments, band 0 / gap inf is the plain EMS sum, the permutation p-value is
exact under the null (Monte Carlo, stated below), it beats the plain sum under insertions, and it is a
registered family usable from the CLI and a sweep grid."""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
import pytest
from scipy.stats import binom

import sims  # noqa: F401  (registers the families)
from sims.core import prf
from sims.detect.families import score_families
from sims.detect.families.score_families import score_generation
from sims.detect.stats import _ems_edit_kernels as EK
from sims.detect.stats import edit_scores, scores
from sims.detect.stats import ems_edit as E
from sims.experiments.attacks import attack
from sims.lm.synthetic import open_synthetic
from sims.watermarks import registry
from sims.watermarks.generate import generate_synthetic


@pytest.fixture(scope="module")
def small():
    return open_synthetic("news", vocab_size=500)


def _kernel_prefix(seq, h, key, band, gap):
    L = len(seq) - h
    ctx, out = np.empty(L, dtype=np.uint64), np.empty(L)
    EK.window_hashes(np.asarray(seq, dtype=np.int64), h, np.uint64(key), ctx)
    EK.align_prefix_max(np.asarray(seq[h:], dtype=np.int64), ctx, band, gap, np.empty(L + 1), out)
    return ctx, out


def _brute_force(seq, h, key, band, gap):
    """Every prefix's best alignment by enumerating which tokens are skipped (runs of at most ``band``),
    each kept token scored under the hash of the h ids ending at the previous kept one."""
    y = seq[h:]

    def g(s, t):
        c = prf.context_hash(key, np.asarray(seq[s : s + h], dtype=np.int64).reshape(1, h), prf.EMS)[0]
        return -math.log1p(-float(prf.uniforms(c, y[t - 1])))

    best = []
    for L in range(1, len(y) + 1):
        b = -math.inf
        for keep in itertools.product((True, False), repeat=L):
            runs = [len(list(r)) for k, r in itertools.groupby(keep) if not k]
            if runs and max(runs) > band:
                continue
            v, prev = 0.0, 0
            for t in range(1, L + 1):
                if keep[t - 1]:
                    v, prev = v + g(prev, t), t
                else:
                    v -= gap
            b = max(b, v)
        best.append(b)
    return np.array(best)


def test_kernels_equal_their_numpy_twins_and_a_brute_force():
    """Random small cases (seed 0: h in {0, 1, 2}, 1..7 tokens of a 5-token vocabulary, so windows and
    pairs repeat; band 0..3; gap in [0, 2)): window hashes, the DP and the enumeration agree."""
    r = np.random.default_rng(0)
    for _ in range(30):
        h, L, band = int(r.integers(0, 3)), int(r.integers(1, 8)), int(r.integers(0, 4))
        seq, key, gap = r.integers(0, 5, h + L), int(r.integers(0, 2**63)), float(r.random() * 2.0)
        ctx, out = _kernel_prefix(seq, h, key, band, gap)
        assert np.array_equal(ctx, E.window_hashes_reference(seq, h, key))
        assert np.allclose(out, E.align_prefix_max_reference(seq[h:], ctx, band, gap), rtol=1e-13, atol=1e-13)
        assert np.allclose(out, _brute_force(seq, h, key, band, gap), rtol=1e-12, atol=1e-12), (h, L, band, gap)


def test_no_skip_is_the_plain_ems_sum(small):
    """band 0, or gap inf, makes S the ems-ars sum of -ln(1 - Y_t) (no dedup) on every prefix; any band and
    gap give at least that sum, more once tokens were inserted."""
    gen = attack(generate_synthetic(small, "ems", n=4, T=30, seed=1, key=9), "insertion", 0.3, seed=2)
    v, _ = scores.token_scores(gen.tokens, gen.prompts[:, -1:], 9, stat="ems", h=1, vocab_size=500, lengths=gen.lengths)
    n = scores._check_inputs(gen.tokens, gen.prompts, 500, 1, gen.lengths)[2]
    for band, gap in ((0, 0.0), (0, 3.0), (4, math.inf)):
        lp, S = E.ems_edit_prefix_log10p(gen, band=band, gap=gap, resamples=9)
        assert np.allclose(S, v.sum(axis=1), rtol=1e-12)
        assert np.allclose(score_generation(gen, "ems-ars", small).score, S, rtol=1e-12)
    plain = v.sum(axis=1)
    for gap in (0.0, 0.5, 2.0):
        S = E.ems_edit_prefix_log10p(gen, gap=gap, resamples=9)[1]
        assert np.all(S >= plain - 1e-9) and np.any(S > plain + 1e-6), gap
    for i in range(4):
        seq = np.concatenate([gen.prompts[i, -1:], gen.tokens[i, : n[i]]])
        assert np.allclose(_kernel_prefix(seq, 1, 9, 0, 1.0)[1], np.cumsum(v[i, : n[i]]), rtol=1e-12)


def test_every_row_is_the_prefix_test(small):
    """Row t of the prefix p-values is the test of the text cut to t tokens (same fresh keys)."""
    gen = attack(generate_synthetic(small, "ems", n=3, T=12, seed=2, key=9), "insertion", 0.3, seed=1)
    lp, _ = E.ems_edit_prefix_log10p(gen, resamples=49)
    n = scores._check_inputs(gen.tokens, gen.prompts, 500, 1, gen.lengths)[2]
    for t in (3, 8, 12):
        cut = dataclasses.replace(gen, lengths=np.minimum(n, t))
        assert np.allclose(E.score_ems_edit(cut, resamples=49).log10_p, lp[:, t - 1], rtol=0, atol=1e-12)


def test_pvalues_do_not_depend_on_the_thread_count(small):
    """The fresh keys are scored in parallel blocks; one thread and two give the same counts."""
    import numba

    gen = attack(generate_synthetic(small, "ems", n=3, T=15, seed=3, key=9), "insertion", 0.3, seed=1)
    was = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = E.ems_edit_prefix_log10p(gen, key=11, resamples=150)[0]
        numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
        two = E.ems_edit_prefix_log10p(gen, key=11, resamples=150)[0]
    finally:
        numba.set_num_threads(was)
    assert np.array_equal(one, two, equal_nan=True) and np.nanmax(one) > np.nanmin(one)


@pytest.mark.parametrize("resamples", [1, 19])
def test_permutation_pvalue_is_exact_under_the_null(small, resamples):
    """Null texts (sampled from p), text i scored with key 1000 + i (the guarantee is over a random key)
    and N = ``resamples`` fresh keys: p-hat is uniform on {1/(N+1), ..., 1} (no ties: continuous scores).
    MC: 1000 texts of 20 tokens (generation seed 4, resampling seed 0); the count at each level
    k / (N + 1) <= 0.5 must lie in the exact binomial 99.9 % interval of 1000 draws."""
    n = 1000
    gen = generate_synthetic(small, "none", n=n, T=20, seed=4, key=9)
    p = 10 ** E.score_ems_edit(gen, key=1000 + np.arange(n), resamples=resamples).log10_p
    for a in sorted({k / (resamples + 1) for k in (1, resamples // 4 + 1, (resamples + 1) // 2)}):
        k = int(np.sum(p <= a + 1e-12))
        lo, hi = binom.ppf(0.0005, n, a), binom.isf(0.0005, n, a)
        assert lo <= k <= hi, (a, k, lo, hi)


def test_power_beats_the_plain_sum_under_insertions(small):
    """EMS texts of 8 tokens (generation seed 1, key 9), half as many tokens again inserted (attack seed 2):
    at level 0.01, ems-edit (N = 199 fresh keys, seed 0) detects texts the exact ems-ars test misses more
    often than the reverse; an exact one-sided sign test on the discordant pairs rejects equal power at 0.01."""
    gen = attack(generate_synthetic(small, "ems", n=200, T=8, seed=1, key=9), "insertion", 0.5, seed=2)
    edit = E.score_ems_edit(gen, resamples=199).log10_p <= -2
    plain = score_generation(gen, "ems-ars", small).log10_p <= -2
    b, c = int(np.sum(edit & ~plain)), int(np.sum(plain & ~edit))
    assert binom.sf(b - 1, b + c, 0.5) < 0.01, (b, c)


def test_registered_and_usable_from_the_cli_and_a_grid(tmp_path, capsys):
    import json

    from sims.cli.main import main
    from sims.sweep.grid import load_grid

    assert registry.names(edit_score=True) == ("ems", "its", "exp") and edit_scores.EDIT_ALGOS == ("its",)
    assert score_families.score_names("ems")[-1] == "ems-edit" and score_families.score_names("its") == ("hits", "its-edit")
    s = score_families.get_score("ems-edit")
    assert s.algos == ("ems",) and not s.needs_lm and not s.default
    with pytest.raises(ValueError, match="score 'ems-edit' does not apply to algo 'its'"):
        score_families.get_score("ems-edit", "its")
    path = tmp_path / "ems.npz"
    generate_synthetic(open_synthetic("news"), "ems", n=2, T=30, seed=1, key=7).save(path)
    assert main(["detect", str(path), "--key", "7", "--score", "ems-edit", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [round(t["log10_p"], 6) for t in doc["texts"]] == [-4.0, -4.0]  # 1 / (9999 + 1): every fresh key scores lower
    g = tmp_path / "g.toml"
    g.write_text('lm = "news"\nn = 4\nT = 40\nchunk = 4\nscore = "ems-edit"\n\n[[algo]]\nname = "ems"\n')
    assert load_grid(g).score == "ems-edit"


def test_inputs_are_checked(small):
    gen = generate_synthetic(small, "ems", n=1, T=10, seed=1, key=9)
    for kw, msg in ((dict(band=-1), r"band must be an integer in \[0, inf\); got -1"), (dict(band=1.5), r"band must be an integer .*got 1.5"),
                    (dict(gap=-0.5), r"gap must be in \[0, inf\]; got -0.5"), (dict(gap=float("nan")), r"gap must be in \[0, inf\]; got nan"),
                    (dict(resamples=0), r"resamples must be an integer in \[1, inf\); got 0"),
                    (dict(seed=-2), r"seed must be an integer in \[0, inf\); got -2"), (dict(key=-1), r"key must be in \[0, 2\*\*64\)")):
        with pytest.raises(ValueError, match=msg):
            E.score_ems_edit(gen, **kw)
