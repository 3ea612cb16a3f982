"""``python -m sims detect``: the decision at a false-positive rate, the wmstats.detect/1 JSON
document, the HTML report (structure here; rendering in headless Chromium) and every bad
input named in one line with exit status 2."""

from __future__ import annotations

import html.parser
import json
import math
import shutil
import subprocess
import sys

import numpy as np
import pytest

import sims
from sims.cli.main import main
from sims.detect.documents import detect_json
from sims.detect.documents.html import MarkedText, id_pieces, render
from sims.detect.families import detectors
from sims.detect.stats import scores
from sims.detect.stats.marks import null_green_probability, redgreen_from_marks

KEY = 15485863
ROW_FIELDS = ["index", "n_tokens", "n_scored", "score", "z", "log10_p", "tokens_to_detect", "watermarked", "decision"]


@pytest.fixture(scope="module")
def npz(tmp_path_factory):
    """Four SRL texts of 60 tokens (news preset, seed 0) and their file."""
    gen = sims.generate(sims.get_lm("news"), "srl", n=4, T=60, seed=0, key=KEY, delta=2.0)
    path = tmp_path_factory.mktemp("detect") / "srl.npz"
    gen.save(path)
    return gen, path


def run_cli(capsys, *argv) -> tuple[int, str, str]:
    rc = main(["detect", *map(str, argv)])
    out, err = capsys.readouterr()
    return rc, out, err


def test_json_document_and_decisions(npz, capsys):
    gen, path = npz
    rc, out, _ = run_cli(capsys, path, "--key", KEY, "--dedup", "--json", "--fpr", "1e-9")
    doc = json.loads(out)
    assert rc == 0 and doc["schema"] == "wmstats.detect" and doc["version"] == 1
    assert list(doc)[:2] == ["schema", "version"] and list(doc)[-1] == "texts"
    assert doc["statistic"] == "green count" and doc["fpr"] == 1e-9 and doc["dedup"] is True
    res = detectors.score(gen, dedup=True)
    prefix = scores.prefix_log10p(gen.tokens, gen.prompts, KEY, gamma=0.25, dedup=True, vocab_size=gen.meta["vocab_size"])
    ttd = scores.tokens_to_detect(prefix, -9.0)
    for i, r in enumerate(doc["texts"]):
        assert list(r) == ROW_FIELDS
        assert (r["n_scored"], r["score"], r["log10_p"]) == (res.n_scored[i], res.score[i], res.log10_p[i])
        assert r["watermarked"] == (r["log10_p"] <= -9.0) and r["decision"] == ("watermarked" if r["watermarked"] else "not watermarked")
        assert r["tokens_to_detect"] == (None if np.isnan(ttd[i]) else int(ttd[i]))
    assert any(r["watermarked"] for r in doc["texts"]) and any(not r["watermarked"] for r in doc["texts"])  # level 1e-9 splits them
    rc, out, _ = run_cli(capsys, path, "--key", KEY + 1, "--json")  # another key: the null
    assert not any(r["watermarked"] for r in json.loads(out)["texts"])


def test_table_has_the_decision_not_flagged(npz, capsys):
    _, path = npz
    rc, out, _ = run_cli(capsys, path, "--key", KEY)
    head = out.splitlines()[1].split()
    assert rc == 0 and "flagged" not in out and head[-2:] == ["watermarked", "decision"] and "green" in head
    assert out.splitlines()[2].split()[-2:] == ["yes", "watermarked"]


def test_short_texts_say_so_in_words(capsys, tmp_path):
    """One token: too short to score; five tokens at gamma 0.25: even all green gives
    p = 0.25**5 ~ 1e-3 > 1e-4, so "no" would carry no information."""
    lm = sims.get_lm("news")
    for T, expected in ((1, "too short to score"), (5, "too short for this fpr")):
        gen = sims.generate(lm, "srl", n=2, T=T, seed=1, key=KEY, delta=2.0)
        gen.save(tmp_path / "s.npz")
        rc, out, _ = run_cli(capsys, tmp_path / "s.npz", "--key", KEY, "--json")
        rows = json.loads(out)["texts"]
        assert [r["decision"] for r in rows] == [expected] * 2 and not any(r["watermarked"] for r in rows)
    rc, out, _ = run_cli(capsys, tmp_path / "s.npz", "--key", KEY, "--json", "--fpr", "0.01")  # 0.25**5 < 0.01: decidable
    assert {r["decision"] for r in json.loads(out)["texts"]} <= {"watermarked", "not watermarked"}


def test_decide_at_the_boundary():
    """p exactly at the level is a detection (p <= fpr); one ulp above is not.  At gamma = 0.25
    and fpr 1e-4, 7 scored tokens can reach the level (0.25**7 = 6.1e-5), 6 cannot (2.4e-4)."""
    lvl = math.log10(1e-4)
    res = scores.DetectResult(np.array([50, 50, 1, 3, 6, 7]), np.zeros(6), np.zeros(6), np.array([lvl, np.nextafter(lvl, 0), 0.0, -1.0, -1.0, -1.0]),
                              np.array([False, False, True, False, False, False]))
    assert detect_json.decide(res, 1e-4, gamma=0.25) == ["watermarked", "not watermarked", "too short to score", "too short for this fpr",
                                                    "too short for this fpr", "not watermarked"]
    assert detect_json.decide(res, 1e-4)[3] == "not watermarked"  # no gamma (e.g. EMS): no attainable-p verdict


def test_marks_match_the_package_detector(npz):
    """redgreen_from_marks (any green-list rule) equals score_redgreen / prefix_log10p digit for digit."""
    gen, _ = npz
    kw = dict(gamma=0.25, vocab_size=gen.meta["vocab_size"], dedup=True)
    g, scored = scores.token_scores(gen.tokens, gen.prompts, KEY, **kw)
    res, prefix = redgreen_from_marks(g > 0.5, scored, np.full(4, 60), null_green_probability(0.25, "bernoulli", None))
    ref = scores.score_redgreen(gen.tokens, gen.prompts, KEY, **kw)
    for a in ("n_scored", "score", "z", "log10_p", "too_short"):
        np.testing.assert_array_equal(getattr(res, a), getattr(ref, a))
    np.testing.assert_array_equal(prefix, scores.prefix_log10p(gen.tokens, gen.prompts, KEY, **kw))


class _Tags(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.spans = [], []
        self._cls = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append((tag, a))
        self._cls = a.get("class") if tag == "span" else None

    def handle_data(self, data):
        if self._cls and self._cls.startswith("tok"):
            self.spans.append((self._cls, data))
        self._cls = None


def test_html_report_structure(npz, capsys, tmp_path):
    gen, _ = npz
    tokens = gen.tokens.copy()
    tokens[0, 30:] = tokens[0, :30]  # text 0 repeats itself: 29 repeated (context, token) pairs
    path = tmp_path / "rep.npz"
    sims.Generation(tokens, gen.prompts, gen.kl, gen.G, gen.dg, gen.entropy, gen.lam, meta=gen.meta).save(path)
    out_html = tmp_path / "r.html"
    rc, out, _ = run_cli(capsys, path, "--key", KEY, "--dedup", "--json", "--html", out_html)
    doc = json.loads(out)
    page = out_html.read_text()
    p = _Tags()
    p.feed(page)
    sections = [a for t, a in p.tags if t == "section"]
    assert [s["data-decision"] for s in sections] == [r["decision"] for r in doc["texts"]]
    assert sum(t == "svg" for t, _ in p.tags) == 4
    assert not any(t in ("script", "link", "img", "iframe") for t, _ in p.tags) and "http" not in page  # self-contained
    toks = [(c, d) for c, d in p.spans if "ctx" not in c][-60:]  # the last text's tokens, in order
    assert [d for _, d in toks] == id_pieces(gen.tokens[3])
    green = scores.green_indicators(gen.tokens[3:], gen.prompts[3:], KEY, 0.25)[0]
    assert [" g" in c + " " for c, _ in toks] == list(green)
    dups = sum(c.startswith("tok dup") for c, _ in p.spans) - 1  # the legend has one
    assert dups == sum(r["n_tokens"] - r["n_scored"] for r in doc["texts"]) == 29


def test_html_escapes_text():
    row = dict(index=0, n_tokens=2, n_scored=2, score=1.0, z=0.5, log10_p=-0.3, tokens_to_detect=None, watermarked=False,
               decision="not watermarked")
    m = MarkedText(row, ["<b>"], ["&", "</div>"], np.array([True, False]), np.array([True, True]), np.array([0.0, -0.3]))
    page = render(detect_json.document([row], fpr=1e-4), [m])
    assert "<b>" not in page.replace("<body>", "") and "&lt;/div&gt;" in page and "&amp;" in page


# --- headless Chromium -------------------------------------------------------------------------

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def chromium_load(path, tmp_path) -> tuple[str, list[str]]:
    """The DOM Chromium builds from ``path`` and the page's console messages (its log at --v=0)."""
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
           "--disable-sync", "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}", "--enable-logging=stderr", "--v=0",
           "--dump-dom", path.as_uri()]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    return p.stdout, [ln for ln in p.stderr.splitlines() if "CONSOLE" in ln]


@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium not installed (Debian package `chromium`)")
def test_html_renders_in_headless_chromium(npz, capsys, tmp_path):
    _, path = npz
    out_html = tmp_path / "r.html"
    run_cli(capsys, path, "--key", KEY, "--dedup", "--html", out_html)
    dom, console = chromium_load(out_html, tmp_path)
    assert console == []
    assert dom.count('data-decision="watermarked"') == 4 and 'id="summary"' in dom and "4 of 4 texts watermarked" in dom
    assert dom.count('class="tok g"') + dom.count('class="tok r"') + dom.count('class="tok dup') == 4 * 60 + 3  # + the legend's three
    assert dom.count("<polyline") == 4
    # the console check catches an error a page raises (planted here)
    bad = tmp_path / "bad.html"
    bad.write_text(out_html.read_text().replace("</body>", "<script>console.error('planted')</script></body>"))
    assert any("planted" in ln for ln in chromium_load(bad, tmp_path)[1])


# --- bad input ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def bad_files(npz, tmp_path_factory):
    gen, _ = npz
    d = tmp_path_factory.mktemp("bad")
    np.savez(d / "random.npz", a=np.arange(3))
    np.save(d / "array.npy", np.arange(3))
    (d / "notes.txt").write_text("hello")
    small = sims.Generation(gen.tokens, gen.prompts, gen.kl, gen.G, gen.dg, gen.entropy, gen.lam, meta={**gen.meta, "vocab_size": 1000})
    small.save(d / "othervocab.npz")
    (d / "empty.txt").write_text("  \n")
    (d / "bad.jsonl").write_text('{"text": "a"}\n{"txt": "b"}\n')
    return d


BAD = [
    (["{d}/random.npz"], "is not a wmstats generation file: missing arrays"),
    (["{d}/array.npy"], "is not a wmstats generation file: a single array"),
    (["{d}/notes.txt"], "is not a wmstats generation file"),
    (["{d}/missing.npz"], "no such file"),
    (["{d}/othervocab.npz"], "ids must be in [0, 999]"),
    (["{npz}", "--vocab-size", "49152"], "--vocab-size must equal the generation's vocab_size 32000"),
    (["{npz}", "--key", "-1"], "key must be an integer in [0, 2**64); got '-1'"),
    (["{npz}", "--key", str(2**64)], "key must be an integer in [0, 2**64)"),
    (["{npz}", "--key", "abc"], "key must be an integer"),
    (["{npz}", "--fpr", "0"], "fpr must be in (0, 1); got '0'"),
    (["{npz}", "--fpr", "1"], "fpr must be in (0, 1)"),
    (["{npz}", "--fpr", "nan"], "fpr must be in (0, 1)"),
    (["{npz}", "--fpr", "x"], "fpr must be in (0, 1); got 'x'"),
    (["{npz}", "--scheme", "kgw"], "scheme must be 'wmstats' for an .npz"),
    (["--text", "{d}/notes.txt", "--lm", "smollm2", "--scheme", "kgw"],
     "scheme must be one of ('wmstats', 'transformers-lefthash', 'transformers-synthid', 'transformers-selfhash'); got 'kgw'"),
    (["--text", "{d}/notes.txt"], "--lm is required with --text"),
    (["--text", "{d}/empty.txt", "--lm", "smollm2"], "text 0 is empty"),
    (["--text", "{d}/bad.jsonl", "--lm", "smollm2"], "line 2: expected an object"),
    (["--text", "{d}/array.npy", "--lm", "smollm2"], "not UTF-8 text"),
    (["--text", "{d}/notes.txt", "--lm", "smollm2", "--gamma", "1.5"], "gamma must be in (0, 1); got 1.5"),
    ([], "give either FILE.npz or --text"),
    (["{npz}", "--text", "{d}/notes.txt", "--lm", "x"], "give either FILE.npz or --text"),
    (["{npz}", "--h", "2"], "--h applies to --text only"),
    (["--text", "{d}/notes.txt", "--lm", "smollm2", "--score", "ems-log"], "--score 'ems-log' scores an .npz"),
]


@pytest.mark.parametrize("argv,message", BAD, ids=[m[:40] for _, m in BAD])
def test_bad_input_is_named(argv, message, npz, bad_files, capsys):
    argv = [a.format(d=bad_files, npz=npz[1]) for a in argv]
    if "--key" not in argv:
        argv += ["--key", str(KEY)]
    rc, out, err = run_cli(capsys, *argv)
    assert rc == 2 and out == "" and err.count("\n") == 1 and message in err, err


def test_bad_input_from_the_shell(bad_files):
    """The real entry point: exit status 2, one line on stderr, no traceback."""
    p = subprocess.run([sys.executable, "-m", "sims", "detect", str(bad_files / "array.npy"), "--key", "1"], capture_output=True, text=True)
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "Traceback" not in p.stderr and "array.npy" in p.stderr
