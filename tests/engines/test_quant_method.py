"""The weight format → ``--quantization`` mapping is the engine adapter's
(:meth:`sncc.engines.base.EngineAdapter.quantization`, ``data/pins.toml [quantization]``): quant.toml's
``vllm_quantization`` is vllm-ascend's method (``ascend`` for every msModelSlim format), a method CUDA
vLLM does not register, so an NVIDIA plan's W8A8 (a compressed-tensors checkpoint vLLM detects from
its config.json) gets no ``--quantization``, and what CUDA vLLM cannot load is SN4002 at check time."""

from __future__ import annotations

from expect import ROOT, compile_text, outputs_of, role_yaml
from tests_helpers import QWEN3_32B_W8A8_H100

CASES = ROOT / "tests" / "cases" / "fixed"
H100 = (CASES / "engine-wrong-vendor.sn").read_text()          # qwen3-32b on hgx-h100, engine "vllm"
ASCEND = (CASES / "device-mask-invalid.sn").read_text()        # qwen3-32b w8a8 on 910B2, vllm-ascend
MODELSLIM_W8A8 = ROOT / "tests" / "fixtures" / "weights" / "deepseek-r1-w8a8"


def _h100(quant: str, weights: str = "") -> str:
    block = (f'model "qwen3-32b" {{\n    quant = {quant}\n    weights = "{weights}"\n  }}' if weights
             else f'model "qwen3-32b" {{ quant = {quant} }}')
    return H100.replace('model "qwen3-32b" { quant = bf16 }', block)


def test_nvidia_w8a8_writes_no_ascend_quantization():
    text = _h100("w8a8")
    assert "quant = w8a8" in text
    assert [d.code.code for d in compile_text(text).diagnostics if d.is_error] == []
    files = outputs_of(text)
    assert "ascend" not in str(role_yaml(files, "serve").get("quantization"))
    assert "quantization" not in role_yaml(files, "serve")       # vLLM reads compressed-tensors from config.json
    assert not any('"ascend"' in v for k, v in files.items() if k.endswith(".yaml"))


def test_nvidia_fp8_still_names_its_method():
    assert role_yaml(outputs_of(_h100("fp8")), "serve")["quantization"] == "fp8"


def test_ascend_w8a8_keeps_ascend():
    assert role_yaml(outputs_of(ASCEND), "serve")["quantization"] == "ascend"


def test_adapters_answer_per_engine():
    from sncc.engines.registry import adapter_for

    vllm, ascend, omni = (adapter_for(k) for k in ("vllm", "vllm-ascend", "omni-infer"))
    assert vllm.quantization("w8a8").method is None and not vllm.quantization("w8a8").refused
    assert ascend.quantization("w8a8").method == omni.quantization("w8a8").method == "ascend"
    for q in ("w4a8", "w8a16", "w4a16", "w4a4", "mxfp4"):      # msModelSlim-only formats: `ascend` on CUDA
        assert vllm.quantization(q).refused and "vllm-ascend" in vllm.quantization(q).refused
        assert not ascend.quantization(q).refused
    assert vllm.quantization("fp8").method == "fp8"
    assert vllm.quantization("bf16").method is None


def test_msmodelslim_checkpoint_on_cuda_is_sn4002():
    text = _h100("w8a8", str(MODELSLIM_W8A8))
    got = [d for d in compile_text(text).diagnostics if d.code.code == "SN4002"]
    assert len(got) == 1, [(d.code.code, d.message) for d in compile_text(text).diagnostics]
    assert "cannot load" in got[0].message and any("msModelSlim" in n for n in got[0].notes)
    # the same checkpoint on vllm-ascend is fine
    asc = ASCEND.replace('model "qwen3-32b" { quant = w8a8  max_model_len = 16k }',
                         f'model "qwen3-32b" {{\n    quant = w8a8\n    weights = "{MODELSLIM_W8A8}"\n    max_model_len = 16k\n  }}')
    assert str(MODELSLIM_W8A8) in asc
    assert [d for d in compile_text(asc).diagnostics if d.code.code == "SN4002"] == []


#: the INT8 W8A8 Qwen3-32B plan of tests_helpers on B200
B200_W8A8 = QWEN3_32B_W8A8_H100.replace('plan "q32-w8a8"', 'plan "q32-b200-w8a8"').replace("hgx-h100", "hgx-b200")


def test_int8_w8a8_on_blackwell_is_sn4002():
    """B200 (compute capability 10.0) listed w8a8, which vLLM's INT8 W8A8 guide says is not supported
    on compute capability >= 10.0 (chips.toml notes)."""
    from sncc import catalog

    b200 = catalog.chip("nvidia-b200")
    assert "w8a8" not in b200.weight_formats and "compute capability" in b200.notes
    got = [d for d in compile_text(B200_W8A8).diagnostics if d.code.code == "SN4002"]
    assert len(got) == 1 and got[0].is_error, [(d.code.code, d.message) for d in compile_text(B200_W8A8).diagnostics]
    assert "`nvidia-b200`" in got[0].message and "`w8a8`" in got[0].message
    assert got[0].path == ("model", "quant")
    # the same plan on H100 (compute capability 9.0) runs it
    assert [d for d in compile_text(B200_W8A8.replace("hgx-b200", "hgx-h100")).diagnostics if d.code.code == "SN4002"] == []
