"""SWEET's views count its gated positions only, at the alpha the texts were generated with: tokens to detect of
``sims evaluate`` and ``sims sweep``, the HTML report (ungated tokens grey, said in the legend), the unwatermarked
controls' gate, and the streaming detector's threshold (a non-default alpha, checked against the batch detector)."""

import numpy as np
import pytest

import sims
from sims.detect import families
from sims.detect.families import detectors
from sims.detect.families.stream import SequentialDetector
from sims.detect.stats import scores
from sims.detect.stats.entropies import shannon_entropies
from sims.detect.stats.gated_scores import entropy_gate
from sims.experiments.evaluate import TTD_LEVEL, redgreen_ttd
from sims.watermarks import registry

LM = sims.get_lm("news", vocab_size=2000)
KEY = 7
ALPHA = 3.2  # not the registry's default alpha; gates out about two positions in three of news at V = 2000
DEFAULT = registry.resolve_params("sweet")["alpha"]


@pytest.fixture(scope="module")
def gen():
    return sims.generate(LM, "sweet", n=6, T=120, seed=3, key=KEY, alpha=ALPHA)


def _ungated_ttd(gen, dedup=False):
    """Tokens to detect from the plain green count over every position (the old, wrong, view of SWEET texts)."""
    m = gen.meta
    pref = scores.prefix_log10p(gen.tokens, gen.prompts[:, -m["h"]:], m["key"], stat="green", gamma=m["gamma"], h=m["h"], dedup=dedup,
                                vocab_size=m["vocab_size"])
    return scores.tokens_to_detect(pref, np.log10(TTD_LEVEL))


def _gated_ttd(gen, alpha, dedup=False):
    """Tokens to detect recomputed here: the first prefix whose gated green count's exact binomial p-value stays at or below the level."""
    m = gen.meta
    g = families.get("redgreen").marks(gen, m["key"], gamma=m["gamma"], dedup=dedup)
    gate = entropy_gate(shannon_entropies(gen, LM), alpha)
    _, pref = families.get("redgreen").from_marks(families.Marks(g.values, g.scored & gate, g.lengths, g.g_eff))
    return scores.tokens_to_detect(pref, np.log10(TTD_LEVEL))


def test_the_default_alpha_is_not_this_files(gen):
    assert DEFAULT != ALPHA
    gate = entropy_gate(shannon_entropies(gen, LM), ALPHA)
    assert 0.1 < gate.mean() < 0.9  # a real gate: neither everything nor nothing


def test_evaluate_tokens_to_detect_counts_the_gated_positions(gen):
    ttd = redgreen_ttd(gen, lm=LM)
    np.testing.assert_array_equal(ttd, _gated_ttd(gen, ALPHA))
    assert not np.array_equal(ttd, _ungated_ttd(gen), equal_nan=True)  # the plain count's curve differs on these texts
    np.testing.assert_array_equal(redgreen_ttd(gen), ttd)  # without lm: the generation's LM
    r = sims.evaluate(LM, "sweet", n=4, T=120, seed=3, key=KEY, alpha=ALPHA, n_null=4, return_arrays=True)
    g4 = sims.generate(LM, "sweet", n=4, T=120, seed=3, key=KEY, alpha=ALPHA)
    np.testing.assert_array_equal(r["arrays"]["tokens_to_detect"], _gated_ttd(g4, ALPHA))


def test_controls_are_gated_at_the_watermarks_alpha(gen):
    """Unwatermarked texts scored by SWEET's detector with the watermarked generation's record (``params``, as ``sims evaluate``
    and ``sims sweep`` score their controls) count the positions past that alpha, not the registry default's."""
    null = sims.generate(LM, "none", n=4, T=120, seed=9, key=KEY)
    got = detectors.score(null, LM, algo="sweet", params=gen.meta)
    H = shannon_entropies(null, LM)
    np.testing.assert_array_equal(got.n_scored, entropy_gate(H, ALPHA).sum(axis=1))
    assert (detectors.score(null, LM, algo="sweet").n_scored == entropy_gate(H, DEFAULT).sum(axis=1)).all()


def test_sweep_chunk_tokens_to_detect_and_controls_are_gated():
    """``sims sweep``'s chunk: tokens to detect from SWEET's gated prefix curve (not the plain count's), and the controls
    gated at the watermarked generation's alpha 2.6 (not the registry default's)."""
    from sims.sweep.chunk import NULL_STREAM, chunk_seed, run_chunk

    a = 2.6  # about the median entropy of news at V = 32000; not the default alpha
    params = registry.resolve_params("sweet", alpha=a, delta=4.0)
    params = {k: params[k] for k in ("gamma", "delta", "alpha")}
    task = dict(config=dict(id="c0", lm="news", algo="sweet", params=params), n=4, T=150, chunk_size=4, chunk=0, seed=0, key=KEY, dedup=False,
                controls=True, prompt_len=8, ttd_level=TTD_LEVEL, metrics=["log10_p", "n_scored", "tokens_to_detect"], attacks=[], score=None,
                sampler=None, real=False)
    rows = run_chunk(task)
    lm = sims.get_lm("news")
    gen = sims.generate(lm, "sweet", n=4, T=150, seed=chunk_seed(0, 0), key=KEY, prompt_len=8, **params)
    wm = ~rows["null"]
    pref = families.of("sweet").prefix_curve(gen, KEY, gamma=None, dedup=False, lm=lm)
    ttd = scores.tokens_to_detect(pref, np.log10(TTD_LEVEL))
    assert np.isfinite(ttd).sum() >= 2  # detected texts: the curves compare
    np.testing.assert_array_equal(rows["tokens_to_detect"][wm], ttd)
    assert not np.array_equal(ttd, _ungated_ttd(gen), equal_nan=True)
    np.testing.assert_array_equal(rows["n_scored"][wm], entropy_gate(shannon_entropies(gen, lm), a).sum(axis=1))
    null = sims.generate(lm, "none", n=4, T=150, seed=chunk_seed(0, 0, NULL_STREAM), key=KEY, prompt_len=8, h=gen.meta["h"], gamma=params["gamma"])
    H0 = shannon_entropies(null, lm)
    np.testing.assert_array_equal(rows["n_scored"][rows["null"]], entropy_gate(H0, a).sum(axis=1))
    assert not np.array_equal(entropy_gate(H0, a).sum(axis=1), entropy_gate(H0, DEFAULT).sum(axis=1))


def test_html_greys_the_ungated_positions_and_says_so(gen, tmp_path):
    from sims.detect.documents import decision
    from sims.detect.documents.html import render

    res, prefix, marks = families.of("sweet").answer(gen, LM, algo="sweet", key=KEY, dedup=False, gamma=None)
    doc, marked = decision.generation_document(gen, res, key=KEY, fpr=1e-4, dedup=False, input="x", want_marks=True, prefix=prefix, marks=marks)
    gate = entropy_gate(shannon_entropies(gen, LM), ALPHA)
    for i, m in enumerate(marked):
        np.testing.assert_array_equal(m.gated, gate[i])
    page = render(doc, marked)
    assert page.split("</header>")[1].count('class="tok off"') == int((~gate).sum())
    assert "below the entropy gate, not scored" in page
    srl = sims.generate(LM, "srl", n=1, T=20, seed=0, key=KEY)
    res, prefix, marks = families.of("srl").answer(srl, None, algo="srl", key=KEY, dedup=False, gamma=None)
    d2, m2 = decision.generation_document(srl, res, key=KEY, fpr=1e-4, dedup=False, input="x", want_marks=True, prefix=prefix, marks=marks)
    assert "entropy gate" not in render(d2, m2)  # no gate, no legend entry


@pytest.mark.parametrize("how", [["--sequential"], ["--key", f"{KEY},{KEY + 1}"]])
def test_sequential_and_many_keys_html_colour_the_gated_count(gen, tmp_path, capsys, how):
    """``sims detect FILE.npz --html`` with ``--sequential`` or several keys: the report's counts are the gated ones (the
    sequential document's) and the ungated tokens are grey."""
    from sims.cli.main import main

    path = tmp_path / "sweet.npz"
    gen.save(path)
    out = tmp_path / "r.html"
    argv = ["detect", str(path), *(["--key", str(KEY)] if how[0] == "--sequential" else []), *how, "--html", str(out)]
    assert main(argv) == 0
    capsys.readouterr()
    page = out.read_text()
    gate = entropy_gate(shannon_entropies(gen, LM), ALPHA)
    assert page.split("</header>")[1].count('class="tok off"') == int((~gate).sum())
    seq = detectors.sequential_score(gen, LM, alpha=1e-4, dedup=False)
    for i in range(gen.n):
        assert f"of {int(seq.n_scored[i])} scored" in page.split(f'id="text-{i}"')[1].split("</section>")[0]


def test_stream_gates_at_the_given_threshold_and_agrees_with_the_batch(gen):
    """The stream fed the LM's distributions in chunks of 9, with ``threshold`` = the generation's alpha, ends in the batch
    e-process's state (and the gate of the fixed-length test); at the registry default it counts other positions."""
    batch = detectors.sequential_score(gen, LM, alpha=1e-2)
    fixed = detectors.score(gen, LM, dedup=True)
    step = LM.step_probs(gen)
    for i in range(3):
        probs = step(i)
        own = SequentialDetector(KEY, algo="sweet", context=gen.prompts[i], gamma=gen.meta["gamma"], vocab_size=2000, alpha=1e-2,
                                 threshold=gen.meta["alpha"])
        dflt = SequentialDetector(KEY, algo="sweet", context=gen.prompts[i], gamma=gen.meta["gamma"], vocab_size=2000, alpha=1e-2)
        for c in range(0, 120, 9):
            state = own.update(gen.tokens[i, c:c + 9], probs[c:c + 9])
            d = dflt.update(gen.tokens[i, c:c + 9], probs[c:c + 9])
        assert (state.n_scored, state.stop) == (batch.n_scored[i], batch.stop[i]) and state.n_scored == fixed.n_scored[i]
        assert state.log_e == pytest.approx(batch.log_e[i], rel=1e-12, abs=1e-12)
        assert d.n_scored != state.n_scored


def test_stream_threshold_is_refused_where_there_is_no_gate(gen):
    with pytest.raises(ValueError, match="threshold is the entropy gate's .* algo 'srl' has family 'redgreen'"):
        SequentialDetector(KEY, algo="srl", context=gen.prompts[0], vocab_size=2000, threshold=1.0)
    with pytest.raises(ValueError, match=r"threshold must be in \[0, inf\); got -1"):
        SequentialDetector(KEY, algo="sweet", context=gen.prompts[0], vocab_size=2000, threshold=-1)
