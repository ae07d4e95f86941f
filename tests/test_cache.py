"""The per-user disk cache (sncc/cache.py) makes sncc faster, never different."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sncc import cache


def test_cached_builds_once_and_rebuilds_on_a_new_key_or_a_corrupt_entry(tmp_path, monkeypatch):
    monkeypatch.setenv("SNCC_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("SNCC_NO_CACHE", raising=False)
    calls = []

    def build(v):
        def f():
            calls.append(v)
            return {"v": v}
        return f

    assert cache.cached("t", "k1", build(1)) == {"v": 1}
    assert cache.cached("t", "k1", build(2)) == {"v": 1}  # from disk
    assert calls == [1]
    assert cache.cached("t", "k2", build(3)) == {"v": 3}  # another key, another entry
    (tmp_path / "t-k1.pickle").write_bytes(b"\x80\x05garbage")
    assert cache.cached("t", "k1", build(4)) == {"v": 4}
    assert calls == [1, 3, 4]
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".")], "no temporary files left behind"


def test_no_cache_and_unusable_directories_fall_back(tmp_path, monkeypatch):
    monkeypatch.setenv("SNCC_NO_CACHE", "1")
    assert cache.cache_dir() is None
    assert cache.cached("t", "k", lambda: 5) == 5
    monkeypatch.delenv("SNCC_NO_CACHE")
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("SNCC_CACHE_DIR", str(blocker / "sub"))
    assert cache.cache_dir() is None
    assert cache.cached("t", "k", lambda: 6) == 6


def test_a_corrupt_grammar_cache_still_parses(tmp_path, monkeypatch):
    from sncc.source import SourceFile
    from sncc.syntax import parser

    monkeypatch.setenv("SNCC_CACHE_DIR", str(tmp_path))
    path = parser._cache_file(__import__("sncc.resources", fromlist=["x"]).grammar_text())
    assert path is not None and Path(path).parent == tmp_path
    Path(path).write_bytes(b"not a pickle\n\x00\x01")
    parser.get_parser.cache_clear()
    try:
        module, diags = parser.parse(SourceFile("x.sn", 'plan "x" { hardware { nodes = 1 } }\n'))
        assert module is not None and diags == []
    finally:
        parser.get_parser.cache_clear()


def test_package_toml_is_the_parsed_file_from_disk_or_cache(tmp_path, monkeypatch):
    import tomllib
    from importlib.resources import files

    monkeypatch.setenv("SNCC_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("SNCC_NO_CACHE", raising=False)
    want = tomllib.loads((files("sncc.catalog") / "data" / "memory.toml").read_text(encoding="utf-8"))
    assert cache.package_toml("sncc.catalog", "data/memory.toml") == want
    assert [p.name for p in tmp_path.glob("toml-sncc-catalog-data-memory-*.pickle")], "the table was cached"
    assert cache.package_toml("sncc.catalog", "data/memory.toml") == want  # from the cache
    with pytest.raises(FileNotFoundError):
        cache.package_toml("sncc.catalog", "data/no-such-file.toml")
