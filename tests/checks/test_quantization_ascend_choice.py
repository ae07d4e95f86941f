"""SN4020 for the ``--quantization`` value sncc writes: ``vllm serve`` takes ``--quantization ascend``
(every msModelSlim format) only from vllm-ascend v0.9.0rc1, where NPUPlatform.pre_register_and_update
adds ``ascend`` to the argument's choices (vllm-ascend commit 00e0243, #877, "enable online serving
quantization"); before it vLLM's parser rejects the value.

Reports: https://github.com/vllm-project/vllm-ascend/issues/902 (QwQ-32B-w8a8 on the v0.8.5rc1 image:
"argument --quantization/-q: invalid choice: 'ascend'") and
https://github.com/vllm-project/vllm-ascend/issues/1329 (w8a8 does not run on v0.7.3.post1, does on
v0.9.0rc2)."""

from __future__ import annotations

import pytest

from expect import compile_text

PLAN = '''plan "qwq-32b-w8a8" {
  model "qwen3-32b" { weights = "/data/QwQ-32B-QUANT"  quant = QUANT  max_model_len = 8k }
  hardware { system = "atlas-800-a2"  devices = 4 }
  engine "vllm-ascend" { version = "VERSION" }
  serve { devices = 4  tp = 4  max_num_seqs = 16  chunked_prefill = 4k }
  workload { requests = 100  concurrency = 16  input { mean = 1k  max = 4k }  output { mean = 256  max = 2k } }
}
'''


def _sn4020(version: str, quant: str = "w8a8"):
    text = PLAN.replace("VERSION", version).replace("QUANT", quant)
    return [d for d in compile_text(text).diagnostics if d.code.code == "SN4020"]


@pytest.mark.parametrize("version", ["v0.8.5rc1", "v0.8.4rc2", "v0.7.3.post1"])
def test_va902_quantization_ascend_before_v0_9_is_refused(version):
    (d,) = _sn4020(version)
    assert d.is_error and "ascend" in d.message and "v0.9.0rc1" in d.message
    assert d.path == ("model", "quant")
    assert any("902" in n for n in d.notes)


def test_va902_corrected_twin_v0_9_0rc2():
    assert _sn4020("v0.9.0rc2") == []


def test_unquantized_weights_write_no_quantization():
    assert _sn4020("v0.8.5rc1", quant="bf16") == []
