"""Per-algorithm dedup in sweeps (issue 32): the tournament family runs its own repeated-context mask where the
red-green family dedups (seed, token) pairs; the rule is named on its rows and in grid.json; the paper grids keep
their hashes."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

pytest.importorskip("pyarrow")

import sims  # noqa: E402
from sims import sweep  # noqa: E402
from sims.detect.stats.tournament_scores import score_tournament  # noqa: E402
from sims.lm.door import get_lm  # noqa: E402
from sims.sweep.chunk import NULL_STREAM, chunk_seed, run_chunk  # noqa: E402
from sims.sweep.grid import dedup_rule, load_grid  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
# the hashes of the paper's grids before per-algorithm dedup (commit df473fb): results already run stay valid
HASHES = {
    "sweep_lam1_eta": "ea357bb5be5e583fcc62eda86c8c28c144cb4bfd05de825323b60df296faf94e",
    "sweep_matched": "cf73a1c817830e022401eeafc892107543c1057775b3b1062ef3f326d57833a2",
    "sweep_peeking": "0860feae355a47ad655891da0bbe049aa45d6aa2b243dac3a33b7c494af970f1",
    "sweep_quick": "a726d1dae8dfc5b383b8a2a55bcd176f8d42ea087ba23c543428c028d9f80957",
    "sweep_tab_performance": "783f350e38206c9c57013730a6399f0e2ea6f7acbd4a212cf25de855359850e6",
}
# h = 1 on the 6-token preset: a 40-token text repeats its one-token contexts, so the mask changes what is scored
GRID = """lm = "tiny"
n = 6
T = 40
chunk = 6
dedup = {dedup}
controls = true
metrics = ["kl", "log10_p", "n_scored", "score"]
[[algo]]
name = "synthid"
m = 3
h = 1
mask_repeated = 0
[[algo]]
name = "srl"
"""


def _tasks(tmp_path, dedup: bool):
    p = tmp_path / f"g{dedup}.toml"
    p.write_text(GRID.format(dedup=str(dedup).lower()))
    g = load_grid(p)
    return g, list(sweep.tasks(g).values())


def test_paper_grids_keep_their_hashes():
    for name, h in HASHES.items():
        assert load_grid(ROOT / "examples" / f"{name}.toml").hash == h, name


def test_rules():
    assert (dedup_rule("synthid", True), dedup_rule("synthid", False)) == ("context-mask", "generation")
    assert (dedup_rule("srl", True), dedup_rule("dualga", False)) == ("pairs", "off")


@pytest.mark.parametrize("dedup", [True, False])
def test_tournament_rows_use_its_mask_and_name_it(tmp_path, dedup):
    """The rows of a SynthID configuration (generation without the mask, m = 3, h = 1) equal the mean score with the
    mask on (grid dedup) or off (the generation's setting), controls included and scored with the configuration's m;
    the rows say which rule ran; the red-green rows carry no such column (their chunk files are as before)."""
    g, (syn, srl) = _tasks(tmp_path, dedup)
    rows = run_chunk(syn)
    assert set(rows["dedup"]) == {"context-mask" if dedup else "generation"}
    assert "dedup" not in run_chunk(srl)
    lm = get_lm("tiny")
    kw = dict(n=6, T=40, key=g.key, prompt_len=g.prompt_len, h=1)
    wm = sims.generate(lm, "synthid", seed=chunk_seed(0, 0), m=3, mask_repeated=0, **kw)
    null = sims.generate(lm, "none", seed=chunk_seed(0, 0, NULL_STREAM), **kw)
    for gen, is_null in ((wm, False), (null, True)):
        want = score_tournament(gen, key=g.key, m=3, h=1, mask_repeated=dedup)
        sel = rows["null"] == is_null
        np.testing.assert_array_equal(rows["n_scored"][sel], want.n_scored)
        np.testing.assert_array_equal(rows["log10_p"][sel], want.log10_p)
    other = score_tournament(wm, key=g.key, m=3, h=1, mask_repeated=not dedup)
    assert not np.array_equal(other.n_scored, rows["n_scored"][~rows["null"]])  # the mask mattered in this grid


def test_grid_json_names_the_rules(tmp_path):
    g, _ = _tasks(tmp_path, True)
    sweep.prepare_dir(tmp_path / "out", g, force=False)
    meta = json.loads((tmp_path / "out" / "grid.json").read_text())
    assert meta["dedup_rules"] == {"synthid": "context-mask", "srl": "pairs"} and meta["hash"] == g.hash
