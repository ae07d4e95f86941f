"""A plan `env` entry nobody reads whose name is a near-miss of a variable the release does read
(`HCCL_BUFSIZE`, `hccl_buffsize` for `HCCL_BUFFSIZE`) is a warning with a fix: the build drops it,
so the value the writer meant never reaches the servers (for HCCL_BUFFSIZE sncc even exports its own
default instead).  A name close to nothing stays the info SN4044."""

from __future__ import annotations

import pytest

from expect import compile_text, outputs_of

PLAN = '''plan "env" {
  model "qwen3-32b" { max_model_len = 16k }
  hardware { system = "atlas-800-a2"  nodes = 1 }
  engine "vllm-ascend" { version = "v0.11.0" }
  serve { devices = 4  tp = 4  chunked_prefill = 4k }
  env { NAME = 512 }
  workload { input { mean = 1k  max = 4k }  output { mean = 1k  max = 4k } }
}
'''


@pytest.mark.parametrize("name", ["HCCL_BUFSIZE", "hccl_buffsize", "Hccl_Buffsize"])
def test_a_misspelled_variable_is_a_warning_with_its_fix(name):
    text = PLAN.replace("NAME", name)
    comp = compile_text(text)
    (d,) = [d for d in comp.diagnostics if d.code.code == "SN4044"]
    assert d.severity == "warning", d.severity
    assert d.help == "did you mean `HCCL_BUFFSIZE`?" and "sncc does not export it" in d.message
    assert text[d.span.start:d.span.end] == name
    (fix,) = d.fixes
    assert [e.new_text for e in fix.edits] == ["HCCL_BUFFSIZE"]
    assert text[fix.edits[0].span.start:fix.edits[0].span.end] == name


def test_the_corrected_twin_exports_the_value():
    text = PLAN.replace("NAME", "HCCL_BUFFSIZE")
    comp = compile_text(text)
    assert [d for d in comp.diagnostics if d.code.code == "SN4044"] == []
    assert "export HCCL_BUFFSIZE=512" in outputs_of(text)["env/common.sh"]


def test_a_name_close_to_nothing_stays_an_info():
    comp = compile_text(PLAN.replace("NAME", "MY_OWN_TOOL_SETTING"))
    (d,) = [d for d in comp.diagnostics if d.code.code == "SN4044"]
    assert d.severity == "info" and d.fixes == ()
