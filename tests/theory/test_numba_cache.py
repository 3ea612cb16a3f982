"""theory._numba_cache: the folder handed to Numba, keyed by the source; a user's NUMBA_CACHE_DIR wins,
the value the module set itself (inherited by a child process) does not."""

import pathlib

from numba.core import config

from theory import _numba_cache as NC


def test_configure_keys_by_source_and_respects_the_user(monkeypatch, tmp_path):
    monkeypatch.setattr(config, "CACHE_DIR", config.CACHE_DIR)
    monkeypatch.setenv("WMSTATS_CACHE", str(tmp_path))
    want = str(tmp_path / f"numba-{NC.source_digest()}")
    monkeypatch.setenv("NUMBA_CACHE_DIR", "/elsewhere/parent-set")
    monkeypatch.setenv("WMSTATS_NUMBA_CACHE_AUTO", "/elsewhere/parent-set")  # a parent process's automatic value
    NC.configure()
    assert config.CACHE_DIR == want and NC.os.environ["NUMBA_CACHE_DIR"] == want == NC.os.environ["WMSTATS_NUMBA_CACHE_AUTO"]
    monkeypatch.setenv("NUMBA_CACHE_DIR", "/user/choice")  # the user's own: untouched
    NC.configure()
    assert NC.os.environ["NUMBA_CACHE_DIR"] == "/user/choice" and config.CACHE_DIR == want
    assert len(NC.source_digest()) == 16 and NC.cache_root() == pathlib.Path(tmp_path)


def _tree(root):
    """A tiny checkout: two packages' sources, modified an hour ago (not racy)."""
    for rel, text in {"theory/a.py": "x = 1\n", "sims/b.py": "y = 2\n", "sims/sub/c.py": "z = 3\n"}.items():
        f = root / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text)
        NC.os.utime(f, ns=(f.stat().st_atime_ns, f.stat().st_mtime_ns - 3600 * 10**9))


def _digest_counting_reads(monkeypatch):
    """source_digest() in a fresh state, with the .py files it opened."""
    opened = []

    def counting_open(path, *a, **kw):
        if str(path).endswith(".py"):
            opened.append(pathlib.Path(path).name)
        return open(path, *a, **kw)

    monkeypatch.setattr(NC, "open", counting_open, raising=False)
    NC.source_digest.cache_clear()
    try:
        return NC.source_digest(), sorted(opened)
    finally:
        NC.source_digest.cache_clear()


def test_source_digest_rereads_only_changed_files(monkeypatch, tmp_path):
    """The digest of a tree: an unchanged tree is served from the manifest without opening a source;
    an edit (same size, new mtime), a new or a removed file changes it and only that file is read;
    a touch re-reads the file and keeps the digest; a file modified just now is read again next time."""
    root = tmp_path / "repo"
    _tree(root)
    monkeypatch.setattr(NC, "_ROOT", root)
    monkeypatch.setenv("WMSTATS_CACHE", str(tmp_path / "cache"))
    d0, opened = _digest_counting_reads(monkeypatch)
    assert opened == ["a.py", "b.py", "c.py"] and NC.manifest_path().is_file()
    assert _digest_counting_reads(monkeypatch) == (d0, [])  # unchanged: no source opened
    b = root / "sims" / "b.py"
    st = b.stat()
    b.write_text("y = 3\n")  # same size
    NC.os.utime(b, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    d1, opened = _digest_counting_reads(monkeypatch)
    assert d1 != d0 and opened == ["b.py"]
    assert _digest_counting_reads(monkeypatch) == (d1, [])
    NC.os.utime(b, ns=(st.st_atime_ns, st.st_mtime_ns + 2 * 10**9))  # touched, bytes unchanged
    assert _digest_counting_reads(monkeypatch) == (d1, ["b.py"])
    (root / "theory" / "new.py").write_text("w = 0\n")  # modified now: racy, read again by the next process
    d2, opened = _digest_counting_reads(monkeypatch)
    assert d2 != d1 and opened == ["new.py"]
    assert _digest_counting_reads(monkeypatch) == (d2, ["new.py"])
    (root / "theory" / "new.py").unlink()
    assert _digest_counting_reads(monkeypatch) == (d1, [])  # removed: the digest of the tree without it
    NC.manifest_path().write_text("garbage\n")  # unreadable manifest: everything read again, same digest
    assert _digest_counting_reads(monkeypatch) == (d1, ["a.py", "b.py", "c.py"])
