"""SN3024 for NIXL by vLLM release: 0.11.0's handshake divides decode TP by prefill TP and asserts
"Decode TP cannot be smaller than prefill TP" (nixl_connector.py@0.11.0 L966-968; reported in
https://github.com/ai-dynamo/dynamo/issues/2295), 0.9.0 transfers only between equal TPs, 0.23.0
takes either TP dividing the other (nixl/worker.py@0.23.0)."""
from __future__ import annotations

import pytest

from expect import compile_text

PLAN = '''plan "dsv3-h200-1p1d" {
  model "deepseek-v3" { quant = fp8 }
  hardware { system = "hgx-h200"  nodes = 2 }
  engine "vllm" { version = "VERSION" }
  prefill { devices = 8  tp = PTP  dp = PDP  max_num_batched_tokens = 16k  chunked_prefill = 16k }
  decode { devices = 8  tp = DTP  ep = DEP  max_num_seqs = 16 }
  kv_transfer { connector = nixl }
  workload { requests = 200  rate = 4  input { mean = 4k  max = 16k }  output { mean = 1k  max = 4k } }
}
'''


def _sn3024(version: str, ptp: int, dtp: int):
    text = (PLAN.replace("VERSION", version).replace("PTP", str(ptp)).replace("PDP", str(8 // ptp))
            .replace("DTP", str(dtp)).replace("DEP", str(8 // dtp)))
    return [d for d in compile_text(text).diagnostics if d.code.code == "SN3024"]


def test_decode_tp_below_prefill_tp_fails_on_0_11():
    (d,) = _sn3024("0.11.0", 8, 1)
    assert d.is_error and "Decode TP cannot be smaller than prefill TP" in d.message


@pytest.mark.parametrize("version,ptp,dtp", [("0.23.0", 8, 1), ("0.11.0", 1, 8), ("0.11.0", 2, 8)])
def test_layouts_the_release_transfers_pass(version, ptp, dtp):
    assert _sn3024(version, ptp, dtp) == []


def test_0_9_needs_equal_tp():
    assert _sn3024("0.9.0", 1, 8) and _sn3024("0.9.0", 8, 8) == []
