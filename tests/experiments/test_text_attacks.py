"""Text attacks (sims.experiments.text_attacks) and the Unicode normalisation that undoes homoglyphs and
zero-width characters (sims.core.unicode_text): hand-made strings, the token stand-ins on a synthetic LM,
copy-paste's spans, and the emoji attack's effect on the green count (Monte Carlo, stated seeds)."""

from __future__ import annotations

import json
import math
import unicodedata

import numpy as np
import pytest

import sims
from sims.cli.main import main
from sims.core.unicode_text import ATTACK_HOMOGLYPHS, HOMOGLYPHS, ZWSP, normalize_text
from sims.detect.families import detectors
from sims.experiments.text_attacks import KINDS, TEXT_KINDS, attack, attack_text

Z999 = 3.29  # two-sided 99.9% normal quantile: the Monte Carlo checks fail by chance 1 time in 1000


def test_normalize_text_by_hand():
    assert normalize_text("w\u043erld\u200b \uff21") == ("world A", dict(zero_width=1, nfkc=1, homoglyph=1, total=3))
    assert normalize_text("plain ascii, unchanged.") == ("plain ascii, unchanged.", dict(zero_width=0, nfkc=0, homoglyph=0, total=0))
    assert normalize_text("\ufeffa\u00adb\u200dc\u2060")[0] == "abc"  # BOM, soft hyphen, joiner, word joiner
    assert normalize_text("\ufb01ne")[0] == "fine"  # the ligature fi (NFKC)
    assert normalize_text("Ρуthοn")[0] == "Python"  # Greek Rho, Cyrillic u, Greek omicron
    for a, h in ATTACK_HOMOGLYPHS.items():  # the attack's substitution is undone exactly and survives NFKC
        assert HOMOGLYPHS[h] == a and unicodedata.normalize("NFKC", h) == h and h != a


def test_attack_text_edits_the_chosen_share_of_words():
    rng = np.random.default_rng(0)
    s = "the quick brown fox jumps over a lazy dog"  # 9 words, 8 of two or more characters
    assert attack_text(s, "typo", 0.0, rng) == (s, 0)
    h, k = attack_text(s, "homoglyph", 1.0, rng)
    assert k == 9 and normalize_text(h)[0] == s and normalize_text(h)[1]["homoglyph"] == 9
    z, k = attack_text(s, "zero-width", 0.45, rng)  # round(0.45 * 8) = 4 words
    assert k == 4 and z.count(ZWSP) == 4 and z.replace(ZWSP, "") == s and f" {ZWSP}" not in z and f"{ZWSP} " not in z  # inside words
    t, k = attack_text(s, "typo", 1.0, rng)
    assert k == 8 and t != s and normalize_text(t)[0] == t
    words, typo_words = s.split(), t.split()
    assert len(typo_words) == 9 and all(w == v for w, v in zip(words, typo_words) if len(w) == 1)
    for w, v in zip(words, typo_words):  # one swap of neighbours (an anagram) or one drop
        assert len(w) == 1 or (sorted(v) == sorted(w) and v != w) or (len(v) == len(w) - 1 and any(w[:i] + w[i + 1:] == v for i in range(len(w))))
    with pytest.raises(ValueError, match="kind must be one of"):
        attack_text(s, "emoji", 0.5, rng)


@pytest.fixture(scope="module")
def news():
    return sims.get_lm("news", vocab_size=2000)


def test_standins_on_a_synthetic_lm(news):
    gen = sims.generate(news, "srl", n=4, T=50, seed=0, key=7, delta=2.0)
    for kind, pieces in (("typo", 1), ("homoglyph", 2), ("zero-width", 2)):
        out = attack(gen, kind, 0.2, seed=1)
        assert out.meta["attacks"][-1] == dict(kind=kind, rate=0.2, seed=1, n_changed=40)
        assert list(out.lengths) == [50 + 10 * (pieces - 1)] * 4
        assert np.isnan(out.kl).all()
    assert np.array_equal(attack(gen, "homoglyph", 0.0, seed=1).tokens, gen.tokens)


def test_copy_paste_spans(news):
    gen = sims.generate(news, "srl", n=3, T=40, seed=0, key=7, delta=2.0)
    assert np.array_equal(attack(gen, "copy-paste", 0.0, seed=2, lm=news).tokens, gen.tokens)
    out = attack(gen, "copy-paste", 0.25, seed=2, lm=news)
    assert list(out.lengths) == [40] * 3 and out.meta["attacks"][-1]["kind"] == "copy-paste"
    for i in range(3):  # a run of 30 of the watermarked tokens, in order, inside 10 unwatermarked ones
        wm, row = gen.tokens[i], out.tokens[i]
        assert any(np.array_equal(row[a : a + 30], wm[b : b + 30]) for a in range(11) for b in range(11))
    plain = attack(gen, "copy-paste", 1.0, seed=2, lm=news)
    assert plain.tokens.shape == (3, 40) and not np.array_equal(plain.tokens, gen.tokens)
    z_plain, z_wm = detectors.score(plain, news).z, detectors.score(gen, news).z
    assert np.all(z_plain < 4.0) and np.all(z_wm > 4.0)


def _z(gen, lm):
    return detectors.score(gen, lm).z


def test_emoji_attack_removes_the_signal(news):
    """SRL (delta 2, h = 1) on ``news`` (V = 2000), 40 texts x 100 tokens, seeds 0 and 1.  Rate 0
    regenerates the watermark's law: the mean z equals that of the generator's texts (two-sample,
    99.9%).  Rate 1: every scored token after the first was coloured under the emoji's context, so
    the detector's colour is a fresh coin: the mean z is 0 within 3.29 standard errors."""
    gen = sims.generate(news, "srl", n=40, T=100, seed=0, key=7, delta=2.0)
    z0, zg = _z(attack(gen, "emoji", 0.0, seed=1, lm=news), news), _z(gen, news)
    assert abs(z0.mean() - zg.mean()) <= Z999 * math.sqrt(z0.var(ddof=1) / z0.size + zg.var(ddof=1) / zg.size)
    assert zg.mean() > 5.0
    out = attack(gen, "emoji", 1.0, seed=1, lm=news)
    assert out.meta["attacks"][-1]["n_changed"] == 40 * 100 and list(out.lengths) == [100] * 40
    z1 = _z(out, news)
    assert abs(z1.mean()) <= Z999 * z1.std(ddof=1) / math.sqrt(z1.size)
    half = _z(attack(gen, "emoji", 0.5, seed=1, lm=news), news)
    assert 0.5 < half.mean() < zg.mean() - 1.0


def test_emoji_attack_on_dualga_keeps_its_state(news):
    """DualGA started at lambda_1 = 0 (Delta 0.3, eta 1), rate 0, 30 x 100 tokens, seed 2: the reference path's
    texts have the generator's mean z (two-sample, 99.9%), which only a dual state carried from step to step
    reaches (a lambda left at 0 is no watermark: z about 0)."""
    gen = sims.generate(news, "dualga", n=30, T=100, seed=2, key=7, Delta=0.3, eta=1.0, lam1=0.0)
    z0, zg = _z(attack(gen, "emoji", 0.0, seed=3, lm=news), news), _z(gen, news)
    assert zg.mean() > 3.0
    assert abs(z0.mean() - zg.mean()) <= Z999 * math.sqrt(z0.var(ddof=1) / z0.size + zg.var(ddof=1) / zg.size)


def test_attack_cli_lists_and_runs_the_text_kinds(news, tmp_path, capsys):
    assert set(TEXT_KINDS) <= set(KINDS)
    with pytest.raises(SystemExit):
        main(["attack", "--help"])
    helptext = capsys.readouterr().out
    assert all(k in helptext for k in TEXT_KINDS)
    src, dst = tmp_path / "g.npz", tmp_path / "a.npz"
    sims.generate(news, "srl", n=2, T=30, seed=0, key=7, delta=2.0).save(src)
    assert main(["attack", str(src), "--kind", "zero-width", "--rate", "0.5", "--out", str(dst), "--quiet"]) == 0
    rec = json.loads(capsys.readouterr().out)["attacks"][-1]
    assert rec == dict(kind="zero-width", rate=0.5, seed=0, n_changed=30)
    assert sims.Generation.load(dst).tokens.shape == (2, 45)
