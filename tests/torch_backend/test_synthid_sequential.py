"""Anytime-valid detection of transformers' SynthID text (sims.torch_backend.synthid_sequential) and
``sims detect --text --scheme transformers-synthid --sequential`` on a tiny random Llama's output."""

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")


from sims.detect.anytime import peeking, sequential, sequential_laws  # noqa: E402
from sims.torch_backend import synthid_sequential as ss  # noqa: E402
from sims.torch_backend import synthid_transformers as st  # noqa: E402

KEYS = [654, 400, 836, 123, 340, 443, 597, 160, 57]


def test_sequential_ids_equals_the_generic_path_and_is_valid():
    """Per-token g-value sums of transformers' g-values with its mask, through the NumPy reference
    path (log e-value per prefix, first crossing), equal sequential_ids; ragged rows (-1 padding).
    Monte Carlo (seed 2, 2000 texts x 60 uniform ids in [0, 50000), 9 keys): the anytime test's
    rejections at alpha = 0.01 are not significantly above alpha (one-sided Clopper-Pearson, 99.9 %)."""
    rng = np.random.default_rng(2)
    ids = rng.integers(0, 50000, size=(2000, 60))
    ids[:40] = rng.integers(0, 3, size=(40, 60))  # repeated contexts
    ids[5, 30:] = -1
    r = ss.sequential_ids(ids, KEYS, 5, alpha=0.01)
    assert not peeking.exceeds_level(int(r.detected.sum()), r.stop.size, 0.01)
    table = st.sampling_table()
    law = sequential_laws.weighted_bernoulli_law(np.ones(len(KEYS), dtype=np.int64), float(table.mean()))
    mix = sequential_laws.tilt_mixture(law)
    for b in (0, 5, 100):
        row = ids[b : b + 1, : 30 if b == 5 else 60]
        vals = st.g_values(row, KEYS, 5, table)[0].sum(axis=1)[None, :].astype(float)
        keep = st.repetition_mask(row, 5)[0][None, :]
        path = sequential.log_e_path(vals, keep, mix)
        assert r.n_scored[b] == keep.sum() and r.score[b] == vals[keep].sum()
        assert math.isclose(r.log_e[b], path[0, -1], rel_tol=1e-12, abs_tol=1e-12)
        ref_stop = sequential.first_crossing(np.fmax(path, -np.inf), 0.01)[0]
        assert r.stop[b] == ref_stop
    assert r.n_scored[0] < 56  # the 3-symbol rows repeat contexts
    with pytest.raises(ValueError, match="alpha"):
        ss.sequential_ids(ids, KEYS, 5, alpha=1.0)
    with pytest.raises(ValueError, match="lengths"):
        ss.sequential_ids(ids, KEYS, 5, alpha=0.01, lengths=np.full(2000, 61))


def test_cli_sequential_on_transformers_synthid_text(tmp_path, capsys):
    """A random Llama writes 60 tokens with transformers' SynthID processor (word-level tokenizer):
    ``detect --text --scheme transformers-synthid --sequential`` flags it before its end with the
    n_scored of the fixed-length scorer and the e-value of sequential_ids; with other keys it is not
    flagged; --html is refused."""
    import json

    from sims.cli.main import main
    from tests.torch_backend.test_synthid_transformers import synthid_text_folder

    ids = synthid_text_folder(tmp_path, 60)
    keys = ",".join(map(str, KEYS))

    def run(*extra):
        rc = main(["detect", "--text", str(tmp_path / "t.txt"), "--lm", str(tmp_path / "lm"), "--scheme", "transformers-synthid", "--sequential",
                   "--fpr", "1e-4", *extra])
        o, e = capsys.readouterr()
        return rc, o, e

    rc, o, _ = run("--key", keys, "--json")
    doc = json.loads(o)
    row = doc["texts"][0]
    ref = ss.sequential_ids(ids, KEYS, 5, alpha=1e-4)
    assert rc == 0 and doc["family"] == "tournament" and row["watermarked"] and 0 < row["first_flagged"] < row["n_tokens"] == 62
    assert row["n_scored"] == int(st.score_ids(ids, KEYS, 5).n_scored[0]) == int(ref.n_scored[0])
    assert row["first_flagged"] == int(ref.stop[0]) and row["log10_e"] == pytest.approx(float(ref.log_e[0]) / math.log(10))
    rc, o, _ = run("--key", ",".join(str(k + 1) for k in KEYS), "--json")
    assert rc == 0 and not json.loads(o)["texts"][0]["watermarked"]
    rc, o, _ = run("--key", keys)
    assert rc == 0 and "anytime-valid" in o
    rc, _, e = run("--key", keys, "--html", str(tmp_path / "x.html"))
    assert rc == 2 and "--html" in e
