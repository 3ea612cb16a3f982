"""Sweeps (sims.sweep*): grid validation, pure chunks, resume, a killed worker, the summary."""

from __future__ import annotations

import os
import pathlib
import shutil
import signal
import time

import numpy as np
import pytest

pytest.importorskip("distributed")
pq = pytest.importorskip("pyarrow.parquet")

from sims import sweep  # noqa: E402
from sims.experiments.evaluate import clopper_pearson  # noqa: E402
from sims.sweep.chunk import NULL_STREAM, chunk_seed, run_chunk  # noqa: E402
from sims.sweep.grid import GridError, load_grid  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
QUICK = ROOT / "examples" / "sweep_quick.toml"
UNIQUE = ("config", "seed", "chunk", "text", "null", "attack")


def _grid(tmp_path, text: str) -> pathlib.Path:
    p = tmp_path / "g.toml"
    p.write_text(text)
    return p


def _rows(out: pathlib.Path) -> dict[str, dict[str, np.ndarray]]:
    return {f.stem: {c: v.to_numpy(zero_copy_only=False) for c, v in zip(t.column_names, t.columns)}
            for f in sorted((out / "chunks").glob("*.parquet")) for t in [pq.read_table(f)]}


# Per-token records are means of block sums that Numba's fastmath may vectorise differently in a
# process that compiled the kernel than in one that loaded it from the cache: a few ulp apart.
RECORD_COLUMNS = {"kl", "dg", "entropy"}
RECORD_RTOL = 1e-12


def _same(a: dict, b: dict) -> bool:
    """Chunk files with the same names; tokens' scores (z, log10 p, counts, ...) bit-identical,
    the float records (kl, dg, entropy) to RECORD_RTOL (nan equal to nan)."""
    if a.keys() != b.keys():
        return False
    for name in a:
        if a[name].keys() != b[name].keys():
            return False
        for c, x in a[name].items():
            y = b[name][c]
            if c in RECORD_COLUMNS:
                ok = np.allclose(x, y, rtol=RECORD_RTOL, atol=0.0, equal_nan=True)
            else:
                ok = np.array_equal(x, y, equal_nan=True) if x.dtype.kind == "f" else np.array_equal(x, y)
            if not ok:
                return False
    return True


BASE = 'lm = "news"\nn = 8\nT = 16\nchunk = 4\n'


@pytest.mark.parametrize("text, line, key", [
    (BASE + '\n[[algo]]\nname = "srl"\n\n[[algo]]\nname = "dualgaa"\n', 10, "name"),  # unknown algorithm
    (BASE + '\n[[algo]]\nname = "srl"\ndelta = [1.0, 2.0]\n\n[[algo]]\nname = "dualga"\ndelta = 1.0\n', 12, "delta"),  # not dualga's
    ('lm = ["news", "gpt-5"]\nn = 8\n\n[[algo]]\nname = "srl"\n', 1, "lm"),  # unknown LM
    (BASE + 'seeds = [0]\nfoo = 1\n\n[[algo]]\nname = "srl"\n', 6, "foo"),  # unknown sweep key
    (BASE + '\n[[algo]]\nname = "srl"\ngamma = [0.25, 1.5]\n', 8, "gamma"),  # a value the generator refuses
    (BASE + '\n[[algo]]\nname = "dualga"\nzip = { Delta = [0.2, 0.3], eta = [1.0] }\n', 8, "Delta"),  # zip of unequal lists
    (BASE + 'metrics = ["kl", "auc"]\n\n[[algo]]\nname = "srl"\n', 5, "metrics"),
    (BASE + '\n[[algo]]\nname = "srl"\n\n[[attack]]\nkind = "rewrite"\n', 10, "kind"),
])
def test_bad_grid_names_file_line_and_key(tmp_path, text, line, key):
    p = _grid(tmp_path, text)
    with pytest.raises(GridError) as exc:
        load_grid(p)
    assert str(exc.value).startswith(f"{p}:{line}: key {key!r}:"), str(exc.value)


def test_expansion_products_and_zips(tmp_path):
    g = load_grid(_grid(tmp_path, BASE + '\n[[algo]]\nname = "srl"\ndelta = [1.0, 2.0, 5.0]\n'
                        'gamma = [0.25, 0.5]\n\n[[algo]]\nname = "dualga"\nDelta = 0.4\nzip = { lam1 = [1.0, 10.0], eta = [0.1, 10.0] }\n'))
    assert len(g.configs) == 3 * 2 + 2
    assert [dict(c.params)["lam1"] for c in g.configs[6:]] == [1.0, 10.0]
    assert [dict(c.params)["eta"] for c in g.configs[6:]] == [0.1, 10.0]
    assert len({c.id for c in g.configs}) == len(g.configs)
    assert load_grid(QUICK).hash == load_grid(QUICK).hash


def test_paper_grids_load():
    assert len(load_grid(ROOT / "examples" / "sweep_tab_performance.toml").configs) == 40  # 20 configurations x 2 prompt sets
    assert len(load_grid(ROOT / "examples" / "sweep_lam1_eta.toml").configs) == 16


def test_chunk_is_a_pure_function_of_config_seed_chunk():
    """Same task twice: identical rows; neighbouring chunks and seeds: other texts (independent seeds)."""
    g = load_grid(QUICK)
    ts = sweep.tasks(g)
    name = next(iter(ts))
    a, b = run_chunk(ts[name]), run_chunk(dict(ts[name]))
    assert all(np.array_equal(a[c], b[c], equal_nan=a[c].dtype.kind == "f") for c in a)
    other = run_chunk(dict(ts[name], chunk=1))
    assert not np.array_equal(a["log10_p"], other["log10_p"])
    assert list(other["text"][: g.chunk]) == list(range(g.chunk, 2 * g.chunk))
    assert len({chunk_seed(s, k, st) for s in range(3) for k in range(50) for st in range(3)}) == 450


def test_dir_of_another_grid_is_refused_unless_force(tmp_path):
    g1 = load_grid(_grid(tmp_path, BASE + '\n[[algo]]\nname = "srl"\n'))
    g2 = load_grid(_grid(tmp_path, BASE + '\n[[algo]]\nname = "hard"\n'))
    out = tmp_path / "out"
    sweep.run_sweep(g1, out, workers=0, log=lambda s: None)
    with pytest.raises(ValueError, match="another grid.*--force"):
        sweep.run_sweep(g2, out, workers=0, log=lambda s: None)
    r = sweep.run_sweep(g2, out, workers=0, force=True, log=lambda s: None)
    assert r["done"] == 2 and all(c.startswith(g2.configs[0].id) for c in _rows(out))


def test_unreachable_scheduler_fails_within_10_s(tmp_path):
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match="unreachable within 10 s"):
        sweep.run_sweep(QUICK, tmp_path / "out", scheduler="tcp://127.0.0.1:9", log=lambda s: None)
    assert time.perf_counter() - t0 < 12


def test_killed_worker_resume_and_summary(tmp_path):
    """The quick grid serially, then on a 2-worker LocalCluster (processes) whose busy worker is killed
    (SIGKILL) after the first chunk arrives: the same chunk files, bit for bit, no row lost or
    duplicated; a deleted chunk is recomputed alone on a rerun; the summary counts the rows."""
    serial = tmp_path / "serial"
    sweep.run_sweep(QUICK, serial, workers=0, log=lambda s: None)
    killed = []

    def kill_once(name, client):
        if killed:
            return
        busy = [w for w, keys in client.processing().items() if keys]
        pid = client.run(os.getpid, workers=busy[:1])[busy[0]]
        os.kill(pid, signal.SIGKILL)
        killed.append(busy[0])

    par = tmp_path / "par"
    r = sweep.run_sweep(QUICK, par, workers=2, on_chunk=kill_once, log=lambda s: None)
    assert killed and r["failed"] == {} and r["done"] == 12
    a, b = _rows(serial), _rows(par)
    assert _same(a, b)
    g = load_grid(QUICK)
    keys = {tuple(row) for rows in b.values() for row in zip(*(rows[c] for c in UNIQUE))}
    per_text = 1 + len(g.attacks) + g.controls
    assert len(keys) == sum(len(rows["text"]) for rows in b.values()) == len(g.configs) * g.n * per_text
    # resume: one chunk lost, one task rerun, the same rows
    victim = sorted((par / "chunks").glob("*.parquet"))[5]
    victim.unlink()
    assert sweep.run_sweep(QUICK, par, workers=0, log=lambda s: None)["done"] == 1
    assert _same(a, _rows(par))
    # summary: TPR and its Clopper-Pearson interval from the rows, empirical FPR from the controls
    s = {(r["config"], r["attack"]): r for r in pq.read_table(par / "summary.parquet").to_pylist()}
    cfg = g.configs[0].id
    lp = np.concatenate([rows["log10_p"][(rows["config"] == cfg) & ~rows["null"] & (rows["attack"] == "none")] for rows in b.values()])
    k = int(np.sum(lp <= -2))
    assert lp.size == g.n and s[(cfg, "none")]["tpr_at_1e-2"] == k / g.n
    assert (s[(cfg, "none")]["tpr_at_1e-2_lo"], s[(cfg, "none")]["tpr_at_1e-2_hi"]) == clopper_pearson(k, g.n)
    assert s[(cfg, "none")]["n_null"] == g.n
    assert "| news srl delta=1, gamma=0.25 | none | 96 |" in (par / "summary.md").read_text()
    shutil.rmtree(tmp_path)


def test_real_lm_grid_runs_through_the_torch_backend(tmp_path):
    """A real-LM configuration (random-llama, named in the grid, run in this process): a chunk's texts
    are the LM's own texts (sims.get_lm(...).generate) under the chunk's seed, scored by the exact
    detector; no generator is passed down."""
    pytest.importorskip("torch")
    import sims
    from sims.cli.main import main
    from sims.detect.families import detectors

    grid = _grid(tmp_path, 'lm = "random-llama"\nn = 6\nT = 12\nchunk = 3\ncontrols = true\n\n[[algo]]\nname = "srl"\ndelta = 3.0\n')
    assert main(["sweep", str(grid), "--out", str(tmp_path / "out"), "--workers", "0"]) == 0
    rows = _rows(tmp_path / "out")
    assert len(rows) == 2
    g = load_grid(grid)
    assert g.configs[0].real
    first = rows[f"{g.configs[0].id}-s0-c000001"]
    lm = sims.get_lm("random-llama")
    gen = sims.generate(lm, "srl", n=3, T=12, seed=chunk_seed(0, 1), key=g.key, delta=3.0)
    res = detectors.score(gen, None, dedup=g.dedup)
    wm = ~first["null"]
    assert list(first["text"][wm]) == [3, 4, 5]
    np.testing.assert_array_equal(first["log10_p"][wm], res.log10_p)
    np.testing.assert_allclose(first["kl"][wm], gen.kl.mean(axis=1), rtol=1e-12)
    null = sims.generate(lm, "none", n=3, T=12, seed=chunk_seed(0, 1, NULL_STREAM), key=g.key, gamma=gen.meta["gamma"])
    np.testing.assert_array_equal(first["log10_p"][first["null"]], detectors.score(null, None, dedup=g.dedup, algo="srl").log10_p)


def test_real_lm_grid_asks_the_model_for_uw_and_lm_attacks(tmp_path):
    """UW-delta on a real LM with an entropy attack: the unattacked texts score as sims.score with the
    LM scores them (its batched teacher-forced probabilities), the attacked ones as the entropy attack
    on the model's own probabilities."""
    pytest.importorskip("torch")
    import sims
    from sims.cli.main import main
    from sims.detect.families import detectors
    from sims.experiments.attacks import attack

    grid = _grid(tmp_path, 'lm = "random-llama"\nn = 3\nT = 16\nchunk = 3\n\n[[algo]]\nname = "uw-delta"\n\n'
                           '[[attack]]\nkind = "entropy"\nrate = 0.25\n')
    assert main(["sweep", str(grid), "--out", str(tmp_path / "out"), "--workers", "0"]) == 0
    (rows,) = _rows(tmp_path / "out").values()
    g = load_grid(grid)
    lm = sims.get_lm("random-llama")
    gen = sims.generate(lm, "uw-delta", n=3, T=16, seed=chunk_seed(0, 0), key=g.key)
    plain = rows["attack"] == "none"
    np.testing.assert_array_equal(rows["log10_p"][plain], sims.score(gen, lm).log10_p)
    att = attack(gen, "entropy", 0.25, seed=chunk_seed(0, 0, 2), lm=lm)
    np.testing.assert_allclose(rows["log10_p"][rows["attack"] == "entropy:0.25"], detectors.score(att, lm).log10_p, rtol=1e-12)
