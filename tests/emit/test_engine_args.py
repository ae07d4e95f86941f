"""Emitted configs that pass ``sncc check`` must also start the engine.

Each test is one finding of a fresh-user run: a plan that ``sncc check``
accepts (no errors), whose outputs must validate against the shipped schemas
*and* keep the engine's own start-up rules or carry the option the plan asked
for.
"""

from __future__ import annotations

import json

import pytest

from sncc.compiler import compile_file
from sncc.emit import emit_all
from sncc.emit.validate import validate_outputs
from sncc.emit.vllm_ascend import INFORMATIONAL
from sncc.source import SourceFile

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib


def build(text: str) -> dict[str, str]:
    """Outputs of plan ``text``; fails the test when check reports an error or an output is invalid."""
    comp = compile_file(SourceFile("plan.sn", text))
    errors = [d for d in comp.diagnostics if d.severity == "error"]
    assert not errors, [f"{d.code} {d.message}" for d in errors]
    files = emit_all(comp.plan, comp.resolved)
    assert validate_outputs(files) == []
    return files


def toml(files: dict[str, str], name: str) -> dict:
    return tomllib.loads(files[name])


def plan_text(engine: str = 'engine "vllm-ascend" { version = "v0.11.0" }', model: str = 'model "qwen3-32b" { max_model_len = 16k }',
              roles: str = "", extra: str = "", hardware: str = 'hardware { system = "atlas-800-a2"  nodes = 1 }',
              env: str = "env { HCCL_INTRA_ROCE_ENABLE = 1 }") -> str:
    roles = roles or ("prefill { instances = 1  devices = 4  tp = 4  chunked_prefill = 4k }\n"
                      "  decode  { instances = 1  devices = 4  tp = 4  max_num_seqs = 32 }")
    return (f'plan "t" {{\n  {model}\n  {hardware}\n  {engine}\n  {roles}\n  {extra}\n  {env}\n'
            "  workload { input { mean = 1k  max = 4k }  output { mean = 1k  max = 4k } }\n}\n")


def vllm_accepts_budget(sched: dict, max_model_len: int) -> bool:
    """vLLM ``SchedulerConfig.verify_max_model_len`` (domain-facts §3.2): with chunked prefill off,
    ``max_num_batched_tokens`` must be at least ``max_model_len``."""
    return sched["enable_chunked_prefill"] or sched["max_num_batched_tokens"] >= max_model_len


# --------------------------------------------------------------------------- 1. decode chunked prefill

def test_decode_role_turns_chunked_prefill_on():
    files = build(plan_text())
    for name in ("vllm-ascend.prefill.toml", "vllm-ascend.decode.toml"):
        doc = toml(files, name)
        assert vllm_accepts_budget(doc["scheduler"], doc["model"]["max_model_len"]), name
    dec = toml(files, "vllm-ascend.decode.toml")["scheduler"]
    assert dec["enable_chunked_prefill"] is True
    assert "long_prefill_token_threshold" not in dec
    assert "never prefills" in files["vllm-ascend.decode.toml"]


def test_decode_explicit_off_is_kept():
    roles = ("prefill { instances = 1  devices = 4  tp = 4  chunked_prefill = 4k }\n"
             "  decode  { instances = 1  devices = 4  tp = 4  max_num_seqs = 32  chunked_prefill = off  max_num_batched_tokens = 16k }")
    dec = toml(build(plan_text(roles=roles)), "vllm-ascend.decode.toml")["scheduler"]
    assert dec["enable_chunked_prefill"] is False
    assert vllm_accepts_budget(dec, 16384)


def test_omni_infer_decode_turns_chunked_prefill_on():
    text = plan_text(engine='engine "omni-infer" {}', model='model "deepseek-r1" { quant = w8a8  max_model_len = 16k }',
                     hardware='hardware { system = "atlas-900-a3-superpod"  nodes = 3 }',
                     roles="prefill { instances = 1  devices = 16  tp = 8  ep = 2  chunked_prefill = 8k }\n"
                           "  decode  { instances = 1  devices = 32  tp = 1  ep = 32  max_num_seqs = 16 }", env="")
    doc = json.loads(build(text)["omni-infer.json"])
    assert doc["decode"]["enable_chunked_prefill"] is True
    for role in ("prefill", "decode"):
        assert vllm_accepts_budget(doc[role], doc["max_model_len"]), role


# --------------------------------------------------------------------------- 2. draft_model speculation

def test_draft_model_builds_with_its_model():
    extra = ('speculative { method = draft_model  model = "/data/models/Qwen3-0.6B"  draft_tokens = 3  acceptance = 0.7  draft_cost = 0.05 }')
    roles = "serve { instances = 2  devices = 4  tp = 4  chunked_prefill = 4k  max_num_seqs = 8 }"
    files = build(plan_text(roles=roles, extra=extra, env=""))
    sp = toml(files, "vllm-ascend.toml")["speculative_config"]
    assert sp == {"method": "draft_model", "num_speculative_tokens": 3, "model": "/data/models/Qwen3-0.6B"}


def test_draft_model_without_model_says_what_is_missing():
    """check refuses it (SN4018: vLLM will not start without speculative_config.model); the
    emitter, called anyway, still says what is missing instead of crashing."""
    extra = "speculative { method = draft_model  draft_tokens = 3  acceptance = 0.7  draft_cost = 0.05 }"
    roles = "serve { instances = 2  devices = 4  tp = 4  chunked_prefill = 4k  max_num_seqs = 8 }"
    comp = compile_file(SourceFile("plan.sn", plan_text(roles=roles, extra=extra, env="")))
    assert [d.code.code for d in comp.diagnostics if d.severity == "error"] == ["SN4018"]
    files = emit_all(comp.plan, comp.resolved)
    assert "set speculative.model" in files["vllm-ascend.toml"]


# --------------------------------------------------------------------------- 3. graph mode and rope scaling

DSV3 = 'model "deepseek-v3" { quant = w8a8  max_model_len = 8192 }'
A2X2 = 'hardware { system = "atlas-800-a2"  nodes = 2 }'


def test_torchair_mode_writes_torchair_graph_config_for_graph_roles_only():
    roles = ("prefill { instances = 1  devices = 16  tp = 4  ep = 4  chunked_prefill = 4k }\n"
             "  decode  { instances = 1  devices = 16  tp = 2  ep = 8  max_num_seqs = 16 }")
    files = build(plan_text(model=DSV3, hardware='hardware { system = "atlas-800-a2"  nodes = 4 }', roles=roles, extra="graph { mode = torchair }", env=""))
    dec = toml(files, "vllm-ascend.decode.toml")["ascend"]
    assert dec["enforce_eager"] is False
    assert dec["additional_config"]["torchair_graph_config"] == {"enabled": True}
    pre = toml(files, "vllm-ascend.prefill.toml")["ascend"]
    # vllm-ascend refuses torchair together with enforce_eager ("Can't enable graph mode and eager mode")
    assert pre["enforce_eager"] is True and "torchair_graph_config" not in pre.get("additional_config", {})


def test_aclgraph_mode_writes_no_additional_config():
    roles = "serve { instances = 1  devices = 16  tp = 2  ep = 8  max_num_seqs = 16  chunked_prefill = 4k }"
    files = build(plan_text(model=DSV3, hardware=A2X2, roles=roles, extra="graph { mode = aclgraph }", env=""))
    assert "additional_config" not in toml(files, "vllm-ascend.toml")["ascend"]


@pytest.mark.parametrize("engine,key", [
    ('engine "vllm-ascend" { version = "v0.11.0" }', "rope_scaling"),
    ('engine "vllm-ascend" { version = "v0.18.0" }', "rope_parameters"),
])
def test_rope_scaling_becomes_hf_overrides(engine, key):
    model = 'model "qwen3-32b" { max_model_len = 64k  rope_scaling = 2 }'
    roles = "serve { instances = 2  devices = 4  tp = 4  chunked_prefill = 8k  max_num_seqs = 16 }"
    doc = toml(build(plan_text(engine=engine, model=model, roles=roles, env="")), "vllm-ascend.toml")
    rope = doc["model"]["hf_overrides"][key]
    assert rope["rope_type"] == "yarn" and rope["factor"] == 2
    # vLLM's derived limit is original × factor; it must cover max_model_len
    assert rope["original_max_position_embeddings"] * rope["factor"] >= doc["model"]["max_model_len"]
    assert set(doc["model"]["hf_overrides"]) == {key}


def test_qwen3_yarn_multiplies_its_native_32k_context():
    """Qwen3: 40,960 positions but 32,768 native; YaRN x4 reaches 131,072, not 163,840."""
    roles = "serve { instances = 2  devices = 4  tp = 4  chunked_prefill = 8k  max_num_seqs = 16 }"
    eng = 'engine "vllm-ascend" { version = "v0.18.0" }'
    ok = plan_text(engine=eng, model='model "qwen3-32b" { max_model_len = 128k  rope_scaling = 4 }', roles=roles, env="")
    rope = toml(build(ok), "vllm-ascend.toml")["model"]["hf_overrides"]["rope_parameters"]
    assert rope["original_max_position_embeddings"] == 32768
    over = plan_text(engine=eng, model='model "qwen3-32b" { max_model_len = 140k  rope_scaling = 4 }', roles=roles, env="")
    comp = compile_file(SourceFile("plan.sn", over))
    errs = [d for d in comp.diagnostics if d.code.code == "SN5003"]
    assert errs and "32768 native positions" in errs[0].message and "131072" in errs[0].message


def test_rope_scaling_in_omni_infer():
    text = plan_text(engine='engine "omni-infer" {}', model='model "deepseek-r1" { quant = w8a8  max_model_len = 16k  rope_scaling = 40 }',
                     hardware='hardware { system = "atlas-900-a3-superpod"  nodes = 3 }',
                     roles="prefill { instances = 1  devices = 16  tp = 8  ep = 2  chunked_prefill = 8k }\n"
                           "  decode  { instances = 1  devices = 32  tp = 1  ep = 32  max_num_seqs = 16 }", env="")
    doc = json.loads(build(text)["omni-infer.json"])
    assert doc["hf_overrides"]["rope_scaling"]["factor"] == 40


# --------------------------------------------------------------------------- 4. engine-specific options

ASCEND_ONLY = ("ASCEND_", "TORCHAIR_", "HCCL_")


def test_env_sh_for_vllm_on_nvidia_has_no_ascend_variables():
    text = plan_text(engine='engine "vllm" {}', model='model "qwen3-32b" { max_model_len = 8192 }',
                     hardware='hardware { system = "hgx-h100"  nodes = 1 }',
                     roles="serve { instances = 1  devices = 8  tp = 8  chunked_prefill = 8k  max_num_seqs = 16 }",
                     extra='optimize { micro_batch = 2  superkernel_layers = 10  graph_cache = "/tmp/gc" }', env="")
    env = build(text)["env.sh"]
    exports = [ln.split()[1].split("=")[0] for ln in env.splitlines() if ln.startswith("export ")]
    assert "CUDA_VISIBLE_DEVICES" in exports
    assert not [e for e in exports if e.startswith(ASCEND_ONLY)], exports


def test_env_sh_for_vllm_ascend_has_no_omni_infer_variables():
    roles = "serve { instances = 1  devices = 16  tp = 2  ep = 8  max_num_seqs = 16  chunked_prefill = 4k }"
    files = build(plan_text(model=DSV3, hardware=A2X2, roles=roles, env="",
                            extra='optimize { micro_batch = 2  graph_cache = "/data/tc" }  graph { mode = torchair }'))
    env = files["env.sh"]
    assert "ASCEND_OMNI_" not in env and "TORCHAIR_CACHE_DIR" not in env
    assert "export TORCHAIR_CACHE_HOME=/data/tc" in env
    tg = toml(files, "vllm-ascend.toml")["ascend"]["additional_config"]["torchair_graph_config"]
    assert tg == {"enabled": True, "use_cached_graph": True}


@pytest.mark.parametrize("version,path", [
    ("v0.11.0", ("init_redundancy_expert",)),
    ("v0.23.0", ("eplb_config", "num_redundant_experts")),
])
def test_redundant_experts_reach_vllm_ascend_as_a_total(version, path):
    roles = "serve { instances = 1  devices = 16  tp = 2  ep = 8  max_num_seqs = 16  chunked_prefill = 4k }"
    files = build(plan_text(engine=f'engine "vllm-ascend" {{ version = "{version}" }}', model=DSV3, hardware=A2X2,
                            roles=roles, env="", extra="optimize { omni_placement { redundant_experts = 1 } }"))
    v = toml(files, "vllm-ascend.toml")["ascend"]["additional_config"]
    for k in path:
        v = v[k]
    assert v == 1 * 2 * 8  # per device × tp × ep


# --------------------------------------------------------------------------- 5. a truthful TOML header

#: vLLM engine / server argument names sncc writes as plain keys (vllm/engine/arg_utils.py EngineArgs,
#: vllm/entrypoints/openai/cli_args.py for host/port)
VLLM_ARGS = {
    "model", "served_model_name", "dtype", "quantization", "max_model_len", "trust_remote_code",
    "tensor_parallel_size", "data_parallel_size", "data_parallel_size_local", "pipeline_parallel_size",
    "enable_expert_parallel", "enforce_eager", "block_size", "gpu_memory_utilization", "kv_cache_dtype",
    "max_num_seqs", "max_num_batched_tokens", "enable_chunked_prefill", "long_prefill_token_threshold",
    "host", "port",
}
#: tables that are one JSON-valued argument each
VLLM_JSON_ARGS = {"hf_overrides", "additional_config", "kv_transfer_config", "speculative_config", "compilation_config"}


def test_toml_header_and_informational_keys():
    files = build(plan_text(hardware='hardware { system = "atlas-800-a2"  nodes = 1  cann = "8.3.RC2" }'))
    for name in ("vllm-ascend.prefill.toml", "vllm-ascend.decode.toml"):
        text = files[name]
        assert "(any section)" not in text
        assert "informational" in text.split("\n\n", 1)[0]
        doc = tomllib.loads(text)
        for section, table in doc.items():
            if section in VLLM_JSON_ARGS:
                continue
            for key, value in table.items():
                if key in INFORMATIONAL:
                    line = next(ln for ln in text.splitlines() if ln.startswith(f"{key} ="))
                    assert "informational, not a vLLM argument" in line
                else:
                    assert key in VLLM_ARGS | VLLM_JSON_ARGS, (section, key)
        assert set(INFORMATIONAL) <= set(doc["ascend"])
