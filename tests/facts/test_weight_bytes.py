"""Bytes per parameter of each weight group, from the checkpoint's quantization description
(sncc/facts/weights.py; issue 10, kekzl/imp#1385, FlashML-org/FreeToken#320)."""

from __future__ import annotations

import pytest

from expect import compile_text


def _facts(model: str, system: str = 'system = "hgx-h200"  devices = 2', extra: str = ""):
    return compile_text(f'''plan "p" {{
  model {model}
  hardware {{ {system} }}
  engine "vllm" {{ version = "0.23.0" }}
  serve {{ devices = 2  tp = 2 }}
  {extra}
  workload {{ requests = 10  input {{ mean = 1k  max = 2k }}  output {{ mean = 100  max = 200 }} }}
}}''', name="tests/cases/p.sn").facts


def test_fp4_experts_inside_an_fp8_checkpoint():
    """DeepSeek-V4-Flash: FP8 block 128×128 with expert_dtype fp4 (catalog)."""
    wb = _facts('"deepseek-v4-flash" { quant = fp8 }').weight_bytes_per_param
    assert wb["routed_experts"] == pytest.approx(0.5 + 1 / 32)
    assert wb["attention"] == pytest.approx(1.0)
    assert wb["embedding"] == 2.0


def test_modelopt_mixed_precision_quantized_layers_and_ignore():
    f = _facts('"deepseek-v4-flash" { weights = "weights/dsv4-flash-nvfp4-mixed"  quant = fp8 }')
    wb = f.weight_bytes_per_param
    assert wb["routed_experts"] == pytest.approx(0.5 + 1 / 16)     # NVFP4: FP8 scale per 16
    assert wb["attention"] == pytest.approx(1.0)                   # ignored: the base FP8
    assert wb["shared_experts"] == pytest.approx(1.0)
    assert "quantized_layers" in f.weight_bytes_note


def test_fp8_block_scales_and_unconverted_modules():
    from sncc.facts.weights import _from_hf

    wb, _ = _from_hf({"quant_method": "fp8", "weight_block_size": [128, 128],
                      "modules_to_not_convert": ["gate", "e_score_correction_bias", "lm_head"]}, {})
    assert wb["attention"] == pytest.approx(1 + 4 / 128 ** 2)
    assert wb["router"] == 2.0 and wb["lm_head"] == 2.0


def test_compressed_tensors_int4_experts_with_regex_ignores():
    """Kimi K2.5: int4 group 32 on Linear, attention / shared experts / dense MLP ignored (re: patterns)."""
    from sncc.facts.weights import _from_hf

    qc = {"quant_method": "compressed-tensors", "config_groups": {"group_0": {
        "weights": {"num_bits": 4, "type": "int", "strategy": "group", "group_size": 32}, "targets": ["Linear"]}},
        "ignore": ["lm_head", "re:.*self_attn.*", "re:.*shared_experts.*", "re:.*mlp\\.(gate|up|gate_up|down)_proj.*"]}
    wb, _ = _from_hf(qc, {})
    assert wb["routed_experts"] == pytest.approx(0.5 + 2 / 32)
    assert wb["attention"] == wb["shared_experts"] == wb["dense_ffn"] == wb["lm_head"] == 2.0


def test_catalog_int4_moe_quantizes_the_experts_only():
    wb = _facts('"kimi-k2-thinking" { quant = int4-moe }', system='system = "atlas-800i-a3"  devices = 2').weight_bytes_per_param
    assert wb["routed_experts"] == 0.5 and wb["attention"] == 2.0


def test_modelslim_description_grouped_by_tensor_name():
    from sncc.facts.weights import _from_modelslim

    desc = {"model_quant_type": "W8A8_DYNAMIC", "model.embed_tokens.weight": "FLOAT",
            "model.layers.0.self_attn.q_proj.weight": "W8A8_DYNAMIC", "model.layers.3.mlp.experts.0.gate_proj.weight": "W4A8_DYNAMIC",
            "model.layers.3.mlp.gate.weight": "FLOAT", "lm_head.weight": "FLOAT", "model.layers.61.self_attn.q_proj.weight": "FLOAT"}
    wb, note = _from_modelslim(desc, 61)
    assert (wb["attention"], wb["routed_experts"], wb["router"], wb["embedding"], wb["mtp"]) == (1.0, 0.5, 2.0, 2.0, 2.0)
