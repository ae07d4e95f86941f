"""DP ranks step together only for MoE models (:func:`sncc.facts.roles.dp_lockstep`).

vllm 0.23.0 wheel ``vllm/v1/engine/core.py`` (``run_engine_core``): ``DPEngineCoreProc`` (dummy
batches, a collective each step) only ``if data_parallel and vllm_config.model_config.is_moe``;
otherwise "Non-MoE DP ranks are completely independent, so treat like DP=1".  A dense plan with
``dp = 2`` therefore predicts what the same plan as two instances predicts; a MoE plan's DP ranks
keep the lockstep (the slowest rank sets the step)."""

from __future__ import annotations

from expect import compile_text

from sncc.sim.engine.run import prepare, simulate_spec, stepping_groups
from sncc.sim.from_plan import spec_from_plan

PLAN = '''plan "dp" {{
  model "{model}" {{ quant = bf16 }}
  hardware {{ system = "hgx-h200"  nodes = 1 }}
  engine "vllm" {{ version = "0.23.0" }}
  serve {{ {layout}  max_num_seqs = 32  max_num_batched_tokens = 8k  chunked_prefill = 8k }}
  workload {{ requests = 300  concurrency = 48  input {{ mean = 2k  max = 4k }}  output {{ mean = 256  max = 512 }} }}
  slo {{ ttft < 2s  tpot < 50ms }}
}}
'''
#: Qwen3-32B (dense), TP2 per DP rank; Qwen3-30B-A3B (MoE), TP1 per DP rank
DENSE = PLAN.replace("{model}", "qwen3-32b").replace("{layout}", "{layout}  tp = 2")
MOE = PLAN.replace("{model}", "qwen3-30b-a3b").replace("{layout}", "{layout}  tp = 1")


def _spec(text: str):
    comp = compile_text(text)
    assert not [d for d in comp.diagnostics if d.is_error], [d.message for d in comp.diagnostics]
    return comp, spec_from_plan(comp.plan, comp.resolved)


def test_dense_dp_ranks_step_independently_like_instances():
    comp, dp2 = _spec(DENSE.format(layout="devices = 4  dp = 2"))
    rf = comp.resolved.roles["serve"]
    assert rf.dp == 2 and rf.dp_lockstep is False and "independent" in rf.notes["dp_lockstep"]
    _, inst2 = _spec(DENSE.format(layout="instances = 2  devices = 2"))
    a, b = simulate_spec(dp2, series=False), simulate_spec(inst2, series=False)
    assert abs(a.qpm / b.qpm - 1) < 0.02, (a.qpm, b.qpm)
    assert abs(a.tpot_ms["mean"] / b.tpot_ms["mean"] - 1) < 0.02, (a.tpot_ms, b.tpot_ms)
    assert abs(a.ttft_s["p90"] / b.ttft_s["p90"] - 1) < 0.05, (a.ttft_s, b.ttft_s)


def test_moe_dp_ranks_keep_the_lockstep():
    comp, spec = _spec(MOE.format(layout="devices = 2  dp = 2"))
    rf = comp.resolved.roles["serve"]
    assert rf.dp_lockstep is True and "MoE" in rf.notes["dp_lockstep"]
    role = spec.role("serve")
    assert stepping_groups(role) is role
    c = prepare(spec)
    assert (c.serve.instances, c.serve.dp) == (1, 2)
