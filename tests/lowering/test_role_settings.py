"""Per-role settings reach each role's servers: ``env { }`` and ``speculative { }`` inside a role
merge over the plan's (docs/design.md §2.3), and lowering reads them from the facts layer only."""

from __future__ import annotations

import json
import re

from expect import compile_text, deployment_of, outputs_of, role_yaml

#: DeepSeek-V4-Flash P/D on an A3 SuperPoD, vllm-ascend v0.23.0 (the golden vllm-ascend-v4flash-pd, trimmed)
PD = '''plan "v4flash-pd" {{
  model "deepseek-v4-flash" {{ weights = "/data/models/DeepSeek-V4-Flash-W8A8"  quant = w8a8 }}
  hardware {{ system = "atlas-900-a3-superpod"  nodes = 6  cann = "9.1.0" }}
  engine "vllm-ascend" {{ version = "v0.23.0" }}
  prefill {{ instances = 2  devices = 16  tp = 8  ep = 2  max_num_batched_tokens = 16k  chunked_prefill = 8k  max_num_seqs = 16 {prefill} }}
  decode  {{ instances = 1  devices = 64  tp = 8  ep = 8  max_num_seqs = 64  max_num_batched_tokens = 256 {decode} }}
  kv_cache {{ block_size = 128 }}
  {top}
  workload {{ requests = 2000  concurrency = 512  input {{ mean = 8k  max = 8k }}  output {{ mean = 1k  max = 1k }} }}
}}'''


def plan(prefill: str = "", decode: str = "", top: str = "") -> str:
    return PD.format(prefill=prefill, decode=decode, top=top)


def exports(text: str) -> dict[str, str]:
    """``{NAME: value}`` of the ``export`` lines of an env file (later lines win, as in the shell)."""
    out = {}
    for ln in text.splitlines():
        m = re.match(r"export ([A-Za-z_][A-Za-z0-9_]*)=(\S*)", ln)
        if m:
            out[m.group(1)] = m.group(2)
    return out


def server_env(files: dict[str, str], prefix: str) -> dict[str, str]:
    """What a server of ``prefix`` (``decode-0-node2-rank0``) sees: env/common.sh, then its own file."""
    return {**exports(files["env/common.sh"]), **exports(files[f"env/{prefix}.sh"])}


def test_a_role_env_wins_for_that_role_only():
    files = outputs_of(plan(decode="env { HCCL_BUFFSIZE = 2048  TASK_QUEUE_ENABLE = 2 }",
                            top="env { HCCL_BUFFSIZE = 1024 }"))
    assert exports(files["env/common.sh"])["HCCL_BUFFSIZE"] == "1024"
    dec = server_env(files, "decode-0-node2-rank0")
    assert dec["HCCL_BUFFSIZE"] == "2048" and dec["TASK_QUEUE_ENABLE"] == "2"
    pre = server_env(files, "prefill-0-node0-rank0")
    # the decode role's 2 does not leak: prefill keeps env/common.sh's value (vllm-ascend v0.23.0's tutorials' 1)
    assert pre["HCCL_BUFFSIZE"] == "1024" and pre["TASK_QUEUE_ENABLE"] == "1"
    assert "# from decode.env (over the plan env in env/common.sh)" in files["env/decode-0-node2-rank0.sh"]


def test_a_role_device_mask_maps_that_role_s_slices():
    """Qwen3-32B TP 8 on half an A3 node: the plan's mask shows devices 0-7, the role's own mask
    8-15, and the role's servers get the role's."""
    text = ('plan "q" {\n  model "qwen3-32b" { quant = bf16 }\n'
            '  hardware { system = "atlas-900-a3-superpod"  nodes = 1  cann = "9.1.0" }\n'
            '  engine "vllm-ascend" { version = "v0.23.0" }\n'
            '  serve { devices = 8  tp = 8  max_num_seqs = 32  max_num_batched_tokens = 8k  chunked_prefill = 8k\n'
            '          env { ASCEND_RT_VISIBLE_DEVICES = "8,9,10,11,12,13,14,15" } }\n'
            '  workload { requests = 100  concurrency = 16  input { mean = 2k  max = 8k }  output { mean = 512  max = 2k } }\n'
            '  env { ASCEND_RT_VISIBLE_DEVICES = "0,1,2,3,4,5,6,7" }\n}\n')
    dep = deployment_of(text)
    (p,) = dep.processes
    assert {v.name: v.value for v in p.env}["ASCEND_RT_VISIBLE_DEVICES"] == "8,9,10,11,12,13,14,15"
    assert "ASCEND_RT_VISIBLE_DEVICES" not in {v.name for v in dep.common_env}


def test_speculative_off_in_one_role():
    # off on decode: a decode that drafts pulls the draft layer's KV from prefill, so prefill cannot be
    # the side without speculation on this connector (SN3027)
    files = outputs_of(plan(decode="speculative { method = none }",
                            top="speculative { method = mtp  draft_tokens = 1  acceptance = 0.8 }"))
    assert "speculative-config" not in role_yaml(files, "decode")
    spec = json.loads(role_yaml(files, "prefill")["speculative-config"])
    assert spec == {"method": "mtp", "num_speculative_tokens": 1}


def test_speculative_in_one_role_only_and_merged_key_by_key():
    files = outputs_of(plan(decode="speculative { draft_tokens = 2 }",
                            top="speculative { method = mtp  draft_tokens = 1  acceptance = 0.8 }"))
    pre = json.loads(role_yaml(files, "prefill")["speculative-config"])
    dec = json.loads(role_yaml(files, "decode")["speculative-config"])
    assert pre["num_speculative_tokens"] == 1 and dec["num_speculative_tokens"] == 2
    assert dec["method"] == pre["method"]
    assert "decode.speculative over the plan's" in files["decode.yaml"]
    only = outputs_of(plan(prefill="speculative { method = mtp  draft_tokens = 1  acceptance = 0.8 }"))
    assert "speculative-config" not in role_yaml(only, "decode") and "speculative-config" in role_yaml(only, "prefill")


def test_lowering_reads_role_facts_not_the_plan():
    """The deployment's parallel sizes are the facts layer's (``dp`` in the new spelling too)."""
    comp = compile_text(plan().replace("tp = 8  ep = 8", "tp = 8  dp = 8  expert_parallel = true"))
    assert not [d for d in comp.diagnostics if d.is_error], [d.message for d in comp.diagnostics if d.is_error]
    rf = comp.facts.roles["decode"]
    role = comp.deployment.role("decode")
    assert (role.tp, role.dp, role.devices) == (rf.tp, rf.dp, rf.devices) == (8, 8, 64)
    assert role.arg("enable-expert-parallel") is True
    assert len(comp.deployment.role("decode").instances[0].ranks) == rf.dp
