"""The tournament processor (torch) against the Numba / NumPy path: bit-identical g-values, the same
exact law and records, and texts of a tiny random model that the tournament detector flags."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from sims.detect.stats.tournament_scores import score_tournament  # noqa: E402
from sims.lm.real.model import load  # noqa: E402
from sims.torch_backend.tournament import TournamentProcessor, generate_tournament_lm  # noqa: E402
from sims.watermarks import tournament as tn  # noqa: E402


def test_words_are_bit_identical_to_numba_and_numpy():
    """For 64 random windows (h = 3) over a 1000-token vocabulary, the torch words equal the NumPy
    reference's (which the Numba generator and detector are tested equal to)."""
    rng = np.random.default_rng(0)
    windows = rng.integers(0, 1000, size=(64, 3))
    proc = TournamentProcessor(vocab_size=1000, key=2**63 + 12345, m=64, h=3)
    got = proc.words(torch.as_tensor(windows)).numpy().view(np.uint64)
    want = tn.g_words(2**63 + 12345, windows[:, None, :], np.arange(1000)[None, :])
    assert np.array_equal(got, want)


@pytest.mark.parametrize("mode", ["non-distortionary", "distortionary"])
def test_law_and_records_equal_the_reference_step(mode):
    """Random logits (4 rows, V = 300, m = 9): log q and the records equal tn.tournament_step to 1e-12."""
    torch.manual_seed(0)
    proc = TournamentProcessor(vocab_size=300, key=7, m=9, h=2, mode=mode, mask_repeated=False)
    ids = torch.randint(0, 300, (4, 5))
    scores = torch.randn(4, 300, dtype=torch.float64) * 3
    out = proc(ids, scores)
    rec = proc.stacked()
    words = proc.words(ids).numpy().view(np.uint64)
    for b in range(4):
        p = torch.softmax(scores[b], -1).numpy()
        q, kl, G, dg = tn.tournament_step(p, words[b], 9, proc.K)
        assert np.allclose(torch.exp(out[b]).numpy(), q, rtol=1e-12, atol=1e-300)
        assert rec["kl"][b, 0].item() == pytest.approx(kl, rel=1e-12)
        assert rec["G"][b, 0].item() == pytest.approx(G, rel=1e-12)
        assert rec["dg"][b, 0].item() == pytest.approx(dg, rel=1e-10, abs=1e-15)


def test_random_model_texts_are_detected_with_the_same_g_values():
    """A random Llama (vocab 512): 4 texts x 40 tokens tournament-sampled (m = 12); the Numba detector
    scores them at p < 1e-10 with the key and > 1e-3 with another; repeated contexts have kl = 0."""
    model, _ = load("random-llama")
    proc = TournamentProcessor(vocab_size=512, key=99, m=12, h=1)
    prompts = [list(range(5 + i, 9 + i)) for i in range(4)]
    gen = generate_tournament_lm(model, prompts, 40, proc, seed=3)
    assert gen.meta["algo"] == "synthid" and gen.meta["m"] == 12
    assert np.all(score_tournament(gen).log10_p < -10)
    assert np.all(score_tournament(gen, key=98).log10_p > -3)
    for i in range(4):
        text = np.concatenate([gen.prompt(i), gen.text(i)])
        P = len(gen.prompt(i))
        rep = np.array([text[P + t - 1] in text[P - 1 : P + t - 1] for t in range(40)])
        assert np.all(gen.kl[i, rep] == 0) and np.all(gen.kl[i, ~rep] > 0)


def test_bad_input():
    with pytest.raises(ValueError, match="key"):
        TournamentProcessor(vocab_size=10, key=-1)
    with pytest.raises(ValueError, match="m must"):
        TournamentProcessor(vocab_size=10, m=65)
    with pytest.raises(ValueError, match="vocab_size"):
        TournamentProcessor(vocab_size=1)
    proc = TournamentProcessor(vocab_size=10, h=3)
    with pytest.raises(ValueError, match="at least h"):
        proc(torch.zeros((1, 2), dtype=torch.int64), torch.zeros((1, 10)))


def test_nan_logits_are_reported_with_their_first_step():
    """The engines' NaN check (``nan_steps``): row 1's logits turn NaN at step 2 and stay NaN; row 0 never."""
    proc = TournamentProcessor(vocab_size=16, key=7, m=4, h=1)
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(0, 16, (2, 3), generator=g)
    for step in range(4):
        scores = torch.randn(2, 16, generator=g)
        if step >= 2:
            scores[1, 5] = float("nan")
        proc(torch.cat([ids, torch.full((2, step), 3)], dim=1), scores)
    assert proc.nan_steps().tolist() == [-1, 2]
