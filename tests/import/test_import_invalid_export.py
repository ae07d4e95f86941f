"""An `export` of a name bash refuses (`export HCCL-BUFFSIZE=200`: a hyphen) sets nothing: bash
prints `export: 'HCCL-BUFFSIZE=200': not a valid identifier`, returns 1 and goes on with the script
(GNU Bash manual, "Definitions": a name is "a word consisting solely of letters, numbers, and
underscores, and beginning with a letter or underscore",
https://www.gnu.org/software/bash/manual/html_node/Definitions.html; bash 5.2.15 run by hand).
Before, the importer dropped the word without a word; now SN8016 says so at its position."""

from __future__ import annotations

from sncc.importer import import_sources
from sncc.importer.shell import read_script
from sncc.source import SourceFile

SCRIPT = ("#!/bin/bash\n"
          "export HCCL-BUFFSIZE=200\n"
          "export HCCL_CONNECT_TIMEOUT=7200 TASK-QUEUE-ENABLE\n"
          "vllm serve Qwen/Qwen3-32B -tp 4 --max-model-len 8192 --quantization ascend\n")


def _sn8016(res):
    return [d for d in res.diagnostics if d.code.code == "SN8016"]


def test_the_reader_sets_the_valid_names_and_records_the_refused_words():
    sc = read_script("export A=1 B-C=2 D=3 -n\nreadonly 9X=1\n")
    assert [(n, w.text) for n, w, _ in sc.assignments] == [("A", "1"), ("D", "3")]
    assert [(w.text, builtin) for w, builtin in sc.refused] == [("B-C=2", "export"), ("9X=1", "readonly")]


def test_an_export_bash_refuses_is_a_warning_at_its_word_and_not_in_the_plan():
    res = import_sources([SourceFile("run.sh", SCRIPT)])
    got = _sn8016(res)
    assert [SCRIPT[d.span.start:d.span.end] for d in got] == ["HCCL-BUFFSIZE=200", "TASK-QUEUE-ENABLE"]
    d = got[0]
    assert d.severity == "warning" and "not a valid identifier" in d.message and "not set" in d.message
    assert "`HCCL_BUFFSIZE`" in d.help
    assert "HCCL-BUFFSIZE" not in res.text and 'HCCL_CONNECT_TIMEOUT = "7200"' in res.text, res.text
    assert not res.has_errors


def test_a_refused_export_in_a_sourced_file_is_located_there(tmp_path):
    from sncc.importer import import_files

    (tmp_path / "env.sh").write_text("export HCCL-BUFFSIZE=200\n", encoding="utf-8")
    (tmp_path / "run.sh").write_text(". ./env.sh\nvllm serve Qwen/Qwen3-32B --max-model-len 8192\n", encoding="utf-8")
    res = import_files([str(tmp_path / "run.sh")])
    (d,) = _sn8016(res)
    assert d.span.file.endswith("env.sh") and d.span.start == len("export ")
