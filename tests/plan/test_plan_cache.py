"""The planner's on-disk cache (sims.plan.cache): a hit returns the miss's numbers, a changed
preset parameter or source misses, a corrupt or foreign file is rebuilt, a fresh process answering from
the cache loads no Numba (cold-start time: bench/bench_plan.py)."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from sims import plan as P
from sims.lm import presets
from sims.plan import cache as PC


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("WMSTATS_CACHE", str(tmp_path))
    for f in (P.lm_sample, P.lm_token_probs, P.redgreen_green_probs, P._redgreen_laws, P._lr_power):
        f.cache_clear()
    yield tmp_path / "plan"
    for f in (P.lm_sample, P.lm_token_probs, P.redgreen_green_probs, P._redgreen_laws, P._lr_power):
        f.cache_clear()


def counting_build(calls):
    def build():
        calls.append(1)
        return {"x": np.arange(5.0) / 3.0}
    return build


def test_hit_returns_what_the_miss_built(cache):
    calls = []
    a = PC.cached("t", {"lm": "tiny", "n": 1}, counting_build(calls))
    b = PC.cached("t", {"lm": "tiny", "n": 1}, counting_build(calls))
    assert calls == [1] and np.array_equal(a["x"], b["x"]) and b["x"].dtype == np.float64
    PC.cached("t", {"lm": "tiny", "n": 2}, counting_build(calls))  # another parameter: another entry
    assert calls == [1, 1] and len(list(cache.glob("t-*.npz"))) == 2


def test_batched_block_writes_each_entry_once_with_its_last_arrays(cache, monkeypatch):
    writes = []
    real_write = PC._write
    monkeypatch.setattr(PC, "_write", lambda path, key, arrays: (writes.append(path.name), real_write(path, key, arrays)))
    with PC.batched():
        for k in (1, 2, 3):
            PC.store("grow", {"lm": "tiny"}, {"T": np.arange(k)})
            assert list(PC.load("grow", {"lm": "tiny"})["T"]) == list(range(k))  # a held-back store reads back
        assert writes == []
    assert len(writes) == 1 and list(PC.load("grow", {"lm": "tiny"})["T"]) == [0, 1, 2]  # on disk: the last arrays
    PC.store("grow", {"lm": "tiny"}, {"T": np.arange(4)})  # outside a block: at once
    assert len(writes) == 2


def test_a_query_writes_its_growing_entry_once(cache, monkeypatch):
    """plan() runs in one batched() block: the lr planner stores its critical sums after each new length
    (13 at a fresh level), which cost ~30 of a query's ~80 ms when each was written at once."""
    writes = []
    monkeypatch.setattr(PC, "_write", lambda path, key, arrays: writes.append(path.name))

    def power_function(algo, *, lm, fpr, **kw):
        def f(T):
            PC.store("lr-critical", {"lm": lm, "fpr": fpr}, {"T": np.arange(T % 5)})
            return min(1.0, T / 50.0)
        return f

    monkeypatch.setattr(P, "power_function", power_function)
    out = P.plan("srl", lm="news", fpr=1e-4, power=0.9, T=20)
    assert out["tokens_needed"] == 45 and len(writes) == 1


def test_changed_preset_parameter_or_source_misses(cache, monkeypatch):
    calls = []
    PC.cached("t", PC.lm_identity("tiny"), counting_build(calls))
    monkeypatch.setitem(presets.PRESETS, "tiny", presets.PRESETS["tiny"][:-1] + (0.5,))  # loop_boost 0 -> 0.5
    PC.cached("t", PC.lm_identity("tiny"), counting_build(calls))
    assert calls == [1, 1]
    monkeypatch.setattr(PC, "source_digest", lambda: "0" * 16)  # the package's code changed
    PC.cached("t", PC.lm_identity("tiny"), counting_build(calls))
    assert calls == [1, 1, 1]
    fitted = PC.lm_identity("smollm2-fit")
    assert len(fitted["fitted_sha256"]) == 64
    f = cache.parent / "lm.npz"
    f.write_bytes(b"one")
    a = PC.lm_identity(str(f))["fitted_sha256"]
    f.write_bytes(b"other")  # another size: hashed again
    assert PC.lm_identity(str(f))["fitted_sha256"] != a
    with pytest.raises(ValueError, match="lm must be one of"):
        PC.lm_identity("nope.npz")


def test_corrupt_or_foreign_file_is_rebuilt(cache):
    calls = []
    key = PC.entry_key("t", {"n": 1})
    path = PC.entry_path(key)
    PC.cached("t", {"n": 1}, counting_build(calls))
    path.write_bytes(path.read_bytes()[:40])  # truncated
    assert PC.cached("t", {"n": 1}, counting_build(calls))["x"][1] == pytest.approx(1 / 3)
    assert calls == [1, 1] and PC._read(path, key) is not None  # rewritten whole
    np.savez(path, _key=np.array(PC.entry_key("t", {"n": 2})), x=np.zeros(5))  # another entry's file under this name
    assert PC.cached("t", {"n": 1}, counting_build(calls))["x"][1] == pytest.approx(1 / 3) and calls == [1, 1, 1]


def test_unwritable_folder_still_answers(cache):
    cache.parent.mkdir(exist_ok=True)
    cache.write_text("a file where the folder should be")
    calls = []
    assert PC.cached("t", {"n": 1}, counting_build(calls))["x"].size == 5
    assert PC.cached("t", {"n": 1}, counting_build(calls))["x"].size == 5 and calls == [1, 1]


def _plan_in_fresh_process(algo, kw):
    """``plan(algo, **kw)`` in a new interpreter: its answer and which of Numba / scipy it imported."""
    code = ("import json, sys; from sims.plan import plan; "
            f"out = plan({algo!r}, **{kw!r}); "
            "print(json.dumps([out, sorted(m for m in ('numba', 'scipy') if m in sys.modules)]))")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300, check=True)
    return json.loads(res.stdout)


def test_plan_from_cache_is_identical_and_loads_no_numba(cache):
    """A query answered in a fresh process from the entries this process wrote: the same numbers
    (to the last bit), and neither Numba nor scipy imported."""
    kw = dict(lm="tiny", Delta=0.2, fpr=1e-6, power=0.9, T=50)
    miss = P.plan("dualga", **kw)
    assert {p.name.rsplit("-", 1)[0] for p in cache.glob("*.npz")} == {"lm-sample", "green-probs"}
    hit, loaded = _plan_in_fresh_process("dualga", kw)
    assert hit == miss and loaded == []


def test_lr_plan_from_cache_is_identical_and_loads_no_numba(cache):
    """--score lr: the per-position laws and the critical sums met are kept on disk, so a fresh process asking
    the same query gets the same numbers and imports neither Numba nor scipy; a new level still answers."""
    kw = dict(lm="tiny", delta=2.0, score="lr", fpr=1e-4, power=0.9, T=40)
    miss = P.plan("srl", **kw)
    assert {p.name.rsplit("-", 1)[0] for p in cache.glob("*.npz")} == {"lr-laws", "lr-critical"}
    hit, loaded = _plan_in_fresh_process("srl", kw)
    assert hit == miss and loaded == []
    assert P.plan("srl", **dict(kw, fpr=1e-3))["tokens_needed"] <= miss["tokens_needed"]

