"""Sphinx configuration of the wmstats teaching book (``make docs``).

Sphinx + myst-nb: the notebooks (jupytext MyST markdown in ``notebooks/``, linked here as
``notebooks/``) are executed at build time; the API reference is generated from the
docstrings by autodoc/autosummary with numpydoc.  The build uses no network: no intersphinx,
and MathJax 3 is served from a local copy (the ``django-static-mathjax`` wheel).
"""

import os
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("PYTHONPATH", str(ROOT))  # the notebook kernels import this checkout

project = "wmstats: a course on the statistics of LLM watermarking"
author = "wmstats"
copyright = "wmstats authors"

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / "_ext"))

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "sphinx_design",
    "wmstats_api",  # _ext/wmstats_api.py: api/ pages by walking the packages, the docstring check
    "wmstats_pages",  # _ext/wmstats_pages.py: the benchmark tables and the figure gallery, from committed results
]
# generated/: the autosummary pages of earlier builds, left in old checkouts
# _generated/: parts of pages written at build time (_ext/wmstats_pages.py), included by the pages
exclude_patterns = ["_build", "**.ipynb_checkpoints", "_ext", "generated", "_generated"]
suppress_warnings = ["mystnb.unknown_mime_type"]

# notebooks: executed on every build (each takes < 60 s); a failing cell fails the build
nb_execution_mode = os.environ.get("WMSTATS_BOOK_EXECUTE", "force")
nb_execution_timeout = 300
nb_execution_raise_on_error = True
nb_merge_streams = True
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]
myst_heading_anchors = 3

# API reference
autosummary_generate = False  # the api/ pages are written by _ext/wmstats_api.py
autodoc_default_options = {"members": True}
numpydoc_show_class_members = False
numpydoc_validation_checks = set()
numpydoc_xref_param_type = False

# MathJax 3 with SVG output, from the django-static-mathjax wheel (MathJax 3.2.2's own build; no Django needed), copied
# into _static/mathjax when the build finishes: the book needs no network at view time.  SVG rather than CommonHTML
# because SVG draws the glyphs from paths inside tex-svg.js: CommonHTML needs web fonts, which a page opened from
# file:// may not load (Chromium applies CORS to them).  Only tex-svg.js and the TeX extensions it autoloads are
# copied (2.6 MB of the wheel's 24 MB).
try:
    import mathjax as _mathjax_wheel

    _MATHJAX = pathlib.Path(_mathjax_wheel.__file__).parent / "static" / "mathjax" / "es5"
except ImportError:  # pragma: no cover - the [docs] extra installs it
    _MATHJAX = None
html_static_path = ["_static"]
html_css_files = ["wmstats.css"]
mathjax_path = "mathjax/tex-svg.js"
mathjax3_config = {
    "tex": {"inlineMath": [["\\(", "\\)"]], "displayMath": [["\\[", "\\]"]]},
    "svg": {"fontCache": "global"},
}


def _copy_mathjax(app, exception):
    """Put tex-svg.js and the TeX extensions it may load beside the built pages (``_static/mathjax``)."""
    if exception is not None or app.builder.format != "html":
        return
    if _MATHJAX is None:
        raise RuntimeError("MathJax 3 is missing: install the [docs] extra (django-static-mathjax)")
    import shutil

    dest = pathlib.Path(app.outdir) / "_static" / "mathjax"
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy2(_MATHJAX / "tex-svg.js", dest / "tex-svg.js")
    shutil.copytree(_MATHJAX / "input" / "tex" / "extensions", dest / "input" / "tex" / "extensions", dirs_exist_ok=True)


def setup(app):
    # MathJax on every page, not only on pages whose body holds maths: the navigation's chapter titles hold some
    app.set_html_assets_policy("always")
    app.connect("build-finished", _copy_mathjax)

html_theme = "sphinx_book_theme"
html_title = "wmstats course"
html_theme_options = {"show_toc_level": 2, "use_download_button": False, "use_fullscreen_button": False}
html_last_updated_fmt = None
# the theme's mode for a first visit: left empty, its script logs console.error("Got invalid theme mode")
html_context = {"default_mode": "auto"}
