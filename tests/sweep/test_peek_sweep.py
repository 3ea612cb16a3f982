"""The peeking metrics of the sweep engine (issue 30): naive every-prefix vs anytime-valid p-values."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("pyarrow.parquet")

from sims import sweep  # noqa: E402
from sims.detect.anytime import peeking  # noqa: E402
from sims.detect.stats import scores
from sims.sweep.grid import load_grid  # noqa: E402

GRID = """lm = ["uniform"]
n = 3000
T = 120
chunk = 1500
seeds = [0]
dedup = true
controls = true
fprs = [0.01]
metrics = ["log10_p", "peek_log10_p", "anytime_log10_p"]

[[algo]]
name = "none"
gamma = 0.25
"""


def test_peek_pvalues_equal_numpy_reference():
    rng = np.random.default_rng(5)
    v = (rng.random((400, 90)) < 0.35).astype(float)
    s = rng.random(v.shape) < 0.85
    L = rng.integers(0, 91, 400)
    a, b = peeking.peek_pvalues(v, s, L, 0.25), peeking.peek_pvalues_reference(v, s, L, 0.25)
    np.testing.assert_allclose(a[0], b[0], rtol=1e-12)
    np.testing.assert_allclose(a[1], b[1], rtol=1e-12)
    assert (a[0] < -2).any() and (a[1] < -2).any()


def test_sweep_measures_peeking(tmp_path):
    """3000 null texts (uniform tokens, grid seed 0) x 120 tokens, gamma 0.25, level 0.01: the sweep's
    per-text values equal peek_pvalues on the texts; the anytime test's FPR is not above 0.01 and the
    naive rule's is (one-sided Clopper-Pearson at 99.9 %, peeking.exceeds_level), on the generated
    and on the control texts."""
    g = tmp_path / "g.toml"
    g.write_text(GRID)
    sweep.run_sweep(load_grid(g), tmp_path / "out", workers=0, log=lambda *a, **k: None)
    import pyarrow.parquet as pq

    t = pq.read_table(sorted((tmp_path / "out" / "chunks").glob("*.parquet"))[0]).to_pydict()
    peek, anytime, null = (np.array(t[c]) for c in ("peek_log10_p", "anytime_log10_p", "null"))
    from sims.sweep.chunk import _uniform_texts, chunk_seed

    gen = _uniform_texts(n=1500, T=120, seed=chunk_seed(0, 0), key=15485863, prompt_len=16, gamma=0.25)
    v, sc = scores.token_scores(gen.tokens, gen.prompts[:, -1:], gen.meta["key"], gamma=0.25, vocab_size=gen.meta["vocab_size"], dedup=True)
    ref = peeking.peek_pvalues_reference(v, sc, np.full(1500, 120), 0.25)
    np.testing.assert_allclose(peek[~null], ref[0], rtol=1e-12)
    np.testing.assert_allclose(anytime[~null], ref[1], rtol=1e-12)
    import pyarrow.parquet as pq2

    row = pq2.read_table(tmp_path / "out" / "summary.parquet").to_pylist()[0]
    for pop, n in (("", 3000), ("_null", 3000)):
        k_naive = round(row[f"peek{pop}_rate_at_1e-2"] * n)
        k_any = round(row[f"anytime{pop}_rate_at_1e-2"] * n)
        assert peeking.exceeds_level(k_naive, n, 0.01) and not peeking.exceeds_level(k_any, n, 0.01), (pop, k_naive, k_any)
    assert "naive at 1e-2" in (tmp_path / "out" / "summary.md").read_text() and math.isfinite(row["anytime_rate_at_1e-2_hi"])
