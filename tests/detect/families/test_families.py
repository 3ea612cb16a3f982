"""The detector families (sims.detect.families): one object per family, registered once, asked by every
detector; one battery over every family and every algorithm."""

from __future__ import annotations

import doctest
import pathlib
import re

import numpy as np
import pytest

import sims
from sims.detect import families
from sims.detect.families import detectors
from sims.watermarks import registry

ROOT = pathlib.Path(__file__).resolve().parents[3]
LM = sims.get_lm("news")


def test_every_family_named_by_the_registry_is_registered_once():
    assert families.names() == registry.FAMILIES
    for name in families.names():
        fam = families.get(name)
        assert fam.name == name and isinstance(fam, families.DetectorFamily)
        assert fam.statistic and fam.description
        assert fam.prefix == (fam.prefix_stat is not None)
    with pytest.raises(ValueError, match="is registered already"):
        families.register_family(families.RedGreen())
    with pytest.raises(ValueError, match="detector family 'nope' is not registered"):
        families.get("nope")


def test_each_algorithm_reads_its_family_from_its_record():
    for algo in registry.names():
        assert families.of(algo) is families.get(registry.get(algo).family)


@pytest.fixture(scope="module")
def gens():
    return {algo: sims.generate(LM, algo, n=2, T=40, seed=0, key=7) for algo in registry.names()}


@pytest.mark.parametrize("algo", registry.names())
def test_the_detectors_ask_the_family(gens, algo):
    """detectors.score / sequential_score / score_keys are the family's methods, for every algorithm."""
    gen, fam = gens[algo], families.of(algo)
    dedup = fam.own_dedup is None  # the tournament refuses the pair dedup
    got = detectors.score(gen, LM, dedup=dedup)
    ref = fam.score(gen, LM, algo=algo, key=7, dedup=dedup, gamma=None, stat=None, params=None)
    for a, b in zip((got.n_scored, got.score, got.z, got.log10_p), (ref.n_scored, ref.score, ref.z, ref.log10_p)):
        np.testing.assert_array_equal(a, b)
    seq = detectors.sequential_score(gen, LM, alpha=1e-2)
    np.testing.assert_array_equal(seq.n_scored, fam.sequential(gen, LM, algo=algo, key=7, dedup=True, gamma=gen.meta.get("gamma"), alpha=1e-2,
                                                               grid=None).n_scored)
    lp, n = detectors.score_keys(gen, [6, 7], LM, dedup=dedup)
    one = detectors.score(gen, LM, dedup=dedup, key=6)
    np.testing.assert_allclose(lp[0], one.log10_p, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(n[0], one.n_scored)
    curve = fam.prefix_curve(gen, 7, gamma=gen.meta.get("gamma"), dedup=False)
    assert (curve is None) == (not fam.prefix)
    if curve is not None:
        np.testing.assert_allclose(curve[:, -1], detectors.score(gen, LM).log10_p, rtol=1e-9, atol=1e-12)


def test_the_detectors_doc_examples_run():
    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    tests = [t for t in finder.find(detectors) if t.examples]
    assert len(tests) == 3
    for t in tests:
        assert runner.run(t).failed == 0, t.name


def test_no_module_compares_a_family_name():
    """Outside the registry and the families, nothing tests a family's name (the families answer instead)."""
    pattern = re.compile(r"\b(family|fam)(\.name)? (==|!=|in|not in) ")
    hits = []
    for f in (ROOT / "sims").rglob("*.py"):
        if f.name in ("registry.py", "families.py"):
            continue
        hits += [f"{f.relative_to(ROOT)}:{i}" for i, line in enumerate(f.read_text().splitlines(), 1) if pattern.search(line)]
    assert not hits, hits


@pytest.mark.parametrize("algo", ["srl", "dualga", "ems", "autocov", "synthid"])
@pytest.mark.parametrize("dedup", [False, True])
def test_one_pass_marks_give_the_scores_and_the_prefix_curve(gens, algo, dedup):
    """DetectorFamily.answer (one hashing pass) equals the fixed-length score and the prefix curve bit for bit;
    the marks are token_scores' values and mask, and every in-text token's colour."""
    from sims.detect.stats import scores

    gen, fam = gens[algo], families.of(algo)
    dedup = dedup and fam.own_dedup is None
    res, prefix, marks = fam.answer(gen, LM, algo=algo, key=7, dedup=dedup, gamma=None)
    ref = detectors.score(gen, LM, dedup=dedup)
    for a, b in zip((res.n_scored, res.score, res.z, res.log10_p, res.too_short), (ref.n_scored, ref.score, ref.z, ref.log10_p, ref.too_short)):
        np.testing.assert_array_equal(a, b)
    if not fam.prefix:
        assert prefix is None and marks is None
        return
    kw = dict(stat=fam.prefix_stat, gamma=gen.meta["gamma"], h=gen.meta["h"], vocab_size=gen.meta["vocab_size"], lengths=gen.lengths)
    np.testing.assert_array_equal(prefix, scores.prefix_log10p(gen.tokens, gen.prompts[:, -1:], 7, dedup=dedup, **kw))
    np.testing.assert_array_equal(prefix, fam.prefix_curve(gen, 7, gamma=None, dedup=dedup))
    values, scored = scores.token_scores(gen.tokens, gen.prompts[:, -1:], 7, dedup=dedup, **kw)
    np.testing.assert_array_equal(np.where(marks.scored, marks.values, 0.0), values)
    np.testing.assert_array_equal(marks.scored, scored)
    np.testing.assert_array_equal(marks.values, scores.token_scores(gen.tokens, gen.prompts[:, -1:], 7, **kw)[0])


def test_an_npz_loads_without_its_records(gens, tmp_path):
    from sims.core.record import RECORDS, Generation

    gens["srl"].save(tmp_path / "g.npz")
    g = Generation.load(tmp_path / "g.npz", records=False)
    np.testing.assert_array_equal(g.tokens, gens["srl"].tokens)
    assert g.meta == gens["srl"].meta
    for name in RECORDS:
        a = getattr(g, name)
        assert a.shape == g.tokens.shape and np.isnan(a).all() and not a.flags.writeable


def test_the_result_reads_like_the_document(gens, tmp_path, capsys):
    """One result type: the statistic, the exact log10 p, the decision at ``fpr`` and the texts too short to
    test, under the field names of ``sims detect --json`` and with its answers."""
    import json

    from sims.cli.main import main

    gen = gens["srl"]
    gen.save(tmp_path / "g.npz")
    assert main(["detect", str(tmp_path / "g.npz"), "--key", "7", "--json", "--fpr", "0.01"]) == 0
    doc = json.loads(capsys.readouterr().out)
    r = detectors.score(gen, fpr=0.01)
    assert r.fpr == doc["fpr"] == 0.01 and detectors.score(gen).fpr == 1e-4
    for i, row in enumerate(doc["texts"]):
        assert (row["n_scored"], row["score"], row["log10_p"], row["watermarked"]) == (r.n_scored[i], r.score[i], r.log10_p[i], r.watermarked[i])
        assert (row["decision"] == "too short to score") == r.too_short[i]
    short = detectors.score(sims.generate(LM, "srl", n=2, T=1, seed=0, key=7), fpr=0.5)
    assert short.too_short.all() and not short.watermarked.any()
    with pytest.raises(ValueError, match="fpr must be in"):
        detectors.score(gen, fpr=2.0)


def test_an_attack_takes_the_clis_defaults(gens):
    """``sims.attack`` without ``seed`` is seed 0, and the entropy attack reads the generation's own LM by default."""
    gen = gens["srl"]
    np.testing.assert_array_equal(sims.attack(gen, "deletion", 0.2).tokens, sims.attack(gen, "deletion", 0.2, seed=0).tokens)
    np.testing.assert_array_equal(sims.attack(gen, "entropy", 0.2).tokens, sims.attack(gen, "entropy", 0.2, seed=0, lm=LM).tokens)


def test_the_python_calls_take_the_clis_defaults(gens):
    """Where ``sims generate`` / ``evaluate`` / ``detect`` have defaults, the Python calls have the same ones."""
    import inspect

    from sims.detect.families.score_families import score_generation
    from sims.experiments.evaluate import evaluate

    assert sims.generate("tiny", "srl").tokens.shape == (100, 200)
    assert {k: inspect.signature(evaluate).parameters[k].default for k in ("n", "T", "seed")} == dict(n=100, T=200, seed=0)
    r = score_generation(gens["srl"], "green", fpr=0.01)
    assert r.fpr == 0.01 and score_generation(gens["srl"], "green").fpr == 1e-4
    np.testing.assert_array_equal(r.watermarked, r.log10_p <= -2)


def test_a_siphash_generations_prefix_curve_reads_its_own_green_lists():
    """The prefix curve of SipHash-keyed texts comes from the SipHash colours (the marks of the score), so its
    last prefix is the text's p-value and tokens_to_detect is that of the texts' own detection."""
    gen = sims.generate(LM, "srl", n=2, T=64, seed=0, key=7, prf="siphash")
    fam = families.of("srl")
    for dedup in (False, True):
        res, prefix, _ = fam.answer(gen, None, algo="srl", key=7, dedup=dedup, gamma=None)
        np.testing.assert_array_equal(prefix[:, -1], res.log10_p)
        assert (res.log10_p < -4).all() and not np.isnan(sims.tokens_to_detect(prefix)).any()
