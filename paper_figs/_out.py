"""Writing a script's outputs: NAME.png, NAME.json and NAME.md (a markdown table) in one call."""

from __future__ import annotations

import json
import pathlib

import numpy as np


def _plain(x):
    """JSON-ready copy: NumPy scalars and arrays to Python numbers and lists."""
    if isinstance(x, dict):
        return {str(k): _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, np.ndarray):
        return _plain(x.tolist())
    if isinstance(x, np.generic):
        return x.item()
    return x


def md_table(header: list[str], rows: list[list]) -> str:
    """A markdown table; floats printed with 4 significant digits."""
    cell = lambda v: f"{v:.4g}" if isinstance(v, float) else str(v)  # noqa: E731
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(v).replace("|", "\\|") for v in r) + " |" for r in rows]
    return "\n".join(lines)


def write(out_dir: pathlib.Path, name: str, summary: dict, table: str, title: str, fig=None) -> list[pathlib.Path]:
    """Write ``fig`` (if any) as NAME.png, ``summary`` as NAME.json and ``title`` + ``table`` as NAME.md."""
    files = []
    if fig is not None:
        import matplotlib.pyplot as plt

        png = out_dir / f"{name}.png"
        fig.savefig(png, dpi=120)
        plt.close(fig)
        files.append(png)
    js, md = out_dir / f"{name}.json", out_dir / f"{name}.md"
    js.write_text(json.dumps(_plain(summary), indent=1))
    md.write_text(f"# {title}\n\n{table}\n")
    return files + [js, md]


def agg():
    """matplotlib.pyplot on the Agg backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt
