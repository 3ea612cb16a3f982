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
    proc = subprocess.run([sys.executable, "-m", "sphinx", *sphinx_flags(), str(ROOT / "docs" / "book"), str(out)],
                          capture_output=True, text=True, cwd=ROOT, timeout=1800, env=env)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return out, request.param


def sphinx_flags():
    """The flags ``make docs`` gives Sphinx (the Makefile's SPHINX_FLAGS), so the tests build the book as it does."""
    import re

    found = re.search(r"^SPHINX_FLAGS\s*:?=\s*(.+)$", (ROOT / "Makefile").read_text(), re.M)
    assert found, "the Makefile has no SPHINX_FLAGS"
    return found.group(1).split()


def test_the_docs_build_fails_on_a_warning():
    """-W (a warning is an error) and --keep-going (all of them listed first) in the Makefile's Sphinx flags."""
    flags = sphinx_flags()
    assert "-W" in flags and "--keep-going" in flags and "-E" in flags, flags


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
    import sims
    import theory

    for pkg in (theory, sims):  # every public name documented under its public path, with an anchor
        page = (book / "api" / f"{pkg.__name__}.html").read_text(encoding="utf-8")
        for n in pkg.__all__:
            assert f'id="{pkg.__name__}.{n}"' in page, f"api/{pkg.__name__}.html does not document {pkg.__name__}.{n}"
    api = _parse(book / "api" / "theory.html")
    assert "theory.LAMBDA_MAX" in api.ids
    text = (book / "api" / "theory.html").read_text(encoding="utf-8")
    assert "Convert a string or number to a floating" not in text, "theory.LAMBDA_MAX shows float's docstring"
    assert "built-in immutable sequence" not in (book / "api" / "sims.html").read_text(encoding="utf-8"), \
        "sims.ALGOS shows tuple's docstring"
    sys.path.insert(0, str(ROOT / "docs" / "book" / "_ext"))
    import wmstats_api

    for mod in wmstats_api.modules():  # a page per module, found by walking the packages
        assert f"api/{mod}.html" in names, f"no API page for module {mod}"
    for folder in ("guide", "notes"):
        for src in sorted((ROOT / "docs" / "book" / folder).glob("*.md")):
            assert f"{folder}/{src.stem}.html" in names, f"{folder}/{src.name} not built"


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


# What a reader sees, measured in the page after MathJax has run: raw TeX left in the visible text of the article,
# maths elements Sphinx marked (span.math, div.math) without typeset output inside, typeset elements, and elements of
# the article whose content is wider than their box while their overflow hides it (clipped; a scrolling wrapper is fine)
# or that reach past the article's right edge.
READER_CHECK = r"""(async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) { await MathJax.startup.promise; }
  const article = document.querySelector("article") || document.querySelector("main") || document.body;
  const text = article.innerText;
  const raw = [];
  for (const pat of ["\\(", "\\)", "\\[", "$\\", "\\frac", "\\mathrm"]) {
    const i = text.indexOf(pat);
    if (i >= 0) raw.push(JSON.stringify(text.slice(Math.max(0, i - 30), i + 30)));
  }
  const typesetSel = "mjx-container, .katex, .MathJax, .MathJax_SVG, .MathJax_CHTML";
  // Sphinx marks maths span.math / div.math (MathJax 2 also names its own inner spans "math": those are output)
  const marked = [...document.querySelectorAll(".math")].filter(e => !(e.parentElement && e.parentElement.closest(typesetSel)));
  const untypeset = marked.filter(e => !e.querySelector(typesetSel) && !e.matches(typesetSel)).map(e => e.textContent.slice(0, 50));
  const edge = article.getBoundingClientRect().right;
  const name = e => `${e.tagName.toLowerCase()}${e.className && typeof e.className === "string" ? "." + e.className.trim().split(/\s+/).join(".") : ""}`;
  const clipped = [];
  for (const e of article.querySelectorAll("*")) {
    if (e.closest("mjx-assistive-mml, .MJX_Assistive_MathML")) continue;  // screen-reader copies, hidden by design
    const st = getComputedStyle(e);
    if (st.display === "none" || st.visibility === "hidden" || e.clientWidth <= 1) continue;
    const ox = st.overflowX;
    if (e.scrollWidth > e.clientWidth + 1 && (ox === "hidden" || ox === "clip")) {
      clipped.push(`${name(e)}: content ${e.scrollWidth} px in a ${e.clientWidth} px box`);
    }
    // a table must fit: in a scrolling wrapper its right columns are cut off until the reader finds the scrollbar
    if (e.tagName === "TABLE" && e.parentElement && e.offsetWidth > e.parentElement.clientWidth + 1) {
      clipped.push(`${name(e)}: ${e.offsetWidth} px wide in a ${e.parentElement.clientWidth} px column`);
    }
    const r = e.getBoundingClientRect();
    if (r.width > 0 && r.right > edge + 1) {
      let scroller = e.parentElement, ok = false;
      while (scroller && scroller !== article) {
        const sx = getComputedStyle(scroller).overflowX;
        if ((sx === "auto" || sx === "scroll") && scroller.getBoundingClientRect().right <= edge + 1) { ok = true; break; }
        scroller = scroller.parentElement;
      }
      if (!ok) clipped.push(`${name(e)}: right edge ${Math.round(r.right)} px past the article's ${Math.round(edge)} px`);
    }
  }
  return {raw, untypeset, typeset: document.querySelectorAll(typesetSel).length, marked: marked.length,
          clipped: clipped.slice(0, 8), pageWidth: document.documentElement.scrollWidth, viewport: window.innerWidth};
})()"""


def reader_problems(found, want_maths=True):
    """What the reader check reports as wrong on one page (empty: fine)."""
    bad = [f"raw TeX in the text: {r}" for r in found["raw"]]
    bad += [f"maths not typeset: {m!r}" for m in found["untypeset"][:5]]
    if want_maths and found["typeset"] == 0:
        bad.append(f"no typeset maths ({found['marked']} maths elements)")
    bad += [f"clipped: {c}" for c in found["clipped"]]
    if found["pageWidth"] > found["viewport"]:
        bad.append(f"the page scrolls sideways: {found['pageWidth']} px in a {found['viewport']} px window")
    return bad


def _reader_pages(book):
    """The landing page, a chapter and an API page with maths (whatever the API's layout, one that holds kl_step)."""
    api = sorted(p for p in (book.rglob("*.html")) if "_static" not in p.parts and "kl_step" in p.name)
    api = api or [book / "api.html"]
    return [book / "index.html", book / "notebooks" / "04_detection.html", api[0], book / "api.html",
            book / "gallery.html", book / "guide" / "performance.html"]


def test_maths_is_typeset_and_nothing_is_clipped(book, tmp_path):
    """At 1200 px, the landing page, chapter 4, an API page with a formula and the API overview show their maths
    typeset (MathJax output, no raw \\( or $\\ left in the text) and nothing cut off at the right edge."""
    book, _ = book
    if CHROMIUM is None:
        pytest.skip("chromium not installed (Debian: apt-get install -y chromium)")
    failures = []
    with Chromium(tmp_path / "profile") as browser:
        for page in _reader_pages(book):
            found = browser.evaluate(page, READER_CHECK, width=1200)
            bad = reader_problems(found, want_maths=page.name not in ("index.html", "gallery.html", "performance.html"))
            failures += [f"{page.relative_to(book)}: {b}" for b in bad]
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


# ---------------------------------------------------------------- the README and the user guide (no build needed)
README = ROOT / "README.md"


def _block_after(text, heading, lang):
    """The first ```lang fenced block after the line ``heading``."""
    lines = text.splitlines()
    start = lines.index(heading)
    opening = next(i for i in range(start, len(lines)) if lines[i].strip() == f"```{lang}")
    closing = next(i for i in range(opening + 1, len(lines)) if lines[i].strip() == "```")
    return "\n".join(lines[opening + 1:closing])


def test_readme_quickstart_runs(tmp_path):
    """The README's Python quickstart runs as written: DualGA texts on a synthetic LM are all detected at 1e-4,
    and a 30 % substitution attack detects no more of them."""
    import re

    code = _block_after(README.read_text(encoding="utf-8"), "## Quickstart (Python, synthetic LM)", "python")
    assert "sims.get_lm" in code and "sims.attack" in code and "sims.score" in code
    script = tmp_path / "quickstart.py"
    script.write_text(code)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    kl = re.search(r"KL per token ([0-9.]+) nats, DG ([0-9.]+)", proc.stdout)
    assert kl, proc.stdout
    assert 0 < float(kl.group(1)) < 1 and abs(float(kl.group(2)) - 0.3) < 0.05, proc.stdout  # DualGA meets Delta = 0.3
    found = re.search(r"detected at 1e-4: (\d+) -> (\d+) of (\d+)", proc.stdout)
    assert found, proc.stdout
    before, after, n = map(int, found.groups())
    assert n == 8 and before == n and after <= before, proc.stdout


def test_readme_is_a_landing_page():
    """Short; the two set-up commands before anything else is run; every registered algorithm named; no dated logs or
    machine loads (those live in bench/NOTES.md and CHANGELOG.md); every relative link points at a file."""
    import re

    import sims

    text = README.read_text(encoding="utf-8")
    lines = text.splitlines()
    assert len(lines) <= 200, f"README has {len(lines)} lines"
    assert lines[0].startswith("# wmstats")
    first = re.search(r"```[a-z]*\n(.*?)```", text, re.S).group(1).splitlines()
    assert [ln.split("#")[0].strip() for ln in first] == ["make demo", "make test"], first
    assert "`make test`" in text or "make test " in text
    for algo in sims.ALGOS:
        assert re.search(rf"(?<![\w-]){re.escape(algo)}(?![\w-])", text), f"README does not name algorithm {algo}"
    assert not re.findall(r"load [0-9]|\(load|20[0-9]{2}-[01][0-9]-[0-3][0-9]", text, re.I), "dated logs or loads in the README"
    assert "session" not in text.lower()
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text):
        if "://" not in target:
            assert (ROOT / target).exists(), f"README links to missing {target}"


def test_ci_runs_the_readme_test_command():
    assert "make test" in (ROOT / ".ci" / "run").read_text()
    assert "make test" in README.read_text(encoding="utf-8")


def test_guide_and_notes_are_in_the_toctree():
    """Every page of the user guide and every note is in the book's navigation, and each note includes a prose
    page of docs/ that exists (docs/reproduction.md stays where paper_figs writes it)."""
    import re

    index = (ROOT / "docs" / "book" / "index.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"^((?:guide|notes)/[\w-]+)$", index, re.M))
    for folder in ("guide", "notes"):
        pages = sorted((ROOT / "docs" / "book" / folder).glob("*.md"))
        assert pages, folder
        for page in pages:
            assert f"{folder}/{page.stem}" in listed, f"docs/book/{folder}/{page.name} is not in index.md's toctree"
    included = set()
    for note in (ROOT / "docs" / "book" / "notes").glob("*.md"):
        for target in re.findall(r"```\{include\}\s+(\S+)", note.read_text(encoding="utf-8")):
            path = (note.parent / target).resolve()
            assert path.exists(), f"{note.name} includes missing {target}"
            included.add(path.relative_to(ROOT).as_posix())
    prose = {p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").glob("*.md")}
    assert prose <= included, f"prose pages outside the book: {sorted(prose - included)}"
    assert "docs/reproduction.md" in included


# ---------------------------------------------------------------- the API reference's walk and docstring check
def _api_ext():
    sys.path.insert(0, str(ROOT / "docs" / "book" / "_ext"))
    import wmstats_api

    return wmstats_api


def test_every_public_name_has_a_docstring_or_is_listed():
    """The check the docs build runs: no public name of theory or sims lacks a docstring unless undocumented.txt lists
    it, and the list holds no name that has one now (it may only shrink)."""
    problems = _api_ext().check()
    assert not problems, "\n".join(problems[:40])


def test_constants_are_documented_as_themselves():
    """A constant's docstring is the one written beside its assignment, found through a re-export, never its type's."""
    w = _api_ext()
    doc = w.own_doc("theory", "LAMBDA_MAX")
    assert doc and "floating point" not in doc and "15" in doc or "lambda" in doc.lower(), doc
    algos = w.own_doc("sims", "ALGOS")
    assert "algorithm" in algos and "immutable sequence" not in algos, algos
    assert w.own_doc("sims.lm.presets", "LM_PRESETS")


def test_the_docstring_check_catches_planted_gaps(tmp_path, monkeypatch):
    """A planted package: an undocumented function, class and constant are reported, and so is a listed name that is
    documented; documented ones (a '#:' comment, a string after the assignment, a constant re-exported by the
    package from the module that documents it) and private names are not."""
    pkg = tmp_path / "plantedpkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text('"""Planted."""\nfrom plantedpkg.inner import LIMIT, f_doc, f_nodoc\n'
                                     '__all__ = ["LIMIT", "f_doc", "f_nodoc"]\n')
    (pkg / "inner.py").write_text(
        '"""Inner."""\n'
        '#: The largest value.\nLIMIT = 15.0\n'
        'RATE = 0.5\n"""A rate."""\n'
        'BARE = (1, 2)\n'
        '_PRIVATE = 3\n'
        'def f_doc(x):\n    """Documented."""\n'
        'def f_nodoc(x):\n    return x\n'
        'class C:\n    pass\n'
        'class D(C):\n    """Own docstring."""\n')
    (pkg / "nodoc.py").write_text("X = 1  #: documented by a trailing comment\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    w = _api_ext()
    found = set(w.undocumented(("plantedpkg",)))
    assert found == {"plantedpkg.f_nodoc", "plantedpkg.inner.f_nodoc", "plantedpkg.inner.BARE", "plantedpkg.inner.C",
                     "plantedpkg.nodoc"}, found
    assert w.own_doc("plantedpkg", "LIMIT") == "The largest value."  # through the re-export, not float's docstring
    problems = w.check(("plantedpkg",), known={"plantedpkg.f_nodoc", "plantedpkg.inner.f_doc"})
    text = "\n".join(problems)
    assert "plantedpkg.inner.BARE: public name without a docstring" in text
    assert "plantedpkg.f_nodoc:" not in text  # listed: known debt
    assert "plantedpkg.inner.f_doc: listed" in text  # listed but documented: the list must shrink


def test_every_public_routine_has_its_numpydoc_sections_or_is_listed():
    """The second check the docs build runs: every public function, class and public method of theory and sims that
    takes parameters documents them in a Parameters section, and one that returns a value has Returns (Yields for a
    generator), unless no_numpydoc.txt lists it; the list holds no name that is complete now (it may only shrink)."""
    problems = _api_ext().check_numpydoc()
    assert not problems, "\n".join(problems[:40])


_NUMPYDOC_PLANTED = '''"""Planted."""
import typing


def complete(x, *, y=1):
    """Complete.

    Parameters
    ----------
    x, y : int
        Two numbers.

    Returns
    -------
    int
        Their sum.
    """
    return x + y


def no_params(x):
    """Returns only.

    Returns
    -------
    int
    """
    return x


def half_params(x, flag=False):
    """One of two.

    Parameters
    ----------
    x : int
        A number.
    """
    print(x, flag)


def annotated(x) -> float:
    """Returns by its annotation; its body only raises.

    Parameters
    ----------
    x : int
        A number.
    """
    raise NotImplementedError


def returns_nothing(x) -> None:
    """Nothing to return, despite the nested function's return.

    Parameters
    ----------
    x : int
        A number.
    """
    def inner():
        return x
    inner()
    return None


def nested(x):
    """The return is the nested function's: nothing to return.

    Parameters
    ----------
    x :
        A number (no type written).
    """
    def inner():
        return x
    print(inner())


def generator(n):
    """Yields, not Returns.

    Parameters
    ----------
    n : int
        How many.

    Returns
    -------
    int
    """
    yield from range(n)


def takes_nothing():
    """Nothing to say: no parameters, returns None."""


class Base:
    """A base.

    Parameters
    ----------
    a : int
        The constructor's parameter.
    """

    def __init__(self, a):
        self.a = a

    def method(self, b):
        """A method with its sections.

        Parameters
        ----------
        b : int
            A number.

        Returns
        -------
        int
            ``a + b``.
        """
        return self.a + b

    def __call__(self, z):
        return z

    @property
    def twice(self):
        """A property: an attribute, no sections."""
        return 2 * self.a

    @staticmethod
    def helper(u):
        """A static method without sections."""
        return u


class Child(Base):
    """Inherits the constructor; overrides :meth:`Base.method` (documented there once)."""

    def method(self, b):
        return b

    def extra(self, c):
        """Its own method, sections missing."""
        return c


class NoInitDoc:
    """A class whose constructor parameters are not documented."""

    def __init__(self, p, q):
        self.p, self.q = p, q


class Record(typing.NamedTuple):
    """A record: its fields in Attributes.

    Attributes
    ----------
    n : int
        A count.
    """

    n: int
'''


def test_the_numpydoc_check_catches_planted_gaps(tmp_path, monkeypatch):
    """A planted module: routines and classes lacking Parameters (or some parameter), Returns or Yields are reported;
    complete ones, properties, dunder methods, overrides of a documented base method and routines without parameters
    or return value are not; a listed name that is complete, or gone, is reported too (the list may only shrink)."""
    pkg = tmp_path / "plantednumpydoc"
    pkg.mkdir()
    (pkg / "__init__.py").write_text('"""Planted."""\n')
    (pkg / "mod.py").write_text(_NUMPYDOC_PLANTED)
    monkeypatch.syspath_prepend(str(tmp_path))
    w = _api_ext()
    gaps = w.numpydoc_gaps(("plantednumpydoc",))
    m = "plantednumpydoc.mod."
    assert gaps == {
        m + "no_params": ["no Parameters section"],
        m + "half_params": ["Parameters lacks flag"],
        m + "annotated": ["no Returns section"],
        m + "generator": ["no Yields section"],
        m + "Base.helper": ["no Parameters section", "no Returns section"],
        m + "Child.extra": ["no Parameters section", "no Returns section"],
        m + "NoInitDoc": ["no Parameters section"],
    }, gaps
    problems = "\n".join(w.check_numpydoc(("plantednumpydoc",), known={m + "no_params", m + "complete", m + "gone"}))
    assert f"{m}half_params: numpydoc docstring incomplete (Parameters lacks flag)" in problems
    assert f"{m}no_params:" not in problems  # listed: known debt
    assert f"{m}complete: listed in no_numpydoc.txt" in problems  # listed but complete: the list must shrink
    assert f"{m}gone: listed in no_numpydoc.txt" in problems


# ---------------------------------------------------------------- pages generated from committed results
def _pages_ext():
    sys.path.insert(0, str(ROOT / "docs" / "book" / "_ext"))
    import wmstats_pages

    return wmstats_pages


def test_the_performance_page_has_no_hand_typed_numbers():
    """Every number of the performance page comes from bench/results at build time: its source holds no number (a
    digit not inside a name such as SplitMix64)."""
    import re

    text = (ROOT / "docs" / "book" / "guide" / "performance.md").read_text(encoding="utf-8")
    assert "_generated/bench.md" in text
    typed = re.findall(r".{0,20}(?<![A-Za-z0-9])[0-9].{0,20}", text)
    assert not typed, f"numbers typed into guide/performance.md: {typed[:5]}"


def test_the_performance_tables_are_read_from_the_results(tmp_path):
    """Each benchmark JSON becomes a section with every value; a changed file changes the page."""
    w = _pages_ext()
    md = w.bench_markdown()
    for path in sorted((ROOT / "bench" / "results").glob("bench_*.json")):
        assert f"### `{path.stem}`" in md and f"--only {path.stem}" in md, path.name
    for path in sorted((ROOT / "bench" / "results").glob("*.txt")):
        assert f"### `{path.name}`" in md
    planted = tmp_path / "results"
    planted.mkdir()
    (planted / "bench_planted.json").write_text('{"machine": "m1", "date": "d1", "ours_tokens_per_s": 1234.5, '
                                                '"nested": {"ratio": 7.25, "ok": true}}')
    md = w.bench_markdown(planted)
    assert "| `ours_tokens_per_s` | 1.23e+03 |" in md and "| `nested / ratio` | 7.25 |" in md and "| `nested / ok` | yes |" in md
    assert "machine: m1; date: d1" in md


def test_the_gallery_shows_every_committed_figure(tmp_path):
    """Every docs/results*/**.png is a card of the gallery, grouped by folder; a planted figure appears."""
    w = _pages_ext()
    md = w.gallery_markdown()
    pngs = sorted((ROOT / "docs").glob("results*/**/*.png"))
    assert pngs
    for png in pngs:
        assert f":img-top: ../{png.relative_to(ROOT / 'docs').as_posix()}" in md, png
    docs = tmp_path / "docs"
    (docs / "results-planted" / "sub").mkdir(parents=True)
    (docs / "results-planted" / "sub" / "fig_planted.png").write_bytes(b"")
    md = w.gallery_markdown(docs, docs / "book")
    assert "## `docs/results-planted/sub`" in md and ":img-top: ../results-planted/sub/fig_planted.png" in md
