"""A ratio field written as a percentage and out of range is told its bound in percent, the unit the
plan wrote: `prefix_cache_hit = 150%` said "must be at most 1, found `150%`"; it now says "must be
at most 100%" and the help "150% is over 100%".  A fraction keeps the fraction's bound."""

from __future__ import annotations

import pytest

from expect import compile_text

PLAN = '''plan "p" {
  model "qwen3-32b" {}
  hardware { system = "hgx-h100"  nodes = 1  memory_utilization = UTIL }
  engine "vllm" {}
  serve { devices = 8  tp = 8 }
  speculative { method = ngram  draft_tokens = 2  acceptance = ACC }
  optimize { prefix_cache_hit = HIT }
  workload { input { mean = 1k  max = 2k }  output { mean = 100  max = 200 } }
}
'''


def _sn2009(hit="50%", util="0.9", acc="0.5"):
    text = PLAN.replace("HIT", hit).replace("UTIL", util).replace("ACC", acc)
    return [d for d in compile_text(text).diagnostics if d.code.code == "SN2009"]


@pytest.mark.parametrize("kw, message, help_", [
    ({"hit": "150%"}, "`prefix_cache_hit` in `optimize` must be at most 100%, found `150%`",
     "150% is over 100%: write a percentage such as `90%` (or a fraction such as `0.9`)"),
    ({"util": "101%"}, "`memory_utilization` in `hardware` must be at most 100%, found `101%`",
     "101% is over 100%: write a percentage such as `90%` (or a fraction such as `0.9`)"),
    ({"acc": "120.5%"}, "`acceptance` in `speculative` must be at most 100%, found `120.5%`",
     "120.5% is over 100%: write a percentage such as `90%` (or a fraction such as `0.9`)"),
    ({"util": "0%"}, "`memory_utilization` in `hardware` must be greater than 0%, found `0%`", None),
])
def test_a_percentage_is_told_its_bound_in_percent(kw, message, help_):
    (d,) = _sn2009(**kw)
    assert d.message == message
    assert d.help == help_
    assert "at most 1 " not in (d.help or "") and "at most 1," not in d.message


def test_a_fraction_keeps_the_fraction_bound():
    (d,) = _sn2009(hit="1.5")
    assert d.message == "`prefix_cache_hit` in `optimize` must be at most 1, found `1.5`"


def test_the_corrected_twin_is_clean():
    assert _sn2009(hit="100%", util="90%", acc="50%") == []
