"""Two false errors a check of published vllm-ascend v0.23.0 nightly configs found
(tests/e2e/nightly/single_node/models/configs at the v0.23.0 tag, run by the project's nightly):

* Qwen3-30B-A3B-W8A8.yaml serves `vllm-ascend/Qwen3-30B-A3B-W8A8` without `--quantization`:
  vllm-ascend applies `ascend` itself to a ModelSlim checkpoint (quant_model_description.json,
  maybe_auto_detect_quantization), so the weights are W8A8, not BF16 (it was SN4004 on BF16 sizes);
* Qwen3.5-122B-A10B-W8A8-A3.yaml lists capture sizes twice: vLLM de-duplicates them (it was SN2004).
"""

from __future__ import annotations

from expect import compile_text
from sncc.importer import import_sources
from sncc.source import SourceFile

QWEN30B = """export HCCL_BUFFSIZE=1024
vllm serve vllm-ascend/Qwen3-30B-A3B-W8A8 --tensor-parallel-size 1 --max-model-len 8192 --max-num-seqs 16
"""


def _import(text: str, version: str = "v0.23.0"):
    return import_sources([SourceFile("run.sh", text)], engine="vllm-ascend", engine_version=version,
                          system="atlas-800i-a3")


def test_a_modelslim_checkpoint_without_the_flag_keeps_its_weight_format():
    res = _import(QWEN30B)
    plan = compile_text(res.text).plan
    assert plan.model.quant == "w8a8", res.text
    assert "applies `ascend` itself" in res.text
    assert "SN4004" not in [d.code.code for d in compile_text(res.text).diagnostics]


def test_a_release_before_the_detection_reads_no_quant_from_the_name():
    res = _import(QWEN30B, version="v0.11.0")
    assert compile_text(res.text).plan.model.quant in (None, "bf16"), res.text


def test_repeated_capture_sizes_are_de_duplicated_as_vllm_does():
    cc = '{"cudagraph_mode": "FULL_DECODE_ONLY", "cudagraph_capture_sizes": [1, 8, 16, 8, 32, 16]}'
    res = _import(QWEN30B.replace("--max-num-seqs 16", f"--max-num-seqs 16 --compilation-config '{cc}'"))
    comp = compile_text(res.text)
    assert comp.plan.graph.capture_sizes == [1, 8, 16, 32], res.text
    assert "SN2004" not in [d.code.code for d in comp.diagnostics]
    assert "de-duplicated as vLLM does" in res.text and "8, 16 listed more than once" in res.text


def test_an_llm_compressor_repository_is_not_read_as_modelslim():
    """`...-quantized.w4a8` (llm-compressor, compressed-tensors) takes no `--quantization ascend`:
    its format is read from config.json, so the name gives no quant (the import golden of
    Qwen3-30B-A3B-W4A8-llm-compressor.yaml keeps it unset)."""
    res = _import(QWEN30B.replace("vllm-ascend/Qwen3-30B-A3B-W8A8", "org/Qwen3-30B-A3B-Instruct-2507-quantized.w4a8"))
    assert compile_text(res.text).plan.model.quant in (None, "bf16"), res.text
