"""A value vLLM's parser refuses is SN8009 in words a user reads, not Python's exception text
(`invalid literal for int() with base 10: '1e2'`, `could not convert string to float: '90%'`),
on the command line and in a --config YAML alike."""

from __future__ import annotations

import pytest

from sncc.importer import import_sources
from sncc.source import SourceFile


def _messages(name: str, text: str):
    res = import_sources([SourceFile(name, text)], system="hgx-h100", engine_version="0.11.0",
                         reader=lambda p: (_ for _ in ()).throw(OSError(p)))
    return [d.message for d in res.diagnostics if d.code.code == "SN8009"]


@pytest.mark.parametrize("name, text, want", [
    ("run.sh", "vllm serve m --max-model-len 8192 --max-num-seqs 1e2\n",
     "`--max-num-seqs` takes a whole number: `1e2` is not one"),
    ("run.sh", "vllm serve m --max-model-len 8192 --gpu-memory-utilization 90%\n",
     "`--gpu-memory-utilization` takes a number: `90%` is not one"),
    ("cfg.yaml", "model: m\nmax-model-len: 8192\nmax-num-seqs: 1e2\n",
     "`max-num-seqs` takes a whole number: `1e2` is not one"),
    ("cfg.yaml", "model: m\nmax-model-len: 8192\ngpu-memory-utilization: 90%\n",
     "`gpu-memory-utilization` takes a number: `90%` is not one"),
])
def test_refused_values_are_said_in_words(name, text, want):
    got = _messages(name, text)
    assert got == [want], got
    assert not any("invalid literal" in m or "could not convert" in m for m in got)
