"""The vLLM-Ascend emitter writes the plan's KV connector settings (misconfig
case BR-18: Mooncake on Ascend needs use_ascend_direct) and graph capture sizes."""

from __future__ import annotations

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

from expect import ROOT, compile_text
from sncc.emit import emit_all
from sncc.emit.validate import validate_output

BASE = (ROOT / "tests" / "golden" / "vllm-ascend-v4flash-pd" / "plan.sn").read_text()


def _decode(text):
    comp = compile_text(text)
    assert not [d for d in comp.diagnostics if d.is_error], [(d.code.code, d.message) for d in comp.diagnostics if d.is_error]
    files = emit_all(comp.plan, comp.resolved)
    out = files["vllm-ascend.decode.toml"]
    assert validate_output("vllm-ascend.decode.toml", out) == []
    return tomllib.loads(out)


def test_default_mooncake_on_ascend_sets_use_ascend_direct():
    kv = _decode(BASE)["kv_transfer_config"]
    assert kv["kv_connector"] == "MooncakeConnectorV1" and kv["kv_role"] == "kv_consumer"
    assert kv["kv_connector_extra_config"]["use_ascend_direct"] is True


def test_plan_overrides_reach_the_output():
    text = BASE[: BASE.rindex("}")] + "  kv_transfer { connector = mooncake  decode_dp = 8  decode_tp = 8 }\n  graph { cudagraph_mode = full_decode_only  capture_sizes = [1, 2, 4, 8, 16] }\n}\n"
    doc = _decode(text)
    extra = doc["kv_transfer_config"]["kv_connector_extra_config"]
    assert extra["decode"] == {"dp_size": 8, "tp_size": 8}
    assert doc["compilation_config"] == {"cudagraph_mode": "FULL_DECODE_ONLY", "cudagraph_capture_sizes": [1, 2, 4, 8, 16]}
