"""Every output validates against its schema, is deterministic, names no secret, and says what
each engine reads (content checks per engine; the full trees are goldens, tests/emit/test_golden.py)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

import pytest

from expect import ROOT, additional_config, compile_text, outputs_of, role_yaml
from sncc import resources
from sncc.emit import emit_all, schema_for
from sncc.emit.validate import validate_output, validate_outputs

GOLDEN = ROOT / "tests" / "golden"
CASES = sorted(p.name for p in GOLDEN.iterdir() if (p / "plan.sn").is_file())
SECRET_VALUE = "sk-should-never-appear-0000"


def case_text(case: str) -> str:
    return (GOLDEN / case / "plan.sn").read_text(encoding="utf-8")


def case_outputs(case: str, schemas: bool = True) -> dict[str, str]:
    return outputs_of(case_text(case), schemas=schemas)


@pytest.mark.parametrize("case", CASES)
def test_every_output_validates_and_names_a_schema_copy(case):
    files = case_outputs(case)
    assert validate_outputs(files) == []
    for name, text in files.items():
        s = schema_for(name)
        if s is None:
            continue
        assert f"schemas/{s}.schema.json" in files, name
        assert f"./schemas/{s}.schema.json" in text.splitlines()[0] + text[:200], name
    for name, text in files.items():
        if name.startswith("schemas/"):
            assert text == resources.schema_path(name[len("schemas/"):-len(".schema.json")]).read_text(encoding="utf-8")


@pytest.mark.parametrize("case", CASES)
def test_two_emissions_are_identical(case):
    assert case_outputs(case) == case_outputs(case)


def test_emission_independent_of_hash_seed():
    code = (
        "import hashlib, sys, json\n"
        "sys.path.insert(0, sys.argv[1] + '/tests')\n"
        "from expect import outputs_of\n"
        "import pathlib\n"
        "g = pathlib.Path(sys.argv[1]) / 'tests' / 'golden'\n"
        "out = {c.name: {n: hashlib.sha256(t.encode()).hexdigest() for n, t in outputs_of((c / 'plan.sn').read_text()).items()}\n"
        "       for c in sorted(g.iterdir()) if (c / 'plan.sn').is_file()}\n"
        "print(json.dumps(out, sort_keys=True))\n"
    )
    results = set()
    for seed in ("0", "1", "4242"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        r = subprocess.run([sys.executable, "-c", code, str(ROOT)], capture_output=True, text=True, env=env, cwd=ROOT)
        assert r.returncode == 0, r.stderr
        results.add(r.stdout)
    assert len(results) == 1


@pytest.mark.parametrize("case", CASES)
def test_no_secret_value_in_any_output(case, monkeypatch):
    monkeypatch.setenv("GATEWAY_API_KEY", SECRET_VALUE)
    for name, text in case_outputs(case).items():
        assert SECRET_VALUE not in text, name
        if not name.startswith("settings.json"):
            assert "GATEWAY_API_KEY" not in text, name   # the engines never read the client's key


def test_settings_name_the_key_variable_only():
    files = case_outputs("vllm-ascend-v4flash-pd")
    settings = json.loads(files["settings.json"])
    assert settings["api_key_env"] == "GATEWAY_API_KEY" and "api_key" not in settings
    settings["api_key"] = "sk-abc"
    errors = validate_output("settings.json", json.dumps(settings))
    assert errors and all(e.startswith("settings.json: ") for e in errors)


def test_settings_hold_only_what_the_plan_says():
    """Issue 14 item 10: no invented temperature, top_p, stream or retry."""
    doc = json.loads(case_outputs("omni-infer-r1-2p1d")["settings.json"])
    assert sorted(doc) == ["$schema", "api_base", "api_key_env", "max_tokens", "model", "timeout"]
    assert doc["max_tokens"] == 32768 and doc["timeout"] == 1800
    written = json.loads(case_outputs("vllm-h100-llama-serve")["settings.json"])
    assert written["temperature"] == 0 and "top_p" not in written and "stream" not in written
    v4 = json.loads(case_outputs("vllm-ascend-v4flash-pd")["settings.json"])
    assert v4["retry"] == {"max_attempts": 3, "backoff_factor": 2}
    assert v4["local_inference"] == {"enabled": True, "endpoint": "http://127.0.0.1:8000/v1", "fallback_to_remote": False}


SCHEMAS = sorted(p.name[:-len(".schema.json")] for p in (ROOT / "schemas").glob("*.schema.json") if p.name != "diagnostics.schema.json")


def _walk_properties(schema, path="#"):
    if isinstance(schema, dict):
        for key, sub in schema.get("properties", {}).items():
            yield f"{path}/properties/{key}", sub
            yield from _walk_properties(sub, f"{path}/properties/{key}")
        for kw in ("items", "additionalProperties"):
            if isinstance(schema.get(kw), dict):
                yield from _walk_properties(schema[kw], f"{path}/{kw}")


@pytest.mark.parametrize("name", SCHEMAS)
def test_schema_is_documented_draft_2020_12(name):
    import jsonschema

    schema = resources.schema(name)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] and schema["title"] and schema["description"]
    for path, sub in _walk_properties(schema):
        assert isinstance(sub, dict) and sub.get("title") and sub.get("description"), path


def test_validate_output_reports_problems():
    assert validate_output("serve.yaml", "tensor-parallel-size: 0\n")
    assert validate_output("serve.yaml", "x: [\n")[0].startswith("serve.yaml: invalid YAML")
    assert validate_output("serve.toml", "[model\n")[0].startswith("serve.toml: invalid TOML")
    assert validate_output("settings.json", "{")[0].startswith("settings.json: invalid JSON")
    assert validate_output("model_extra_config.decode.json", json.dumps({"model_parallel_config": {}}))
    assert validate_output("model_extra_config.decode.json", json.dumps(
        {"model_parallel_config": {}, "operator_optimizition_config": {"no_such_field": True}}))
    assert validate_output("launch/x.sh", "if then fi (\n")


def test_simulate_schema_accepts_a_result():
    from sncc.emit.validate import validate_instance

    result = {
        "requests": {"completed": 3000}, "duration_s": 296.1, "qpm": 608.0,
        "ttft_s": {"mean": 1.93, "p50": 1.8, "p90": 2.6, "p99": 3.9},
        "tpot_ms": {"mean": 47.0, "p50": 46.0, "p90": 52.0, "p99": 60.0},
        "output_tokens_per_s": 12450.0, "output_tokens_per_s_per_device": 70.7,
        "tokens_per_s_per_user": {"mean": 21.3},
        "slo": [{"name": "ttft", "target": 2.0, "observed": 1.93, "met": True}], "extra": {"anything": 1},
    }
    assert validate_instance("simulate.json", result, "simulate") == []
    del result["qpm"]
    assert validate_instance("simulate.json", result, "simulate")


# --------------------------------------------------------------------------- per engine

def test_vllm_on_nvidia_is_plain_vllm():
    files = case_outputs("vllm-h100-llama-serve", schemas=False)
    assert not any(n.endswith(".toml") for n in files), "no vllm-ascend TOML for NVIDIA"
    assert sorted(n for n in files if "/" not in n) == ["bench.sh", "serve.yaml", "settings.json"]
    text = "".join(files.values())
    import re

    for word in ("HCCL", "ASCEND", "additional-config", r"\bnpu\b"):
        assert not re.search(word, text), word
    assert 'export CUDA_VISIBLE_DEVICES=0,1,2,3' in files["env/serve-0-node0.sh"]
    assert 'export CUDA_VISIBLE_DEVICES=4,5,6,7' in files["env/serve-1-node0.sh"]
    assert "--port 8000" in files["launch/serve-0-node0.sh"] and "--port 8001" in files["launch/serve-1-node0.sh"]
    doc = role_yaml(files, "serve")
    assert json.loads(doc["compilation-config"]) == {"cudagraph_mode": "FULL_DECODE_ONLY",
                                                     "cudagraph_capture_sizes": [1, 2, 4, 8, 16, 32, 64]}


def test_omni_infer_model_extra_config_has_both_required_sections():
    files = case_outputs("omni-infer-r1-2p1d", schemas=False)
    for role, dp in (("prefill", 2), ("decode", 32)):
        doc = json.loads(files[f"model_extra_config.{role}.json"])
        assert doc["model_parallel_config"] == {"dp_size": dp}
        ops = doc["operator_optimizition_config"]
        assert ops["enable_pd_separated"] is True and ops["use_omni_placement"] is True
        assert ops["omni_placement_config_path"] == f"omni_placement.{role}.yaml"
    assert json.loads(files["model_extra_config.prefill.json"])["operator_optimizition_config"]["enable_prefill_micro_batch"]
    assert json.loads(files["model_extra_config.decode.json"])["operator_optimizition_config"]["use_super_kernel"]
    assert "omni-infer.json" not in files
    ac = additional_config(files, "decode")
    assert ac == {"graph_model_compile_config": {"level": 1, "use_ge_graph_cached": True}, "enable_omni_attn": True}
    assert "export TORCHAIR_CACHE_HOME=/data/torchair_cache/deepseek-r1-w8a8" in files["env/common.sh"]
    env = files["env/decode-0-node2-rank0.sh"]
    for line in ('export MODEL_EXTRA_CFG_PATH="${SNCC_OUT}/model_extra_config.decode.json"', "export ROLE=decode",
                 "export PREFILL_POD_NUM=2", 'export LOCAL_DECODE_SERVER_IP_LIST="${NODE_2_IP},${NODE_3_IP}"',
                 "export VLLM_DP_SIZE=32", "export VLLM_DP_RANK=0"):
        assert line in env, line
    kv = json.loads(files["launch/decode-0-node3-rank16.sh"].split("--kv-transfer-config '")[1].split("'")[0])
    assert kv == {"kv_connector": "AscendHcclConnectorV1", "kv_buffer_device": "npu", "kv_role": "kv_consumer",
                  "kv_rank": 2, "engine_id": "2", "kv_parallel_size": 3}


def test_omni_infer_proxy_lists_every_api_server_with_a_real_policy():
    files = case_outputs("omni-infer-r1-2p1d", schemas=False)
    proxy = files["proxy.sh"]
    assert '"${OMNI_INFER_SRC}/tools/scripts/global_proxy.sh"' in proxy
    assert "--prefill-lb-sdk pd_score_balance" in proxy and "--decode-lb-sdk pd_score_balance" in proxy
    pre = proxy.split("--prefill-servers-list ")[1].split()[0]
    dec = proxy.split("--decode-servers-list ")[1].split()[0]
    assert pre.count(":80") == 4 and dec.count(":80") == 32
    import yaml

    inv = yaml.safe_load(files["inventory.yml"])
    hosts = inv["all"]["children"]
    assert sorted(hosts["P"]["hosts"]) == ["p0", "p1"] and sorted(hosts["D"]["hosts"]) == ["d0_0", "d0_1"]
    assert hosts["D"]["hosts"]["d0_1"]["host_ip"] == "{{ lookup('env', 'NODE_2_IP') }}"


def test_vllm_ascend_pd_follows_the_external_dp_pattern():
    files = case_outputs("vllm-ascend-v4flash-pd", schemas=False)
    decode = sorted(n for n in files if n.startswith("launch/decode-"))
    assert len(decode) == 8, decode      # one server per DP rank
    ports, engine_ids, kv_ports = set(), set(), set()
    for n in decode:
        s = files[n]
        assert "--data-parallel-rank " in s and "--headless" not in s
        kv = json.loads(s.split("--kv-transfer-config '")[1].split("'")[0])
        engine_ids.add(kv["engine_id"])
        kv_ports.add(kv["kv_port"])
        node = n.split("-node")[1].split("-")[0]
        ports.add((node, s.split("--port ")[1].split()[0]))
    assert len(engine_ids) == 8 and len(ports) == 8 and kv_ports == {36032}
    assert all(f"ASCEND_RT_VISIBLE_DEVICES=" in files[n.replace("launch/", "env/")] for n in decode)


def test_vllm_ascend_aggregated_multi_node_uses_internal_dp_with_headless_followers():
    files = case_outputs("vllm-ascend-v4flash-serve-4nodes", schemas=False)
    first = files["launch/serve-0-node0.sh"]
    assert "--data-parallel-size-local 2" in first and "--headless" not in first and "--port 8000" in first
    for k in (1, 2, 3):
        s = files[f"launch/serve-0-node{k}.sh"]
        assert "--headless" in s and f"--data-parallel-start-rank {2 * k}" in s
        assert '--data-parallel-address "${NODE_0_IP}"' in s and "--port" not in s


@pytest.mark.parametrize("version,expect_int8_key", [("v0.11.0", True), ("v0.23.0", False)])
def test_int8_kv_cache_per_release(version, expect_int8_key):
    src = case_text("vllm-ascend-qwen3-32b-a2").replace('version = "v0.11.0"', f'version = "{version}"')
    src = src.replace('cann = "8.3.RC2"', 'cann = "9.1.0"') if version == "v0.23.0" else src
    src = src.replace("slo {", "kv_cache { dtype = int8 }\n  slo {")
    files = outputs_of(src)
    assert role_yaml(files, "serve")["kv-cache-dtype"] == "auto"
    assert ("kv_cache_dtype" in additional_config(files, "serve")) is expect_int8_key


def test_emit_all_reads_only_the_deployment():
    """The emitters take the Deployment alone: a lowered plan emits without its plan object."""
    import pickle

    comp = compile_text(case_text("vllm-ascend-v4flash-pd"))
    dep = pickle.loads(pickle.dumps(comp.deployment))
    assert emit_all(dep) == comp.outputs
    digest = hashlib.sha256("".join(sorted(emit_all(dep))).encode()).hexdigest()
    assert digest
