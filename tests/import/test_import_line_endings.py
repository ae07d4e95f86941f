"""Line endings of a launch script (break test 27): a Windows (CRLF) or old Mac (CR) script reads as
its LF twin, continuations included, with the same diagnostics at the same lines and columns; a
line of options the shell would run as a command of its own (the line before ends with `\\` and a
blank, or with no `\\`) is the located error SN8015, not dropped in silence."""
from __future__ import annotations

import pytest

from sncc.importer import import_files
from sncc.importer.shell import read_script

LF = ("#!/bin/bash\n"
      "export HF_HOME=/data/hf  # cache\n"
      "vllm serve Qwen/Qwen3-32B \\\n"
      "  --tensor-parallel-size 4 \\\n"
      "  --max-num-seqz 64 \\\n"
      "  --served-model-name \"qwen \\\n"
      "32b\" \\\n"
      "  --port 8000\n")


def _write(tmp_path, name, text):
    p = tmp_path / name
    p.write_bytes(text.encode("utf-8"))   # as written: no newline translation
    return str(p)


def _at(res, d):
    return res.sources[d.span.file].line_col(d.span.start)


def _located(res):
    return sorted((d.code.code, *_at(res, d)) for d in res.diagnostics if d.span is not None
                  and d.span.file.endswith(".sh"))


@pytest.mark.parametrize("eol", ["\r\n", "\r"], ids=["crlf", "cr"])
def test_a_script_with_other_line_endings_reads_as_its_lf_twin(tmp_path, eol):
    lf = import_files([_write(tmp_path, "lf.sh", LF)], system="hgx-h100")
    other = import_files([_write(tmp_path, "other.sh", LF.replace("\n", eol))], system="hgx-h100")
    words = [[w.text for w in c.words] for c in read_script(LF.replace("\n", eol)).commands]
    assert words == [[w.text for w in c.words] for c in read_script(LF).commands]
    assert ["vllm", "serve", "Qwen/Qwen3-32B", "--tensor-parallel-size", "4"] == words[0][:5]
    assert "qwen 32b" in words[0]
    assert ("SN8001", 5, 3) in _located(lf)                # the typo'd flag on a continued line
    assert _located(other) == _located(lf)
    assert "devices = 4" in other.text and other.text.replace("other.sh", "lf.sh").replace(
        'plan "other"', 'plan "lf"') == lf.text


def test_a_continuation_backslash_followed_by_blanks_is_located(tmp_path):
    text = "vllm serve Qwen/Qwen3-32B \\  \n  --tensor-parallel-size 4 \\\n  --max-num-seqs 64\n"
    res = import_files([_write(tmp_path, "run.sh", text)], system="hgx-h100")
    cut = [d for d in res.diagnostics if d.code.code == "SN8015"]
    assert [_at(res, d) for d in cut] == [(2, 3)]
    assert "line 1 ends with `\\` followed by 2 blank(s)" in cut[0].message
    assert "delete the blanks" in cut[0].help


def test_an_option_line_after_a_line_without_backslash_is_located(tmp_path):
    text = "vllm serve Qwen/Qwen3-32B \\\r\n  --max-num-seqs 64\r\n  --tensor-parallel-size 4\r\necho done\r\n"
    res = import_files([_write(tmp_path, "run.sh", text)], system="hgx-h100")
    cut = [d for d in res.diagnostics if d.code.code == "SN8015"]
    assert [_at(res, d) for d in cut] == [(3, 3)]
    assert "line 2 does not end with `\\`" in cut[0].message


def test_an_ordinary_script_has_no_cut_off_lines(tmp_path):
    text = "vllm serve Qwen/Qwen3-32B --tensor-parallel-size 4 &\nsleep 10\ncurl -s localhost:8000/health\n"
    res = import_files([_write(tmp_path, "run.sh", text)], system="hgx-h100")
    assert not [d for d in res.diagnostics if d.code.code == "SN8015"]
