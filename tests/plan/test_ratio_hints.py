"""A ratio (`memory_utilization`, at most 1) written above its bound: a bare number from 2 to 100
gets the percentage reading suggested (`90` → `0.9`, `90%`); a percentage (`150%`) or a bare
number below 2 (`1.5`) has no plausible in-range reading, so the help states the bound (in percent
for a percentage: tests/plan/test_percent_bounds.py)."""

from __future__ import annotations

import pytest

from expect import compile_text

BASE = '''plan "m" {
  model "qwen3-32b" {}
  hardware { system = "hgx-h100"  nodes = 1  memory_utilization = VALUE }
  engine "vllm" {}
  serve { devices = 8  tp = 8 }
  workload { input { mean = 1k  max = 2k }  output { mean = 100  max = 200 } }
}
'''
BOUND = "a ratio is at most 1 (100%): write a fraction such as `0.9` or a percentage such as `90%`"


@pytest.mark.parametrize("value, help_", [
    ("90", "a ratio is a fraction: did you mean `0.9` (or `90%`)?"),
    ("95.5", "a ratio is a fraction: did you mean `0.955` (or `95.5%`)?"),
    ("150%", "150% is over 100%: write a percentage such as `90%` (or a fraction such as `0.9`)"),
    ("1.5", BOUND),
    ("101%", "101% is over 100%: write a percentage such as `90%` (or a fraction such as `0.9`)"),
    ("250", BOUND),
])
def test_ratio_above_one(value, help_):
    comp = compile_text(BASE.replace("VALUE", value))
    (d,) = [d for d in comp.diagnostics if d.code.code == "SN2009"]
    assert d.help == help_
    assert "0.015" not in (d.help or "")


@pytest.mark.parametrize("value", ["0.9", "90%", "100%"])
def test_ratio_in_range(value):
    assert not [d for d in compile_text(BASE.replace("VALUE", value)).diagnostics if d.code.code == "SN2009"]
