"""The edit-tolerant ITS score (sims.detect.stats.edit_scores): kernels equal their NumPy twins, band 0 is
the weighted hit sum of the default detector, the permutation p-value is exact under the null
(Monte Carlo, stated below), it survives insertions and deletions that break the default, and it is a
registered family usable from the CLI."""

from __future__ import annotations

import numpy as np
import pytest

import sims  # noqa: F401  (registers the families)
from sims.core.keys import keyed_order
from sims.detect.families import detectors, score_families
from sims.detect.stats import _edit_kernels as EK
from sims.detect.stats import edit_scores as E
from sims.detect.stats import scores
from sims.experiments.attacks import attack
from sims.lm.synthetic import lm_step_probs, open_synthetic
from sims.watermarks.generate import generate_synthetic


@pytest.fixture(scope="module")
def small():
    return open_synthetic("news", vocab_size=500)


def test_kernels_equal_their_numpy_twins():
    r = np.random.default_rng(0)
    for _ in range(40):
        L, W = int(r.integers(1, 25)), int(r.integers(0, 9))
        J = L + W
        lo = r.random(L) * 0.7
        hi = lo + r.random(L) * 0.3
        w, u, gap = r.random(L) * 3.0, r.random(J), float(r.random() * 2.0)
        out = np.empty(L)
        EK.align_prefix_max(lo, hi, w, u, W, gap, out)
        assert np.array_equal(out, E.align_prefix_max_reference(lo, hi, w, u, W, gap))
    V, L = 40, 12
    probs = r.dirichlet(np.ones(V), size=L)
    tokens = r.integers(0, V, L)
    perm = keyed_order(3, V)
    pos = np.empty(V, dtype=np.int64)
    pos[perm] = np.arange(V)
    lo, hi = np.empty(L), np.empty(L)
    EK.its_interval_ends(probs, tokens, perm, pos, lo, hi)
    ref = E.interval_ends_reference(probs, tokens, perm)
    assert np.allclose(lo, ref[0], rtol=0, atol=1e-15) and np.allclose(hi, ref[1], rtol=0, atol=1e-15)


def test_band_zero_is_the_default_weighted_hit_sum(small):
    """With no shift allowed the alignment is the identity: S = sum of -ln p(y_t) over the default detector's hits."""
    gen = attack(generate_synthetic(small, "its", n=3, T=40, seed=1, key=9), "substitution", 0.3, seed=2)
    step_probs = lm_step_probs(small, gen)
    marks, probs_hit, n = scores.keyed_order_marks(gen, step_probs)
    for i in range(3):
        lo, hi, w = E.edit_inputs(gen, step_probs, 9, i)
        out = np.empty(lo.size)
        EK.align_prefix_max(lo, hi, w, E.key_uniforms(9, lo.size), 0, 1.0, out)
        want = np.cumsum(np.where(marks[i, : n[i]], -np.log(probs_hit[i, : n[i]]), 0.0))
        assert np.allclose(out, want, rtol=1e-12, atol=1e-12)
        assert 0 < marks[i].sum() < n[i]  # substituted tokens miss, the others hit


def test_permutation_pvalue_is_exact_under_the_null(small):
    """Null texts (sampled from p), text i scored with its own ITS key 1000 + i (the guarantee is over a
    random key) and 19 fresh keys: p-hat is uniform on {1/20, ..., 1} (no ties: continuous weights).
    MC: 600 texts of 40 tokens (generation seed 4, resampling seed 0); the counts at p <= 0.05, 0.25, 0.5
    must lie in the exact binomial 99.9 % interval of 600 draws."""
    from scipy.stats import binom

    gen = generate_synthetic(small, "none", n=600, T=40, seed=4, key=9)
    lp, _ = E.edit_prefix_log10p(gen, lm_step_probs(small, gen), key=1000 + np.arange(600), resamples=19)
    p = 10 ** lp[:, -1]
    for a in (0.05, 0.25, 0.5):
        k = int(np.sum(p <= a + 1e-12))
        lo, hi = binom.ppf(0.0005, 600, a), binom.isf(0.0005, 600, a)
        assert lo <= k <= hi, (a, k, lo, hi)


def test_alignment_survives_insertions_and_deletions(small):
    """ITS texts, 10 % insertion / deletion (attack seed 2): the edit score detects all at its resolution
    (p = 1 / 1000 with 999 fresh keys), the default hit count (exact) misses some at 1e-3."""
    gen = generate_synthetic(small, "its", n=8, T=80, seed=5, key=9)
    for kind in ("insertion", "deletion"):
        g = attack(gen, kind, 0.1, seed=2)
        edit = E.score_its_edit(g, small, resamples=999)
        default = detectors.score(g, small)
        assert np.all(edit.log10_p <= -3 + 1e-9), kind
        assert np.sum(default.log10_p <= -3) < 8, kind
    assert np.all(E.score_its_edit(gen, small, resamples=999).log10_p <= -3 + 1e-9)


def test_registered_and_usable_from_the_cli(tmp_path, capsys, small):
    import json

    from sims.cli.main import main

    assert score_families.score_names("its") == ("hits", "its-edit")
    assert score_families.get_score("its-edit").needs_lm and not score_families.get_score("its-edit").default
    with pytest.raises(ValueError, match="score 'its-edit' does not apply to algo 'uw-delta'"):
        score_families.get_score("its-edit", "uw-delta")
    path = tmp_path / "its.npz"
    generate_synthetic(open_synthetic("news"), "its", n=2, T=30, seed=1, key=7).save(path)
    assert main(["detect", str(path), "--key", "7", "--score", "its-edit", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [round(t["log10_p"], 6) for t in doc["texts"]] == [-4.0, -4.0]  # 1 / (9999 + 1): every fresh key scores lower


def test_inputs_are_checked(small):
    gen = generate_synthetic(small, "its", n=1, T=10, seed=1, key=9)
    for kw, msg in ((dict(band=-1), r"band must be an integer in \[0, inf\); got -1"), (dict(gap=float("inf")), r"gap must be in \[0, inf\); got inf"),
                    (dict(resamples=0), r"resamples must be an integer in \[1, inf\); got 0"),
                    (dict(seed=-2), r"seed must be an integer in \[0, inf\); got -2")):
        with pytest.raises(ValueError, match=msg):
            E.score_its_edit(gen, small, **kw)
    with pytest.raises(ValueError, match="pass lm"):
        E.score_its_edit(gen, None)


def test_fig_scores_reads_the_keyed_families(small):
    """fig_scores' prefix tests of ``hits`` / ``its-edit``: the whole-text column is the detector's p-value."""
    from paper_figs import fig_scores
    from paper_figs.fig_edit_scores import keyed_prefix_log10p

    plain = generate_synthetic(small, "its", n=3, T=30, seed=6, key=9)
    gen = attack(plain, "insertion", 0.1, seed=2)
    for g in (plain, gen):
        lp = keyed_prefix_log10p("hits", g, small, [10, 20, 30])
        assert np.allclose(lp[:, -1], detectors.score(g, small).log10_p, rtol=1e-9, atol=1e-12)
    rej = fig_scores._prefix_rejects("its-edit", gen, None, [10, 20, 30], (1e-3,), small)[1e-3]
    assert np.array_equal(rej[:, -1], E.score_its_edit(gen, small).log10_p <= -3)
