"""Book pages generated from committed results at build time: the benchmark tables and the figure gallery.

At ``builder-inited`` this extension writes, under ``docs/book/_generated/`` (not a page of its own: the
``guide/performance`` and ``gallery`` pages include them):

- ``bench.md``: one section per ``bench/results/bench_*.json`` (what the benchmark measures, from its module's
  docstring, the command that reruns it, the machine and date of the run, and every value of the file in a table),
  and every ``bench/results/*.txt`` as a literal block: no number on the performance page is typed by hand;
- ``leaderboard.md`` and ``their_settings.md``: the tables of ``docs/results/tab_leaderboard.md`` and
  ``tab_their_settings.md`` (written by ``python -m paper_figs.tab_leaderboard`` / ``tab_their_settings``), their
  title lines dropped (the ``guide/leaderboard`` and ``guide/their_settings`` pages have their own);
- ``gallery.md``: every figure committed under ``docs/results*/`` (``**/*.png``), grouped by folder, each captioned
  with its file name and the first line of the ``paper_figs`` script that draws it.
"""

from __future__ import annotations

import ast
import json
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[3]
BENCH = ROOT / "bench" / "results"
DOCS = ROOT / "docs"


def _first_paragraph(path):
    """The first paragraph of a Python file's module docstring, on one line ('' without one)."""
    try:
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    except (OSError, SyntaxError):
        return ""
    return " ".join(doc.strip().split("\n\n")[0].split())


def _first_sentence(text, limit=180):
    """The first sentence of ``text``, cut at a word near ``limit`` characters."""
    import re

    sentence = re.split(r"(?<=[.;:])\s", text)[0]
    if len(sentence) > limit:
        sentence = sentence[:limit].rsplit(" ", 1)[0] + " ..."
    if sentence.count("`") % 2:
        sentence = sentence.replace("`", "")
    return sentence


def fmt(value):
    """A JSON value as a table cell: floats to 3 significant digits, large integers grouped, lists shortened."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}".replace(",", "\u2009") if abs(value) >= 10_000 else str(value)
    if isinstance(value, float):
        if value != value:
            return "n/a"
        return f"{value:.3g}"
    if isinstance(value, list):
        items = [fmt(v) for v in value[:8]]
        return "[" + ", ".join(items) + (", ..." if len(value) > 8 else "") + "]"
    if value is None:
        return "n/a"
    return str(value).replace("|", "\\|").replace("\n", " ")


def flatten(d, prefix=""):
    """``{"a": {"b": 1}}`` -> ``[("a / b", 1)]``, in the file's order."""
    out = []
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            out += flatten(v, key + " / ")
        else:
            out.append((key, v))
    return out


def bench_markdown(results=BENCH):
    """The performance page's generated part (MyST markdown)."""
    parts = []
    for path in sorted(results.glob("bench_*.json")):
        name = path.stem
        data = json.loads(path.read_text(encoding="utf-8"))
        what = _first_paragraph(ROOT / "bench" / f"{name}.py")
        parts.append(f"### `{name}`\n")
        if what:
            parts.append(what + "\n")
        parts.append(f"Rerun: `python -m bench --only {name}` (results in `out/bench/`; `--out bench/results` "
                     f"rewrites this file, `bench/results/{path.name}`).\n")
        head = [f"{k}: {fmt(data[k])}" for k in ("machine", "date", "device") if k in data and not isinstance(data[k], dict)]
        if head:
            parts.append("Run on " + "; ".join(head) + ".\n")
        rows = [(k, v) for k, v in flatten(data) if k not in ("machine", "date", "device")]
        parts.append("| measure | value |\n|---|---|")
        parts += [f"| `{k}` | {fmt(v)} |" for k, v in rows]
        parts.append("")
    for path in sorted(results.glob("*.txt")):
        parts.append(f"### `{path.name}`\n")
        parts.append("````text\n" + path.read_text(encoding="utf-8").rstrip() + "\n````\n")
    return "\n".join(parts)


def figures(docs=DOCS):
    """``{folder: [png, ...]}`` of every committed figure under ``docs/results*``, folders and files sorted."""
    out = {}
    for folder in sorted(p for p in docs.glob("results*") if p.is_dir()):
        for png in sorted(folder.rglob("*.png")):
            out.setdefault(png.parent.relative_to(docs).as_posix(), []).append(png)
    return out


def gallery_markdown(docs=DOCS, page_dir=DOCS / "book"):
    """The gallery page's generated part: a grid of cards per results folder, each figure on top of its caption
    (image paths relative to ``page_dir``, so Sphinx copies the files into the built book)."""
    import os

    parts = []
    for folder, pngs in figures(docs).items():
        parts.append(f"## `docs/{folder}`\n")
        parts.append("::::{grid} 1 1 2 2\n:gutter: 2\n")
        for png in pngs:
            what = _first_sentence(_first_paragraph(ROOT / "paper_figs" / f"{png.stem}.py"))
            rel = os.path.relpath(png, page_dir).replace(os.sep, "/")
            parts.append(f":::{{grid-item-card}} {png.stem}\n:img-top: {rel}\n:img-alt: {png.stem} ({folder})\n\n"
                         f"{what or png.name}\n:::\n")
        parts.append("::::\n")
    return "\n".join(parts)


def results_table_markdown(name, docs=DOCS):
    """A page's generated part from a committed table: ``docs/results/NAME.md`` without its title (the page's own
    title is the only level-1 heading; the table's sections start at level 2)."""
    lines = (docs / "results" / f"{name}.md").read_text(encoding="utf-8").splitlines()
    body = lines[1:] if lines and lines[0].startswith("# ") else lines
    return "\n".join(body).strip() + "\n"


def write(srcdir):
    """Write ``_generated/bench.md``, ``leaderboard.md``, ``their_settings.md`` and ``gallery.md`` under ``srcdir``
    (only when changed)."""
    out = pathlib.Path(srcdir) / "_generated"
    out.mkdir(exist_ok=True)
    pages = (("bench.md", bench_markdown()), ("leaderboard.md", results_table_markdown("tab_leaderboard")),
             ("their_settings.md", results_table_markdown("tab_their_settings")),
             ("gallery.md", gallery_markdown(page_dir=pathlib.Path(srcdir))))
    for name, text in pages:
        path = out / name
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")


def setup(app):
    app.connect("builder-inited", lambda app: write(app.srcdir))
    return {"parallel_read_safe": True, "parallel_write_safe": True}
