"""Every function and class in ``theory.__all__`` and ``sims.__all__`` carries a numpydoc
docstring with Parameters, Returns, References and an Examples section, and every Examples
section runs (doctest) with the output it shows.
"""

import doctest
import inspect

import pytest

import sims
import theory

SECTIONS = ("Parameters", "Returns", "References", "Examples")


def _public():
    out = []
    for mod in (theory, sims):
        for name in mod.__all__:
            obj = getattr(mod, name)
            if inspect.isfunction(obj) or inspect.isclass(obj):
                out.append((f"{mod.__name__}.{name}", obj))
    return out


PUBLIC = _public()


def _missing(obj):
    doc = inspect.getdoc(obj) or ""
    return [s for s in SECTIONS if f"\n{s}\n{'-' * len(s)}" not in f"\n{doc}"]


@pytest.mark.parametrize("qualname,obj", PUBLIC, ids=[q for q, _ in PUBLIC])
def test_docstring_has_numpydoc_sections(qualname, obj):
    missing = _missing(obj)
    assert not missing, f"{qualname}: docstring lacks the numpydoc section(s) {missing}"


@pytest.mark.parametrize("qualname,obj", PUBLIC, ids=[q for q, _ in PUBLIC])
def test_examples_run(qualname, obj):
    tests = [t for t in doctest.DocTestFinder(recurse=False).find(obj, qualname, globs={}) if t.examples]
    assert tests, f"{qualname}: no doctest in its docstring"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    report = []
    for t in tests:
        result = runner.run(t, out=report.append)
        assert result.failed == 0, f"{qualname}: {result.failed} of {result.attempted} doctest example(s) fail\n" + "".join(report)
