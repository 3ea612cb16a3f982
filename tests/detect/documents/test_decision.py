"""sims.detect.documents.decision's documents read field by field (the survivors of make mutate's sampled run on
this module): a text's token count honours its length, detection's gamma overrides the generation's,
the prefix p-values exist for the red-green and EMS families only and follow the generation's seeding
scheme, and the anytime document's rows are the e-process's stop and log10 e-value."""

import math

import numpy as np

import sims
from sims.detect.documents import decision
from sims.detect.families import detectors
from sims.detect.stats import scores
from sims.detect.stats.scores import tokens_to_detect

LM = sims.get_lm("lfqa", vocab_size=500)


def _doc(gen, **kw):
    res = detectors.score(gen, gamma=kw.get("gamma"), dedup=False)
    return decision.generation_document(gen, res, key=gen.meta["key"], fpr=1e-3, dedup=False, input="x", **kw)[0]


def test_detection_gamma_overrides_the_generations():
    gen = sims.generate(LM, "none", n=2, T=30, seed=1, key=3)
    assert _doc(gen, algo="srl")["gamma"] == gen.meta["gamma"]
    assert _doc(gen, algo="srl", gamma=0.5)["gamma"] == 0.5


def test_prefix_p_values_for_redgreen_and_ems_only():
    """EMS and SRL texts (delta 4, 60 tokens) are detected at 1e-3 with a tokens-to-detect; AutoCov has
    no prefix curve, so none."""
    for algo, kw in (("ems", {}), ("srl", dict(delta=4.0))):
        rows = _doc(sims.generate(LM, algo, n=2, T=60, seed=2, key=5, **kw))["texts"]
        assert all(r["watermarked"] and 1 <= r["tokens_to_detect"] <= 60 for r in rows), (algo, rows)
    rows = _doc(sims.generate(LM, "autocov", n=2, T=60, seed=2, key=5))["texts"]
    assert all(r["tokens_to_detect"] is None for r in rows)


def test_prefix_p_values_follow_the_generations_seeding_scheme():
    gen = sims.generate(LM, "srl", n=3, T=60, seed=4, key=9, h=3, delta=3.0, seeding="minhash")
    rows = _doc(gen)["texts"]
    prefix = scores.prefix_log10p(gen.tokens, gen.prompts[:, -3:], 9, gamma=gen.meta["gamma"], h=3, vocab_size=500, seeding="minhash")
    assert [r["tokens_to_detect"] for r in rows] == [int(t) if np.isfinite(t) else None for t in tokens_to_detect(prefix, -3.0)]
    lefthash = scores.prefix_log10p(gen.tokens, gen.prompts[:, -3:], 9, gamma=gen.meta["gamma"], h=3, vocab_size=500)
    assert not np.array_equal(prefix, lefthash)  # the scheme matters on these texts


def test_sequential_rows_are_the_stop_and_the_log10_e_value():
    wm = sims.generate(LM, "srl", n=2, T=80, seed=3, key=7, delta=4.0)
    res = detectors.sequential_score(wm, alpha=1e-3)
    null = detectors.sequential_score(wm, alpha=1e-3, key=8)
    assert (res.stop > 0).all() and (null.stop == -1).all()
    for r_ in (res, null):
        doc = decision.sequential_document(wm, r_, key=7, dedup=True, input="x")
        for row, le, s in zip(doc["texts"], r_.log_e, r_.stop):
            assert row["log10_e"] == float(le / math.log(10.0))
            assert row["first_flagged"] == (int(s) if s > 0 else None)
            assert row["watermarked"] == (s > 0) and row["decision"] == ("watermarked" if s > 0 else "not watermarked")


def test_the_many_keys_document_takes_detections_gamma_else_the_generations():
    gen = sims.generate(LM, "srl", n=2, T=30, seed=1, key=3, delta=2.0)
    assert decision.keys_document(gen, [3, 4], fpr=1e-3, dedup=True, input="x")["gamma"] == gen.meta["gamma"]
    assert decision.keys_document(gen, [3, 4], fpr=1e-3, dedup=True, input="x", gamma=0.5, algo="srl")["gamma"] == 0.5
