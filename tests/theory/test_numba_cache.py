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
