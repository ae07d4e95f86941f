"""The step breakdown's "zero here" footnote says why a registered cost term costs no time: a
communication term that two-micro-batch overlap hides is named as hidden, with its time, not as
absent; a step the engine does not split (a decode step under Omni-Infer's or vllm-ascend's
prefill-only micro-batching) costs its communication in full."""

from __future__ import annotations

from click.testing import CliRunner

from expect import ROOT
from sncc.cli import main


def _zero_lines(plan: str) -> list[str]:
    res = CliRunner().invoke(main, ["simulate", str(ROOT / plan)])
    assert res.exit_code in (0, 1), res.output
    return [ln for ln in res.output.splitlines() if ln.strip().startswith("zero here:")]


_DBO_PLAN = """
plan "dsv3-dbo" {
  model "deepseek-v3" { quant = w8a8  max_model_len = 8k }
  hardware { system = "atlas-800i-a3"  nodes = 2  cann = "8.3.RC2" }
  engine "vllm-ascend" { version = "v0.11.0" }
  serve { devices = 32  tp = 4  ep = 8  max_num_seqs = 16  max_num_batched_tokens = 8k }
  optimize { micro_batch = 2 }
  workload {
    requests = 200
    concurrency = 16
    input { mean = 2k  max = 6k }
    output { mean = 512  max = 2k }
  }
}
"""


def test_hidden_ep_dispatch_is_not_reported_as_absent(tmp_path):
    # vllm-ascend v0.11.0 dual-batch overlap splits steps that hold prefill (deepseek_dbo.py
    # can_run_ms): the prefill step's communication is (partly) hidden, and the part hidden is named
    plan = tmp_path / "dbo.sn"
    plan.write_text(_DBO_PLAN)
    decode, prefill = _zero_lines(str(plan))[:2]
    assert "hidden behind compute by two-micro-batch overlap" in prefill
    assert "no expert-parallel dispatch" not in prefill
    # a decode-only step runs as one batch: nothing is hidden
    assert "hidden behind compute" not in decode


def test_omni_infer_micro_batch_hides_nothing_on_decode():
    # seed 000 runs EP 64 decode with micro_batch = 2, which Omni-Infer writes as
    # enable_prefill_micro_batch: its decode dispatch/combine is costed, not hidden
    decode = _zero_lines("examples/deepseek-r1-a3-7p1d.sn")[0]
    assert "hidden behind compute" not in decode and "no expert-parallel dispatch" not in decode
    assert "comm.ep_dispatch_combine" not in decode
