"""transformers' ``seeding_scheme="selfhash"`` watermark: our green lists equal its processor's token by
token, our processor returns its logits bit for bit, and ``detect --text --scheme transformers-selfhash``
counts what its ``WatermarkDetector`` counts, with the exact binomial p-value."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from scipy.stats import binom  # noqa: E402

from sims.lm.real.model import load_tokenizer  # noqa: E402
from sims.torch_backend.selfhash_transformers import SelfHashGreenLists, TransformersSelfHashProcessor, selfhash_marks  # noqa: E402
from tests.torch_backend.test_detect_text_cli import run_json, tiny_folder  # noqa: E402, F401

HKEY = 12345


def _theirs(V, cw, gamma=0.25, bias=2.0, key=HKEY):
    from transformers.generation.logits_process import WatermarkLogitsProcessor

    return WatermarkLogitsProcessor(vocab_size=V, device="cpu", greenlist_ratio=gamma, bias=bias, hashing_key=key, seeding_scheme="selfhash",
                                    context_width=cw)


@pytest.mark.parametrize("key", [HKEY, 15485863, 2**62 + 7])
@pytest.mark.parametrize("cw", [1, 2, 4])
def test_green_lists_equal_transformers_window_by_window(cw, key):
    """60 random windows (seed 0, ids below V = 512, gamma 0.3): our green list of each window's seed equals
    transformers' ``_get_greenlist_ids`` of the window, and so does the window's colour.  Keys: small (no
    wrap-around), transformers' default and a large one (products wrap modulo 2**64: negative seeds)."""
    V = 512
    ours, theirs = SelfHashGreenLists(V, 0.3, key, cw), _theirs(V, cw, gamma=0.3, key=key)
    rng = np.random.default_rng(0)
    for _ in range(60):
        w = rng.integers(0, V, size=cw)
        ids = theirs._get_greenlist_ids(torch.as_tensor(w)).numpy()
        mask = np.zeros(V, dtype=bool)
        mask[ids] = True
        np.testing.assert_array_equal(ours.green_list(ours.seed(w)), mask)
        assert ours.is_green(w) == bool(mask[w[-1]])


@pytest.mark.parametrize("cw", [1, 3])
def test_processor_logits_bit_identical(cw):
    """Random logits (seed 1, B = 3, V = 512, bias 2.5): our processor's output equals WatermarkLogitsProcessor's exactly."""
    V = 512
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, V, (3, 6), generator=g)
    scores = torch.randn(3, V, generator=g)
    ours = TransformersSelfHashProcessor(vocab_size=V, bias=2.5, hashing_key=HKEY, context_width=cw)(ids, scores)
    theirs = _theirs(V, cw, bias=2.5)(ids, scores)
    assert torch.equal(ours, theirs) and not torch.equal(ours, scores)


@pytest.mark.parametrize("cw,dedup", [(1, False), (2, False), (2, True)])
def test_detect_cli_counts_what_transformers_counts(tiny_folder, tmp_path, capsys, cw, dedup):  # noqa: F811
    """Texts written by ``model.generate(watermarking_config=WatermarkingConfig(seeding_scheme="selfhash", bias=6))`` on the
    random tiny Llama (2 x 60 tokens, torch seed 0): token by token our colours equal transformers'; without dedup the
    counts equal WatermarkDetector's, with dedup each (seed, token) pair counts once (at most its distinct-n-gram count);
    the p-value is the exact binomial tail; the key flags both texts, key + 1 neither."""
    from transformers import WatermarkDetector, WatermarkingConfig

    model, folder = tiny_folder
    tok = load_tokenizer(str(folder))
    V = model.config.vocab_size
    cfg = WatermarkingConfig(greenlist_ratio=0.25, bias=6.0, hashing_key=HKEY, seeding_scheme="selfhash", context_width=cw)
    prompts = torch.tensor([[5, 17, 300, 41], [9, 250, 77, 13]])
    torch.manual_seed(0)
    out = model.generate(prompts, watermarking_config=cfg, do_sample=True, max_new_tokens=60, min_new_tokens=60, pad_token_id=0)
    ids = out[:, prompts.shape[1] - (cw - 1) :]
    src = tmp_path / "t.jsonl"
    src.write_text("".join(json.dumps({"text": tok.decode(r)}) + "\n" for r in ids))
    argv = ["--text", src, "--lm", folder, "--key", HKEY, "--scheme", "transformers-selfhash", "--h", cw] + (["--dedup"] if dedup else [])
    doc = run_json(capsys, *argv)
    proc = _theirs(V, cw)
    green, _ = selfhash_marks([r.numpy() for r in ids], V, 0.25, HKEY, cw)
    for i, r in enumerate(ids):
        for t in range(cw - 1, r.shape[0]):
            assert green[i, t - cw + 1] == bool((proc._get_greenlist_ids(r[t - cw + 1 : t + 1]) == r[t]).any())
    theirs = WatermarkDetector(model_config=model.config, device="cpu", watermarking_config=cfg, ignore_repeated_ngrams=dedup)(ids, return_dict=True)
    rows = doc["texts"]
    if dedup:
        assert all(r["n_scored"] <= n for r, n in zip(rows, theirs.num_tokens_scored))
    else:
        assert [r["n_scored"] for r in rows] == list(theirs.num_tokens_scored)
        assert [r["score"] for r in rows] == list(theirs.num_green_tokens)
    g_eff = int(V * 0.25) / V
    for r in rows:
        exact = math.log10(binom.sf(r["score"] - 1, r["n_scored"], g_eff))
        assert r["log10_p"] == pytest.approx(exact, rel=1e-12, abs=1e-13)
        assert r["watermarked"]
    argv[argv.index("--key") + 1] = HKEY + 1
    assert not any(r["watermarked"] for r in run_json(capsys, *argv)["texts"])


def test_bad_hashing_key_is_refused():
    with pytest.raises(ValueError, match=r"hashing_key must be an int64 in \[-2\*\*63, 2\*\*63\); got 9223372036854775808"):
        SelfHashGreenLists(100, 0.25, 2**63, 1)
