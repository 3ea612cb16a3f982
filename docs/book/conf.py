"""Sphinx configuration of the wmstats teaching book (``make docs``).

Sphinx + myst-nb: the notebooks (jupytext MyST markdown in ``notebooks/``, linked here as
``notebooks/``) are executed at build time; the API reference is generated from the
docstrings by autodoc/autosummary with numpydoc.  The build uses no network: no intersphinx,
and MathJax is served from the local copy in the ``jupyter-server-mathjax`` wheel.
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

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "sphinx_design",
]
exclude_patterns = ["_build", "**.ipynb_checkpoints"]
suppress_warnings = ["mystnb.unknown_mime_type"]

# notebooks: executed on every build (each takes < 60 s); a failing cell fails the build
nb_execution_mode = os.environ.get("WMSTATS_BOOK_EXECUTE", "force")
nb_execution_timeout = 300
nb_execution_raise_on_error = True
nb_merge_streams = True
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]
myst_heading_anchors = 3

# API reference
autosummary_generate = True
autodoc_default_options = {"members": True}
numpydoc_show_class_members = False
numpydoc_validation_checks = set()
numpydoc_xref_param_type = False

# MathJax 2 from the jupyter-server-mathjax wheel, copied into _static (no CDN)
try:
    import jupyter_server_mathjax

    _MATHJAX = pathlib.Path(jupyter_server_mathjax.__file__).parent / "static"
except ImportError:  # pragma: no cover - the [docs] extra installs it
    _MATHJAX = None
html_static_path = []
if _MATHJAX is not None:
    html_static_path.append(str(_MATHJAX))
    # the wheel ships the combined "-full" configuration only, and the STIX web fonts only: a file:// page may not
    # load web fonts (Chromium blocks them by CORS), so MathJax draws with the reader's installed STIX fonts
    mathjax_path = "MathJax.js?config=TeX-AMS-MML_HTMLorMML-full"
    mathjax3_config = None
    mathjax2_config = {
        "tex2jax": {
            "inlineMath": [["\\(", "\\)"]],
            "displayMath": [["\\[", "\\]"]],
            "processRefs": False,
            "processEnvironments": False,
        },
        "messageStyle": "none",
        "HTML-CSS": {"availableFonts": ["STIX"], "preferredFont": "STIX", "webFont": None, "imageFont": None},
    }

html_theme = "sphinx_book_theme"
html_title = "wmstats course"
html_theme_options = {"show_toc_level": 2, "use_download_button": False, "use_fullscreen_button": False}
html_last_updated_fmt = None
# the theme's mode for a first visit: left empty, its script logs console.error("Got invalid theme mode")
html_context = {"default_mode": "auto"}
