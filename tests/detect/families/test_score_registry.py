"""Score families as detector families of the algorithm registry (issue 31): the registry lists
them per algorithm, refuses an unknown or inapplicable one with one message, and the CLI, sweeps
and figures read them from it."""

from __future__ import annotations

import numpy as np
import pytest

import sims  # noqa: F401  (registers the families)
from sims.detect.families import score_families
from sims.detect.families.score_families import score_generation
from sims.lm.synthetic import open_synthetic
from sims.watermarks import registry
from sims.watermarks.generate import generate_synthetic


@pytest.fixture(scope="module")
def small():
    return open_synthetic("news", vocab_size=500)


def test_registry_lists_the_families_per_algorithm():
    assert score_families.score_names("dualga") == ("green", "green-local", "lr", "ewd")
    assert score_families.score_names("ems") == ("ems-ars", "ems-log", "ems-opt", "ems-hc", "ems-trgof", "ems-edit")
    assert score_families.score_names("its") == ("hits", "its-edit")
    for name in score_families.score_names():
        s = score_families.get_score(name)
        assert s.algos and all(a in registry.names() for a in s.algos)
        assert s.default == (name in ("green", "ems-ars", "hits"))
    assert score_families.get_score("lr").needs_lm and not score_families.get_score("ems-hc").needs_lm


def test_unknown_or_inapplicable_score_is_one_clear_error():
    with pytest.raises(ValueError, match=r"score must be one of \('green', 'green-local', 'lr', 'ewd', 'ems-ars'.*got 'nope'"):
        score_families.get_score("nope")
    with pytest.raises(ValueError, match=r"score 'ems-opt' does not apply to algo 'dualga' \(it scores \('ems', 'pf', 'gumbelsoft'\)\); "
                                         r"scores of 'dualga': \('green', 'green-local', 'lr', 'ewd'\)"):
        score_families.get_score("ems-opt", "dualga")
    with pytest.raises(ValueError, match="algo must be one of"):
        score_families.score_names("nope")
    with pytest.raises(ValueError, match="registered already"):
        score_families.register_score(score_families.get_score("lr"))
    with pytest.raises(ValueError, match="algos must be registered"):
        score_families.register_score(score_families.Score("x", ("nope",), False, "", "", lambda *a, **k: None))


def test_registry_scorer_is_the_family_detector(small):
    """Every registered family, called through its record, flags 2 texts of its algorithm at p < 1e-2
    and not under another key (p > 1e-4)."""
    gens = {a: generate_synthetic(small, a, n=2, T=60, seed=3, key=5) for a in ("srl", "ems", "its", "exp")}
    for name in score_families.score_names():
        s = score_families.get_score(name)
        gen = gens[next(a for a in gens if a in s.algos)]
        res = s.scorer(gen, small, key=5, gamma=None, dedup=False, algo=gen.meta["algo"])
        assert np.all(res.log10_p < -2), name
        assert np.all(score_generation(gen, name, small, key=6).log10_p > -4), name


def _grid(tmp_path, score: str, algos=("srl",)) -> object:
    from sims.sweep.grid import load_grid

    p = tmp_path / "g.toml"
    p.write_text('lm = "news"\nn = 4\nT = 40\nchunk = 4\ncontrols = true\n' + (f'score = "{score}"\n' if score else "")
                 + "".join(f'\n[[algo]]\nname = "{a}"\n' for a in algos))
    return load_grid(p)


@pytest.mark.slow
@pytest.mark.parametrize("score, algo", [("green-local", "dualga"), ("its-edit", "its"), ("ems-edit", "ems")])
def test_sweep_grid_scores_with_the_family(tmp_path, score, algo):
    """A grid with ``score = NAME`` scores its chunk with that family (= score_generation on the same texts)."""
    pytest.importorskip("distributed")
    from sims import sweep
    from sims.sweep.chunk import chunk_seed, run_chunk

    g = _grid(tmp_path, score, (algo,))
    rows = run_chunk(next(iter(sweep.tasks(g).values())))
    gen = generate_synthetic(open_synthetic("news"), algo, n=4, T=40, seed=chunk_seed(0, 0), key=g.key, prompt_len=g.prompt_len)
    want = score_generation(gen, score, open_synthetic("news"), dedup=g.dedup)
    np.testing.assert_allclose(rows["log10_p"][~rows["null"]], want.log10_p, rtol=1e-12)


def test_sweep_grid_score_key(tmp_path):
    """``score = "lr"`` scores the chunk with the LR family (= score_generation on the same texts);
    tokens_to_detect is then nan; a grid without the key keeps its hash; a score that does not
    apply to an algorithm of the grid names the file, the line and the key."""
    pytest.importorskip("distributed")
    from sims import sweep
    from sims.sweep.chunk import chunk_seed, run_chunk
    from sims.sweep.grid import GridError

    g = _grid(tmp_path, "lr")
    assert g.score == "lr" and "score" in g.canonical()
    g0 = _grid(tmp_path, None)
    assert g0.score is None and "score" not in g0.canonical() and g0.hash != g.hash
    task = next(iter(sweep.tasks(g).values()))
    rows = run_chunk(task)
    gen = generate_synthetic(open_synthetic("news"), "srl", n=4, T=40, seed=chunk_seed(0, 0), key=g.key, prompt_len=g.prompt_len)
    want = score_generation(gen, "lr", open_synthetic("news"), dedup=True)
    wm = ~rows["null"]
    assert np.allclose(rows["log10_p"][wm], want.log10_p) and np.all(np.isnan(rows["tokens_to_detect"]))
    default = run_chunk(next(iter(sweep.tasks(g0).values())))
    assert not np.allclose(default["log10_p"][wm], rows["log10_p"][wm])
    with pytest.raises(GridError, match=r"g.toml:6: key 'score': score 'lr' does not apply to algo 'ems'"):
        _grid(tmp_path, "lr", ("srl", "ems"))


def test_cli_score_error_names_the_scores(tmp_path, capsys, small):
    from sims.cli.main import main

    path = tmp_path / "e.npz"
    generate_synthetic(small, "dualga", n=1, T=30, seed=1, key=7).save(path)
    assert main(["detect", str(path), "--key", "7", "--score", "ems-hc"]) == 2
    assert "score 'ems-hc' does not apply to algo 'dualga'" in capsys.readouterr().err
    assert main(["detect", str(path), "--key", "7", "--score", "lr", "--json"]) == 0


def test_fig_scores_reads_the_registry():
    from paper_figs import fig_scores

    assert set(fig_scores.ALGOS) <= set(registry.names())
    lo, hi = fig_scores.median_ci([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, np.inf])
    assert (lo, hi) == (2.0, 10.0)  # k = 2 of 11: P(Bin(11, 1/2) <= 1) = 0.0059 <= 0.025 < P(<= 2) = 0.033; x_(2), x_(10)
    assert np.isnan(fig_scores.median_ci([1.0, np.inf, np.inf])[0])  # 3 texts: no order statistic covers 95 %
