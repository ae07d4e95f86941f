"""A decode (or aggregated serve) instance runs ahead to its own bounds and is cut where something
reaches it.

:meth:`sncc.sim.engine.des.Simulation._run_ahead` groups a decode instance's identical steps into
one event.  Other instances' step ends do not reach it, so its span runs until its next finish,
first token or on-demand overflow, and a KV arrival or a reservation on it cuts the span at the
first step boundary from then (:meth:`Simulation._cut_span`); an aggregated instance whose steps are
decode only is cut by a request routed to it.  The reference below steps every instance one step
per event; the two must agree, with far fewer events for the run-ahead.
"""

from __future__ import annotations

import pytest
from expect import compile_text

from sncc.sim.engine import des
from sncc.sim.engine.run import simulate_spec
from sncc.sim.from_plan import spec_from_plan

#: DeepSeek-V3 FP8 on 4 x H200 nodes: 2 prefill and 3 decode instances, vLLM's on-demand KV
#: blocks; a 600-request burst (the shape of examples/search/deepseek-v3-h200-64.sn, smaller)
PLAN = '''plan "run-ahead" {
  model "deepseek-v3" { weights = "/models/DeepSeek-V3"  quant = fp8 }
  hardware { system = "hgx-h200"  nodes = 5 }
  engine "vllm" { version = "0.23.0" }
  prefill { instances = 2  devices = 8  tp = 8  max_num_batched_tokens = 16k  chunked_prefill = 16k }
  decode { instances = 3  devices = 8  tp = 1  ep = 8  max_num_seqs = %d }
  workload {
    requests = 600
    concurrency = 4096
    input { mean = 3k  max = 6k }
    output { mean = 600  max = 1200 }
  }
  slo { ttft < 10s  tpot < 80ms }
}
'''


#: the same model aggregated: 3 instances of 8 H200 (TP1 EP8), requests routed to the least loaded
AGGREGATED = PLAN.replace(
    "  prefill { instances = 2  devices = 8  tp = 8  max_num_batched_tokens = 16k  chunked_prefill = 16k }\n"
    "  decode { instances = 3  devices = 8  tp = 1  ep = 8  max_num_seqs = %d }",
    "  serve { instances = 3  devices = 8  tp = 1  ep = 8  max_num_seqs = %d  max_num_batched_tokens = 8k"
    "  chunked_prefill = 8k }").replace("nodes = 5", "nodes = 3")


#: the disaggregated plan with the decode KV pool squeezed (memory utilization 0.70): growing
#: sequences overflow their blocks and are preempted, so the reservations read the step a busy
#: instance is in (``Simulation._step_now``) while sequences leave it early
PREEMPTING = PLAN.replace("max_num_seqs = %d }", "max_num_seqs = %d  memory_utilization = 0.70 }")


def _spec(max_num_seqs: int, text: str = PLAN):
    comp = compile_text(text % max_num_seqs)
    assert not [d for d in comp.diagnostics if d.is_error], [d.message for d in comp.diagnostics]
    return spec_from_plan(comp.plan, comp.resolved)


def _run(spec, monkeypatch, one_step: bool):
    """(result, DECODE_DONE events handled)."""
    calls = [0]
    orig_done, orig_serve, orig_ahead = (des.Simulation._decode_done, des.Simulation._serve_done,
                                         des.Simulation._run_ahead)

    def done(self, a):
        calls[0] += 1
        return orig_done(self, a)

    def serve_done(self, a):
        calls[0] += 1
        return orig_serve(self, a)

    def ahead(self, d, B, r, model, horizon=None, t0=None, k_cap=None):
        if one_step:
            return orig_ahead(self, d, B, r, model, horizon=self.now, k_cap=1)
        return orig_ahead(self, d, B, r, model, horizon=horizon, t0=t0, k_cap=k_cap)

    with monkeypatch.context() as m:
        m.setattr(des.Simulation, "_decode_done", done)
        m.setattr(des.Simulation, "_serve_done", serve_done)
        m.setattr(des.Simulation, "_run_ahead", ahead)
        res = simulate_spec(spec, series=False)
    return res, calls[0]


@pytest.mark.parametrize("text, max_num_seqs", [(PLAN, 16), (PLAN, 56), (AGGREGATED, 32), (PREEMPTING, 64)],
                         ids=["disaggregated-16-seqs", "disaggregated-56-seqs", "aggregated-32-seqs",
                              "disaggregated-preempting"])
def test_run_ahead_agrees_with_stepping_one_step_per_event(monkeypatch, text, max_num_seqs):
    spec = _spec(max_num_seqs, text)
    fast, fast_events = _run(spec, monkeypatch, one_step=False)
    ref, ref_events = _run(spec, monkeypatch, one_step=True)
    assert fast.requests_completed == ref.requests_completed == 600
    assert abs(fast.qpm / ref.qpm - 1) < 1e-9, (fast.qpm, ref.qpm)
    assert abs(fast.tpot_ms["mean"] / ref.tpot_ms["mean"] - 1) < 1e-9, (fast.tpot_ms, ref.tpot_ms)
    for stat in ("p50", "p90"):
        assert abs(fast.ttft_s[stat] / ref.ttft_s[stat] - 1) < 1e-9, (stat, fast.ttft_s, ref.ttft_s)
    assert fast_events * 3 < ref_events, (fast_events, ref_events)
    assert fast.info["preemptions"] == ref.info["preemptions"]
    if text is PREEMPTING:
        assert fast.info["preemptions"] > 50, fast.info["preemptions"]
