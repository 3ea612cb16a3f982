"""Seeding schemes on a real LM (the random tiny Llama): the torch red-green processors' green lists equal
:mod:`sims.core.seeding`'s for the same contexts and key, token by token, through the loop and static
engines and the door :func:`sims.generate`; the detectors read the scheme from the file."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import sims  # noqa: E402
from sims.core import seeding  # noqa: E402
from sims.detect.families import detectors  # noqa: E402
from sims.detect.stats import scores  # noqa: E402
from sims.lm.real.model import load  # noqa: E402
from sims.torch_backend.generate_torch import generate_with_processor  # noqa: E402
from sims.torch_backend.processors import make_processor  # noqa: E402
from sims.torch_backend.static_decode import generate_static  # noqa: E402

KEY, H, V = 0xC0FFEE, 3, 512
PROMPTS = [[5, 9, 1, 3, 7], [11, 2, 40], [8, 8, 4, 300]]


def _green_mass(lm, gen, scheme):
    """(n, T) green mass of the model's teacher-forced distributions under the reference green lists of ``scheme``."""
    out = np.empty(gen.tokens.shape)
    for i in range(gen.n):
        prompt = gen.prompt(i)
        seq = np.concatenate([prompt, gen.tokens[i]])
        P, T = len(prompt), gen.tokens.shape[1]
        windows = np.stack([seq[P + t - H : P + t] for t in range(T)])
        out[i] = (lm.probs_along(seq, P, T) * seeding.green_mask(KEY, windows, V, gen.meta["gamma"], scheme)).sum(axis=1)
    return out


@pytest.mark.parametrize("algo", ["srl", "autocov"])
@pytest.mark.parametrize("scheme", ["selfhash", "minhash", "skipgram", "semantic"])
def test_processor_green_lists_equal_the_reference_token_by_token(scheme, algo):
    """random-llama, 3 prompts x 12 tokens, h = 3, seed 2: every green list the processor builds during generation
    equals seeding.green_mask of the window it was given, and that window is the text's last h tokens; the door
    sims.generate writes the same tokens and records the scheme; the recorded G equals the reference green mass of
    the teacher-forced distributions (float32 logits: 1e-5).  Under ``semantic`` the door's lists are seeded by the
    LM's own embedding clusters (its table named in ``meta["clusters"]``)."""
    model, _ = load("random-llama")
    kw = {"delta": 2.0} if algo == "srl" else {}
    lm = sims.get_lm("random-llama")
    if scheme == "semantic":  # the door seeds a real LM's semantic lists by its own embedding clusters
        scheme = seeding.with_clusters(scheme, lm.cluster_table())
    proc = make_processor(algo, vocab_size=V, key=KEY, h=H, seeding=scheme, **kw)
    seen = []
    built = proc.green_lists

    def spy(windows):
        green = built(windows)
        seen.append((windows.clone(), green.clone()))
        return green

    proc.green_lists = spy
    gen = generate_with_processor(model, PROMPTS, 12, proc, seed=2, vocab_size=V)
    assert len(seen) == 12
    for t, (windows, green) in enumerate(seen):
        for i, p in enumerate(PROMPTS):
            assert windows[i].tolist() == (p + gen.tokens[i].tolist())[len(p) + t - H : len(p) + t]
        np.testing.assert_array_equal(green.numpy(), seeding.green_mask(KEY, windows.numpy(), V, proc.gamma, scheme))
    door = sims.generate(lm, algo, n=3, T=12, seed=2, key=KEY, h=H, prompts=PROMPTS, seeding=str(scheme), **kw)
    assert np.array_equal(door.tokens, gen.tokens) and door.meta["seeding"] == scheme
    assert ("clusters" in door.meta) == (scheme == "semantic")
    np.testing.assert_allclose(door.G, _green_mass(lm, door, scheme), atol=1e-5)


def test_static_engine_runs_the_seeded_processor():
    """engine='static' under min-hash (SRL, 3 x 12 tokens, seed 2) runs the processor, not the left-hash fused
    step: the scheme is recorded and G equals the reference green mass (1e-5)."""
    lm = sims.get_lm("random-llama")
    model, _ = load("random-llama")
    gen = generate_static(model, PROMPTS, 12, algo="srl", key=KEY, seed=2, vocab_size=V, h=H, delta=2.0, seeding="minhash")
    assert gen.meta["engine"].endswith("/processor") and gen.meta["seeding"] == "minhash"
    np.testing.assert_allclose(gen.G, _green_mass(lm, gen, "minhash"), atol=1e-5)


@pytest.mark.parametrize("scheme", ["lefthash", "selfhash"])
def test_detectors_read_the_scheme_of_a_real_lm_generation(scheme):
    """SRL delta 4 under the scheme on random-llama (3 x 40 tokens, seed 0): sims.score counts the reference's
    dedup'd greens, the key flags every text at 1e-4 and the sequential e-process crosses 1/1e-4 on each; left-hash
    given equals left-hash by default; an unknown scheme is refused with the valid ones named."""
    lm = sims.get_lm("random-llama")
    gen = sims.generate(lm, "srl", n=3, T=40, seed=0, key=KEY, h=H, delta=4.0, seeding=scheme)
    assert gen.meta.get("seeding", "lefthash") == scheme
    if scheme == "lefthash":  # the default: as if not given
        assert np.array_equal(gen.tokens, sims.generate(lm, "srl", n=3, T=40, seed=0, key=KEY, h=H, delta=4.0).tokens)
    r = sims.score(gen, dedup=True)
    ref, _ = scores.token_scores_reference(gen.tokens, gen.prompts[:, -H:], KEY, gamma=0.25, h=H, vocab_size=V, dedup=True, seeding=scheme)
    np.testing.assert_array_equal(r.score, ref.sum(axis=1))
    assert (r.log10_p < -4).all() and detectors.sequential_score(gen, alpha=1e-4).detected.all()
    with pytest.raises(ValueError, match="seeding must be one of"):
        sims.generate(lm, "srl", n=1, T=4, seed=0, seeding="maxhash")


def _word_folder(tmp_path):
    """random-llama saved with a word-level tokenizer (words w0..w511), so that its texts are raw text."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    model, _ = load("random-llama")
    tk = Tokenizer(models.WordLevel({f"w{i}": i for i in range(V)}, unk_token="w0"))
    tk.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    model.save_pretrained(tmp_path)
    PreTrainedTokenizerFast(tokenizer_object=tk).save_pretrained(tmp_path)
    return str(tmp_path)


def test_cli_generate_and_detect_a_seeded_real_lm_text(tmp_path, capsys):
    """``generate --lm FOLDER --seeding minhash --h 3`` (random-llama with a word tokenizer, SRL delta 4, 3 x 40 tokens)
    keeps the scheme; ``detect`` on the .npz (fixed length, ``--sequential``, keys K,K+1) and on its decoded raw text
    (``--text --seeding minhash``) flags every text with the key alone, with the green counts of the reference;
    the same text under ``--seeding lefthash`` is not flagged at 1e-4; ``--seeding`` with an .npz or another
    --scheme is one line on stderr, exit 2."""
    import json

    from sims.cli.main import main

    folder = _word_folder(tmp_path / "lm")
    out, key = tmp_path / "g.npz", str(KEY)
    assert main(["generate", "--lm", folder, "--algo", "srl", "--delta", "4", "--n", "3", "--T", "40", "--h", "3", "--seeding", "minhash",
                 "--key", key, "--out", str(out)]) == 0
    assert json.loads(capsys.readouterr().out)["meta"]["seeding"] == "minhash"
    gen = sims.Generation.load(out)
    ref, _ = scores.token_scores_reference(gen.tokens, gen.prompts[:, -H:], KEY, gamma=0.25, h=H, vocab_size=V, dedup=True, seeding="minhash")

    def detect(*argv):
        assert main(["detect", *argv, "--dedup", "--json"]) == 0
        return json.loads(capsys.readouterr().out)

    rows = detect(str(out), "--key", key)["texts"]
    assert all(r["watermarked"] for r in rows) and [r["score"] for r in rows] == ref.sum(axis=1).tolist()
    assert all(r["first_flagged"] is not None for r in detect(str(out), "--key", key, "--sequential")["texts"])
    doc = detect(str(out), "--key", f"{key},{KEY + 1}")
    assert [r["marked_by"] for r in doc["texts"]] == [key] * 3
    lm = sims.get_lm(folder)
    text = tmp_path / "t.jsonl"
    text.write_text("".join(json.dumps({"text": lm.decode(np.concatenate([gen.prompt(i)[-H:], gen.tokens[i]]))}) + "\n" for i in range(3)))
    doc = detect("--text", str(text), "--lm", folder, "--key", key, "--h", "3", "--seeding", "minhash")
    assert doc["seeding"] == "minhash" and [r["score"] for r in doc["texts"]] == ref.sum(axis=1).tolist()
    assert all(r["watermarked"] for r in doc["texts"])
    assert not any(r["watermarked"] for r in detect("--text", str(text), "--lm", folder, "--key", key, "--h", "3")["texts"])
    for argv in ([str(out), "--key", key, "--seeding", "minhash"],
                 ["--text", str(text), "--lm", folder, "--key", key, "--scheme", "transformers-lefthash", "--seeding", "minhash"]):
        assert main(["detect", *argv]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "seeding" in err


def test_semantic_seeding_of_a_real_lm_follows_its_embedding_clusters(tmp_path, capsys):
    """SRL delta 4 under ``semantic`` on random-llama with a word tokenizer (3 x 40 tokens, h = 3, seed 0): the table
    is the SimHash of the LM's own input embeddings (one cluster per id, the one embedding_clusters gives its
    weights), the generation names it, sims.score's dedup'd counts equal the reference's under that table and flag
    every text at 1e-4; ``detect --text --seeding semantic`` on the decoded text finds the same counts (the CLI opens
    the LM's table); the same tokens read with the public hash of the ids score fewer greens."""
    import json

    from sims.cli.main import main

    folder = _word_folder(tmp_path / "lm")
    lm = sims.get_lm(folder)
    table = lm.cluster_table()
    weight = lm.model.get_input_embeddings().weight.detach().float().numpy()[:V]
    np.testing.assert_array_equal(table, seeding.embedding_clusters(weight))
    gen = sims.generate(lm, "srl", n=3, T=40, seed=0, key=KEY, h=H, delta=4.0, seeding="semantic")
    np.testing.assert_array_equal(seeding.clusters_of(gen.meta), table)
    sem = seeding.with_clusters("semantic", table)
    ref, _ = scores.token_scores_reference(gen.tokens, gen.prompts[:, -H:], KEY, gamma=0.25, h=H, vocab_size=V, dedup=True, seeding=sem)
    r = sims.score(gen, dedup=True)
    np.testing.assert_array_equal(r.score, ref.sum(axis=1))
    assert (r.log10_p < -4).all()
    hashed, _ = scores.token_scores_reference(gen.tokens, gen.prompts[:, -H:], KEY, gamma=0.25, h=H, vocab_size=V, dedup=True, seeding="semantic")
    assert (hashed.sum(axis=1) < ref.sum(axis=1)).all()
    text = tmp_path / "t.jsonl"
    text.write_text("".join(json.dumps({"text": lm.decode(np.concatenate([gen.prompt(i)[-H:], gen.tokens[i]]))}) + "\n" for i in range(3)))
    assert main(["detect", "--text", str(text), "--lm", folder, "--key", str(KEY), "--h", "3", "--seeding", "semantic", "--dedup", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [t["score"] for t in doc["texts"]] == ref.sum(axis=1).tolist()
