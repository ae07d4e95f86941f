"""SN4009's same-host environment (software.toml [[kv_connectors]] same_host_env, vllm-ascend#4866):
Mooncake on Ascend with prefill and decode on one host needs HCCL_INTRA_ROCE_ENABLE=1 in every
prefill and decode server's environment: the plan's `env` with each role's `env` over it."""
from __future__ import annotations

from expect import compile_text

FIXED = """\
plan "qwen3-32b-1p1d" {
  model "qwen3-32b" {}
  hardware { system = "atlas-800-a2"  nodes = 1  cann = "8.3.RC2" }
  engine "vllm-ascend" { version = "v0.11.0" }
  prefill {
    devices = 4
    tp = 4
    max_num_batched_tokens = 8k
    chunked_prefill = 8k
%(p)s  }
  decode { devices = 4  tp = 4  max_num_seqs = 16%(d)s }
  kv_transfer { connector = mooncake  use_ascend_direct = true  decode_tp = 4 }
  workload {
    requests = 200
    concurrency = 16
    input { mean = 2k  max = 6k }
    output { mean = 512  max = 2k }
  }
%(env)s}
"""
#: the prefill role's own `env` (a line of its block)
P_ENV = "    env { HCCL_INTRA_ROCE_ENABLE = 1 }\n"


def _sn4009(p: str = "", d: str = "", env: str = "") -> list:
    comp = compile_text(FIXED % {"p": p, "d": d, "env": env})
    return [x for x in comp.diagnostics if x.code.code == "SN4009"]


def test_plan_env_is_accepted_and_its_absence_refused_once():
    assert _sn4009(env="  env { HCCL_INTRA_ROCE_ENABLE = 1 }\n") == []
    (only,) = _sn4009()
    assert "needs `HCCL_INTRA_ROCE_ENABLE=1`" in only.message and only.path == ("env", "HCCL_INTRA_ROCE_ENABLE")


def test_both_roles_env_is_accepted():
    """Each server's environment is the plan's `env` with its role's over it: both roles setting it
    is what the connector needs (refused before: the check read the plan's `env` only)."""
    assert _sn4009(p=P_ENV, d="  env { HCCL_INTRA_ROCE_ENABLE = 1 }") == []


def test_a_role_env_overriding_the_plan_env_is_refused_at_the_role():
    """The plan's `env` says 1 but the decode role's says 0: its servers run with 0 (passed before)."""
    (only,) = _sn4009(p=P_ENV, d="  env { HCCL_INTRA_ROCE_ENABLE = 0 }", env="  env { HCCL_INTRA_ROCE_ENABLE = 1 }\n")
    assert "not `0` (the `decode` role's `env`)" in only.message
    assert only.path == ("decode", "env", "HCCL_INTRA_ROCE_ENABLE")
    assert only.span is not None and only.span.end - only.span.start == 1   # at the role's `0`


def test_one_role_lacking_it_is_refused_once():
    (only,) = _sn4009(p=P_ENV)
    assert only.path == ("env", "HCCL_INTRA_ROCE_ENABLE")
