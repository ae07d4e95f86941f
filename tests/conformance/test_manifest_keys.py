"""Every `vllm serve` key, `additional_config` key, Omni-Infer config key and exported variable in an
emitted tree is in its release's manifest (sncc/engines/*/data/*.json, cann_env.json). Pure Python:
no vLLM needed, so this runs everywhere and fast."""

from __future__ import annotations

import pytest

import conformance_harness as H
import conformance_keys as K
from test_vllm_parser import FIXTURES, PLANS, _require_launch_tree


def _recordings(built):
    return [rec for run in built.runs for rec in run.recordings]


@pytest.mark.parametrize("name", PLANS)
def test_plan_keys_are_in_their_manifests(built_plans, name):
    built = _require_launch_tree(built_plans, name)
    errors = K.manifest_errors(built.tree, _recordings(built))
    assert not errors, f"{name} ({built.tree.engine} {built.tree.engine_version}, vLLM {built.tree.vllm_version}):\n" + "\n".join(errors)


@pytest.mark.parametrize("name", FIXTURES)
def test_fixture_findings_are_exactly_the_expected(fixture_trees, name):
    built = fixture_trees[name]
    assert K.manifest_errors(built.tree, _recordings(built)) == sorted(built.expect["manifest_errors"])


def test_nested_additional_config_is_checked_key_by_key():
    from sncc.engines.manifest import load

    v11 = load("vllm-ascend", "v0.11.0")
    good = {"torchair_graph_config": {"enabled": True, "graph_batch_sizes": [8]}, "ascend_scheduler_config": {"x": 1}}
    assert K.additional_config_errors("a.yaml", v11, good) == []
    bad = '{"torchair_graph_config": {"enabled": true, "use_superkernel": true}}'
    assert K.additional_config_errors("a.yaml", v11, bad) == [
        "a.yaml: additional-config key torchair_graph_config.use_superkernel is read by no vllm-ascend v0.11.0 code"]
    assert K.additional_config_errors("a.yaml", load("vllm", "0.11.0"), {"x": 1}) == [
        "a.yaml: additional-config ['x'] is read by no plain vLLM code"]


def test_yaml_rules_follow_the_release():
    from sncc.engines.manifest import load

    data = {"compilation-config": {"level": 3}, "enable-prefix-caching": False}
    old = K.yaml_errors("s.yaml", data, load("vllm", "0.11.0"), load("vllm", "0.11.0"))
    assert "s.yaml: compilation-config is a nested map; vLLM 0.11.0 needs it as a JSON string" in old
    assert any("enable-prefix-caching: false is dropped" in e for e in old)
    new = K.yaml_errors("s.yaml", data, load("vllm", "0.23.0"), load("vllm", "0.23.0"))
    assert not any("nested map" in e for e in new)


def test_unknown_option_and_connector_on_a_command_line():
    from sncc.engines.manifest import load

    v, a = load("vllm", "0.11.0"), load("vllm-ascend", "v0.11.0")
    argv = ["serve", "m", "--device", "npu", "--kv-transfer-config", '{"kv_connector": "OmniConnector"}']
    assert K.argv_errors("launch/x.sh", argv, v, a) == [
        "launch/x.sh: --device is not a `vllm serve` option of vLLM 0.11.0",
        "launch/x.sh: kv_connector OmniConnector is registered by neither vLLM 0.11.0 nor vllm-ascend v0.11.0"]
    ok = ["serve", "m", "--kv-transfer-config", '{"kv_connector": "MooncakeConnectorV1"}']
    assert K.argv_errors("launch/x.sh", ok, v, a) == []


def test_omni_infer_files_checked(fixture_trees, tmp_path):
    import json
    import shutil

    src = fixture_trees["omni-infer-release_v0.3.0-decode"].tree.root
    root = tmp_path / "t"
    shutil.copytree(src, root)
    mec = json.loads((root / "model_extra_config.decode.json").read_text())
    del mec["model_parallel_config"]
    mec["operator_optimizition_config"]["use_prefetch"] = True  # master's key, gone on release_v0.3.0
    (root / "model_extra_config.decode.json").write_text(json.dumps(mec))
    (root / "omni_placement.decode.yaml").write_text("pattern_path: x\nsearch_mode: OAS\n")
    (root / "proxy.sh").write_text("global_proxy.sh --prefill-lb-sdk apc_aware --listen-port 1\n")
    errors = K.omni_errors(H.Tree.at(root), __import__("sncc.engines.manifest", fromlist=["load"]).load(
        "omni-infer", "release_v0.3.0"))
    assert errors == [
        "model_extra_config.decode.json: missing required section model_parallel_config",
        "model_extra_config.decode.json: operator_optimizition_config.use_prefetch is not a field of omni-infer release_v0.3.0's dataclass",
        "omni_placement.decode.yaml: search_mode is neither read nor shipped by omni-infer release_v0.3.0's OmniPlacement",
        "proxy.sh: --prefill-lb-sdk apc_aware is not a policy of omni-infer release_v0.3.0's global proxy",
    ]
