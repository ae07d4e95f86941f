"""KV-transfer configs of P/D servers: one per server process, with the connector's port rule,
a unique engine_id, and the plan's overrides (kv_transfer { ... })."""

from __future__ import annotations

import json

from expect import ROOT, outputs_of

BASE = (ROOT / "tests" / "golden" / "vllm-ascend-v4flash-pd" / "plan.sn").read_text()


def kv_configs(files: dict[str, str]) -> dict[str, dict]:
    out = {}
    for name, text in files.items():
        if name.startswith("launch/") and "--kv-transfer-config '" in text:
            out[name] = json.loads(text.split("--kv-transfer-config '")[1].split("'")[0])
    return out


def test_default_mooncake_on_ascend_sets_use_ascend_direct():
    cfgs = kv_configs(outputs_of(BASE))
    assert cfgs and all(c["kv_connector"] == "MooncakeConnectorV1" for c in cfgs.values())
    assert all(c["kv_connector_extra_config"]["use_ascend_direct"] is True for c in cfgs.values())
    assert {c["kv_role"] for n, c in cfgs.items() if "/prefill-" in n} == {"kv_producer"}
    assert {c["kv_role"] for n, c in cfgs.items() if "/decode-" in n} == {"kv_consumer"}


def test_plan_overrides_reach_the_output():
    """The plan's kv_transfer values are written as given (check SN4009 says when they are wrong;
    lowering is called here without the checks to see what it writes)."""
    from expect import compile_text
    from sncc.emit import emit_all
    from sncc.lowering import lower

    text = BASE.replace("  kv_cache {", "  kv_transfer { connector = mooncake  use_ascend_direct = false  decode_dp = 4 }\n  kv_cache {")
    comp = compile_text(text)
    cfgs = kv_configs(emit_all(lower(comp.plan, comp.resolved), schemas=False))
    for c in cfgs.values():
        extra = c["kv_connector_extra_config"]
        assert extra["use_ascend_direct"] is False
        assert extra["decode"] == {"dp_size": 4, "tp_size": 8}
        assert extra["prefill"] == {"dp_size": 2, "tp_size": 8}


def test_engine_ids_are_unique_per_server_and_kv_port_ranges_never_overlap():
    """vLLM appends _dp<local rank> to engine_id per DP engine core, so two servers with one id
    would collide; Mooncake ranks listen on kv_port + rank × tp + tp rank (one port per device)."""
    files = outputs_of(BASE)
    cfgs = kv_configs(files)
    assert len({c["engine_id"] for c in cfgs.values()}) == len(cfgs)
    spans = {}
    for n, c in cfgs.items():
        inst = n.split("/")[1].rsplit("-node", 1)[0]
        devices = 16 if inst.startswith("prefill") else 64
        spans[inst] = range(c["kv_port"], c["kv_port"] + devices)
    ports = [p for r in spans.values() for p in r]
    assert len(ports) == len(set(ports)) and min(ports) >= 36000   # above AscendDirectTransport's range (16 NPUs)


def test_nixl_on_nvidia_uses_its_side_channel_environment():
    files = outputs_of((ROOT / "tests" / "golden" / "vllm-h100-qwen3-pd" / "plan.sn").read_text())
    cfgs = kv_configs(files)
    assert {c["kv_role"] for c in cfgs.values()} == {"kv_both"}
    ports = {files[n.replace("launch/", "env/")].split("VLLM_NIXL_SIDE_CHANNEL_PORT=")[1].split()[0] for n in cfgs}
    assert len(ports) == 2   # one base per instance
    assert all('VLLM_NIXL_SIDE_CHANNEL_HOST="${NODE_0_IP}"' in files[n.replace("launch/", "env/")] for n in cfgs)
