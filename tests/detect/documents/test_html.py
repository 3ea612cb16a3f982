"""The HTML report (sims.detect.documents.html) read back as text, without a browser: the summary's count and
plural, each token's class and tooltip, the sparkline's geometry (0 at the top, the lowest of the curve
and the level 5 % above the bottom) and when it is drawn."""

from __future__ import annotations

import re

import numpy as np
import pytest

from sims.detect.documents import detect_json
from sims.detect.documents.html import MarkedText, id_pieces, render


def _row(i, decision, lp, n_scored=3, ttd=None):
    return dict(index=i, n_tokens=4, n_scored=n_scored, score=2.0, z=None, log10_p=lp, tokens_to_detect=ttd,
                watermarked=decision == "watermarked", decision=decision)


def _texts():
    a = MarkedText(_row(0, "watermarked", -4.5, ttd=3), ["7"], ["1", "2", "3", "4"], np.array([True, True, False, True]),
                   np.array([True, True, True, False]), np.array([0.0, -0.6, -4.5, -4.5]))
    b = MarkedText(_row(1, "too short to score", 0.0, n_scored=1), [], ["9"], np.array([False]), np.array([True]), np.array([0.0]))
    return a, b


def test_summary_sections_and_tokens():
    a, b = _texts()
    page = render(detect_json.document([a.row, b.row], fpr=1e-4, input="x.npz", gamma=0.25), [a, b])
    assert "1 of 2 texts watermarked at false-positive rate 0.0001" in page
    assert "1 of 1 text watermarked" in render(detect_json.document([a.row], fpr=1e-4), [a])  # singular
    assert "0 of 1 text watermarked" in render(detect_json.document([b.row], fpr=1e-4), [b])
    assert re.findall(r'data-decision="([^"]+)"', page) == ["watermarked", "too short to score"]
    assert '<h2 class="decision yes">Text 0: watermarked</h2>' in page and '<h2 class="decision short">' in page
    assert "input x.npz &middot; gamma 0.25" in page
    spans = re.findall(r'<span class="(tok [^"]*)" title="([^"]*)">([^<]*)</span>', page.split("</header>")[1])
    assert [(c, t) for c, _, t in spans] == [("tok ctx", "7"), ("tok g", "1"), ("tok g", "2"), ("tok r", "3"), ("tok dup g", "4"), ("tok r", "9")]
    assert spans[2][1] == "token 2: green; running log10 p -0.60"
    assert spans[4][1].startswith("token 4: green, repeat of an earlier (context, token) pair: not scored; running log10 p -4.50")
    assert "log10 p = -4.50 &middot; 2 green of 3 scored (4 tokens after the context) &middot; z = n/a &middot; detected from token 3 on" in page
    assert "detected from token" not in page.split('id="text-1"')[1]


def test_sparkline_geometry():
    """The curve -0, -0.6, -4.5, -4.5 at level -4 (fpr 1e-4): bottom = 1.05 x -4.5; x from 0 to 1000 in 3 steps,
    y = 100 y / bottom (0 at the top, the lowest point at 100 / 1.05 = 95.2), the level's line at 100 x 4 / 4.725."""
    a, b = _texts()
    page = render(detect_json.document([a.row, b.row], fpr=1e-4), [a, b])
    assert page.count('<svg class="spark"') == 1  # text 1 has one point: no curve
    pts = re.search(r'<polyline points="([^"]+)"', page).group(1)
    assert pts == "0.0,-0.0 333.3,12.7 666.7,95.2 1000.0,95.2"
    y = re.search(r'<line x1="0" y1="([^"]+)" x2="1000" y2="([^"]+)"/>', page).groups()
    assert y[0] == y[1] == f"{100 * 4 / 4.725:.1f}"
    assert 'viewBox="0 0 1000 100"' in page and f"from 0 down to {-4.5 * 1.05:.2f};" in page


@pytest.mark.parametrize("ids, sep", [(True, " "), (False, "")])
def test_token_separator(ids, sep):
    a, _ = _texts()
    page = render(detect_json.document([a.row], fpr=1e-4), [a], ids=ids)
    assert f'</span>{sep}<span class="tok g" title="token 1' in page
    assert id_pieces(np.array([3, 10])) == ["3", "10"]


def test_tokens_are_joined_as_they_are_by_default():
    """Real-LM token strings carry their own spaces: by default nothing is put between them (kills ``ids: bool = False`` -> ``True``)."""
    a, _ = _texts()
    doc = detect_json.document([a.row], fpr=1e-4)
    assert render(doc, [a]) == render(doc, [a], ids=False) != render(doc, [a], ids=True)
