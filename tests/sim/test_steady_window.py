"""The steady-state window of a closed loop of one wave (concurrency >= requests).

Every request is sent before the first completion, so no send follows a completion: the window's
dispatches (first completion to last dispatch) drain the proxy queue at the prefill rate, which the
clients could not sustain.  :func:`sncc.sim.engine.metrics._window` caps that rate by Little's law
for the wave's clients (``60 x wave / mean e2e``).  Found by a fresh-user search over 768 A3 dies:
a 352-device candidate showed 4,337 steady QPM against 585 over the whole run; the cap gives 2,694.
"""

from __future__ import annotations

from expect import compile_text

from sncc.sim.engine.run import simulate_spec
from sncc.sim.from_plan import spec_from_plan

#: DeepSeek-V3 FP8, 2 prefill and 3 decode instances of 8 H200; 600 requests, 4,096 clients: one wave
PLAN = '''plan "one-wave" {
  model "deepseek-v3" { weights = "/models/DeepSeek-V3"  quant = fp8 }
  hardware { system = "hgx-h200"  nodes = 5 }
  engine "vllm" { version = "0.23.0" }
  prefill { instances = 2  devices = 8  tp = 8  max_num_batched_tokens = 16k  chunked_prefill = 16k }
  decode { instances = 3  devices = 8  tp = 1  ep = 8  max_num_seqs = 56 }
  workload {
    requests = 600
    concurrency = CONCURRENCY
    input { mean = 3k  max = 6k }
    output { mean = 600  max = 1200 }
  }
}
'''


def _run(concurrency: int):
    comp = compile_text(PLAN.replace("CONCURRENCY", str(concurrency)))
    assert not [d for d in comp.diagnostics if d.is_error], [d.message for d in comp.diagnostics]
    return simulate_spec(spec_from_plan(comp.plan, comp.resolved), series=False)


def test_one_wave_steady_qpm_is_what_its_clients_sustain():
    s = _run(4096).saturated
    assert s["window"] == "closed-loop"
    dispatch_rate = s["requests"] / (s["end_s"] - s["start_s"]) * 60.0
    little = 600 / s["e2e_s"] * 60.0
    assert s["qpm"] < 0.8 * dispatch_rate, (s["qpm"], dispatch_rate)     # the cap binds here
    assert abs(s["qpm"] / little - 1) < 1e-9, (s["qpm"], little)


def test_a_loop_whose_sends_follow_completions_is_not_capped():
    s = _run(64).saturated             # 64 clients, 600 requests: 536 sends follow completions
    assert s["window"] in ("closed-loop", "admission-blocked")
    assert abs(s["qpm"] / (s["requests"] / (s["end_s"] - s["start_s"]) * 60.0) - 1) < 1e-9
