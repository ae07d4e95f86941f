"""A diagnostic that quotes a ratio the plan wrote quotes it as written: SN5023 echoed
`prefix_cache_hit = 0.5` as "50%", SN7002 `acceptance = 40%` as "0.4", SN4081 / SN4008
`memory_utilization = 99%` as "0.99".  Each now quotes the source text of the value."""

from __future__ import annotations

import pytest

from expect import ROOT, compile_text

SN5023 = (ROOT / "examples" / "broken" / "prefix-cache-hit-without-prefix-caching.sn").read_text(encoding="utf-8")
SPEC = """plan "r1-mtp" {
  model "deepseek-r1" { quant = w8a8  weights = "vllm-ascend/DeepSeek-R1-W8A8" }
  hardware { system = "atlas-800i-a3"  nodes = 2 }
  engine "vllm-ascend" { version = "v0.23.0" }
  serve { instances = 1  devices = 32  tp = 4  ep = 8  max_num_seqs = 16  chunked_prefill = 8k }
  speculative { method = draft_model  model = "/data/draft"  draft_tokens = 4  acceptance = ACC  draft_cost = 0.3 }
  workload { requests = 40  concurrency = 16  input { mean = 2k  max = 4k }  output { mean = 256  max = 512 } }
}
"""
MEM = (ROOT / "tests" / "cases" / "k11-memory-outside-budget.sn").read_text(encoding="utf-8").replace(
    "memory_utilization = 0.99 }", "memory_utilization = UTIL }")


def _of(text, code):
    return [d for d in compile_text(text).diagnostics if d.code.code == code]


@pytest.mark.parametrize("written", ["0.5", "50%", "0.50"])
def test_sn5023_quotes_the_hit_as_written(written):
    (d,) = _of(SN5023.replace("prefix_cache_hit = 50%", f"prefix_cache_hit = {written}"), "SN5023")
    assert f"`optimize.prefix_cache_hit = {written}`" in d.message


def test_sn5023_twin_is_clean():
    assert _of(SN5023.replace("prefix_cache_hit = 50%", "prefix_cache_hit = 0"), "SN5023") == []


@pytest.mark.parametrize("written", ["0.4", "40%"])
def test_sn7002_quotes_the_acceptance_as_written(written):
    (d,) = _of(SPEC.replace("ACC", written), "SN7002")
    assert f"acceptance {written} with 4 draft tokens" in d.message


@pytest.mark.parametrize("written", ["0.99", "99%", "0.990"])
def test_sn4081_quotes_the_utilization_as_written(written):
    (d,) = _of(MEM.replace("UTIL", written), "SN4081")
    assert f"memory_utilization {written} leaves" in d.message


def test_sn4081_twin_is_clean():
    assert _of(MEM.replace("UTIL", "90%"), "SN4081") == []


@pytest.mark.parametrize("written", ["0.5", "50%"])
def test_sn5084_quotes_the_hit_as_written(written):
    text = SN5023.replace("prefix_cache_hit = 50%", f"prefix_cache_hit = {written}").replace(
        "prefix_caching = false", "prefix_caching = true")
    (d,) = [d for d in _of(text, "SN5084") if d.path == ("optimize", "prefix_cache_hit")]
    assert f"a prefix-cache hit of {written}:" in d.message
