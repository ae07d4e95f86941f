"""SN7002 costs the speculative step with the simulator's step cost at the served batch.

The batch-1 rule (verify ≈ one target step) misses that verifying ``k + 1`` tokens for every
sequence of a loaded DP rank turns the decode step compute-bound: DeepSeek-R1 with 16 MTP drafts
at 70 % acceptance is predicted 2.6× faster by that rule and runs slower in ``sncc simulate``
(break-test finding: check 0.19× against simulate 0.03× for 1000 drafts).  The check now reads
the same cost model, so the two agree.
"""
from __future__ import annotations

import re

import pytest
from expect import compile_text

PLAN = """plan "r1-mtp" {
  model "deepseek-r1" { quant = w8a8  weights = "vllm-ascend/DeepSeek-R1-W8A8" }
  hardware { system = "atlas-800i-a3"  nodes = 2 }
  engine "vllm-ascend" { version = "v0.23.0" }
  serve { instances = 1  devices = 32  tp = 4  ep = 8  max_num_seqs = 16  chunked_prefill = 8k }
  SPEC
  workload { requests = 40  concurrency = 16  input { mean = 2k  max = 4k }  output { mean = 256  max = 512 } }
}
"""


def _plan(k: int | None) -> str:
    spec = f"speculative {{ method = mtp  draft_tokens = {k}  acceptance = 0.7 }}" if k else ""
    return PLAN.replace("SPEC", spec)


def _sn7002(text: str):
    c = compile_text(text)
    return [d for d in c.diagnostics if d.code.code == "SN7002"]


def test_many_drafts_at_the_served_batch_slow_decode_down():
    got = _sn7002(_plan(16))
    assert len(got) == 1
    assert any("cost model" in n for n in got[0].notes), got[0].notes


@pytest.mark.parametrize("k", [1, 2])
def test_few_drafts_speed_decode_up(k):
    assert _sn7002(_plan(k)) == []


def test_the_check_and_the_simulator_agree_on_the_slowdown():
    from sncc.sim.api import simulate

    ratio = float(re.search(r"at ([0-9.]+)× the speed", _sn7002(_plan(16))[0].message).group(1))
    tpot = {}
    for k in (None, 16):
        c = compile_text(_plan(k))
        tpot[k] = simulate(c.plan, c.facts).tpot_ms["mean"]
    simulated = tpot[None] / tpot[16]
    assert simulated < 1.0
    assert ratio == pytest.approx(simulated, rel=0.25)
