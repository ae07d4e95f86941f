"""SN2009 (value out of range) quotes the value as the plan writes it, and its bound without a
float's `.0`: `rate = 0` said "must be greater than 0.0, found `0.0`" because the float field holds
0.0; it now says "must be greater than 0, found `0`"."""

from __future__ import annotations

import pytest

from expect import compile_text
from sncc.fmt import format_source
from sncc.source import SourceFile

PLAN = '''plan "rate" {
  model "qwen3-32b" { max_model_len = 16k }
  hardware { system = "atlas-800-a2"  nodes = 1  memory_utilization = UTIL }
  engine "vllm-ascend" { version = "v0.11.0"  ready_timeout = READY }
  serve { devices = 4  tp = 4  chunked_prefill = 4k }
  workload {
    rate = RATE
    burstiness = BURST
    input { mean = 1k  max = 4k }
    output { mean = 1k  max = 4k }
  }
}
'''


def _sn2009(rate="2", burst="1", util="0.9", ready="10min"):
    text = PLAN.replace("RATE", rate).replace("BURST", burst).replace("UTIL", util).replace("READY", ready)
    assert format_source(SourceFile("plan.sn", text)) == text   # `sncc fmt --check` clean
    return [d.message for d in compile_text(text).diagnostics if d.code.code == "SN2009"]


@pytest.mark.parametrize("rate", ["0", "0.0", "-2", "-1.5"])
def test_a_rate_out_of_range_is_quoted_as_written(rate):
    assert _sn2009(rate=rate) == [f"`rate` in `workload` must be greater than 0, found `{rate}`"]


@pytest.mark.parametrize("kw, message", [
    ({"burst": "0"}, "`burstiness` in `workload` must be greater than 0, found `0`"),
    ({"burst": "-0.50"}, "`burstiness` in `workload` must be greater than 0, found `-0.50`"),
    ({"util": "0"}, "`memory_utilization` in `hardware` must be greater than 0, found `0`"),
    ({"util": "150%"}, "`memory_utilization` in `hardware` must be at most 100%, found `150%`"),
    ({"ready": "-5min"}, "`ready_timeout` in `engine` must be greater than 0, found `-5min`"),
])
def test_other_positive_fields_are_quoted_as_written(kw, message):
    assert _sn2009(**kw) == [message]


def test_a_rate_in_range_is_clean():
    assert _sn2009(rate="0.5") == []
