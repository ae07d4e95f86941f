"""`sncc import` copies the script's device mask (`export ASCEND_RT_VISIBLE_DEVICES=...`,
`CUDA_VISIBLE_DEVICES=... vllm serve`) into the plan's `env`, so `sncc check --import` judges it
against the imported parallelism (SN3007 at the script line) instead of dropping it."""

from __future__ import annotations

from expect import compile_text

from sncc.importer import import_sources
from sncc.importer.command import check_imported
from sncc.source import SourceFile

ASCEND = """#!/bin/bash
export HCCL_BUFFSIZE=512
export ASCEND_RT_VISIBLE_DEVICES=4,5,6,7
vllm serve /data/models/Qwen3-32B --tensor-parallel-size 8 --max-model-len 32768 --quantization ascend
"""
CUDA = """#!/bin/bash
export CUDA_VISIBLE_DEVICES=0,1
vllm serve Qwen/Qwen3-32B --tensor-parallel-size 4 --max-model-len 8192
"""


def _import(text, name="run.sh", **kw):
    return import_sources([SourceFile(name, text)], **kw)


def test_ascend_mask_is_imported_into_env():
    res = _import(ASCEND)
    assert 'ASCEND_RT_VISIBLE_DEVICES = "4,5,6,7"  # from run.sh:3' in res.text, res.text
    assert not [d for d in res.diagnostics if d.code.code == "SN8002"]      # the runtime reads it: no "unread"
    assert compile_text(res.text).plan.env["ASCEND_RT_VISIBLE_DEVICES"] == "4,5,6,7"


def test_cuda_mask_is_imported_into_env():
    res = _import(CUDA)
    assert 'CUDA_VISIBLE_DEVICES = "0,1"  # from run.sh:2' in res.text, res.text


def test_inline_mask_is_imported_too():
    res = _import("CUDA_VISIBLE_DEVICES=0,1,2,3 vllm serve Qwen/Qwen3-32B --tensor-parallel-size 4\n")
    assert 'CUDA_VISIBLE_DEVICES = "0,1,2,3"' in res.text, res.text
    assert [d.code.code for d in compile_text(res.text).diagnostics if d.is_error] == []


def _sn3007_at_script_line(tmp_path, text, line):
    p = tmp_path / "run.sh"
    p.write_text(text, encoding="utf-8")
    diags, sources = check_imported([str(p)])
    got = [d for d in diags if d.code.code == "SN3007"]
    assert len(got) == 1, [(d.code.code, d.message) for d in diags]
    d = got[0]
    assert d.span.file == str(p) and sources[d.span.file].line_col(d.span.start)[0] == line


def test_check_import_reports_a_too_small_ascend_mask_at_the_export(tmp_path):
    _sn3007_at_script_line(tmp_path, ASCEND, 3)


def test_check_import_reports_a_too_small_cuda_mask_at_the_export(tmp_path):
    _sn3007_at_script_line(tmp_path, CUDA, 2)
