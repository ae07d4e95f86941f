"""SN4020 for a value combination a release refuses: vllm-ascend v0.12.0rc1 and v0.13.0rc1 capture
full graphs (``cudagraph_mode`` FULL, FULL_DECODE_ONLY, FULL_AND_PIECEWISE) with MTP in the
``SpecDecoding`` attention state for every model (model_runner_v1.py@v0.13.0rc1 L1895-1898), and the
non-MLA backend builds capture metadata for ``DecodeOnly`` only (attention_v1.py@v0.13.0rc1
L260-274: NotImplementedError "Currently we only support building dummy metadata for DecodeOnly
state").  v0.13.0rc2 keeps SpecDecoding to MLA models.

Report: https://github.com/vllm-project/vllm-ascend/issues/6085 (GLM-4.7-W8A8 on v0.13.0rc1 with
FULL_DECODE_ONLY and MTP fails at graph capture)."""

from __future__ import annotations

import pytest

from expect import compile_text

GLM = '''plan "glm-4.7-mtp-full-graphs" {
  model "glm-4.7" { weights = "Eco-Tech/GLM-4.7-W8A8-floatmtp"  quant = w8a8  max_model_len = 8192 }
  hardware { system = "atlas-800i-a3"  nodes = 1 }
  engine "vllm-ascend" { version = "VERSION" }
  serve { devices = 16  tp = 8  dp = 2  max_num_seqs = 16  max_num_batched_tokens = 8192  chunked_prefill = 8k }
  SPEC
  graph { cudagraph_mode = MODE }
  workload { requests = 100  concurrency = 16  input { mean = 2k  max = 4k }  output { mean = 512  max = 2k } }
}
'''

DSV3 = '''plan "dsv3-mtp-full-graphs" {
  model "deepseek-v3" { weights = "vllm-ascend/DeepSeek-V3.1-W8A8"  quant = w8a8  max_model_len = 8192 }
  hardware { system = "atlas-800i-a3"  nodes = 2 }
  engine "vllm-ascend" { version = "v0.13.0rc1" }
  serve { devices = 32  tp = 8  dp = 4  max_num_seqs = 16  max_num_batched_tokens = 8192  chunked_prefill = 8k }
  speculative { method = mtp  draft_tokens = 1  acceptance = 0.8 }
  graph { cudagraph_mode = full_decode_only }
  workload { requests = 100  concurrency = 16  input { mean = 2k  max = 4k }  output { mean = 512  max = 2k } }
}
'''

MTP = "speculative { method = mtp  draft_tokens = 1  acceptance = 0.8 }"


def _refusals(text: str):
    return [d for d in compile_text(text).diagnostics if d.code.code == "SN4020" and "refused" in d.message]


def _glm(version: str = "v0.13.0rc1", mode: str = "full_decode_only", spec: str = MTP) -> str:
    return GLM.replace("VERSION", version).replace("MODE", mode).replace("SPEC", spec)


@pytest.mark.parametrize("version", ["v0.13.0rc1", "v0.12.0rc1"])
@pytest.mark.parametrize("mode", ["full_decode_only", "full", "full_and_piecewise"])
def test_va6085_non_mla_mtp_with_full_graphs_is_refused(version, mode):
    (d,) = _refusals(_glm(version, mode))
    assert d.is_error and "DecodeOnly" in d.message
    assert d.path == ("graph", "cudagraph_mode")
    assert any("6085" in n for n in d.notes)


def test_va6085_corrected_twin_piecewise_graphs():
    assert _refusals(_glm(mode="piecewise")) == []


def test_the_release_that_fixed_it_passes():
    assert _refusals(_glm(version="v0.13.0rc2")) == []


def test_full_graphs_without_speculation_pass():
    assert _refusals(_glm(spec="")) == []


def test_mla_models_capture_spec_decoding():
    assert _refusals(DSV3) == []
