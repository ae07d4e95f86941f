"""`--quantization` is read back through the engine adapter of the engine imported
(:meth:`sncc.engines.base.EngineAdapter.quants_of`, the table `sncc build` writes from): on CUDA vLLM
`compressed-tensors` is llm-compressor's checkpoint format (INT8 W8A8, FP8, W4A16 ... alike), so the
flag alone says no weight format. It used to be read through vllm-ascend's catalog spelling and
gave `quant = int4-moe`."""

from __future__ import annotations

import json

from expect import ROOT, compile_text

from sncc.importer import import_sources
from sncc.source import SourceFile

QWEN_BF16 = ROOT / "tests" / "fixtures" / "weights" / "qwen3-32b-bf16" / "config.json"

#: llm-compressor's INT8 W8A8 scheme as its config.json says it (compressed-tensors config_groups)
W8A8_GROUPS = {"group_0": {"targets": ["Linear"], "weights": {"num_bits": 8, "type": "int", "strategy": "channel"},
                           "input_activations": {"num_bits": 8, "type": "int", "dynamic": True}}}


def _import(line: str, name: str = "run.sh", **kw):
    return import_sources([SourceFile(name, line + "\n")], **kw)


def _model_block(text: str) -> str:
    return text.split("hardware {")[0]


def test_compressed_tensors_on_cuda_is_no_int4_moe_and_leaves_quant_unset():
    res = _import("vllm serve RedHatAI/Qwen3-32B-quantized.w8a8 --tensor-parallel-size 2 --max-model-len 8192 "
                  "--quantization compressed-tensors", system="hgx-h100")
    model = _model_block(res.text)
    assert "int4-moe" not in res.text, model
    assert "# quant = ?" in model and "\n    quant =" not in model, model
    (d,) = [d for d in res.diagnostics if d.code.code == "SN8014"]
    assert d.severity == "warning"
    line = "vllm serve RedHatAI/Qwen3-32B-quantized.w8a8 --tensor-parallel-size 2 --max-model-len 8192 --quantization compressed-tensors"
    assert line[d.span.start:d.span.end] == "--quantization compressed-tensors"
    assert any("checkpoint format" in n for n in d.notes), d.notes
    comp = compile_text(res.text)
    assert comp.plan.model.quant is None
    assert not [x for x in comp.diagnostics if x.is_error], [(x.code.code, x.message) for x in comp.diagnostics if x.is_error]


def test_compressed_tensors_takes_the_format_of_a_local_checkpoint(tmp_path):
    cfg = json.loads(QWEN_BF16.read_text(encoding="utf-8"))
    cfg["quantization_config"] = {"quant_method": "compressed-tensors", "format": "int-quantized",
                                  "config_groups": W8A8_GROUPS}
    (tmp_path / "Qwen3-32B-W8A8").mkdir()
    (tmp_path / "Qwen3-32B-W8A8" / "config.json").write_text(json.dumps(cfg), encoding="utf-8")
    res = _import("vllm serve ./Qwen3-32B-W8A8 --tensor-parallel-size 2 --max-model-len 8192 "
                  "--quantization compressed-tensors", name=str(tmp_path / "run.sh"), system="hgx-h100")
    assert "quant = w8a8  # from run.sh:1 (--quantization compressed-tensors, `w8a8` from ./Qwen3-32B-W8A8/config.json" \
        in res.text, _model_block(res.text)
    assert not [d for d in res.diagnostics if d.code.code == "SN8014"]


def test_a_local_checkpoint_of_another_method_does_not_decide(tmp_path):
    """A checkpoint whose quantization_config names another method than the flag is not taken."""
    cfg = json.loads(QWEN_BF16.read_text(encoding="utf-8"))
    cfg["quantization_config"] = {"quant_method": "fp8", "activation_scheme": "dynamic"}
    (tmp_path / "ckpt").mkdir()
    (tmp_path / "ckpt" / "config.json").write_text(json.dumps(cfg), encoding="utf-8")
    res = _import("vllm serve ./ckpt --tensor-parallel-size 2 --max-model-len 8192 --quantization compressed-tensors",
                  name=str(tmp_path / "run.sh"), model="qwen3-32b", system="hgx-h100")
    (d,) = [d for d in res.diagnostics if d.code.code == "SN8014"]
    assert any("quant_method `fp8`" in n for n in d.notes), d.notes
    assert "# quant = ?" in res.text


def test_fp8_still_reads_back_to_fp8_through_the_adapter():
    res = _import("vllm serve Qwen/Qwen3-32B --tensor-parallel-size 2 --max-model-len 8192 --quantization fp8",
                  system="hgx-h100")
    assert "quant = fp8  # from run.sh:1 (--quantization fp8)" in res.text, _model_block(res.text)


def test_ascend_keeps_its_msmodelslim_reading():
    res = _import("vllm serve vllm-ascend/Qwen3-32B-W8A8 --tensor-parallel-size 2 --max-model-len 8192 "
                  "--quantization ascend", system="atlas-800-a2")
    assert "quant = w8a8  # from run.sh:1 (--quantization ascend, `w8a8` from the model name)" in res.text


def test_reverse_table_is_the_build_table():
    """Every format an adapter writes a `--quantization` for reads back to a set holding it."""
    from sncc import catalog
    from sncc.engines.registry import adapter_for

    for kind in ("vllm", "vllm-ascend", "omni-infer"):
        a = adapter_for(kind)
        for q in catalog.quant_formats():
            qa = a.quantization(q)
            if not qa.refused:
                assert q in a.quants_of(qa.method).quants, (kind, q, qa.method)
    cuda = adapter_for("vllm")
    assert cuda.quants_of("compressed-tensors").format and cuda.quants_of("compressed-tensors").source
    assert "w8a8" in cuda.quants_of(None).quants and cuda.quants_of("ascend").quants == ()
    assert not cuda.quants_of("fp8").format


def test_the_build_manifest_decides_a_checkpoint_format_only_for_a_quant_the_build_writes_it_for():
    import pytest

    from sncc.engines.registry import adapter_for
    from sncc.importer.plan_keys import Undecided, quant_of

    cuda = adapter_for("vllm")
    assert quant_of("compressed-tensors", "", cuda, None, ("int4-moe", "out/manifest.json"))[0] == "int4-moe"
    with pytest.raises(Undecided):   # the build writes no --quantization for w8a8: that manifest is another tree's
        quant_of("compressed-tensors", "", cuda, None, ("w8a8", "out/manifest.json"))
