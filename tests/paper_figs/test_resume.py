"""paper_figs.resume: a long run picks up its saved progress only when it was written at the same sizes."""

from __future__ import annotations

import json

from paper_figs import resume


def test_resume_takes_the_partial_only_at_the_same_sizes(tmp_path):
    partial = tmp_path / "fig.partial.json"
    fresh = dict(n=100, T=200, done={})
    assert resume(partial, fresh, ("n", "T")) is fresh  # nothing saved yet
    partial.write_text(json.dumps(dict(n=100, T=200, done={"a": 1})))
    assert resume(partial, fresh, ("n", "T"))["done"] == {"a": 1}
    assert resume(partial, dict(fresh, n=20), ("n", "T"))["n"] == 20  # another size starts afresh
    assert resume(partial, dict(fresh, T=50), ("n", "T"))["T"] == 50
