"""The generation record (:mod:`sims.core.record`) on its own: shapes and ranges at their boundaries, the
defaults, the row views, the byte count, and the ``.npz`` format (round trip, files without the optional
arrays, and every kind of foreign file refused with a ``ValueError`` that says what is wrong)."""

from __future__ import annotations

import numpy as np
import pytest

from sims.core.record import FORMAT, RECORDS, Generation, first_pad_lengths


def _gen(n=2, T=3, P=4, **kw):
    recs = {name: np.full((n, T), float(i)) for i, name in enumerate(RECORDS)}
    toks = np.arange(n * T).reshape(n, T)
    prompts = 100 + np.arange(n * P).reshape(n, P)
    return Generation(toks, prompts, **recs, **kw)


def test_the_record_names_format_and_pad_are_the_documented_ones():
    assert RECORDS == ("kl", "G", "dg", "entropy", "lam")
    assert FORMAT == "wmstats.generation/1"
    assert Generation.PAD == -1


def test_arrays_are_converted_and_defaults_are_the_full_rows():
    g = Generation([[1, 2, 3]], [[7, 8]], *([[0, 1, 2]],) * len(RECORDS))
    assert g.tokens.dtype == np.int64 and g.prompts.dtype == np.int64
    assert all(getattr(g, k).dtype == np.float64 and getattr(g, k).shape == (1, 3) for k in RECORDS)
    assert g.prompt_lens.tolist() == [2] and g.lengths.tolist() == [3] and g.n == 1
    assert g.prompt_lens.dtype == np.int64 and g.lengths.dtype == np.int64
    g = _gen(prompt_lens=[1, 3], lengths=[2, 0])
    assert g.prompt_lens.tolist() == [1, 3] and g.lengths.tolist() == [2, 0] and g.n == 2
    assert g.meta == {} and _gen().meta is not _gen().meta  # a fresh dict per record


@pytest.mark.parametrize("tokens, prompts", [(np.zeros(3), np.zeros((3, 2))),      # tokens 1-D, n agrees
                                             (np.zeros((2, 3)), np.zeros(2)),      # prompts 1-D, n agrees
                                             (np.zeros((2, 3)), np.zeros((3, 2)))])  # n differs
def test_tokens_and_prompts_must_be_2d_and_share_n(tokens, prompts):
    recs = [np.zeros(np.shape(tokens))] * len(RECORDS)
    with pytest.raises(ValueError, match="tokens \\(n, T\\) and prompts \\(n, P\\) must share n"):
        Generation(tokens, prompts, *recs)


@pytest.mark.parametrize("bad", RECORDS)
def test_each_record_must_have_the_tokens_shape(bad):
    recs = {name: np.zeros((2, 3)) for name in RECORDS}
    recs[bad] = np.zeros((2, 4))
    with pytest.raises(ValueError, match=f"record {bad} must have shape \\(2, 3\\); got \\(2, 4\\)"):
        Generation(np.zeros((2, 3)), np.zeros((2, 1)), **recs)


@pytest.mark.parametrize("kw", [{"prompt_lens": [1, 1, 1]}, {"lengths": [1]}, {"prompt_lens": [[1, 1]]}])
def test_prompt_lens_and_lengths_must_have_one_entry_per_text(kw):
    with pytest.raises(ValueError, match="prompt_lens and lengths must have shape \\(2,\\)"):
        _gen(**kw)


def test_prompt_lens_and_lengths_boundaries():
    """Both ends of each closed range are accepted; one past either end is refused (P = 4, T = 3)."""
    assert _gen(prompt_lens=[0, 4], lengths=[0, 3]).prompt_lens.tolist() == [0, 4]
    for bad in ([-1, 4], [0, 5]):
        with pytest.raises(ValueError, match="prompt_lens must be in \\[0, 4\\]"):
            _gen(prompt_lens=bad)
    for bad in ([-1, 3], [0, 4]):
        with pytest.raises(ValueError, match="lengths must be in \\[0, 3\\]"):
            _gen(lengths=bad)


def test_rows_without_padding():
    g = _gen(prompt_lens=[0, 3], lengths=[2, 3])
    assert g.prompt(0).tolist() == [] and g.prompt(1).tolist() == [105, 106, 107]
    assert g.text(0).tolist() == [0, 1] and g.text(1).tolist() == [3, 4, 5]


def test_nbytes_counts_int64_tokens_and_the_float64_records():
    assert Generation.nbytes(3, 5) == 3 * 5 * 8 * 6 == 720
    assert Generation.nbytes(1, 1) == 48
    g = _gen(n=3, T=5)
    assert Generation.nbytes(3, 5) == g.tokens.nbytes + sum(getattr(g, k).nbytes for k in RECORDS)


def test_save_writes_exactly_the_path_and_load_round_trips(tmp_path):
    g = _gen(prompt_lens=[2, 4], lengths=[1, 3], meta={"algo": "srl", "key": 7, "nested": [1.5, None]})
    path = tmp_path / "g.bin"  # no .npz: NumPy would add one to the name
    g.save(path)
    assert [p.name for p in tmp_path.iterdir()] == ["g.bin"]
    with np.load(path, allow_pickle=False) as z:
        assert str(z["format"]) == FORMAT
    back = Generation.load(str(path))
    assert back.meta == g.meta
    for k in ("tokens", "prompts", "prompt_lens", "lengths", *RECORDS):
        assert np.array_equal(getattr(back, k), getattr(g, k)), k


def test_a_file_without_the_optional_arrays_gets_the_defaults(tmp_path):
    """Files from before prompt_lens / lengths existed: full prompts, full rows."""
    path = tmp_path / "old.npz"
    np.savez(path, tokens=np.zeros((2, 3), dtype=np.int64), prompts=np.ones((2, 5), dtype=np.int64),
             meta='{"lm": "news"}', **{k: np.zeros((2, 3)) for k in RECORDS})
    g = Generation.load(path)
    assert g.prompt_lens.tolist() == [5, 5] and g.lengths.tolist() == [3, 3] and g.meta == {"lm": "news"}


def test_foreign_files_are_refused_by_name(tmp_path):
    with pytest.raises(ValueError, match="nope.npz: no such file"):
        Generation.load(tmp_path / "nope.npz")
    text = tmp_path / "text.npz"
    text.write_text("not an archive")
    with pytest.raises(ValueError, match="is not a wmstats generation file \\(an .npz archive"):
        Generation.load(text)
    single = tmp_path / "single.npy"
    np.save(single, np.zeros(3))
    with pytest.raises(ValueError, match="a single array, not an .npz archive"):
        Generation.load(single)
    partial = tmp_path / "partial.npz"
    np.savez(partial, tokens=np.zeros((1, 1)), G=np.zeros((1, 1)))
    with pytest.raises(ValueError, match="missing arrays \\['dg', 'entropy', 'kl', 'lam', 'meta', 'prompts'\\]"):
        Generation.load(partial)


def test_pickled_arrays_are_never_unpickled(tmp_path):
    """An archive whose token array is pickled (object dtype) is refused, although its content would convert."""
    path = tmp_path / "pickled.npz"
    np.savez(path, tokens=np.array([[1, 2]], dtype=object), prompts=np.zeros((1, 1), dtype=np.int64), meta="{}",
             **{k: np.zeros((1, 2)) for k in RECORDS})
    with pytest.raises(ValueError):
        Generation.load(path)


def test_scored_length_is_the_length_cut_at_the_first_pad():
    gen = _gen(n=2, T=6)
    assert first_pad_lengths(gen.tokens).tolist() == [6, 6]
    assert gen.scored_lengths().tolist() == [6, 6]
    gen.lengths = np.array([4, 6])
    assert gen.scored_lengths().tolist() == [4, 6]  # the length wins where it is shorter
    gen.tokens[1, 3:] = -1  # a pad before the length: the pad wins
    gen.tokens[0, 5] = -1  # a pad past the length changes nothing
    assert first_pad_lengths(gen.tokens).tolist() == [5, 3]
    assert gen.scored_lengths().tolist() == [4, 3]
    assert first_pad_lengths(np.full((1, 3), -1)).tolist() == [0]
