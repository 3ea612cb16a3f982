"""Example responses and figure apx_rep_exps as pictures: every token coloured green or red by the
detector's green list, shaded by its boost (SRL: delta; DualGA: lambda_t), an unwatermarked
text beside a watermarked one; repetition examples (looping LM) with their lambda_t traces.
Written as PNG and as one self-contained HTML file.

Synthetic LMs have no words, so tokens print as their ids; a real LM's tokenizer plugs in
through ``decode`` (identity here).
"""

from __future__ import annotations

import functools
import html
import pathlib

import numpy as np

from paper_figs._data import KEY, generations, is_synthetic, sized
from paper_figs._out import agg, write

TITLE = "Watermarked text as pictures: green/red tokens shaded by the boost, repetition with lambda_t"
WIDTH = 20  # tokens per line in the PNG


@functools.lru_cache(maxsize=4)
def _tokenizer(lm: str):
    """The real LM's tokenizer (no weights loaded); None for synthetic LMs and the random test models."""
    if is_synthetic(lm) or lm == "loopy":
        return None
    from sims.lm.real.model import load_tokenizer

    return load_tokenizer(lm)


def decode(lm: str, token: int) -> str:
    """A token's text: the real LM's tokenizer decodes it; a synthetic LM's token is its id.

    Parameters
    ----------
    lm : str
        The LM's name.
    token : int
        The token id.

    Returns
    -------
    str
    """
    tok = _tokenizer(lm)
    return str(int(token)) if tok is None else tok.decode([int(token)])


def _colours(gen, i: int):
    from sims.detect.stats import scores as detect

    g, _ = detect.token_scores(gen.tokens[i: i + 1], gen.prompt(i)[None, -gen.meta["h"]:], gen.meta["key"], gamma=gen.meta["gamma"], h=gen.meta["h"],
                               vocab_size=gen.meta["vocab_size"])
    boost = gen.lam[i] if gen.meta["algo"] == "dualga" else np.full(gen.tokens.shape[1], gen.meta.get("delta") or 0.0)
    return g[0].astype(bool), np.nan_to_num(boost)


def _panel(ax, tokens, green, boost, title: str, lm: str, top: float) -> None:
    ax.set_axis_off()
    ax.set(xlim=(0, WIDTH), ylim=(-(len(tokens) // WIDTH) - 1, 1), title=title)
    for t, (y, g, b) in enumerate(zip(tokens, green, boost)):
        a = 0.25 + 0.75 * min(b / top, 1.0) if top > 0 else 0.5
        ax.add_patch(__import__("matplotlib.patches", fromlist=["Rectangle"]).Rectangle(
            (t % WIDTH, -(t // WIDTH)), 0.95, 0.9, color="green" if g else "red", alpha=a, lw=0))
        ax.text(t % WIDTH + 0.47, -(t // WIDTH) + 0.45, decode(lm, y).replace("\n", "\\n").replace("$", r"\$"), ha="center", va="center",
                fontsize=5)


def _html_text(tokens, green, boost, lm: str, top: float) -> str:
    spans = []
    for y, g, b in zip(tokens, green, boost):
        a = 0.25 + 0.75 * min(b / top, 1.0) if top > 0 else 0.5
        rgb = "0,150,0" if g else "200,0,0"
        spans.append(f'<span title="boost {b:.2f}" style="background:rgba({rgb},{a:.2f})">{html.escape(decode(lm, y))}</span>')
    return " ".join(spans)


def main(out_dir: pathlib.Path, quick: bool, lms=None) -> list[pathlib.Path]:
    """Draw example texts of one LM, tokens shaded green / red by the boost, and write the figure and an HTML page.

    Parameters
    ----------
    out_dir : pathlib.Path
        The folder the files are written to.
    quick : bool
        Small sizes: 4 texts of 80 tokens at V = 2000, instead of 16 of 200.
    lms : sequence of str, optional
        LMs of ``python -m paper_figs --lm``: its first is used (default ``lfqa``).

    Returns
    -------
    list of pathlib.Path
        The files written: fig_examples.html, and fig_examples.png, fig_examples.json and fig_examples.md
        (:func:`paper_figs._out.write`).
    """
    from sims.experiments.repetition import repeated_ngram_mask
    from sims.lm.synthetic import loop_lm
    from sims.watermarks.generate import generate_synthetic

    plt = agg()
    lm = (lms or ("lfqa",))[0]
    n, T = sized(lm, *((4, 80) if quick else (16, 200)))
    V = 2000 if quick else None
    eos = {} if is_synthetic(lm) else dict(stop_at_eos=True)  # a real LM's reply ends at its end of turn
    wm = generations(lm, "dualga", n, T, 0, vocab_size=V, Delta=0.3, **eos)
    srl = generations(lm, "srl", n, T, 0, vocab_size=V, gamma=wm.meta["gamma"], delta=2.0, **eos)
    null = generations(lm, "none", n, T, 0, vocab_size=V, gamma=wm.meta["gamma"], **eos)
    loop = generate_synthetic(loop_lm(), "dualga", n=n * 4, T=T, seed=1, key=KEY, Delta=0.2)
    rep = repeated_ngram_mask(loop.tokens)
    r = int(np.argmax(rep.sum(axis=1)))
    fig, axes = plt.subplots(2, 3, figsize=(18, 3 + 0.45 * (T // WIDTH) * 2))
    shown = [(null, "unwatermarked"), (srl, "SRL delta=2"), (wm, "DualGA Delta=0.3 (shade: lambda_t)")]
    parts, summary = [], dict(lm=lm, T=T, texts={})
    i = int(np.argmax(np.minimum.reduce([g.lengths for g, _ in shown])))  # the prompt whose three replies are longest
    summary["prompt"] = i
    top = float(np.nanmax(wm.lam[i])) or 1.0
    for ax, (g, name) in zip(axes[0], shown):
        green, boost = (a[: g.lengths[i]] for a in _colours(g, i))
        _panel(ax, g.text(i), green, boost, f"{name}: {green.mean():.0%} green", lm, top)
        parts.append(f"<h3>{html.escape(name)}: {green.mean():.0%} green</h3><p>{_html_text(g.text(i), green, boost, lm, top)}</p>")
        summary["texts"][name] = dict(tokens=g.text(i), green_share=float(green.mean()))
    green, boost = _colours(loop, r)
    ltop = float(np.nanmax(loop.lam[r]))
    _panel(axes[1, 0], loop.tokens[r], green, boost, f"looping LM, DualGA: {rep[r].mean():.0%} in repeated 4-grams", "loopy", ltop)
    axes[1, 1].set_axis_off()
    ax = axes[1, 2]
    ax.fill_between(np.arange(T), 0, ltop, where=rep[r], color="red", alpha=0.2, label="repeated 4-gram")
    ax.plot(loop.lam[r], lw=1, label="lambda_t")
    ax.set(xlabel="t", ylabel="lambda_t", title="lambda_t spikes on repetition")
    ax.legend(fontsize=7)
    parts.append(f"<h3>looping LM, DualGA (repetition example)</h3><p>{_html_text(loop.tokens[r], green, boost, 'loopy', ltop)}</p>")
    lam_rep, lam_other = loop.lam[rep], loop.lam[~rep]
    summary["repetition"] = dict(text=r, share_repeated=float(rep[r].mean()),
                                 mean_lambda_repeated=float(np.nanmean(lam_rep)) if lam_rep.size else None,
                                 mean_lambda_other=float(np.nanmean(lam_other)), lam=loop.lam[r])
    fig.tight_layout()
    page = out_dir / "fig_examples.html"
    page.write_text("<!doctype html><meta charset='utf-8'><title>watermark examples</title><body style='font-family:monospace'>"
                    f"<h2>{html.escape(TITLE)}</h2>" + "\n".join(parts) + "</body>")
    table = ("Green share: " + ", ".join(f"{k} {v['green_share']:.2f}" for k, v in summary["texts"].items())
             + f". Repetition example: mean lambda on repeated tokens {summary['repetition']['mean_lambda_repeated']}, elsewhere "
             f"{summary['repetition']['mean_lambda_other']:.3f}.")
    return write(out_dir, "fig_examples", summary, table, TITLE, fig) + [page]
