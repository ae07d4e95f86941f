"""``eplb { }`` in each pinned release's own keys, or a diagnostic saying why not
(``[[eplb]]`` rows of each adapter's ``data/pins.toml``, :mod:`sncc.engines.eplb`).

Facts (read in the tagged sources, cited in the rows): vLLM refuses ``num_redundant_experts``
without ``--enable-eplb`` (vllm/config/parallel.py); vllm-ascend v0.11.0 places
``init_redundancy_expert`` slots statically and needs ``DYNAMIC_EPLB=true`` for ``dynamic_eplb``;
from v0.14.0rc1 ``eplb_config.num_redundant_experts`` is inert without ``dynamic_eplb``;
OmniPlacement counts redundant slots per rank and has no interval key.
"""

from __future__ import annotations

import json

from expect import additional_config, compile_text, outputs_of, role_yaml
from test_role_settings import exports

#: DeepSeek-V3 (256 routed experts) on one HGX H200 node: TP 1 × DP 8 with expert parallelism
H200 = '''plan "v3-h200" {{
  model "deepseek-v3" {{ weights = "/data/models/DeepSeek-V3"  quant = fp8 }}
  hardware {{ system = "hgx-h200"  nodes = 1 }}
  engine "vllm" {{ version = "{version}" }}
  serve {{ devices = 8  tp = 1  ep = 8  max_num_seqs = 64  max_num_batched_tokens = 8k  chunked_prefill = 8k }}
  {eplb}
  workload {{ requests = 500  concurrency = 64  input {{ mean = 2k  max = 8k }}  output {{ mean = 512  max = 2k }} }}
}}'''

#: DeepSeek-R1 W8A8 aggregated on two Atlas 800 A2 nodes: TP 4 × DP 4 = 16 devices (vllm-ascend's
#: DeepSeek-R1 tutorial layout, max-model-len 16k)
A2 = '''plan "r1-a2" {{
  model "deepseek-r1" {{ weights = "/data/models/DeepSeek-R1-W8A8"  quant = w8a8  max_model_len = 16k }}
  hardware {{ system = "atlas-800-a2"  nodes = {nodes}  cann = "{cann}" }}
  engine "vllm-ascend" {{ version = "{version}" }}
  {roles}
  {eplb}
  workload {{ requests = 500  concurrency = 64  input {{ mean = 2k  max = 8k }}  output {{ mean = 512  max = 2k }} }}
  env {{ HCCL_BUFFSIZE = 1024 }}
}}'''
SERVE = "serve { devices = 16  tp = 4  ep = 4  max_num_seqs = 16  max_num_batched_tokens = 4k  chunked_prefill = 4k }"

V011 = {"version": "v0.11.0", "cann": "8.3.RC2", "nodes": 2, "roles": SERVE}
V023 = {"version": "v0.23.0", "cann": "9.1.0", "nodes": 2, "roles": SERVE}


def codes(text: str) -> list[tuple[str, str, str]]:
    comp = compile_text(text)
    return [(d.code.code, d.severity, d.message) for d in comp.diagnostics
            if d.code.code in ("SN4015", "SN4017", "SN4041")]


# --------------------------------------------------------------------------- vLLM (NVIDIA)

def test_vllm_writes_enable_eplb_and_its_config():
    for version in ("0.11.0", "0.23.0"):
        text = H200.format(version=version, eplb="eplb { redundant_experts = 32  dynamic = true  interval = 3000  window = 1000 }")
        assert codes(text) == []
        y = role_yaml(outputs_of(text), "serve")
        assert y["enable-eplb"] is True
        assert json.loads(y["eplb-config"]) == {"num_redundant_experts": 32, "step_interval": 3000, "window_size": 1000}


def test_vllm_refuses_redundant_experts_without_eplb():
    """vLLM raises "num_redundant_experts is set to 32 but EPLB is not enabled": one error (SN3025,
    the checks' rule), none from the eplb table, and lowering writes nothing."""
    from sncc.lowering import lower

    text = H200.format(version="0.23.0", eplb="eplb { redundant_experts = 32 }")
    comp = compile_text(text)
    assert [(d.code.code, d.severity) for d in comp.diagnostics if d.is_error] == [("SN3025", "error")]
    assert codes(text) == []
    args = {a.name for r in lower(comp.plan, comp.facts).roles for a in r.args}
    assert not {"enable-eplb", "eplb-config"} & args
    fixed = text.replace("redundant_experts = 32 }", "redundant_experts = 32  dynamic = true }")
    assert codes(fixed) == [] and not [d for d in compile_text(fixed).diagnostics if d.is_error]


def test_vllm_interval_without_dynamic_is_a_warning_and_not_written():
    text = H200.format(version="0.23.0", eplb="eplb { interval = 500 }")
    (got,) = codes(text)
    assert got[:2] == ("SN4015", "warning")
    y = role_yaml(outputs_of(text), "serve")
    assert "eplb-config" not in y and "enable-eplb" not in y


def test_eplb_on_a_role_without_expert_parallelism():
    text = H200.format(version="0.23.0", eplb="eplb { redundant_experts = 8  dynamic = true }")
    text = text.replace("ep = 8", "dp = 8  expert_parallel = false")
    got = codes(text)
    assert got and all(c == "SN4017" for c, *_ in got) and "no expert parallelism" in got[0][2]


# --------------------------------------------------------------------------- vllm-ascend

def test_v011_places_redundant_experts_statically():
    text = A2.format(**V011, eplb="eplb { redundant_experts = 16 }")
    assert codes(text) == []
    files = outputs_of(text)
    ac = additional_config(files, "serve")
    assert ac["init_redundancy_expert"] == 16 and "dynamic_eplb" not in ac
    assert "DYNAMIC_EPLB" not in "".join(t for n, t in files.items() if n.startswith("env/"))


def test_v011_dynamic_eplb_exports_dynamic_eplb_and_paces_updates():
    text = A2.format(**V011, eplb="eplb { redundant_experts = 16  dynamic = true  interval = 400 }")
    assert codes(text) == []
    files = outputs_of(text)
    ac = additional_config(files, "serve")
    assert ac["init_redundancy_expert"] == 16 and ac["dynamic_eplb"] is True and ac["num_iterations_eplb_update"] == 400
    assert exports(files["env/serve-0-node0.sh"])["DYNAMIC_EPLB"] == "true"
    assert "DYNAMIC_EPLB" not in files["env/common.sh"]


def test_v011_has_no_window_key():
    text = A2.format(**V011, eplb="eplb { dynamic = true  window = 100 }")
    (got,) = codes(text)
    assert got[0] == "SN4041" and "window = 100" in got[2]
    assert "window" not in json.dumps(additional_config(outputs_of(text), "serve"))


def test_v023_writes_eplb_config():
    text = A2.format(**V023, eplb="eplb { redundant_experts = 16  dynamic = true  interval = 600 }")
    assert codes(text) == []
    files = outputs_of(text)
    assert additional_config(files, "serve")["eplb_config"] == {
        "num_redundant_experts": 16, "dynamic_eplb": True, "expert_heat_collection_interval": 600}
    assert exports(files["env/serve-0-node1.sh"])["DYNAMIC_EPLB"] == "true"
    assert "init_redundancy_expert" not in files["serve.yaml"]


def test_v023_redundant_experts_without_dynamic_are_inert():
    text = A2.format(**V023, eplb="eplb { redundant_experts = 16 }")
    (got,) = codes(text)
    assert got[:2] == ("SN4015", "warning") and "dynamic EPLB" in got[2]
    assert "eplb_config" not in additional_config(outputs_of(text), "serve")


def test_role_eplb_overrides_the_plan_s():
    roles = ("prefill { devices = 16  tp = 4  ep = 4  max_num_batched_tokens = 16k  max_num_seqs = 8  eplb { redundant_experts = 16 } }\n"
             "  decode { devices = 16  tp = 4  ep = 4  max_num_seqs = 16  max_num_batched_tokens = 256 }")
    text = A2.format(**{**V011, "nodes": 4, "roles": roles}, eplb="eplb { redundant_experts = 32 }")
    assert codes(text) == []
    files = outputs_of(text)
    assert additional_config(files, "prefill")["init_redundancy_expert"] == 16
    assert additional_config(files, "decode")["init_redundancy_expert"] == 32


# --------------------------------------------------------------------------- Omni-Infer

OMNI = '''plan "r1-omni" {{
  model "deepseek-r1" {{ weights = "/data/models/DeepSeek-R1-W8A8"  quant = w8a8 }}
  hardware {{ system = "atlas-900-a3-superpod"  nodes = 3  cann = "8.3.RC2" }}
  engine "omni-infer" {{}}
  prefill {{ instances = 1  devices = 16  tp = 8  ep = 2  max_num_batched_tokens = 16k  max_num_seqs = 16 }}
  decode  {{ instances = 1  devices = 32  tp = 1  ep = 32  max_num_seqs = 32  max_num_batched_tokens = 256 }}
  {eplb}
  workload {{ requests = 500  concurrency = 64  input {{ mean = 2k  max = 8k }}  output {{ mean = 512  max = 2k }} }}
  env {{ HCCL_BUFFSIZE = 1024 }}
}}'''


def test_omni_placement_counts_redundant_slots_per_rank():
    import yaml

    text = OMNI.format(eplb="eplb { redundant_experts = 32  dynamic = true }")
    assert codes(text) == []
    files = outputs_of(text)
    dec = yaml.safe_load(files["omni_placement.decode.yaml"])
    pre = yaml.safe_load(files["omni_placement.prefill.yaml"])
    assert dec["max_redundant_per_rank"] == 1 and dec["enable_dynamic"] is True     # 32 over 32 ranks
    assert pre["max_redundant_per_rank"] == 2 and pre["enable_dynamic"] is True     # 32 over 16 ranks
    extra = json.loads(files["model_extra_config.decode.json"])
    assert extra["operator_optimizition_config"]["use_omni_placement"] is True


def test_omni_redundant_experts_that_do_not_split_per_rank_are_refused():
    text = OMNI.format(eplb="eplb { redundant_experts = 24 }")
    got = codes(text)
    assert [(c, s) for c, s, _ in got] == [("SN4017", "error")] and "not a multiple of the 16 ranks" in got[0][2]
