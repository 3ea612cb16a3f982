"""A detection report as one self-contained HTML page (inline CSS and SVG; no script, no asset).

Per text: the decision at the top, then the text with every token coloured (green, red;
context tokens that are not scored, deduplicated repeats and, for the entropy-gated detector (SWEET), the
positions below its entropy gate are marked apart), each token's
tooltip giving its colour and the running log10 p after it, and a sparkline of that running
log10 p against the decision level.  Works for any red-green detection: real-LM texts (token
strings from the tokenizer) and synthetic-LM texts (token ids via :func:`id_pieces`, or the
strings of any decode function).

Element contract (checked by the tests in headless Chromium): ``<section class="text"
data-decision=...>`` per text, ``<span class="tok g|r|ctx|dup|off ...">`` per token (``off``: below the
entropy gate, not scored) and
``<svg class="spark">`` per text with at least two scored tokens.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass

import numpy as np

#: The page's style sheet, inlined in its ``<style>`` (the page is one self-contained file).
CSS = """
body{font:15px/1.5 system-ui,sans-serif;margin:2em auto;max-width:60em;padding:0 1em;color:#222;background:#fff}
h1{font-size:1.4em;margin:0 0 .2em}
.params,.stats,.legend{color:#555;font-size:.9em;margin:.2em 0}
section.text{border:1px solid #ddd;border-radius:6px;padding:.8em 1em;margin:1.2em 0}
.decision{font-size:1.15em;font-weight:600;padding:.3em .6em;border-radius:4px;margin:0 0 .3em}
.decision.yes{background:#d9f2dd;color:#0b5d1e}
.decision.no{background:#eee;color:#333}
.decision.short{background:#fff2cc;color:#6b4e00}
.tokens{white-space:pre-wrap;word-break:break-word;margin:.6em 0;font-family:ui-monospace,monospace;font-size:.95em}
.tok{border-radius:2px;box-shadow:inset -1px 0 0 rgba(0,0,0,.18)}
.tok.g{background:#b9ebc1}
.tok.r{background:#f8c4c4}
.tok.ctx{background:#e4e4e4;color:#777}
.tok.dup{background:none;text-decoration:line-through;text-decoration-thickness:2px}
.tok.dup.g{text-decoration-color:#2e9e48}
.tok.dup.r{text-decoration-color:#d23c3c}
.tok.off{background:#f3f3f3;color:#999}
svg.spark{display:block;width:100%;height:70px;background:#fafafa;border:1px solid #eee}
svg.spark polyline{fill:none;stroke:#1f5fbf;stroke-width:1.5;vector-effect:non-scaling-stroke}
svg.spark line{stroke:#c00;stroke-dasharray:4 3;stroke-width:1;vector-effect:non-scaling-stroke}
.key span{padding:0 .3em}
"""

#: CSS class of a text's verdict badge, per decision of :data:`~sims.detect.documents.detect_json.DECISIONS`.
VERDICT_CLASS = {"watermarked": "yes", "not watermarked": "no", "too short to score": "short", "too short for this fpr": "short"}


@dataclass
class MarkedText:
    """One text's tokens and marks for :func:`render`.

    Attributes
    ----------
    row : dict
        Its entry of the detection document (:func:`sims.detect.documents.detect_json.text_rows`).
    context : list of str
        Context tokens before the scored part (prompt or the text's first h tokens), not scored.
    tokens : list of str
        The text's tokens after the context.
    green, scored : bool arrays, one per token
        Colour of each token, and whether it was counted (False for deduplicated repeats).
    running : float array, one per token
        log10 p of the prefix ending at each token.
    gated : bool array, one per token, or None
        Whether each position passes the detector's entropy gate (:attr:`sims.detect.families.Marks.gate`): a token
        outside it is shown grey, not scored; None where the detector has no gate (every position may count).
    """

    row: dict
    context: list[str]
    tokens: list[str]
    green: np.ndarray
    scored: np.ndarray
    running: np.ndarray
    gated: np.ndarray | None = None


def id_pieces(ids) -> list[str]:
    """Token ids as display strings (synthetic LMs have no text).

    Parameters
    ----------
    ids : iterable of int
        Token ids.

    Returns
    -------
    list of str
        Each id in decimal.
    """
    return [str(int(t)) for t in ids]


def _fmt(x, digits=2) -> str:
    return "n/a" if x is None or (isinstance(x, float) and not math.isfinite(x)) else f"{x:.{digits}f}"


def _token_spans(m: MarkedText, sep: str) -> str:
    out = [f'<span class="tok ctx" title="context: not scored">{html.escape(s)}</span>' for s in m.context]
    for t, s in enumerate(m.tokens):
        colour = "green" if m.green[t] else "red"
        c = "g" if m.green[t] else "r"
        lp = _fmt(float(m.running[t]))
        if m.scored[t]:
            tip, cls = f"token {t + 1}: {colour}; running log10 p {lp}", f"tok {c}"
        elif m.gated is not None and not m.gated[t]:
            tip, cls = f"token {t + 1}: {colour}, below the entropy gate: not scored; running log10 p {lp}", "tok off"
        else:
            tip, cls = f"token {t + 1}: {colour}, repeat of an earlier (context, token) pair: not scored; running log10 p {lp}", f"tok dup {c}"
        out.append(f'<span class="{cls}" title="{html.escape(tip)}">{html.escape(s)}</span>')
    return sep.join(out)


def _sparkline(running: np.ndarray, level: float) -> str:
    y = np.asarray(running, dtype=np.float64)
    y = y[np.isfinite(y)]
    if y.size < 2:
        return ""
    W, H = 1000.0, 100.0
    bottom = min(float(y.min()), level) * 1.05
    xs = np.linspace(0.0, W, y.size)
    ys = H * y / bottom
    pts = " ".join(f"{a:.1f},{b:.1f}" for a, b in zip(xs, ys))
    yl = H * level / bottom
    return (f'<svg class="spark" viewBox="0 0 {W:.0f} {H:.0f}" preserveAspectRatio="none" role="img" '
            f'aria-label="running log10 p, from 0 down to {bottom:.2f}; dashed line: the decision level {level:.2f}">'
            f'<title>running log10 p (0 at the top, {bottom:.2f} at the bottom); dashed: log10 fpr = {level:.2f}</title>'
            f'<line x1="0" y1="{yl:.1f}" x2="{W:.0f}" y2="{yl:.1f}"/><polyline points="{pts}"/></svg>')


def _section(m: MarkedText, level: float, ids: bool) -> str:
    r = m.row
    d = r["decision"]
    ttd = r.get("tokens_to_detect")
    stats = (f"log10 p = {_fmt(r['log10_p'])} &middot; {r['score']:.0f} green of {r['n_scored']} scored "
             f"({r['n_tokens']} tokens after the context) &middot; z = {_fmt(r['z'])}"
             + (f" &middot; detected from token {ttd} on" if ttd is not None else ""))
    return (f'<section class="text" id="text-{r["index"]}" data-decision="{html.escape(d)}">'
            f'<h2 class="decision {VERDICT_CLASS[d]}">Text {r["index"]}: {html.escape(d)}</h2>'
            f'<p class="stats">{stats}</p>'
            f'<div class="tokens">{_token_spans(m, " " if ids else "")}</div>'
            f'{_sparkline(m.running, level)}</section>')


def render(doc: dict, texts: list[MarkedText], *, ids: bool = False) -> str:
    """The HTML page of a detection document ``doc`` (:func:`sims.detect.documents.detect_json.document`)
    and its texts' marks; ``ids=True`` spaces the tokens apart (token ids, not text).

    Parameters
    ----------
    doc : dict
        The detection document (its ``fpr`` and parameters head the page).
    texts : list of MarkedText
        The marked texts, one section each.
    ids : bool, default False
        Whether the pieces are token ids (shown spaced apart).

    Returns
    -------
    str
        A self-contained HTML page (style inlined).
    """
    fpr = float(doc["fpr"])
    level = math.log10(fpr)
    n_yes = sum(m.row["watermarked"] for m in texts)
    params = " &middot; ".join(html.escape(f"{k} {doc[k]}") for k in ("input", "scheme", "algo", "gamma", "h", "dedup", "vocab_size")
                               if k in doc)
    summary = f"{n_yes} of {len(texts)} text{'s' if len(texts) != 1 else ''} watermarked at false-positive rate {fpr:g}"
    legend = ('<p class="legend key">tokens: <span class="tok g">green</span> <span class="tok r">red</span> '
              '<span class="tok ctx">context, not scored</span> <span class="tok dup g">repeat, not scored</span> '
              + ('<span class="tok off">below the entropy gate, not scored (grey; the statistic counts the gated '
                 'positions only)</span> ' if any(m.gated is not None for m in texts) else '')
              + '&middot; hover a token for the running log10 p; the curve under each text is that running log10 p, '
              'the dashed line the decision level</p>')
    body = "".join(_section(m, level, ids) for m in texts)
    return ('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f'<title>Watermark detection: {html.escape(summary)}</title><style>{CSS}</style></head><body>'
            f'<header><h1 id="summary">{html.escape(summary)}</h1><p class="params">{params}</p>{legend}</header>'
            f'{body}</body></html>\n')
