"""bench.sh against the workload simulate models: what it cannot send is a located warning
(SN5084) and a header note, and its lengths name the plan's own distributions and honour `min`
(review item 6)."""
from __future__ import annotations

from expect import compile_text, outputs_of

PLAN = '''plan "mt" {{
  model "qwen3-32b" {{}}
  hardware {{ system = "hgx-h100"  nodes = 1 }}
  engine "vllm" {{ version = "0.23.0" }}
  serve {{ instances = 1  devices = 8  tp = 8 }}
{optimize}  workload {{
{extra}    input {{ mean = 1k  min = 512  max = 2k  dist = uniform }}
    output {{ mean = 256  max = 1k }}
  }}
}}
'''
MULTI = PLAN.format(optimize="  optimize { prefix_cache_hit = 50% }\n", extra="    turns = 3\n    think_time = 2s\n")
SINGLE = PLAN.format(optimize="", extra="")


def _warnings(text):
    comp = compile_text(text, "mt.sn")
    return comp, [d for d in comp.diagnostics if d.code.code == "SN5084"]


def test_multi_turn_think_time_and_prefix_hits_are_warned_where_written():
    comp, ws = _warnings(MULTI)
    assert [d.path for d in ws] == [("optimize", "prefix_cache_hit"), ("workload", "turns"), ("workload", "think_time")]
    assert all(d.severity == "warning" for d in ws)
    assert [comp.source.text[d.span.start:d.span.end] for d in ws] == ["50%", "3", "2s"]
    bench = outputs_of(MULTI, "mt.sn")["bench.sh"]
    for d in ws:     # the header says what the warning says
        assert d.message.split("reproduce ", 1)[1].split("; `sncc")[0] in bench


def test_a_single_turn_workload_draws_nothing():
    assert _warnings(SINGLE)[1] == []


def test_the_lengths_comment_names_the_plans_distribution_and_min_is_honoured():
    """`input { min = 512  dist = uniform }` ran as 10-2037 tokens under a note calling it lognormal."""
    bench = outputs_of(SINGLE, "mt.sn")["bench.sh"]
    assert "--random-range-ratio 0.5 " in bench
    assert "input uniform (512-2048, mean 1024) runs as uniform 512-1536" in bench
    assert "output lognormal (1-1024, mean 256) runs as uniform 128-384" in bench
    assert "the plan's lognormal lengths" not in bench
