"""One meaning per name (issue 43): the names a user meets at the top of the package are defined once.

``get_lm``, ``generate``, ``ALGOS``, ``FAMILIES``, ``prefix_log10p`` and ``report`` each once meant two or three
things (the door and the synthetic presets' opener; any LM's generator, the synthetic one and the torch
processor loop; the registry's names, the processors', the online controllers'...).  Each now has one home
(or none); the others were renamed for what they are (``open_synthetic``, ``generate_synthetic``,
``generate_with_processor``, ``PROCESSOR_ALGOS``, ``ONLINE_ALGOS``, ``local_prefix_log10p``, ...).  This
parses the source (no import) and fails on a second top-level definition anywhere in the package's trees.
"""

from __future__ import annotations

import ast
import pathlib

import pytest

import sims

ROOT = pathlib.Path(__file__).resolve().parents[1]
TREES = ("sims", "paper_figs", "proofs_check", "bench", "theory", "examples")  #: where a second meaning would mislead

#: Each guarded name -> the modules that may define it at top level, and the trees the rule covers.
#: ``ALGOS`` / ``FAMILIES`` are also figure scripts' own tables (what a figure draws), so the rule covers the
#: package and the proof checks there; the function names are guarded everywhere.
HOMES = {
    "get_lm": ({"sims.lm.door"}, TREES),
    "generate": ({"sims.generation.any_lm"}, TREES),
    "prefix_log10p": ({"sims.detect.stats.scores"}, TREES),
    "ALGOS": ({"sims.watermarks.generate"}, ("sims", "proofs_check")),
    "FAMILIES": (set(), ("sims", "proofs_check")),  # the families' registry is sims.detect.families.names()
    "report": (set(), ("sims",)),
}


def _top_level_names(body):
    """Names a module body binds at top level (functions, classes, assignments, imports renamed ``as`` a
    different name), descending into if / try / with blocks but not into functions or classes."""
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield node.name
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                for sub in ast.walk(target):
                    if isinstance(sub, ast.Name):
                        yield sub.id
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.asname is not None and alias.asname != alias.name.rsplit(".", 1)[-1]:
                    yield alias.asname  # a re-export under the same name is the same meaning; a rename is a new one
        elif isinstance(node, (ast.If, ast.Try, ast.With, ast.For, ast.While)):
            for field in ("body", "orelse", "finalbody", "handlers"):
                for part in getattr(node, field, []) or []:
                    yield from _top_level_names(part.body if isinstance(part, ast.ExceptHandler) else [part])


def definitions(trees=TREES, root=ROOT) -> dict[str, set[str]]:
    """``{name: modules defining it at top level}`` for the guarded names, over the ``.py`` files of ``trees``."""
    found = {name: set() for name in HOMES}
    for tree in trees:
        for path in sorted((root / tree).rglob("*.py")):
            rel = path.relative_to(root).with_suffix("")
            module = ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)
            for name in set(_top_level_names(ast.parse(path.read_text(encoding="utf-8"), str(path)).body)):
                if name in found and tree in HOMES[name][1]:
                    found[name].add(module)
    return found


@pytest.mark.parametrize("name", sorted(HOMES))
def test_each_name_is_defined_in_its_home_only(name):
    assert definitions()[name] == HOMES[name][0], (
        f"{name!r} must have one meaning, defined in {sorted(HOMES[name][0]) or 'no module'}; a second definition "
        "gets a name saying what it is (open_synthetic, generate_synthetic, generate_with_processor, PROCESSOR_ALGOS, ...)")


@pytest.mark.parametrize("name", ["get_lm", "generate", "prefix_log10p", "ALGOS"])
def test_the_public_name_is_its_home(name):
    """``sims.<name>`` is the one definition (``sims._HOMES`` points at it)."""
    (home,) = HOMES[name][0]
    assert sims._HOMES[name] == (home, name)


def test_a_second_definition_is_found(tmp_path):
    """The parser sees what it guards: a planted ``get_lm`` (a function), ``generate`` (an import renamed ``as``)
    and ``ALGOS`` (inside an ``if``) in a copy of one room."""
    room = tmp_path / "sims" / "plan"
    room.mkdir(parents=True)
    (room / "__init__.py").write_text("def get_lm(name):\n    return name\n", encoding="utf-8")
    (room / "extra.py").write_text("from sims.watermarks.generate import generate_synthetic as generate\nif True:\n    ALGOS = ()\n", encoding="utf-8")
    found = definitions(("sims",), tmp_path)
    assert found["get_lm"] == {"sims.plan"} and found["generate"] == {"sims.plan.extra"} and found["ALGOS"] == {"sims.plan.extra"}
