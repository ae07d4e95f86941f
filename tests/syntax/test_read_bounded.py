"""`sncc.syntax.imports.read_bounded`: the one bounded reader for plan inputs (imports,
traces, the language server's imports): regular files only, nothing under /proc, /sys
or /dev, a size cap, UTF-8, and a typed error (:class:`UnreadableFile`) for every refusal."""

from __future__ import annotations

import os

import pytest

from sncc.syntax.imports import UnreadableFile, read_bounded


def test_reads_a_regular_file(tmp_path):
    p = tmp_path / "a.sn"
    p.write_text("hardware { nodes = 1 }\n", encoding="utf-8")
    assert read_bounded(str(p), 1024) == "hardware { nodes = 1 }\n"


def test_size_cap(tmp_path):
    p = tmp_path / "big.csv"
    p.write_bytes(b"x" * 2049)
    with pytest.raises(UnreadableFile, match="larger than"):
        read_bounded(str(p), 2048)
    assert read_bounded(str(p), 2049) == "x" * 2049


def test_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "t.fifo"
    os.mkfifo(fifo)
    with pytest.raises(UnreadableFile, match="FIFO"):
        read_bounded(str(fifo), 1024)


@pytest.mark.parametrize("path", ["/proc/self/environ", "/dev/stdin", "/dev/zero", "/sys/kernel/mm"])
def test_pseudo_files_are_refused(path):
    with pytest.raises(UnreadableFile) as e:
        read_bounded(path, 1024)
    assert e.value.path == path
    assert "kernel pseudo-files" in e.value.reason


def test_symlink_into_proc_is_refused(tmp_path):
    link = tmp_path / "environ.csv"
    link.symlink_to("/proc/self/environ")
    with pytest.raises(UnreadableFile, match="/proc"):
        read_bounded(str(link), 1024)


def test_directory_missing_nul_and_encoding(tmp_path):
    with pytest.raises(UnreadableFile, match="directory"):
        read_bounded(str(tmp_path), 1024)
    with pytest.raises(UnreadableFile, match="No such file"):
        read_bounded(str(tmp_path / "nope.sn"), 1024)
    with pytest.raises(UnreadableFile, match="NUL"):
        read_bounded(str(tmp_path / "a\x00b.sn"), 1024)
    bad = tmp_path / "gbk.sn"
    bad.write_bytes(b"ok\n\xff\n")
    with pytest.raises(UnreadableFile, match="UTF-8") as e:
        read_bounded(str(bad), 1024)
    assert e.value.offset == 3


def test_error_is_an_oserror_with_a_message(tmp_path):
    """Callers that already catch OSError keep working; str() is `path: reason`."""
    with pytest.raises(OSError) as e:
        read_bounded(str(tmp_path / "nope.sn"), 10)
    assert str(e.value).startswith(str(tmp_path / "nope.sn") + ": ")
