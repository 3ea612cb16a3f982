"""The package's import graph: no cycle anywhere (module level or inside functions), layers
one way down (theory <- sims <- proofs_check / paper_figs / bench) and, inside sims/, rooms
one way down.  The graph is read from the source with ``ast``, so an import hidden inside a
function counts as much as one at the top."""

from __future__ import annotations

import ast
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGES = ("theory", "sims", "proofs_check", "paper_figs", "bench")
# rooms of sims/, lowest first: a module may import its own room and the rooms below it.
# lm holds every LM behind one door (sims.lm.door; the real-LM adapter sims.lm.real, torch imported lazily);
# generation (sims.generate) draws texts from any LM, so it sits above both the synthetic generator
# (watermarks) and the torch backend; plan and torch_backend, steal and sweep share a rank and never import each other
SIMS_ROOMS = ("core", "lm", "watermarks", "detect", "reduced", "plan", "torch_backend", "generation", "experiments", "steal", "sweep", "cli")
ROOM_RANK = {"core": 0, "lm": 1, "watermarks": 2, "detect": 3, "reduced": 3, "plan": 4, "torch_backend": 4, "generation": 5,
             "experiments": 6, "steal": 7, "sweep": 7, "cli": 8}
# sub-rooms of sims/detect/, lowest first: statistics and null tails -> anytime-valid e-processes -> many keys / many texts
# -> the detector families and the detectors that ask them -> the documents a detection prints
DETECT_RANK = {"stats": 0, "anytime": 1, "multiple": 2, "families": 3, "documents": 4}

def module_files() -> dict[str, pathlib.Path]:
    out = {}
    for pkg in PACKAGES:
        for f in (ROOT / pkg).rglob("*.py"):
            parts = list(f.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = f
    return out


def import_graph(modules: dict[str, pathlib.Path]) -> dict[str, set[str]]:
    """Edges module -> module for every ``import`` in the file, at any depth.

    ``from P import n`` is an edge to ``P.n`` when that is a module, else to ``P``; a package's
    ``__init__`` that the interpreter runs on the way to a submodule is not an edge.
    """
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        is_pkg = path.name == "__init__.py"
        edges = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                edges |= {a.name for a in node.names if a.name in modules}
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = name.split(".") if is_pkg else name.split(".")[:-1]
                    base = base[: len(base) - (node.level - 1)]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                for a in node.names:
                    sub = f"{target}.{a.name}"
                    if sub in modules:
                        edges.add(sub)
                    elif target in modules:
                        edges.add(target)
        edges.discard(name)
        graph[name] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan), each as a sorted list."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(max(10_000, sys.getrecursionlimit()))

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return out


GRAPH = import_graph(module_files())


def test_the_graph_sees_hidden_imports():
    """A lazily imported module inside a function body is an edge (the reason to walk the AST)."""
    assert "theory.offline_cvxpy" in GRAPH["theory.offline"]
    assert any(e.startswith("sims.") for e in GRAPH["sims.cli.detect"])


def test_no_import_cycle():
    found = cycles(GRAPH)
    assert not found, "import cycles: " + "; ".join(" <-> ".join(c) for c in found)


def test_cycle_finder_finds_a_planted_cycle():
    g = {k: set(v) for k, v in GRAPH.items()}
    g["sims.core.prf"].add("sims.experiments.evaluate")
    assert any("sims.core.prf" in c and "sims.experiments.evaluate" in c for c in cycles(g))


def upward(graph, rank, room) -> list[str]:
    """Edges of ``graph`` from a module of a ranked room to a module of another room of equal or higher rank."""
    bad = []
    for m, es in graph.items():
        r = room(m)
        if r not in rank:
            continue
        for e in es:
            s = room(e)
            if s in rank and s != r and rank[s] >= rank[r]:
                bad.append(f"{m} -> {e}")
    return bad


def sims_room(m):
    parts = m.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "sims" else None


def detect_room(m):
    parts = m.split(".")
    return parts[2] if len(parts) > 2 and parts[:2] == ["sims", "detect"] else None


@pytest.mark.parametrize("lower, upper", [("theory", ("sims", "proofs_check", "paper_figs", "bench")),
                                          ("sims", ("proofs_check", "paper_figs", "bench"))])
def test_layers_point_one_way(lower, upper):
    bad = [(m, e) for m, es in GRAPH.items() if m.split(".")[0] == lower for e in es if e.split(".")[0] in upper]
    assert not bad, f"{lower} must not import {upper}: {bad}"


def test_sims_rooms_point_one_way():
    assert set(ROOM_RANK) == set(SIMS_ROOMS)
    bad = upward(GRAPH, ROOM_RANK, sims_room)
    assert not bad, "imports that point up or across the rooms of sims/: " + ", ".join(bad)


def test_detect_sub_rooms_point_one_way():
    bad = upward(GRAPH, DETECT_RANK, detect_room)
    assert not bad, "imports that point up or across the sub-rooms of sims/detect/: " + ", ".join(bad)


def test_room_checks_find_a_planted_upward_import():
    g = {k: set(v) for k, v in GRAPH.items()}
    g["sims.lm.door"].add("sims.watermarks.generate")
    g["sims.detect.stats.scores"].add("sims.detect.families.detectors")
    assert upward(g, ROOM_RANK, sims_room) == ["sims.lm.door -> sims.watermarks.generate"]
    assert upward(g, DETECT_RANK, detect_room) == ["sims.detect.stats.scores -> sims.detect.families.detectors"]


def test_every_sims_module_lives_in_a_room():
    loose = [m for m in GRAPH if m.startswith("sims.") and m.count(".") == 1 and m.split(".")[1] not in ROOM_RANK
             and m not in ("sims.__main__", "sims.api")]
    assert not loose, f"modules of sims/ outside its rooms: {loose}"
    loose = [m for m in GRAPH if m.startswith("sims.detect.") and detect_room(m) not in DETECT_RANK]
    assert not loose, f"modules of sims/detect/ outside its sub-rooms: {loose}"


def test_every_room_says_its_job():
    """Every package of sims/ opens with a docstring (its job, in its first line)."""
    bare = [str(f.relative_to(ROOT)) for f in (ROOT / "sims").rglob("__init__.py")
            if not (ast.get_docstring(ast.parse(f.read_text())) or "").strip()]
    assert not bare, f"packages of sims/ without a docstring: {bare}"


def test_core_imports_stay_light():
    code = ("import sys, theory, sims; heavy = [m for m in ('torch', 'matplotlib', 'cvxpy', 'dask', 'pyarrow') if m in sys.modules]; "
            "print(','.join(heavy))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True).stdout.strip()
    assert out == "", f"import theory, sims loaded {out}"
