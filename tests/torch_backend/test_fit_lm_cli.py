"""``python -m sims fit-lm`` end to end on the random ``random-llama`` (V = 512), and the
recorder's statistics against a direct computation from the model's distribution."""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from sims.cli.main import main  # noqa: E402
from sims.lm.synthetic import open_synthetic  # noqa: E402
from sims.torch_backend import lm_stats  # noqa: E402


@pytest.mark.slow
def test_fit_lm_cli_tiny(tmp_path, capsys):
    out, st = tmp_path / "tiny-fit.npz", tmp_path / "stats.npz"
    assert main(["fit-lm", "--lm", "random-llama", "--n", "4", "--T", "24", "--out", str(out), "--stats-out", str(st)]) == 0
    res = json.loads(capsys.readouterr().out)
    lm = open_synthetic(str(out))
    assert lm.fitted and lm.vocab_size == 512 == res["vocab_size"]
    assert np.all(np.diff(lm.levels) > 0)
    with np.load(st) as f:
        H, coll, top = f["entropy"], f["coll"], f["top"]
        assert H.shape == (4, 24) and f["G25"].shape == (4, 24, 4)
        assert np.all(top * top <= coll + 1e-6) and np.all(coll <= top + 1e-6) and np.all(H >= -1e-6)
        assert abs(float(f["G25"].mean()) - 0.25) < 0.05  # 384 G_t of a near-flat random LM around gamma


def test_recorder_matches_direct_computation():
    """Entropy, top mass, collision and G of one step against NumPy on the same logits."""
    from sims.core import prf

    rec = lm_stats.StatsRecorder(50, n_keys=2)
    scores = torch.randn(3, 50, generator=torch.Generator().manual_seed(0))
    ids = torch.tensor([[1, 2], [3, 4], [5, 6]])
    rec(ids, scores)
    r = rec.stacked()
    p = torch.softmax(scores.double(), -1).numpy()
    np.testing.assert_allclose(r["entropy"][:, 0].numpy(), -(p * np.log(p)).sum(1), rtol=1e-12)
    np.testing.assert_allclose(r["coll"][:, 0].numpy(), (p * p).sum(1), rtol=1e-12)
    for k in range(2):
        ctx = prf.context_hash(lm_stats.STATS_KEY0 + k, ids.numpy()[:, -1:])
        g = np.array([(p[i] * prf.green_mask(ctx[i], 50, 0.5)).sum() for i in range(3)])
        np.testing.assert_allclose(r["G50"][:, 0, k].numpy(), g, rtol=1e-12)
