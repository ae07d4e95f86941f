"""SLO targets below any physically meaningful value are a warning (SN7060, limits.toml [slo])."""
from __future__ import annotations

import pytest

from expect import compile_text

PLAN = ('plan "p" {{\n  model "qwen3-32b" {{}}\n  hardware {{ system = "hgx-h100"  nodes = 1 }}\n  engine "vllm" {{}}\n'
        '  serve {{ devices = 8  tp = 8 }}\n'
        '  workload {{ requests = 10  concurrency = 2  input {{ mean = 1k  max = 2k }}  output {{ mean = 256  max = 512 }} }}\n'
        '  slo {{ {slo} }}\n}}\n')


def _codes(slo: str):
    comp = compile_text(PLAN.format(slo=slo), "p.sn")
    return [(d.code.code, d.severity) for d in comp.diagnostics if d.code.code in ("SN7060", "SN7001")]


@pytest.mark.parametrize("slo", ["ttft < 0.0000001ms", "engine_ttft < 0.5ms", "e2e.p99 < 0.1ms"])
def test_a_latency_target_below_a_millisecond_warns(slo):
    """`slo { ttft < 0.0000001ms }` was accepted silently."""
    assert _codes(slo) == [("SN7060", "warning")]


def test_a_tpot_below_the_plans_floor_is_sn7001_alone():
    assert _codes("tpot < 0.00001ms") == [("SN7001", "error")]


@pytest.mark.parametrize("slo", ["ttft < 1ms", "ttft < 2s  tpot < 50ms", "ttft.p99 < 500ms"])
def test_meaningful_targets_pass(slo):
    assert _codes(slo) == []


def test_the_bounds_are_data_with_a_source():
    from sncc.catalog import slo_limits

    lim = slo_limits()
    assert lim["min_ttft_s"] == 0.001 and lim["min_tpot_s"] == 0.0001 and lim["source"]
    assert set(lim["reason"]) == {"min_ttft_s", "min_tpot_s"}


def test_the_reason_printed_is_the_data_files():
    """Review item 3: the message's reason is limits.toml's, so the two cannot disagree."""
    from sncc.catalog import slo_limits

    for slo, key in (("ttft < 0.5ms", "min_ttft_s"), ("e2e < 0.5ms", "min_ttft_s")):   # a tpot this low is SN7001
        comp = compile_text(PLAN.format(slo=slo), "p.sn")
        (d,) = [d for d in comp.diagnostics if d.code.code == "SN7060"]
        assert slo_limits()["reason"][key] in d.message
