"""A variable an older release read but the pinned one does not (vLLM 0.23.0 reads `VLLM_RPC_TIMEOUT` and
`VLLM_USE_V1` no more; vllm-ascend v0.23.0 no more `VLLM_ASCEND_ENABLE_PREFETCH_MLP`, still exported by its
v0.23.0 tutorials): SN4044 (check) and SN8002 (import) name the newest older release whose manifest
(sncc/engines/<engine>/data/<version>.json) reads it, not only that it is unknown."""

from __future__ import annotations

from expect import compile_text

from sncc.importer import import_sources
from sncc.source import SourceFile

PLAN = '''plan "env" {
  model "qwen3-32b" { max_model_len = 16k }
  hardware { system = "atlas-800-a2"  nodes = 1 }
  engine "vllm-ascend" { version = "VERSION" }
  serve { devices = 4  tp = 4  chunked_prefill = 4k }
  env { VAR = "1" }
  workload {
    input { mean = 1k  max = 4k }
    output { mean = 1k  max = 4k }
  }
}
'''


def _text(version: str, var: str) -> str:
    return PLAN.replace("VERSION", version).replace("VAR", var)


def _unread(version: str, var: str):
    return [d for d in compile_text(_text(version, var)).diagnostics if d.code.code == "SN4044"]


def test_a_variable_vllm_read_until_0_11_names_that_release():
    (d,) = _unread("v0.23.0", "VLLM_RPC_TIMEOUT")
    assert "last read by vLLM 0.11.0" in d.message, d.message
    assert _text("v0.23.0", "VLLM_RPC_TIMEOUT")[d.span.start:].startswith("VLLM_RPC_TIMEOUT = ")   # at the entry
    assert any("sncc/engines/vllm/data/0.11.0.json" in n for n in d.notes), d.notes


def test_the_release_that_reads_it_is_clean():
    assert _unread("v0.11.0", "VLLM_RPC_TIMEOUT") == []


def test_a_variable_vllm_ascend_read_until_v0_12_names_that_release():
    (d,) = _unread("v0.23.0", "VLLM_ASCEND_ENABLE_PREFETCH_MLP")
    assert "last read by vllm-ascend v0.12.0rc1" in d.message, d.message


def test_a_variable_no_release_read_says_nothing_of_releases():
    (d,) = _unread("v0.23.0", "VLLM_USE_V2")
    assert "last read" not in d.message, d.message


def test_import_names_the_last_release_that_read_it():
    res = import_sources([SourceFile("run.sh", "export VLLM_USE_V1=1\nexport VLLM_RPC_TIMEOUT=3600000\n"
                                     "vllm serve Qwen/Qwen3-32B -tp 4 --max-model-len 8192 --quantization ascend\n")],
                         system="atlas-800i-a3", engine_version="v0.23.0")
    got = {d.message.split("`")[1]: d for d in res.diagnostics if d.code.code == "SN8002"}
    assert set(got) == {"VLLM_USE_V1", "VLLM_RPC_TIMEOUT"}, [d.message for d in res.diagnostics]
    for d in got.values():
        assert "last read by vLLM 0.11.0" in d.message, d.message
    assert got["VLLM_USE_V1"].span.start == len("export ")


def test_import_for_the_release_that_reads_it_is_clean():
    res = import_sources([SourceFile("run.sh", "export VLLM_RPC_TIMEOUT=3600000\n"
                                     "vllm serve Qwen/Qwen3-32B -tp 4 --max-model-len 8192 --quantization ascend\n")],
                         system="atlas-800i-a3", engine_version="v0.11.0")
    assert not [d for d in res.diagnostics if d.code.code == "SN8002"], [d.message for d in res.diagnostics]
