"""The MoE all-to-all backend each role runs (``RoleFacts.all2all_backend``) and the EP cost it gets.

vLLM 0.11.0 runs ``allgather_reducescatter`` unless ``VLLM_ALL2ALL_BACKEND`` says otherwise (vllm 0.11.0
wheel ``vllm/envs.py``: ``env_with_choices("VLLM_ALL2ALL_BACKEND", "allgather_reducescatter", [...])``);
0.9.0 runs ``naive`` (``vllm/envs.py``, ``cuda_communicator.py``); from 0.23.0 the backend is the
``--all2all-backend`` argument (default ``allgather_reducescatter``), which sncc does not write.  The
step cost prices that backend (``sncc.cost.comm.ep_exchange_time``): the DeepEP kernels the H200
profile was measured on only when the plan chooses them."""

from __future__ import annotations

import pytest
from expect import ROOT, compile_text

from sncc.cost import comm
from sncc.engines.registry import adapter_for

BROKEN = (ROOT / "examples/broken/all2all-backend-not-a-choice.sn").read_text()
FIXED = (ROOT / "tests/cases/fixed/all2all-backend-not-a-choice.sn").read_text()
DEFAULT = FIXED.replace('  env { VLLM_ALL2ALL_BACKEND = "deepep_low_latency" }\n', "")


def test_each_release_reads_its_default_and_choices():
    a = adapter_for("vllm")
    assert (a.all2all_release("0.11.0").where, a.all2all_release("0.11.0").default) == ("env", "allgather_reducescatter")
    assert "deepep_low_latency" in a.all2all_release("0.11.0").choices
    assert a.all2all_release("0.23.0").where == "argument"            # --all2all-backend, from the manifest
    assert a.all2all_release("0.23.0").default == "allgather_reducescatter"
    assert adapter_for("vllm-ascend").all2all_release("v0.11.0") is None   # its own fused MoE communication
    assert adapter_for("omni-infer").all2all_release(None) is None


def test_the_role_fact_is_the_plan_env_else_the_release_default():
    rf = compile_text(DEFAULT).resolved.roles["serve"]
    assert rf.all2all_backend == "allgather_reducescatter" and "default" in rf.notes["all2all_backend"]
    rf = compile_text(FIXED).resolved.roles["serve"]
    assert rf.all2all_backend == "deepep_low_latency" and "plan env" in rf.notes["all2all_backend"]
    # 0.23.0 reads no VLLM_ALL2ALL_BACKEND: the argument's default runs
    rf = compile_text(FIXED.replace('version = "0.11.0"', 'version = "0.23.0"')).resolved.roles["serve"]
    assert rf.all2all_backend == "allgather_reducescatter" and "not read" in rf.notes["all2all_backend"]
    bad = compile_text(BROKEN)
    assert [d.code.code for d in bad.diagnostics if d.is_error] == ["SN4082"]
    dense = compile_text(DEFAULT.replace('"deepseek-r1" { quant = fp8 }', '"llama-3.1-70b" { quant = bf16 }')
                         .replace("  expert_parallel = true", "")).resolved.roles["serve"]
    assert dense.all2all_backend is None


def test_the_collective_backend_moves_every_token_to_every_rank():
    kw = dict(bw_dispatch=40e9, bw_combine=40e9, alpha_a2a=20e-6, link_bw=50e9, hop_lat=2e-6, alpha_coll=20e-6,
              eta_coll=0.8)
    group, ep, k, h = 2048.0, 16, 8, 7168
    a2a = comm.ep_exchange_time("deepep_low_latency", group, group / ep, h, k, ep, 1.0, 2.0, **kw)
    assert a2a == comm.ep_exchange_time(None, group, group / ep, h, k, ep, 1.0, 2.0, **kw)
    agrs = comm.ep_exchange_time("allgather_reducescatter", group, group / ep, h, k, ep, 1.0, 2.0, **kw)
    md, mc = group * h * 1.0, group * h * 2.0
    assert agrs == pytest.approx(comm.allgather_time(md, ep, 50e9, 2e-6, 20e-6, 0.8)
                                 + comm.allgather_time(mc, ep, 50e9, 2e-6, 20e-6, 0.8))
    naive = comm.ep_exchange_time("naive", group, group / ep, h, k, ep, 1.0, 2.0, **kw)
    assert naive > agrs > a2a


def test_the_decode_step_prices_the_backend_the_role_runs():
    from sncc.sim.engine.run import prepare
    from sncc.sim.from_plan import spec_from_plan

    def ep_ms(text):
        comp = compile_text(text)
        c = prepare(spec_from_plan(comp.plan, comp.resolved))
        return c.serve_model.breakdown(0.0, 32, 32 * 2500.0, 32 * 16)["terms"]["comm.ep_dispatch_combine"] * 1e3

    default, deepep = ep_ms(DEFAULT), ep_ms(FIXED)
    assert default > 1.2 * deepep > 0, (default, deepep)
