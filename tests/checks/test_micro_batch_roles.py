"""Where ``optimize { micro_batch = 2 }`` applies on Omni-Infer: the build writes
``enable_prefill_micro_batch`` (operator_optimizition_config) for prefill roles only (the
adapter's ``[[knobs]] roles``, omni/models/common/config/model_config.py at release_v0.3.0), so an
aggregated plan gets it nowhere.  The facts say where (``Facts.optimize_roles``); the build, the
check (SN4015) and the simulator's credit all read that one fact (fresh-user break test item 6)."""

from __future__ import annotations

import json

from expect import ROOT, compile_text, outputs_of

AGG = """plan "omni-agg" {
  model "deepseek-r1" { weights = "/data/models/DeepSeek-R1-W8A8"  quant = w8a8 }
  hardware { system = "atlas-800i-a3"  nodes = 2 }
  engine "omni-infer" {}
  serve { instances = 1  devices = 32  tp = 1  dp = 32  max_num_seqs = 16  chunked_prefill = 4k }
  speculative { method = mtp  draft_tokens = 1  acceptance = 0.7 }
  optimize { micro_batch = 2 }
  workload {
    requests = 200
    concurrency = 32
    input { mean = 2k  max = 3k }
    output { mean = 512  max = 1k }
  }
}
"""
SEED = (ROOT / "examples" / "deepseek-r1-a3-7p1d.sn").read_text()


def _operators(files: dict) -> dict:
    return {k: json.loads(v)["operator_optimizition_config"] for k, v in files.items() if k.startswith("model_extra_config.")}


def test_an_aggregated_omni_infer_plan_gets_micro_batch_nowhere_and_is_told():
    from sncc.cost.from_facts import applicable_features

    comp = compile_text(AGG)
    assert comp.facts.optimize_roles == {"micro_batch": ()}
    (d,) = [d for d in comp.diagnostics if d.code.code == "SN4015"]
    assert d.severity == "warning" and d.path == ("optimize", "micro_batch")
    assert "`enable_prefill_micro_batch` goes to `prefill` roles only" in d.message
    assert comp.source.text[d.span.start:d.span.end] == "2"
    assert all("enable_prefill_micro_batch" not in ops for ops in _operators(outputs_of(AGG)).values())
    applied, notes = applicable_features(comp.plan, comp.facts)
    assert "micro_batch" not in applied and any(n.startswith("optimize.micro_batch: not applied") for n in notes)


def test_a_disaggregated_plan_gets_it_on_prefill_only():
    from sncc.cost.from_facts import applicable_features

    comp = compile_text(SEED)
    assert comp.facts.optimize_roles["micro_batch"] == ("prefill",)
    assert not [d for d in comp.diagnostics if d.code.code == "SN4015"]
    ops = _operators(outputs_of(SEED))
    assert ops["model_extra_config.prefill.json"].get("enable_prefill_micro_batch") is True
    assert "enable_prefill_micro_batch" not in ops["model_extra_config.decode.json"]
    assert "micro_batch" in applicable_features(comp.plan, comp.facts)[0]


def test_the_simulator_credits_no_overlap_the_build_does_not_write():
    from sncc.sim.from_plan import spec_from_plan

    comp = compile_text(AGG)
    assert spec_from_plan(comp.plan, comp.facts).features.micro_batch == 1
    seed = compile_text(SEED)
    assert spec_from_plan(seed.plan, seed.facts).features.micro_batch == 2
