"""sncc.engines.manifest: the committed engine manifests load, and answer the questions emitters ask."""

from __future__ import annotations

import json

import pytest

from sncc.engines import manifest as M


def test_every_committed_manifest_loads_with_provenance():
    for engine in M.ENGINE_DIRS:
        for version in M.versions(engine):
            m = M.load(engine, version)
            assert m.engine == engine and m.version == version
            assert m.generated_by.startswith("python tools/extract_"), m.path
            assert m.source.get("repo", "").startswith("https://github.com/"), m.path
            assert m.source.get("tag") or m.source.get("rev"), m.path
            assert m.source.get("files"), m.path


def test_manifests_are_sorted_deterministic_json():
    for engine in M.ENGINE_DIRS:
        for version in M.versions(engine):
            path = M.data_dir(engine) / f"{version}.json"
            text = path.read_text(encoding="utf-8")
            assert text == json.dumps(json.loads(text), indent=1, sort_keys=True, ensure_ascii=False) + "\n", path


def test_pinned_releases_have_manifests():
    assert {"0.9.0", "0.11.0", "0.23.0"} <= set(M.versions("vllm"))
    assert {"v0.11.0", "v0.23.0"} <= set(M.versions("vllm-ascend"))
    assert "release_v0.3.0" in M.versions("omni-infer")


def test_versions_sort_numerically():
    assert M.versions("vllm").index("0.9.0") < M.versions("vllm").index("0.11.0")
    assert M.versions("vllm-ascend").index("v0.12.0rc1") < M.versions("vllm-ascend").index("v0.18.0")
    assert M._version_key("v0.12.0rc1") < M._version_key("v0.12.0")  # noqa: SLF001 - a release candidate comes first


def test_vllm_argument_spellings():
    m = M.load("vllm", "0.11.0")
    assert m.has_arg("--tensor-parallel-size") and m.has_arg("tensor_parallel_size") and m.has_arg("-tp")
    assert m.arg("-tp").name == "tensor-parallel-size"
    assert m.arg("tensor-parallel-size").type == "int"
    assert not m.has_arg("--device")  # issue 9: a converter's `--device` is rejected by vLLM 0.11.0
    with pytest.raises(KeyError, match="no option --device"):
        m.arg("--device")


def test_vllm_boolean_switches_have_their_negative_form():
    chunked = M.load("vllm", "0.11.0").arg("enable-chunked-prefill")
    assert chunked.boolean and chunked.negative == "--no-enable-chunked-prefill"
    assert M.load("vllm", "0.11.0").has_arg("--no-enable-chunked-prefill")


def test_vllm_json_arguments_and_config_file_rules():
    old, new = M.load("vllm", "0.11.0"), M.load("vllm", "0.23.0")
    assert old.arg("additional-config").json and old.arg("compilation-config").json
    assert old.arg("compilation-config").json_fields  # CompilationConfig's fields
    # issue 9: `key: false` is dropped by the YAML loader; 0.11.0 passes a nested map as a Python str
    assert old.config_file_rules["false"] == "dropped"
    assert old.config_file_rules["nested_map"] == "python-str"
    assert new.config_file_rules["nested_map"] == "json"


def test_vllm_env_table():
    m = M.load("vllm", "0.11.0")
    assert "VLLM_HOST_IP" in m.env_vars and "VLLM_DP_MASTER_PORT" in m.env_vars
    assert m.env_default("VLLM_NIXL_SIDE_CHANNEL_PORT") == 5557


def test_vllm_ascend_additional_config_keys():
    v11, v23 = M.load("vllm-ascend", "v0.11.0"), M.load("vllm-ascend", "v0.23.0")
    assert "torchair_graph_config.enabled" in v11.additional_config_keys
    assert v11.additional_config["torchair_graph_config.enabled"]["default"] is False
    assert v11.has_additional_config_key("torchair_graph_config.use_cached_kv_cache_bytes")
    assert not v11.has_additional_config_key("torchair_graph_config.no_such_key")
    # ascend_scheduler_config's items are copied into the scheduler config: any key is read
    assert v11.has_additional_config_key("ascend_scheduler_config.enable_chunked_prefill")
    assert "eplb_config.num_redundant_experts" in v23.additional_config_keys
    assert "eplb_config.num_redundant_experts" not in v11.additional_config_keys
    assert not v23.has_additional_config_key("ascend_omni_micro_batch")


def test_vllm_ascend_env_and_enums():
    m = M.load("vllm-ascend", "v0.11.0")
    assert "VLLM_ASCEND_ENABLE_MLAPO" in m.env_vars
    assert "ASCEND_OMNI_MICRO_BATCH" not in m.env_vars  # invented by the seed blog (issue 9)
    assert "ascend" in m.quantization_methods
    assert "MooncakeConnectorV1" in m.kv_connectors
    assert "FULL_DECODE_ONLY" in m.graph_modes["CUDAGraphMode"]
    # NPUPlatform.pre_register_and_update appends "ascend" to vLLM's --quantization choices
    assert m.parser_choices_added == {"--quantization": ("ascend",)}
    assert M.load("vllm", "0.11.0").parser_choices_added == {}
    assert "NixlConnector" in M.load("vllm", "0.11.0").kv_connectors


def test_omni_infer_tables():
    m = M.load("omni-infer", "release_v0.3.0")
    assert m.model_extra_config_sections == ("model_parallel_config", "operator_optimizition_config")
    assert "operator_optimizition_config.use_super_kernel" in m.model_extra_config_keys
    # master's key, dropped on release_v0.3.0 (domain-facts §4.2): unknown keys are fatal there
    assert "model_parallel_config.dense_mlp_tp_size" not in m.model_extra_config_keys
    assert "graph_model_compile_config.use_ge_graph_cached" in m.additional_config_keys
    assert {"MODEL_EXTRA_CFG_PATH", "TORCHAIR_CACHE_HOME", "RANK_TABLE_FILE_PATH"} <= m.env_vars
    assert {"pattern_path", "max_moe_layer_num", "enable_dynamic"} <= m.omni_placement_keys
    assert "pd_score_balance" in m.lb_policies and "OAS" not in m.lb_policies
    assert "AscendHcclConnectorV1" in m.kv_connectors


def test_runtime_env_rows_cite_sources():
    env = M.runtime_env()
    assert {"HCCL_BUFFSIZE", "HCCL_IF_IP", "GLOO_SOCKET_IFNAME"} <= env.env_vars
    for name, row in env.data["env"].items():
        assert row["source"].startswith("https://"), name
        assert row["reader"], name


def test_unknown_release_is_a_clear_error():
    with pytest.raises(M.ManifestError, match="no manifest for vllm 9.9.9.*have: 0.9.0"):
        M.load("vllm", "9.9.9")
    with pytest.raises(M.ManifestError, match="no manifests for engine 'sglang'"):
        M.load("sglang", "0.1")
