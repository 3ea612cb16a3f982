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
    # the registered families are the one list of names: every record names one of them, and each is some record's
    assert set(families.names()) == {registry.get(a).family for a in registry.names()}
    assert len(set(families.names())) == len(families.names())
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
        if f.name == "registry.py" or f.relative_to(ROOT).as_posix() == "sims/detect/families/__init__.py":
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


# -- The battery over every family (the scipy.stats pattern): family x seeding x dedup -------------------------
# Each family is exercised through one algorithm of its own (the registry's first that watermarks), under every
# seeding scheme its lists admit (lefthash, h = 1, and minhash, h = 3, where registry.check_seeding accepts it) and
# with and without dedup (the tournament family has its own repeated-context rule and takes dedup=False only).
# Monte Carlo checks: seed, sample size and level stated at each; the texts are drawn once per (family, seeding).
BATTERY_LM = sims.get_lm("news", vocab_size=2000)
BATTERY_KEY, NULL_KEY = 7, 1007  # texts are marked with BATTERY_KEY; NULL_KEY's lists are independent of them (the null)
N_NULL, T_NULL, SEED_NULL = 300, 40, 11  # null p-values: 300 texts of 40 tokens, generation seed 11
ALPHA_MC = 1e-3  # every Monte Carlo test's level (a correct detector fails it once in 1000 runs of a new seed)
LEVELS = (0.01, 0.1, 0.5)  # the null's rejection rates checked at these levels (Bonferroni over them)
SEEDINGS = {"lefthash": 1, "minhash": 3}  # scheme -> its context width h


def _battery_cases():
    out = []
    for fam in families.names():
        algo = next(a for a in registry.names(family=fam) if a != "none")
        for seeding, h in SEEDINGS.items():
            try:
                registry.check_seeding(algo, seeding)
            except ValueError:
                continue
            for dedup in (False, True) if families.get(fam).own_dedup is None else (False,):
                out.append(pytest.param(fam, algo, seeding, h, dedup, id=f"{fam}-{seeding}-dedup{int(dedup)}"))
    return out


BATTERY = _battery_cases()


@pytest.fixture(scope="module")
def battery_gens():
    cache = {}

    def get(algo, seeding, h):
        if (algo, seeding) not in cache:
            kw = {} if seeding == "lefthash" else dict(seeding=seeding)
            cache[algo, seeding] = sims.generate(BATTERY_LM, algo, n=N_NULL, T=T_NULL, seed=SEED_NULL, key=BATTERY_KEY, h=h, **kw)
        return cache[algo, seeding]

    return get


def test_the_battery_covers_every_family_seeding_and_dedup():
    fams = {p.values[0] for p in BATTERY}
    assert fams == set(families.names())
    assert {p.values[2] for p in BATTERY if p.values[0] == "redgreen"} == set(SEEDINGS)
    assert {p.values[4] for p in BATTERY if p.values[0] == "redgreen"} == {False, True}


def _poisson_binomial_pmf(probs: np.ndarray) -> np.ndarray:
    pmf = np.zeros(len(probs) + 1)
    pmf[0] = 1.0
    for p in probs:
        pmf[1:] = pmf[1:] * (1 - p) + pmf[:-1] * p
        pmf[0] *= 1 - p
    return pmf


@pytest.mark.parametrize("fam, algo, seeding, h, dedup", BATTERY)
def test_null_p_values_are_uniform(battery_gens, fam, algo, seeding, h, dedup):
    """Under the null (texts scored with a key that did not mark them) the p-values are valid at every level and,
    where the null law is known exactly, have exactly their law.

    Seed 11, 300 texts of 40 tokens (``news``, V = 2000), scored under key 1007; every test at alpha = 1e-3:
    - every family: #(p <= a) is not above Binomial(300, a) (one-sided exact binomial test, a in 0.01, 0.1, 0.5,
      Bonferroni over the three levels);
    - red-green and entropy-gated with dedup (distinct pairs: i.i.d. Bernoulli colours given the key-independent gate,
      the binomial law exact): #(p <= a) against
      its exact law, the Poisson-binomial of each text's attained level P(Bin(n_i, g) >= k_a(n_i)) (two-sided);
    - EMS (continuous Gamma null): the p-values against U(0, 1) (two-sided Kolmogorov-Smirnov).
    """
    from scipy import stats

    from sims.detect.stats.marks import null_green_probability

    gen = battery_gens(algo, seeding, h)
    res = detectors.score(gen, BATTERY_LM, dedup=dedup, key=NULL_KEY)
    p = 10.0 ** res.log10_p
    assert np.isfinite(res.log10_p).all() and (res.log10_p <= 0).all()
    for a in LEVELS:
        x = int((p <= a).sum())
        assert stats.binomtest(x, N_NULL, a, alternative="greater").pvalue > ALPHA_MC / len(LEVELS), (a, x)
    if families.get(fam).colours and dedup:  # the green count, whole or over the entropy-gated positions
        g = null_green_probability(gen.meta["gamma"], gen.meta["green_kind"], gen.meta["vocab_size"])
        for a in LEVELS:
            n = res.n_scored.astype(np.int64)
            k_a = np.array([next(k for k in range(m + 2) if k > m or stats.binom.sf(k - 1, m, g) <= a) for m in n])
            attained = np.where(res.too_short, 0.0, stats.binom.sf(k_a - 1, n, g))
            pmf = _poisson_binomial_pmf(attained)
            x = int(((p <= a) & ~res.too_short).sum())
            two_sided = min(1.0, 2 * min(pmf[: x + 1].sum(), pmf[x:].sum()))
            assert two_sided > ALPHA_MC / len(LEVELS), (a, x, attained.sum())
    if fam == "ems":
        assert stats.kstest(p, "uniform").pvalue > ALPHA_MC


@pytest.mark.parametrize("fam, algo, seeding, h, dedup", [c for c in BATTERY if c.values[0] == "redgreen"])
def test_marks_from_an_npz_equal_marks_from_its_decoded_text(battery_gens, tmp_path, fam, algo, seeding, h, dedup):
    """The red-green family's marks of a saved ``.npz`` (``sims detect FILE.npz``) are those of the same texts
    decoded and re-encoded (``sims detect --text``), and so are the results computed from them."""
    from sims.core.record import Generation
    from sims.detect.documents.text_marks import redgreen_text_marks
    from sims.detect.stats.marks import redgreen_from_marks

    gen = battery_gens(algo, seeding, h)
    gen.save(tmp_path / "g.npz")
    loaded = Generation.load(tmp_path / "g.npz")
    f = families.get(fam)
    res, prefix, marks = f.answer(loaded, BATTERY_LM, algo=algo, key=BATTERY_KEY, dedup=dedup, gamma=None)
    rows = [BATTERY_LM.encode(BATTERY_LM.decode(np.concatenate([loaded.prompts[i, -h:], loaded.tokens[i]]))) for i in range(loaded.n)]
    m = loaded.meta
    green, scored, lengths, g_eff = redgreen_text_marks(rows, BATTERY_KEY, gamma=m["gamma"], h=h, vocab_size=m["vocab_size"], dedup=dedup,
                                                        seeding=seeding)
    np.testing.assert_array_equal(scored, marks.scored)
    np.testing.assert_array_equal(green & scored, (marks.values > 0.5) & marks.scored)
    np.testing.assert_array_equal(lengths, marks.lengths)
    assert g_eff == marks.g_eff
    text_res, text_prefix = redgreen_from_marks(green, scored, lengths, g_eff)
    for a, b in zip((text_res.n_scored, text_res.score, text_res.log10_p), (res.n_scored, res.score, res.log10_p)):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(text_prefix, prefix)


# the fixed-length statistic that is the e-process's summed statistic (sims.detect.anytime.e_mixtures.SequentialResult.score)
SAME_SUM = {"redgreen": True, "entropy_gated": True, "ems": True, "ems_position": True, "keyed": True, "autocov": False, "tournament": False}


@pytest.mark.parametrize("fam, algo, seeding, h, dedup", BATTERY)
def test_sequential_and_fixed_length_tests_agree_on_what_they_share(battery_gens, fam, algo, seeding, h, dedup):
    """The e-process and the fixed-length test of a family score the same tokens (n_scored) and, where the
    fixed-length statistic is the e-process's running sum (green count, EMS sum, keyed hits), the same sum."""
    gen = battery_gens(algo, seeding, h)
    fixed = detectors.score(gen, BATTERY_LM, dedup=dedup)
    seq = detectors.sequential_score(gen, BATTERY_LM, alpha=1e-2, dedup=dedup)
    np.testing.assert_array_equal(seq.n_scored, fixed.n_scored)
    if fam == "autocov" and dedup:
        # AutoCov's fixed-length Z_T honours dedup as its e-process does (both read the kept colours in text order; it
        # once ignored dedup, found by this battery: under minhash, h = 3, 4 of 300 texts differed by one token); a
        # text without a repeated pair keeps every token and its undeduplicated p-value
        plain = detectors.score(gen, BATTERY_LM, dedup=False)
        same = fixed.n_scored == plain.n_scored
        np.testing.assert_array_equal(fixed.log10_p[same], plain.log10_p[same])
    if SAME_SUM[fam]:
        np.testing.assert_allclose(seq.score, fixed.score, rtol=1e-12, atol=0)
    assert set(SAME_SUM) == set(families.names())


@pytest.mark.parametrize("fam, algo, seeding, h, dedup", BATTERY)
def test_one_key_of_the_many_keys_test_is_the_one_key_test(battery_gens, fam, algo, seeding, h, dedup):
    """K = 1: score_keys under one key is the one-key test under that key, bit for bit (watermarking key and another)."""
    gen = battery_gens(algo, seeding, h)
    for key in (BATTERY_KEY, NULL_KEY):
        lp, n = detectors.score_keys(gen, [key], BATTERY_LM, dedup=dedup)
        one = detectors.score(gen, BATTERY_LM, dedup=dedup, key=key)
        assert lp.shape == (1, gen.n) and n.shape == (1, gen.n)
        np.testing.assert_array_equal(lp[0], one.log10_p)
        np.testing.assert_array_equal(n[0], one.n_scored)


@pytest.mark.parametrize("fam, algo, seeding, h, dedup", BATTERY)
def test_the_stream_equals_the_batch(battery_gens, fam, algo, seeding, h, dedup):
    """A text fed to the streaming detector in chunks of 7 tokens ends where the batch e-process ends: the tokens
    scored, the log e-value and the stopping token (first 3 texts)."""
    from sims.detect.families.stream import SequentialDetector

    gen = battery_gens(algo, seeding, h)
    m = gen.meta
    seq = detectors.sequential_score(gen, BATTERY_LM, alpha=1e-2, dedup=dedup)
    step_probs = BATTERY_LM.step_probs(gen) if families.get(fam).needs_lm else None  # keyed orders, the entropy gate
    for i in range(3):
        kw = {} if families.get(fam).own_dedup is not None else dict(dedup=dedup)
        det = SequentialDetector(BATTERY_KEY, algo=algo, context=gen.prompts[i], gamma=m.get("gamma"), vocab_size=m["vocab_size"], alpha=1e-2,
                                 h=h, seeding=seeding, **kw)
        probs = step_probs(i) if step_probs else None
        for c in range(0, T_NULL, 7):
            state = det.update(gen.tokens[i, c:c + 7], probs[c:c + 7] if probs is not None else None)
        assert (state.n_scored, state.stop) == (seq.n_scored[i], seq.stop[i])
        np.testing.assert_allclose(state.log_e, seq.log_e[i], rtol=1e-12, atol=1e-12)
