"""SN4017 for dynamic EPLB on a model the release's EPLB cannot register: up to v0.14.0rc1
vllm-ascend's ``model_register`` (vllm_ascend/eplb/utils.py@v0.13.0rc1 L65-80, called from
``load_model`` when ``dynamic_eplb`` is on) knows only ``qwen3_moe``, ``deepseek_v2`` and
``deepseek_v3`` and raises ``NotImplementedError("EPLB is not supported.")`` for any other
``model_type``; v0.15.0rc1 registers every MoE model (its ``model_register(model)`` takes no config).

Report: https://github.com/vllm-project/vllm-ascend/issues/5798 (Qwen3-VL-30B with
``dynamic_eplb`` on the v0.13.0rc1 image; the maintainers: resolved from v0.15.0)."""

from __future__ import annotations

import pytest

from expect import compile_text

PLAN = '''plan "eplb-model" {
  model "MODEL" { QUANT  max_model_len = 8k }
  hardware { system = "atlas-800i-a3"  nodes = 1 }
  engine "vllm-ascend" { version = "VERSION" }
  serve { devices = 16  tp = 4  dp = 4  max_num_seqs = 16  max_num_batched_tokens = 8k  chunked_prefill = 8k }
  eplb { dynamic = true  interval = 200 }
  workload { requests = 100  concurrency = 16  input { mean = 1k  max = 4k }  output { mean = 256  max = 2k } }
  env { HCCL_BUFFSIZE = 1024 }
}
'''


def _plan(model: str = "glm-4.5", version: str = "v0.13.0rc1", quant: str = "quant = bf16") -> str:
    return PLAN.replace("MODEL", model).replace("VERSION", version).replace("QUANT", quant)


def _sn4017(text: str):
    return [d for d in compile_text(text).diagnostics if d.code.code == "SN4017"]


@pytest.mark.parametrize("version", ["v0.11.0", "v0.13.0rc1", "v0.14.0rc1"])
def test_va5798_dynamic_eplb_on_an_unregistered_model_is_refused(version):
    (d,) = _sn4017(_plan(version=version))
    assert d.is_error and "glm4_moe" in d.message and "EPLB is not supported" in d.message
    assert d.path == ("eplb", "dynamic")
    assert any("5798" in n for n in d.notes)


def test_va5798_corrected_twin_v0_15():
    assert _sn4017(_plan(version="v0.15.0rc1")) == []


@pytest.mark.parametrize("model", ["qwen3-235b-a22b", "deepseek-r1"])
def test_registered_models_balance(model):
    text = _plan(model=model, version="v0.13.0rc1", quant="quant = w8a8  weights = \"/data/w8a8\"")
    assert _sn4017(text) == []


def test_nothing_refused_is_written():
    """v0.11.0 lowering writes no dynamic_eplb for the refused model (the check's error says why)."""
    from sncc.engines.registry import plan_adapter

    comp = compile_text(_plan(version="v0.11.0"))
    rf = comp.facts.roles["serve"]
    low = plan_adapter(comp.plan).eplb_lowering(comp.plan, comp.facts, rf)
    assert "dynamic_eplb" not in low.additional_config and not low.env
