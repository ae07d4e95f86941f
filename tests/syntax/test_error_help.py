"""Syntax errors that a common slip explains get that explanation, at the slip (fresh-user test:
`16 k` was reported on the next line, `tp: 4` and `rate = 4/s` had no help, a YAML file checked as a
plan did not point at `sncc import`)."""
from __future__ import annotations

import pytest

from expect import compile_text

HEAD = 'plan "x" {\n  model "qwen3-32b" {}\n  hardware { system = "hgx-h200"  nodes = 1 }\n  engine "vllm" {}\n'


def _error(body: str, head: str = HEAD):
    comp = compile_text(head + body)
    (d,) = [d for d in comp.diagnostics if d.is_error]
    return d, comp.source.line_col(d.span.start), comp.source.text[d.span.start:d.span.end]


def test_a_space_inside_a_quantity_is_reported_at_the_quantity():
    d, (line, _), text = _error("  serve { devices = 8  tp = 8\n    max_num_batched_tokens = 16 k\n    chunked_prefill = 8k }\n}\n")
    assert line == 6 and text == "16 k" and "`16k`" in d.help


@pytest.mark.parametrize("body,needle", [
    ("  serve { devices = 8  tp: 8 }\n}\n", "`key = value`"),
    ("  serve { devices = 8  tp = 8 }\n  workload { rate = 4/s }\n}\n", "`rate = 4`"),
    ("  serve { devices = 8  tp = 8 }\n  slo { ttft p90 < 2s }\n}\n", "`ttft.p90 < …`"),
])
def test_common_slips_get_their_help(body, needle):
    d, _, _ = _error(body)
    assert d.help and needle in d.help


def test_a_yaml_file_points_at_import():
    d, _, _ = _error('model: "deepseek-v3"\ntensor-parallel-size: 8\n', head="")
    assert "sncc import" in d.help


def test_a_colon_inside_a_plan_does_not_suggest_import():
    d, _, _ = _error("  serve { devices = 8  tp: 8 }\n}\n")
    assert "import" not in d.help


@pytest.mark.parametrize("written,shown", [("1e3", "`1000`"), ("2.5E+2", "`250`"), ("1e-3", "`0.001`")])
def test_exponent_notation_says_it_is_unsupported(written, shown):
    """`requests = 1e3` gave "expected `}` ... found `3`"."""
    d, _, text = _error(f"  serve {{ devices = 8  tp = 8 }}\n  workload {{ requests = {written} }}\n}}\n")
    assert text == written and "exponent notation" in d.message
    assert shown in d.help and "`1k`" in d.help
