"""The book (``make docs``) as a reader sees it: every page opens in headless Chromium without a
console error, and every image and internal link of the built HTML points at something that
exists (file and anchor).

Building executes every chapter (minutes on 2 cores), hence ``slow``.  Set ``WMSTATS_BOOK_HTML``
to an existing build (e.g. ``out/book`` after ``make docs``) to check it without rebuilding.
Needs the ``[docs]`` extra and Debian's ``chromium`` (skipped with the reason when absent).
"""

import os
import pathlib
import subprocess
import sys
import urllib.parse
from html.parser import HTMLParser

import pytest

from tests._chromium import CHROMIUM, Chromium

ROOT = pathlib.Path(__file__).parents[1]


class _Refs(HTMLParser):
    """ids of a page, and the targets of its <img src>, <a href>, <link href>, <script src>."""

    def __init__(self):
        super().__init__()
        self.ids, self.refs = set(), []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"])
        if tag == "a" and a.get("name"):
            self.ids.add(a["name"])
        key = {"img": "src", "a": "href", "link": "href", "script": "src"}.get(tag)
        if key and a.get(key):
            self.refs.append((tag, a[key]))


def _parse(page):
    p = _Refs()
    p.feed(page.read_text(encoding="utf-8"))
    return p


@pytest.fixture(scope="module", params=[pytest.param("off", id="unexecuted"),
                                        pytest.param("force", id="executed", marks=pytest.mark.slow)])
def book(request, tmp_path_factory):
    """The built book: unexecuted in the default suite (pages, API reference, links, browser),
    executed in full under ``slow``; ``WMSTATS_BOOK_HTML`` checks an existing build instead."""
    given = os.environ.get("WMSTATS_BOOK_HTML")
    if given:
        return pathlib.Path(given).resolve(), "given"
    pytest.importorskip("myst_nb")
    pytest.importorskip("sphinx")
    out = tmp_path_factory.mktemp(f"book-{request.param}")
    env = {**os.environ, "WMSTATS_BOOK_EXECUTE": request.param}
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-E", "-b", "html", "-q", str(ROOT / "docs" / "book"), str(out)],
                          capture_output=True, text=True, cwd=ROOT, timeout=1800, env=env)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return out, request.param


def _pages(book):
    pages = sorted(p for p in book.rglob("*.html") if "_static" not in p.parts and "_sources" not in p.parts)
    assert pages, f"no HTML pages under {book}"
    return pages


def test_every_chapter_and_the_api_are_built(book):
    book, mode = book
    names = {p.relative_to(book).as_posix() for p in _pages(book)}
    chapters = sorted(p.stem for p in (ROOT / "notebooks").glob("*.md"))
    for stem in chapters:
        page = f"notebooks/{stem}.html"
        assert page in names, f"chapter {stem} not built"
        html = (book / page).read_text(encoding="utf-8")
        if mode != "off":
            assert "<img" in html or "background:#b7e4b7" in html, f"{page}: no figure (nor chapter 8's coloured tokens)"
            assert "cell_output" in html, f"{page}: no executed output"
    api = (book / "api.html").read_text(encoding="utf-8")
    import sims
    import theory

    for name in [f"theory.{n}" for n in theory.__all__] + [f"sims.{n}" for n in sims.__all__]:
        assert name.split(".")[-1] in api, f"API reference lacks {name}"
    assert (book / "generated" / "theory.offline_opt.html").exists(), "no page generated from a docstring"


def test_images_and_internal_links_resolve(book):
    book, _ = book
    cache = {}
    broken = []
    for page in _pages(book):
        for tag, ref in _parse(page).refs:
            url = urllib.parse.urlparse(ref)
            if url.scheme or ref.startswith("//") or ref.startswith("mailto:"):
                if tag in ("img", "script", "link") and url.scheme in ("http", "https"):
                    broken.append(f"{page.name}: <{tag}> loads {ref} from the network")
                continue
            target = page if not url.path else (page.parent / urllib.parse.unquote(url.path)).resolve()
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                broken.append(f"{page.relative_to(book)}: <{tag}> {ref} -> missing {target}")
                continue
            if url.fragment and target.suffix == ".html":
                if target not in cache:
                    cache[target] = _parse(target).ids
                if urllib.parse.unquote(url.fragment) not in cache[target]:
                    broken.append(f"{page.relative_to(book)}: <{tag}> {ref} -> no anchor #{url.fragment}")
    assert not broken, "\n".join(broken[:40])


def test_pages_open_without_console_errors(book, tmp_path):
    book, _ = book
    if CHROMIUM is None:
        pytest.skip("chromium not installed (Debian: apt-get install -y chromium)")
    with Chromium(tmp_path / "profile") as browser:
        failures = [f"{page.relative_to(book)}: " + " | ".join(found[:5]) for page in _pages(book) if (found := browser.problems(page))]
    assert not failures, "\n".join(failures)


PLANTED = {
    "clean.html": "<p>fine</p><script>console.log('loaded')</script>",
    "uncaught.html": "<script>undefinedFunction()</script>",
    "console_error.html": "<script>console.error('planted')</script>",
    "late_error.html": "<script>setTimeout(() => { throw new Error('after 2 s') }, 2000)</script>",
    "missing_image.html": "<img src='nowhere.png'>",
    "missing_script.html": "<script src='_static/nowhere.js'></script>",
}


@pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (Debian: apt-get install -y chromium)")
def test_the_browser_check_catches_planted_errors(tmp_path):
    """One browser, pages in turn: each planted fault (an exception, console.error, an error thrown by a
    timer 2 s after load, a missing image or script) is reported for its own page only, the clean page has none."""
    for name, body in PLANTED.items():
        (tmp_path / name).write_text(f"<!DOCTYPE html><html><head><title>t</title></head><body>{body}</body></html>")
    with Chromium(tmp_path / "profile") as browser:
        found = {name: browser.problems(tmp_path / name) for name in PLANTED}
    assert found["clean.html"] == []
    assert all(found[n] for n in PLANTED if n != "clean.html"), found
    assert "undefinedFunction" in " ".join(found["uncaught.html"]) and "after 2 s" in " ".join(found["late_error.html"])
    assert "nowhere.png" in " ".join(found["missing_image.html"]) and "nowhere.js" in " ".join(found["missing_script.html"])
