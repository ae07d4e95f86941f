"""A bare number where a duration is expected gets a hint in the metric's natural unit:
ms for TPOT (a 50 s TPOT is never meant), s for TTFT, e2e and timeouts, except a TTFT of 1000 or
more, which counts ms (a 2000 s TTFT is never meant)."""

from __future__ import annotations

import pytest

from tests_helpers import compile_plan

BASE = '''plan "m" {
  model "qwen3-32b" {}
  hardware { system = "hgx-h100"  nodes = 1 }
  engine "vllm" {}
  serve { devices = 8  tp = 8 }
  workload { input { mean = 1k  max = 2k }  output { mean = 100  max = 200 } }
  gateway { timeout = TIMEOUT }
  slo { SLO }
}
'''


@pytest.mark.parametrize("slo,timeout,written,want", [
    ("tpot < 50", "60s", "50", "50ms"),
    ("tpot.p99 < 80", "60s", "80", "80ms"),
    ("ttft < 2", "60s", "2", "2s"),
    ("e2e.p90 < 30", "60s", "30", "30s"),
    ("ttft < 2s", "600", "600", "600s"),
    # a bare TTFT of 1000 or more counts milliseconds (a 2000 s TTFT is never meant)
    ("ttft < 2000", "60s", "2000", "2000ms"),
    ("engine_ttft.p99 < 1500", "60s", "1500", "1500ms"),
    ("ttft < 999", "60s", "999", "999s"),
])
def test_bare_number_hint(slo, timeout, written, want):
    text = BASE.replace("SLO", slo).replace("TIMEOUT", timeout)
    diags = [d for d in compile_plan(text).diagnostics if d.code.code == "SN2003"]
    assert len(diags) == 1, [(d.code.code, d.message) for d in compile_plan(text).diagnostics]
    (d,) = diags
    assert f"`{want}`" in d.help
    assert [e.new_text for f in d.fixes for e in f.edits] == [want]
