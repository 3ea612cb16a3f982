"""One door per LM (issue 28): :func:`sims.get_lm` on every synthetic kind, the one rule
:func:`sims.lm.kind.lm_kind`, and a fitted ``.npz`` everywhere a preset goes (CLI generate /
evaluate / detect / attack / steal / sweep, sweeps, paper_figs).  The real kinds are in
tests/torch_backend/test_lm_door_real.py."""

from __future__ import annotations

import json

import numpy as np
import pytest

import sims
from sims.cli.main import main as cli
from sims.lm import synthetic
from sims.lm.door import LM, get_lm, lm_of
from sims.lm.kind import KINDS, is_real, lm_kind
from sims.watermarks import registry
from sims.watermarks.generate import generate_synthetic

FIT_V = 300  # a small fitted LM: the smollm2-fit levels and parameters at 300 tokens (fast)


@pytest.fixture(scope="module")
def npz(tmp_path_factory):
    """A fitted LM file as ``python -m sims fit-lm`` writes it (vocab_size, order, params, levels)."""
    with np.load(synthetic.FITTED_PRESETS["smollm2-fit"]) as f:
        fields = {k: f[k] for k in f.files}
    path = tmp_path_factory.mktemp("fit") / "small-fit.npz"
    np.savez(path, **{**fields, "vocab_size": np.int64(FIT_V)})
    return str(path)


def test_the_one_rule_names_every_kind(npz, tmp_path):
    assert [lm_kind(x) for x in ("news", "tiny", "smollm2-fit", npz, "loopy-V64-p0.3", "smollm2", "random-gpt2")] == [
        "preset", "preset", "fitted", "fitted", "loop", "smollm2", "random"]
    (tmp_path / "config.json").write_text("{}")
    assert lm_kind(str(tmp_path)) == "folder" and is_real(str(tmp_path)) and not is_real(npz)
    assert set(KINDS) == {"preset", "fitted", "loop", "smollm2", "random", "folder"}
    for bad in ("gpt-5", str(tmp_path / "missing.npz"), str(tmp_path / "no-config")):
        with pytest.raises(ValueError, match="lm must be one of: a synthetic preset"):
            lm_kind(bad)


@pytest.mark.parametrize("name, kind, V", [("tiny", "preset", 6), ("smollm2-fit", "fitted", None), ("npz", "fitted", FIT_V),
                                           ("loopy-V64-p0.3", "loop", 64)])
def test_get_lm_on_every_synthetic_kind(npz, name, kind, V):
    """One object whatever the kind: name, kind, vocabulary; generate equals the Numba generator on the
    same SyntheticLM (same seed: identical tokens and records); next_probs / probs_along / step_probs
    are the exact distributions (rows sum to 1, probs_along's rows = next_probs after each prefix);
    encode / decode round-trip ids."""
    name = npz if name == "npz" else name
    lm = sims.get_lm(name)
    assert isinstance(lm, LM) and lm.kind == kind and not lm.real and lm.name == name and lm.tokenizer is None and lm.model is None
    assert lm.vocab_size == (V or lm.synthetic.vocab_size) and sims.get_lm(lm) is lm
    gen = sims.generate(lm, "srl", n=2, T=12, seed=5, key=9, delta=2.0)
    ref = generate_synthetic(lm.synthetic, "srl", n=2, T=12, seed=5, key=9, delta=2.0)
    assert np.array_equal(gen.tokens, ref.tokens) and np.array_equal(gen.kl, ref.kl) and gen.meta == ref.meta
    back = lm_of(gen.meta)  # the LM a saved generation names, reopened
    assert gen.meta["lm"] == name and (back.name, back.kind, back.vocab_size) == (name, kind, lm.vocab_size)
    seq = np.concatenate([gen.prompts[0], gen.tokens[0]])
    P = gen.prompts.shape[1]
    along = lm.probs_along(seq, P, 12)
    np.testing.assert_allclose(along.sum(1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(along[3], lm.next_probs(seq[: P + 3]), rtol=1e-12)
    np.testing.assert_array_equal(lm.step_probs(gen)(0), along)
    assert np.array_equal(lm.encode(lm.decode(gen.tokens[1])), gen.tokens[1])


def test_get_lm_refuses_what_its_kind_does_not_take(npz):
    with pytest.raises(ValueError, match="vocab_size of fitted LM"):
        get_lm(npz, vocab_size=100)
    with pytest.raises(ValueError, match="dtype and device apply to real LMs"):
        get_lm("news", dtype="float16")
    lm = get_lm("tiny")
    for kw, word in (dict(batch=2), "batch"), (dict(stop_at_eos=True), "stop_at_eos"), (dict(prompts="lfqa"), "prompts"):
        with pytest.raises(ValueError, match=word):
            sims.generate(lm, "srl", n=1, T=4, **kw)
    with pytest.raises(ValueError, match="real LM"):
        lm.prompt_ids("lfqa", 2)
    with pytest.raises(ValueError, match="token ids separated by spaces"):
        lm.encode("a b")
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = lm.nope


def test_sims_generate_takes_any_door():
    """sims.generate accepts a name, an LM or a SyntheticLM and draws the same texts."""
    a = sims.generate("tiny", "dualga", n=2, T=15, seed=1, key=3)
    b = sims.generate(sims.get_lm("tiny"), "dualga", n=2, T=15, seed=1, key=3)
    c = sims.generate(synthetic.open_synthetic("tiny"), "dualga", n=2, T=15, seed=1, key=3)
    assert np.array_equal(a.tokens, b.tokens) and np.array_equal(a.tokens, c.tokens) and np.array_equal(a.lam, c.lam)
    # seed and key default to the CLI's (issue 43, item 7: one generate, sims generate's defaults 0 and defaults.KEY)
    d = sims.generate("tiny", "srl", n=1, T=2)
    assert np.array_equal(d.tokens, sims.generate("tiny", "srl", n=1, T=2, seed=0, key=sims.defaults.KEY).tokens)
    assert d.meta["key"] == sims.defaults.KEY


def test_keyed_order_modes_are_the_registry_records_and_the_kernel_branches():
    from sims.detect.stats import _kernels as K
    from sims.detect.stats.scores import KEYED_ORDER_MODES

    assert KEYED_ORDER_MODES == {"its": K.ITS_MODE, "uw-delta": K.UW_DELTA_MODE, "uw-gamma": K.UW_GAMMA_MODE}
    assert all(registry.get(a).keyed_mode is None for a in registry.names() if registry.get(a).family != "keyed")


def test_a_fitted_npz_goes_through_the_cli(npz, tmp_path, capsys):
    """generate -> detect -> attack (entropy: the LM's probabilities) -> detect, evaluate (UW: the LM's
    probabilities) and steal, each with --lm path.npz."""
    f, f2 = tmp_path / "g.npz", tmp_path / "a.npz"
    assert cli(["generate", "--lm", npz, "--algo", "srl", "--delta", "4", "--n", "3", "--T", "40", "--out", str(f)]) == 0
    assert sims.Generation.load(f).meta["lm"] == npz
    capsys.readouterr()
    assert cli(["detect", str(f), "--key", "15485863", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert all(t["watermarked"] for t in doc["texts"])
    assert cli(["attack", str(f), "--kind", "entropy", "--rate", "0.5", "--out", str(f2)]) == 0
    assert cli(["detect", str(f2), "--key", "15485863", "--json"]) == 0
    assert cli(["evaluate", "--lm", npz, "--algo", "uw-delta", "--n", "3", "--T", "30", "--json"]) == 0
    capsys.readouterr()
    assert cli(["evaluate", "--lm", npz, "--algo", "srl", "--n", "3", "--T", "30", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["lm"] == npz and out["n"] == 3
    assert cli(["steal", "--lm", npz, "--algo", "srl", "--n-stolen", "20", "--T", "16", "--n-eval", "5", "--n-calibration", "10", "--json"]) == 0
    (point,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert point["lm"] == npz and point["vocab_size"] == FIT_V
    assert cli(["generate", "--lm", npz, "--batch", "2", "--out", str(f)]) == 2  # a real LM's option
    assert cli(["generate", "--lm", str(tmp_path / "gone.npz"), "--out", str(f)]) == 2


def test_a_fitted_npz_in_a_sweep_grid(npz, tmp_path):
    """A grid naming a fitted .npz (relative to the grid file) runs: its rows are the LM's texts (same
    seeds as a preset's), scored by the exact detector."""
    import shutil

    from sims import sweep
    from sims.sweep.chunk import chunk_seed
    from sims.sweep.grid import load_grid

    shutil.copy(npz, tmp_path / "fit.npz")
    grid = tmp_path / "g.toml"
    grid.write_text('lm = "fit.npz"\nn = 4\nT = 10\nchunk = 4\n\n[[algo]]\nname = "srl"\ndelta = 3.0\n')
    g = load_grid(grid)
    assert g.configs[0].lm == str((tmp_path / "fit.npz").resolve()) and not g.configs[0].real
    res = sweep.run_sweep(g, tmp_path / "out", workers=0, log=lambda s: None)
    assert res["done"] == 1
    import pyarrow.parquet as pq

    (chunk,) = (tmp_path / "out" / "chunks").glob("*.parquet")
    rows = pq.read_table(chunk).to_pydict()
    gen = sims.generate(get_lm(g.configs[0].lm), "srl", n=4, T=10, seed=chunk_seed(0, 0), key=g.key, delta=3.0)
    np.testing.assert_array_equal(rows["log10_p"], sims.score(gen, dedup=g.dedup).log10_p)


def test_paper_figs_take_a_fitted_npz(npz, tmp_path):
    """paper_figs --lm path.npz: the LM is checked by the one rule and drawn through sims.get_lm (a
    vocabulary override meant for presets is not applied to it)."""
    from paper_figs import _data
    from paper_figs.__main__ import main

    assert _data.is_synthetic(npz) and _data.sized(npz, 500, 300) == (500, 300)
    g = _data.generations(npz, "dualga", 2, 8, 0, vocab_size=2000)
    assert g.meta["vocab_size"] == FIT_V and g.meta["lm"] == npz
    assert main(["--quick", "--only", "fig_zscore_length", "--lm", npz, "--out", str(tmp_path)]) == 0
    assert json.loads((tmp_path / "fig_zscore_length.json").read_text())["lm"] == npz
