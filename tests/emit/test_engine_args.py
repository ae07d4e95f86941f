"""Emitted arguments that pass ``sncc check`` must also start the engine.

Each test is one finding of a fresh-user run: a plan that ``sncc check`` accepts, whose role
arguments must keep the engine's own start-up rules or carry the option the plan asked for.
"""

from __future__ import annotations

import json

import pytest

from expect import additional_config, compile_text, outputs_of, role_toml, role_yaml


def plan_text(engine: str = 'engine "vllm-ascend" { version = "v0.11.0" }', model: str = 'model "qwen3-32b" { max_model_len = 16k }',
              roles: str = "", extra: str = "", hardware: str = 'hardware { system = "atlas-800-a2"  nodes = 1 }',
              env: str = "env { HCCL_INTRA_ROCE_ENABLE = 1 }") -> str:
    roles = roles or ("prefill { instances = 1  devices = 4  tp = 4  chunked_prefill = 4k }\n"
                      "  decode  { instances = 1  devices = 4  tp = 4  max_num_seqs = 32 }")
    return (f'plan "t" {{\n  {model}\n  {hardware}\n  {engine}\n  {roles}\n  {extra}\n  {env}\n'
            "  workload { input { mean = 1k  max = 4k }  output { mean = 1k  max = 4k } }\n}\n")


def vllm_accepts_budget(args: dict) -> bool:
    """vLLM ``SchedulerConfig.verify_max_model_len`` (domain-facts §3.2): with chunked prefill off,
    ``max_num_batched_tokens`` must be at least ``max_model_len``."""
    return args["enable-chunked-prefill"] or args["max-num-batched-tokens"] >= args["max-model-len"]


# --------------------------------------------------------------------------- 1. decode chunked prefill

def test_decode_role_turns_chunked_prefill_on():
    files = outputs_of(plan_text())
    for role in ("prefill", "decode"):
        assert vllm_accepts_budget(role_toml(files, role)), role
    dec = role_toml(files, "decode")
    assert dec["enable-chunked-prefill"] is True and "long-prefill-token-threshold" not in dec
    assert "never prefills" in files["decode.yaml"]


def test_decode_explicit_off_is_kept_and_passed_as_a_switch():
    roles = ("prefill { instances = 1  devices = 4  tp = 4  chunked_prefill = 4k }\n"
             "  decode  { instances = 1  devices = 4  tp = 4  max_num_seqs = 32  chunked_prefill = off  max_num_batched_tokens = 16k }")
    files = outputs_of(plan_text(roles=roles))
    dec = role_toml(files, "decode")
    assert dec["enable-chunked-prefill"] is False and vllm_accepts_budget(dec)
    assert "enable-chunked-prefill" not in role_yaml(files, "decode")   # vLLM drops `false` from YAML
    assert "--no-enable-chunked-prefill" in files["launch/decode-0-node0.sh"]


def test_omni_infer_decode_turns_chunked_prefill_on():
    text = plan_text(engine='engine "omni-infer" {}', model='model "deepseek-r1" { quant = w8a8  max_model_len = 16k }',
                     hardware='hardware { system = "atlas-900-a3-superpod"  nodes = 3 }',
                     roles="prefill { instances = 1  devices = 16  tp = 8  ep = 2  chunked_prefill = 8k }\n"
                           "  decode  { instances = 1  devices = 32  tp = 1  ep = 32  max_num_seqs = 16 }", env="")
    files = outputs_of(text)
    for role in ("prefill", "decode"):
        args = role_yaml(files, role)
        args.setdefault("enable-chunked-prefill", False)
        assert vllm_accepts_budget(args), role
    assert role_yaml(files, "decode")["enable-chunked-prefill"] is True


# --------------------------------------------------------------------------- 2. draft_model speculation

def test_draft_model_builds_with_its_model():
    extra = 'speculative { method = draft_model  model = "/data/models/Qwen3-0.6B"  draft_tokens = 3  acceptance = 0.7  draft_cost = 0.05 }'
    roles = "serve { instances = 2  devices = 4  tp = 4  chunked_prefill = 4k  max_num_seqs = 8 }"
    sp = role_toml(outputs_of(plan_text(roles=roles, extra=extra, env="")), "serve")["speculative-config"]
    assert sp == {"method": "draft_model", "num_speculative_tokens": 3, "model": "/data/models/Qwen3-0.6B"}


def test_draft_model_without_model_is_refused_by_check():
    """SN4018: vLLM will not start without speculative_config.model, so nothing is lowered."""
    extra = "speculative { method = draft_model  draft_tokens = 3  acceptance = 0.7  draft_cost = 0.05 }"
    roles = "serve { instances = 2  devices = 4  tp = 4  chunked_prefill = 4k  max_num_seqs = 8 }"
    comp = compile_text(plan_text(roles=roles, extra=extra, env=""))
    assert [d.code.code for d in comp.diagnostics if d.severity == "error"] == ["SN4018"]


# --------------------------------------------------------------------------- 3. graph mode and rope scaling

DSV3 = 'model "deepseek-v3" { quant = w8a8  max_model_len = 8192 }'
A2X2 = 'hardware { system = "atlas-800-a2"  nodes = 2 }'


def test_torchair_mode_writes_torchair_graph_config_for_graph_roles_only():
    roles = ("prefill { instances = 1  devices = 16  tp = 4  ep = 4  chunked_prefill = 4k }\n"
             "  decode  { instances = 1  devices = 16  tp = 2  ep = 8  max_num_seqs = 16 }")
    files = outputs_of(plan_text(model=DSV3, hardware='hardware { system = "atlas-800-a2"  nodes = 4 }', roles=roles,
                                 extra="graph { mode = torchair }", env=""))
    dec = role_toml(files, "decode")
    assert "enforce-eager" not in dec
    assert dec["additional-config"]["torchair_graph_config"] == {"enabled": True}
    pre = role_toml(files, "prefill")
    # vllm-ascend refuses torchair together with enforce_eager ("Can't enable graph mode and eager mode")
    assert pre["enforce-eager"] is True and "torchair_graph_config" not in pre.get("additional-config", {})


def test_aclgraph_mode_writes_no_additional_config():
    roles = "serve { instances = 1  devices = 16  tp = 2  ep = 8  max_num_seqs = 16  chunked_prefill = 4k }"
    files = outputs_of(plan_text(model=DSV3, hardware=A2X2, roles=roles, extra="graph { mode = aclgraph }", env=""))
    assert "additional-config" not in role_toml(files, "serve")


@pytest.mark.parametrize("engine,key", [
    ('engine "vllm-ascend" { version = "v0.11.0" }', "rope_scaling"),
    ('engine "vllm-ascend" { version = "v0.23.0" }', "rope_parameters"),
])
def test_rope_scaling_becomes_hf_overrides(engine, key):
    model = 'model "qwen3-32b" { max_model_len = 64k  rope_scaling = 2 }'
    roles = "serve { instances = 2  devices = 4  tp = 4  chunked_prefill = 8k  max_num_seqs = 16 }"
    hw = 'hardware { system = "atlas-800-a2"  nodes = 1' + ('  cann = "9.1.0" }' if "v0.23" in engine else " }")
    doc = role_toml(outputs_of(plan_text(engine=engine, model=model, roles=roles, hardware=hw, env="")), "serve")
    rope = doc["hf-overrides"][key]
    assert rope["rope_type"] == "yarn" and rope["factor"] == 2
    # vLLM's derived limit is original × factor; it must cover max_model_len
    assert rope["original_max_position_embeddings"] * rope["factor"] >= doc["max-model-len"]
    assert set(doc["hf-overrides"]) == {key}


def test_qwen3_yarn_multiplies_its_native_32k_context():
    """Qwen3: 40,960 positions but 32,768 native; YaRN x4 reaches 131,072, not 163,840."""
    roles = "serve { instances = 2  devices = 4  tp = 4  chunked_prefill = 8k  max_num_seqs = 16 }"
    eng = 'engine "vllm-ascend" { version = "v0.23.0" }'
    hw = 'hardware { system = "atlas-800-a2"  nodes = 1  cann = "9.1.0" }'
    ok = plan_text(engine=eng, hardware=hw, model='model "qwen3-32b" { max_model_len = 128k  rope_scaling = 4 }', roles=roles, env="")
    rope = role_toml(outputs_of(ok), "serve")["hf-overrides"]["rope_parameters"]
    assert rope["original_max_position_embeddings"] == 32768
    over = plan_text(engine=eng, hardware=hw, model='model "qwen3-32b" { max_model_len = 140k  rope_scaling = 4 }', roles=roles, env="")
    errs = [d for d in compile_text(over).diagnostics if d.code.code == "SN5003"]
    assert errs and "32768 native positions" in errs[0].message and "131072" in errs[0].message


def test_rope_scaling_in_omni_infer():
    text = plan_text(engine='engine "omni-infer" {}', model='model "deepseek-r1" { quant = w8a8  max_model_len = 16k  rope_scaling = 40 }',
                     hardware='hardware { system = "atlas-900-a3-superpod"  nodes = 3 }',
                     roles="prefill { instances = 1  devices = 16  tp = 8  ep = 2  chunked_prefill = 8k }\n"
                           "  decode  { instances = 1  devices = 32  tp = 1  ep = 32  max_num_seqs = 16 }", env="")
    hf = json.loads(role_yaml(outputs_of(text), "decode")["hf-overrides"])
    assert hf["rope_scaling"]["factor"] == 40    # Omni-Infer runs vLLM 0.9.0: the pre-0.12 key


# --------------------------------------------------------------------------- 4. engine-specific options

ASCEND_ONLY = ("ASCEND_", "TORCHAIR_", "HCCL_")


def test_vllm_on_nvidia_gets_no_ascend_variables():
    text = plan_text(engine='engine "vllm" {}', model='model "qwen3-32b" { max_model_len = 8192 }',
                     hardware='hardware { system = "hgx-h100"  nodes = 1 }',
                     roles="serve { instances = 1  devices = 8  tp = 8  chunked_prefill = 8k  max_num_seqs = 16 }",
                     extra='optimize { micro_batch = 2  superkernel_layers = 10  graph_cache = "/tmp/gc" }', env="")
    files = outputs_of(text)
    exports = [ln.split()[1].split("=")[0] for n, t in files.items() if n.startswith("env/")
               for ln in t.splitlines() if ln.startswith("export ")]
    assert "CUDA_VISIBLE_DEVICES" in exports
    assert not [e for e in exports if e.startswith(ASCEND_ONLY)], exports


def test_vllm_ascend_torchair_graph_cache_writes_both_cache_keys():
    """v0.11's use_cached_graph is rebuilt unless use_cached_kv_cache_bytes is set too (issue 9)."""
    roles = "serve { instances = 1  devices = 16  tp = 2  ep = 8  max_num_seqs = 16  chunked_prefill = 4k }"
    files = outputs_of(plan_text(model=DSV3, hardware=A2X2, roles=roles, env="",
                                 extra='optimize { micro_batch = 2  graph_cache = "/data/tc" }  graph { mode = torchair }'))
    assert "export TORCHAIR_CACHE_HOME=/data/tc" in files["env/common.sh"]
    assert additional_config(files, "serve")["torchair_graph_config"] == {
        "enabled": True, "use_cached_graph": True, "use_cached_kv_cache_bytes": True}


@pytest.mark.parametrize("version,interval,path", [
    ("v0.11.0", "", ("init_redundancy_expert",)),
    ("v0.23.0", "  adjust_interval = 300", ("eplb_config", "num_redundant_experts")),
])
def test_redundant_experts_reach_vllm_ascend_as_a_total(version, interval, path):
    roles = "serve { instances = 1  devices = 16  tp = 2  ep = 8  max_num_seqs = 16  chunked_prefill = 4k }"
    hw = 'hardware { system = "atlas-800-a2"  nodes = 2' + ('  cann = "9.1.0" }' if version == "v0.23.0" else " }")
    files = outputs_of(plan_text(engine=f'engine "vllm-ascend" {{ version = "{version}" }}', model=DSV3, hardware=hw,
                                 roles=roles, env="", extra=f"optimize {{ omni_placement {{ redundant_experts = 1{interval} }} }}"))
    v = additional_config(files, "serve")
    for k in path:
        v = v[k]
    assert v == 1 * 2 * 8  # per device × tp × ep
    if version == "v0.23.0":
        assert additional_config(files, "serve")["eplb_config"]["dynamic_eplb"] is True


def test_v023_redundant_experts_without_dynamic_eplb_are_not_written_and_warned():
    """v0.23.0 reads eplb_config.num_redundant_experts only with dynamic_eplb (issue 9)."""
    roles = "serve { instances = 1  devices = 16  tp = 2  ep = 8  max_num_seqs = 16  chunked_prefill = 4k }"
    text = plan_text(engine='engine "vllm-ascend" { version = "v0.23.0" }', model=DSV3,
                     hardware='hardware { system = "atlas-800-a2"  nodes = 2  cann = "9.1.0" }', roles=roles, env="",
                     extra="optimize { omni_placement { redundant_experts = 1 } }")
    comp = compile_text(text)
    warn = [d for d in comp.diagnostics if d.code.code == "SN4015"]
    assert warn and "dynamic EPLB" in warn[0].message
    assert "eplb_config" not in additional_config(outputs_of(text), "serve")


def test_every_toml_key_is_an_argument_name():
    files = outputs_of(plan_text(hardware='hardware { system = "atlas-800-a2"  nodes = 1  cann = "8.3.RC2" }'))
    import re

    for role in ("prefill", "decode"):
        doc = role_toml(files, role)
        assert not {"ascend", "parallel", "scheduler", "device", "cann_version"} & set(doc)
        assert all(re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", k) for k in doc), sorted(doc)


# --------------------------------------------------------------------------- max_model_len = auto

@pytest.mark.parametrize("engine", ['engine "vllm-ascend" { version = "v0.23.0" }', 'engine "omni-infer" {}'])
def test_max_model_len_auto_is_not_passed(engine):
    """`max_model_len = auto` leaves the length to the engine (config.json), so no number is written."""
    model = 'model "qwen3-32b" { max_model_len = auto }'
    files = outputs_of(plan_text(engine=engine, model=model))
    for role in ("prefill", "decode"):
        assert "max-model-len" not in role_yaml(files, role), role
    assert not any("--max-model-len" in t for n, t in files.items() if n.startswith("launch/"))
    files = outputs_of(plan_text(engine=engine, model='model "qwen3-32b" { max_model_len = 16k }'))
    assert role_yaml(files, "prefill")["max-model-len"] == 16384


# --------------------------------------------------------------------------- speculative method spelling

MTP_PLAN = '''plan "t" {{
  model "{model}" {{ max_model_len = 16k }}
  hardware {{ system = "hgx-h200"  nodes = 2 }}
  engine "vllm" {{ version = "{version}" }}
  serve {{ devices = 16  tp = 8  dp = 2  expert_parallel = true  chunked_prefill = 4k }}
  speculative {{ method = mtp  draft_tokens = 1  acceptance = 0.8 }}
  workload {{ input {{ mean = 1k  max = 4k }}  output {{ mean = 1k  max = 4k }} }}
}}
'''


@pytest.mark.parametrize("version, method", [("0.10.0", "deepseek_mtp"), ("0.11.0", "mtp"), ("0.23.0", "mtp")])
def test_mtp_is_the_model_s_own_method_before_vllm_0_11(version, method):
    """vLLM 0.9/0.10 have no generic `mtp` (sncc/engines/data/speculative.toml): DeepSeek-V3-family
    checkpoints draft as `deepseek_mtp` there; from 0.11.0 the generic name is written."""
    files = outputs_of(MTP_PLAN.format(model="deepseek-r1", version=version))
    assert json.loads(role_yaml(files, "serve")["speculative-config"])["method"] == method


def test_omni_infer_vllm_0_9_spells_deepseek_mtp():
    from sncc.engines.registry import adapter_for

    a = adapter_for("omni-infer")
    assert a.speculative_method("mtp", a.vllm_version(None), "deepseek_v3")[0] == "deepseek_mtp"
    assert a.speculative_method("eagle3", "0.9.0", "deepseek_v3") == ("eagle3", "")
    assert a.speculative_method("mtp", "0.9.0", "qwen3_next")[0] == "mtp"   # SN4020 reports it
